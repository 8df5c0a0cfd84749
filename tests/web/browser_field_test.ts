/// <reference lib="dom" />
// The session browser as an operator uses it, in a real chromium: the arrow keys down a list of
// hits, buttons pressed with Enter that keep the keyboard where it was, a write after the server
// was started again (a new CSRF token), the live dot in words when the server is gone, and red and
// green text readable in light and dark.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  pageText,
  redrawn,
} from "./_browser.ts";
import { numberedMessages, serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
const HITS = "20260502_100000_field_hits";
const PAGES = "20260502_110000_field_pages";
const DOOMED = "20260502_120000_field_doomed";
const WORD = "quokkafield";
/** The server's transcript page, small: two earlier pages above the newest. */
const PAGE = 20;

let browser: Browser;
let served: Served;
/** What the server answers with instead of its own handler (a server started again). */
let restarted: Handler | undefined;
/** The live stream refused with a 503 while true (a server going away). */
let refuseLive = false;

before(async () => {
  if (skip !== undefined) return;
  served = await serve(
    copyFixture("hermes-v11.db"),
    { transcriptPage: PAGE, allowWrites: true },
    (handler) => (request) => {
      const path = new URL(request.url).pathname;
      if (refuseLive && path === "/api/events") {
        return Promise.resolve(new Response(null, { status: 503 }));
      }
      return (restarted ?? handler)(request);
    },
  );
  await served.store.createSession(HITS, "cli");
  await served.store.appendMessages(
    HITS,
    Array.from({ length: 70 }, (_, i) => ({ role: "user", content: `${WORD} number ${i}` })),
  );
  await served.store.createSession(PAGES, "cli");
  await served.store.appendMessages(PAGES, numberedMessages(2 * PAGE + 10));
  await served.store.createSession(DOOMED, "cli");
  await served.store.appendMessages(DOOMED, [{ role: "user", content: "delete me" }]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** The part of puppeteer's dialog the tests use. */
interface Dialog {
  type(): string;
  message(): string;
  accept(text?: string): Promise<void>;
}

/** What has the focus: its tag, id and href. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const at = document.activeElement as HTMLElement | null;
    return at === null ? "none" : `${at.tagName}#${at.id}[${at.getAttribute("href") ?? ""}]`;
  });
}

/** The hrefs of the search hits shown, in order. */
function hitLinks(page: Page): Promise<string[]> {
  return page.$$eval(
    ".hit a.row-link",
    (links: Element[]) => links.map((a) => a.getAttribute("href")),
  );
}

/** The WCAG contrast ratio of the text colour of `selector` on the page's background. */
function contrast(page: Page, selector: string): Promise<number> {
  // Found and measured in one evaluation: between two (a handle, then its styles) a live update
  // may draw the view again, and a detached node has no computed colours.
  return page.evaluate((selector: string) => {
    const node = document.querySelector(selector)!;
    function luminance(css: string): number {
      const [r, g, b] = css.match(/\d+/g)!.slice(0, 3).map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    }
    let back: Element | null = node;
    let fill = "rgba(0, 0, 0, 0)";
    while (back && /rgba\(.*, 0\)$|transparent/.test(fill)) {
      fill = getComputedStyle(back).backgroundColor;
      back = back.parentElement;
    }
    const [light, dark] = [luminance(getComputedStyle(node).color), luminance(fill)].sort((a, b) =>
      b - a
    );
    return (light + 0.05) / (dark + 0.05);
  }, selector);
}

describe("the session browser in an operator's hands", { skip }, () => {
  test("ArrowDown from the search box goes down the hits with the focus, ArrowUp back up to the box", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`);
    const links = await hitLinks(page);
    await page.focus("#q");
    for (const at of [0, 1, 2]) {
      await page.keyboard.press("ArrowDown");
      assert.equal(await focused(page), `A#[${links[at]}]`, `ArrowDown ${at + 1}`);
    }
    await page.keyboard.press("ArrowUp");
    assert.equal(await focused(page), `A#[${links[1]}]`);
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    assert.equal(await focused(page), "INPUT#q[]", "up from the first hit: the search box");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("j");
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await page.evaluate(() => location.hash), links[1]);
    await closePage(page);
  });

  test("Enter on a button with the focus presses it, not the row chosen with j", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`);
    await page.keyboard.press("j");
    await page.focus("#more-hits");
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await page.evaluate(() => location.hash), `#/search?q=${WORD}`);
    assert.equal((await hitLinks(page)).length, 60);
    await closePage(page);
  });

  test("More results pressed with Enter keeps the focus, then gives it to the first new hit", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`);
    await page.focus("#more-hits");
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await focused(page), "BUTTON#more-hits[]");
    await redrawn(page, () => page.keyboard.press("Enter"));
    const links = await hitLinks(page);
    assert.equal(links.length, 70);
    assert.equal(
      await focused(page),
      `A#[${links[60]}]`,
      "the last page: the first hit it brought",
    );
    await closePage(page);
  });

  test("Show earlier messages pressed with Enter keeps the focus, then gives it to the first message", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${PAGES}`);
    await page.focus("#earlier-messages");
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await focused(page), "BUTTON#earlier-messages[]");
    await redrawn(page, () => page.keyboard.press("Enter"));
    const first = await page.$eval("#messages > article", (node: Element) => node.id);
    assert.equal(await focused(page), `ARTICLE#${first}[]`);
    await closePage(page);
  });

  test("Rename works after the server was started again (with a new CSRF token)", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${HITS}`);
    let alerted = (_message: string) => {};
    const alert = new Promise<string>((resolve) => alerted = resolve);
    page.on("dialog", async (dialog: Dialog) => {
      if (dialog.type() === "prompt") return await dialog.accept("renamed after a restart");
      alerted(dialog.message());
      await dialog.accept();
    });
    restarted = createHandler(served.store, { host: "127.0.0.1", allowWrites: true, pollMs: 200 });
    try {
      await page.$$eval(
        "button",
        (buttons: HTMLButtonElement[]) => buttons.find((b) => b.textContent === "Rename")!.click(),
      );
      const renamed = page.waitForFunction(
        () => document.getElementById("session-title")?.textContent === "renamed after a restart",
      ).then(() => "renamed");
      assert.equal(await Promise.race([alert, renamed]), "renamed");
    } finally {
      restarted = undefined;
    }
    await closePage(page);
  });

  test("Back after a delete goes to the view before the session, not to a session not found", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`);
    page.on("dialog", (dialog: Dialog) => dialog.accept());
    await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, DOOMED));
    await redrawn(page, () => page.click(".actions button.danger"));
    assert.equal(await page.evaluate(() => location.hash), "#/");
    assert.equal(await served.store.getSession(DOOMED), undefined);
    await redrawn(page, () => page.goBack());
    assert.equal(await page.evaluate(() => location.hash), `#/search?q=${WORD}`);
    assert.equal(await page.$(".error"), null);
    await closePage(page);
  });

  test("the live dot says offline, not live, while the server refuses its stream", async () => {
    // A context of its own: no tab of another test passes its stream's news on to this one.
    const alone = await browser.createBrowserContext();
    refuseLive = true;
    try {
      const page = await openPage(alone, `${served.origin}/#/`);
      await page.waitForFunction(() => document.getElementById("live")!.title.includes("retrying"));
      assert.equal(await pageText(page, "#live"), "\u25cf offline");
      await closePage(page);
    } finally {
      refuseLive = false;
      await alone.close();
    }
  });

  test("the tab's title names the view, so that many tabs of one server are told apart", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=${WORD}`);
    assert.equal(await page.title(), `Search: ${WORD} \u2014 hermes-state`);
    await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, PAGES));
    assert.equal(await page.title(), `${PAGES} \u2014 hermes-state`);
    await redrawn(page, () => page.evaluate(() => location.hash = "#/usage"));
    assert.equal(await page.title(), "Usage \u2014 hermes-state");
    await redrawn(page, () => page.evaluate(() => location.hash = "#/"));
    assert.equal(await page.title(), "Sessions \u2014 hermes-state");
    // A view that fails (a bad filter) is no longer named after the view before it.
    await redrawn(page, () => page.evaluate(() => location.hash = "#/usage?since=garbage"));
    assert.equal(await page.title(), "Error \u2014 hermes-state");
    assert.ok(await page.$(".error[role=alert]"));
    await closePage(page);
  });

  test("a link to a search without words opens the listing, as clearing the box does", async () => {
    for (const hash of ["#/search", "#/search?q=", "#/search?q=%20%20"]) {
      const page = await openPage(browser, `${served.origin}/${hash}`);
      assert.equal(await page.title(), "Sessions \u2014 hermes-state", hash);
      assert.ok((await page.$$(".view-sessions .row")).length > 0, hash);
      assert.doesNotMatch(await pageText(page), /results for|Nothing found/, hash);
      await closePage(page);
    }
  });

  test("a message's time gives the instant (datetime) and the zone it is shown in (tooltip)", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${HITS}`, {
      timeZone: "Asia/Tokyo",
    });
    const [id, datetime, title] = await page.$eval(
      "article.msg",
      (node: Element) => [
        node.id,
        node.querySelector("time")!.getAttribute("datetime"),
        node.querySelector("time")!.getAttribute("title"),
      ],
    );
    const message = (await served.store.getMessages(HITS)).find((m) => `m-${m.id}` === id)!;
    assert.equal(datetime, new Date(message.timestamp * 1000).toISOString());
    assert.match(title!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+09:00 \(Asia\/Tokyo\)$/);
    await closePage(page);
  });

  test("a chart's labels on a phone keep their size, not shrunk to 6 px", async () => {
    const page = await openPage(browser, `${served.origin}/#/usage?since=all`, { width: 375 });
    const heights = await page.$$eval(
      "#usage-time .chart .axis",
      (labels: Element[]) => labels.map((label) => label.getBoundingClientRect().height),
    );
    assert.ok(heights.length > 0);
    assert.ok(Math.min(...heights) >= 10, `label heights: ${heights.join(", ")}`);
    await closePage(page);
  });

  test("an error in dark and the live dot in light are readable (4.5:1 at least)", async () => {
    const dark = await openPage(browser, `${served.origin}/#/s/no_such_session`, { dark: true });
    assert.ok(await contrast(dark, ".error") >= 4.5, `error: ${await contrast(dark, ".error")}`);
    await closePage(dark);
    const light = await openPage(browser, `${served.origin}/#/`, { dark: false });
    await light.waitForSelector("#live.on");
    assert.ok(await contrast(light, "#live") >= 4.5, `live: ${await contrast(light, "#live")}`);
    await closePage(light);
  });

  test("an error a live update finds again stays as it is (a screen reader would hear it again)", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/no_such_session`);
    await page.waitForSelector("#live.on");
    await page.evaluate(() => document.querySelector(".error")!.setAttribute("data-first", ""));
    const drawn = await page.evaluate(() => document.body.getAttribute("data-ready"));
    await served.store.createSession("live_probe", "cli");
    await page.waitForFunction(
      (old: string | null) => document.body.getAttribute("data-ready") !== old,
      { timeout: 10_000 },
      drawn,
    );
    assert.deepEqual(
      await page.evaluate(() =>
        [...document.querySelectorAll(".error")].map((node) => node.hasAttribute("data-first"))
      ),
      [true],
      "the same alert, not one drawn again",
    );
    await closePage(page);
  });
});
