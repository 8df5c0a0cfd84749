/// <reference lib="dom" />
// The session browser in a real chromium, over a real store: ArrowDown from the search box waits
// for the results of the words just typed (a row of the view before them is not what the reader
// asked for); a reload puts the reader where they were in the listing and in a transcript; the
// times of the listing's rows, the search hits and a transcript's head name the zone they are
// shown in, as a message's do.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { Handler } from "../../lib/web/handler.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  redrawn,
} from "./_browser.ts";
import { numberedMessages, serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

/** More rows than a window shows: the listing scrolls. */
const ROWS = 40;
const LONG = "keys_reload_long";
/** A session the CLI deletes while the page shows it. */
const DOOMED = "keys_reload_doomed";
const WORD = "numbatword";
/** Seconds of the first added session, after the fixture's: they lead the listing. */
const START = 1777700000;
/** The zone of the time tooltips: the second, the offset, the zone's name. */
const TOKYO_TOOLTIP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+09:00 \(Asia\/Tokyo\)$/;

let browser: Browser;
let served: Served;
/** The database file the server serves. */
let path: string;
/** While set, `/api/search` answers wait until it resolves. */
let searchHeld: Promise<void> | undefined;

function rowId(i: number): string {
  return `keys_row_${String(i).padStart(2, "0")}`;
}

/** The server's handler, with the search answers held while `searchHeld` is set. */
function holdingSearch(handler: Handler): Handler {
  return async (request) => {
    const held = searchHeld;
    if (held !== undefined && new URL(request.url).pathname === "/api/search") await held;
    return await handler(request);
  };
}

before(async () => {
  if (skip !== undefined) return;
  path = copyFixture("hermes-v11.db");
  let tick = START;
  {
    await using writer = await openStore(path, { clock: () => tick++ });
    for (let i = 0; i < ROWS; i++) {
      await writer.createSession(rowId(i), "cli");
      await writer.appendMessages(rowId(i), [{ role: "user", content: `${WORD} in row ${i}` }]);
    }
    await writer.createSession(DOOMED, "cli");
    await writer.setSessionTitle(DOOMED, "doomed talk");
    await writer.appendMessages(DOOMED, [{ role: "user", content: "words worth keeping" }]);
    await writer.createSession(LONG, "cli");
    await writer.appendMessages(LONG, numberedMessages(400));
  }
  served = await serve(path, {}, holdingSearch);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** What has the focus: its tag and href. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const at = document.activeElement as HTMLElement | null;
    return at === null ? "none" : `${at.tagName}#${at.id}[${at.getAttribute("href") ?? ""}]`;
  });
}

/** Reloads the page and waits until it has drawn its view. */
async function reload(page: Page): Promise<void> {
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("body[data-ready]");
}

/** The id of the first message of the transcript whose bottom is in the window. */
function topMessage(page: Page): Promise<string> {
  return page.$$eval(
    "#messages > article",
    (nodes: Element[]) => nodes.find((node) => node.getBoundingClientRect().bottom > 0)?.id,
  );
}

describe("the keyboard, a reload and the times of the rows", { skip }, () => {
  test("ArrowDown typed before the new results come goes to the first of them, not to a row of the view before", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    let release!: () => void;
    searchHeld = new Promise((resolve) => release = resolve);
    try {
      await page.focus("#q");
      await page.keyboard.type(WORD);
      // The search has been asked for (the typing's pause is over), its answer held.
      await page.waitForFunction(() => location.hash.startsWith("#/search"));
      await page.keyboard.press("ArrowDown");
      assert.equal(await focused(page), "INPUT#q[]", "no row of the listing gets the focus");
      await redrawn(page, () => Promise.resolve(release()));
      const first = await page.$eval(
        ".view-search .hit a.row-link",
        (a: Element) => a.getAttribute("href"),
      );
      assert.equal(await focused(page), `A#[${first}]`, "the first hit has the focus");
    } finally {
      release();
      searchHeld = undefined;
    }
    await closePage(page);
  });

  test("ArrowDown pressed before the typing's pause is over searches at once and waits for the results", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=row`);
    let release!: () => void;
    searchHeld = new Promise((resolve) => release = resolve);
    try {
      await page.focus("#q");
      await page.evaluate(() => (document.getElementById("q") as HTMLInputElement).select());
      await page.keyboard.type(WORD);
      await page.keyboard.press("ArrowDown");
      assert.equal(await focused(page), "INPUT#q[]", "no hit of the search before gets the focus");
      await redrawn(page, () => Promise.resolve(release()));
      const first = await page.$eval(
        ".view-search .hit a.row-link",
        (a: Element) => a.getAttribute("href"),
      );
      assert.match(
        await page.$eval(".view-search", (node: Element) => node.textContent),
        /numbatword/,
      );
      assert.equal(await focused(page), `A#[${first}]`);
    } finally {
      release();
      searchHeld = undefined;
    }
    await closePage(page);
  });

  test("the keys of an input method composing CJK words are left to it, and its words searched once taken", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await page.focus("#q");
    // What a CJK input method sends: keys while it composes (isComposing), the box holding the
    // romaji or pinyin on the way, then compositionend with the words taken.
    const composing = (key: string) =>
      page.evaluate((name: string) => {
        const box = document.getElementById("q")!;
        box.dispatchEvent(
          new KeyboardEvent("keydown", { key: name, isComposing: true, bubbles: true }),
        );
      }, key);
    await page.evaluate(() => {
      const box = document.getElementById("q") as HTMLInputElement;
      box.value = "numbatw";
      box.dispatchEvent(new InputEvent("input", { isComposing: true, bubbles: true }));
    });
    await composing("ArrowDown");
    assert.equal(await focused(page), "INPUT#q[]", "ArrowDown chose a candidate, not a row");
    await composing("Escape");
    assert.equal(await focused(page), "INPUT#q[]", "Escape gave up the composition, not the box");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      await page.evaluate(() => location.hash),
      "#/",
      "nothing searched while composing",
    );
    await redrawn(page, () =>
      page.evaluate((word: string) => {
        const box = document.getElementById("q") as HTMLInputElement;
        box.value = word;
        box.dispatchEvent(new CompositionEvent("compositionend", { data: word, bubbles: true }));
      }, WORD));
    assert.equal(await page.evaluate(() => location.hash), `#/search?q=${WORD}`);
    await closePage(page);
  });

  test("on a phone, the focus moved back with Shift+Tab is never under the sticky header", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`, { width: 375 });
    await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
    // The last hit's link, in view at the bottom: Shift+Tab goes up the hits from there.
    await page.evaluate(() => {
      const links = document.querySelectorAll<HTMLElement>(".hit a.row-link");
      links[links.length - 1].focus();
    });
    for (let i = 0; i < 12; i++) {
      await page.keyboard.down("Shift");
      await page.keyboard.press("Tab");
      await page.keyboard.up("Shift");
      const [top, below] = await page.evaluate(() => [
        document.activeElement!.getBoundingClientRect().top,
        document.querySelector(".top")!.getBoundingClientRect().bottom,
      ]);
      assert.ok(
        top >= below,
        `Shift+Tab ${i + 1}: the focus at ${top}, the header down to ${below}`,
      );
    }
    await closePage(page);
  });

  test("a reload keeps the place in the listing", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await page.evaluate(() => scrollTo(0, 900));
    const before = await page.evaluate(() => scrollY);
    assert.ok(before > 500, `the listing scrolls: ${before}`);
    await reload(page);
    assert.equal(await page.evaluate(() => scrollY), before);
    await closePage(page);
  });

  test("a reload keeps the message read in a transcript, and Back after it the listing's place", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await page.evaluate(() => scrollTo(0, 600));
    await redrawn(page, () => page.evaluate(() => location.hash = "#/s/keys_reload_long"));
    await page.evaluate(() => document.getElementById("messages")!.children[200].scrollIntoView());
    const reading = await topMessage(page);
    await reload(page);
    assert.equal(await topMessage(page), reading);
    await redrawn(page, () => page.goBack());
    assert.equal(await page.evaluate(() => scrollY), 600, "Back after the reload");
    await closePage(page);
  });

  test("a row's time, a hit's and a transcript's start give the instant and the zone they are shown in", async () => {
    const page = await openPage(browser, `${served.origin}/#/`, { timeZone: "Asia/Tokyo" });
    // The row's one message: its time is the session's last activity.
    const [message] = await served.store.getMessages(rowId(ROWS - 1));
    const [datetime, title] = await page.$eval(
      `.row a[href="#/s/${rowId(ROWS - 1)}"] time`,
      (node: Element) => [node.getAttribute("datetime"), node.getAttribute("title")],
    );
    assert.equal(datetime, new Date(message.timestamp * 1000).toISOString());
    assert.match(title!, TOKYO_TOOLTIP);
    await redrawn(
      page,
      () => page.evaluate((q: string) => location.hash = `#/search?q=${q}`, WORD),
    );
    const hitTitles = await page.$$eval(
      ".hit .row-meta time",
      (nodes: Element[]) => nodes.map((node) => node.getAttribute("title")),
    );
    assert.ok(hitTitles.length > 0, "hits are shown");
    for (const hit of hitTitles) assert.match(hit!, TOKYO_TOOLTIP);
    await redrawn(page, () => page.evaluate(() => location.hash = "#/s/keys_reload_long"));
    const started = await page.$eval(
      ".details-list time",
      (node: Element) => node.getAttribute("title"),
    );
    assert.match(started!, TOKYO_TOOLTIP);
    await closePage(page);
  });

  test("a transcript whose session the CLI deletes while it is read keeps its text, said gone", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${DOOMED}`);
    await page.waitForSelector("#live.on");
    {
      await using cli = await openStore(path);
      await redrawn(page, () => cli.deleteSession(DOOMED));
    }
    await page.waitForSelector("#gone");
    const text = await page.$eval("#app", (node: Element) => node.textContent);
    assert.match(text, /This session was deleted/);
    assert.match(text, /words worth keeping/, "the transcript stays");
    assert.equal(await page.title(), "Deleted: doomed talk \u2014 hermes-state");
    await redrawn(page, () => page.click("#gone a"));
    assert.equal(await page.evaluate(() => location.hash), "#/");
    await closePage(page);
  });
});

describe("a link to a message of a newer Hermes's file", { skip }, () => {
  /** A copy of the v21 fixture: a session compacted in place, its first messages taken back. */
  let newer: Served;
  before(async () => {
    newer = await serve(copyFixture("hermes-v21.db"));
  });
  after(async () => {
    await newer?.close();
  });

  test("a link to a message deleted since opens the transcript with a note that it is gone", async () => {
    const page = await openPage(
      browser,
      `${newer.origin}/#/s/20260501_120000_comp01?m=999`,
    );
    // Not one of the rows taken back either: every row is shown, and the note says so.
    assert.equal(
      await page.evaluate(() => location.hash),
      "#/s/20260501_120000_comp01?m=999&all=1",
    );
    const note = await page.$eval("#target-missing", (node: Element) => node.textContent);
    assert.match(note, /not in the session: it was deleted/);
    await redrawn(
      page,
      () => page.evaluate(() => location.hash = "#/s/20260501_120000_comp01?m=14"),
    );
    assert.equal(await page.$("#target-missing"), null, "a message shown gets no note");
    await closePage(page);
  });
});
