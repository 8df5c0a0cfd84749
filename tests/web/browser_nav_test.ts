/// <reference lib="dom" />
// Moving about the session browser in a real chromium, with answers that come late: an answer
// for a view the reader already left draws nothing, the error of a file that cannot be read goes
// when the store answers again, Back puts the reader where they were (scrolled, with the search
// hits they had loaded), and a query on its way past NOT (to NOTE) does not flash NOT's error.
// The page's requests are held back from the page side (puppeteer's request interception).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";
import { copyFixture } from "../_helpers.ts";
import { V11 } from "../_cli_io.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  redrawn,
  withBreakableMarker,
} from "./_browser.ts";
import { slowed } from "./_served.ts";

const skip = pageBehaviourSkip();

// deno-lint-ignore no-explicit-any
type Request = any;

/** More rows than the listing's page of 50: the listing scrolls. */
const ROWS = 60;
/** A session with more hits for SEARCH_WORD than the search's page of 30. */
const MANY_HITS = "nav_many_hits";
const SEARCH_WORD = "wombat";
/** Seconds of the first added session, after the fixture's: they lead the listing. */
const START = 1777600000;

let browser: Browser;
let store: SessionStore;
let server: Listening;
let origin: string;
let path: string;
/** While true, the store cannot be read, as a file moved away while the server runs. */
const broken = { now: false };

function rowId(i: number): string {
  return `nav_row_${String(i).padStart(2, "0")}`;
}

before(async () => {
  if (skip !== undefined) return;
  path = copyFixture("hermes-v11.db");
  let tick = START;
  {
    await using writer = await openStore(path, { clock: () => tick++ });
    for (let i = 0; i < ROWS; i++) {
      await writer.createSession(rowId(i), "cli");
      await writer.appendMessages(rowId(i), [{ role: "user", content: `row ${i} of the listing` }]);
    }
    await writer.createSession(MANY_HITS, "cli");
    await writer.appendMessages(
      MANY_HITS,
      Array.from({ length: 45 }, (_, i) => ({
        role: "user",
        content: `${SEARCH_WORD} sighting number ${i}`,
      })),
    );
  }
  store = await openStore(path);
  // The handler's every request first reads the store's change marker: failing it fails them
  // all with the 503 of a file that cannot be read, and the live stream with them.
  const breakable = withBreakableMarker(
    store,
    broken,
    () => Object.assign(new Error("the file went away"), { name: "OpenError" }),
  );
  server = await listen(slowed(createHandler(breakable, { pollMs: 100 })), {
    host: "127.0.0.1",
    port: 0,
  });
  origin = `http://127.0.0.1:${server.port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
});

function open(hash: string): Promise<Page> {
  return openPage(browser, `${origin}/${hash}`);
}
const close = closePage;

/** Requests the page makes that match a pattern, held until released: a slow server. */
interface Held {
  /** Resolves once `count` matching requests are held. */
  waitFor(count: number): Promise<void>;
  /** Lets the held requests (and any later ones) go, and waits until their answers are in. */
  release(): Promise<void>;
}

/** Holds back the page's requests whose URL matches `pattern`, as a slow server would. */
async function hold(page: Page, pattern: RegExp): Promise<Held> {
  const held: Request[] = [];
  const answered: Promise<void>[] = [];
  let holding = true;
  let changed = () => {};
  await page.setRequestInterception(true);
  page.on("request", (request: Request) => {
    if (!holding || !pattern.test(request.url())) {
      request.continue();
      return;
    }
    held.push(request);
    answered.push(
      new Promise((done) => {
        const settled = (r: Request) => {
          if (r !== request) return;
          page.off("requestfinished", settled);
          page.off("requestfailed", settled);
          done();
        };
        page.on("requestfinished", settled);
        page.on("requestfailed", settled);
      }),
    );
    changed();
  });
  return {
    async waitFor(count) {
      while (held.length < count) await new Promise<void>((next) => changed = next);
    },
    async release() {
      holding = false;
      for (const request of held) request.continue();
      await Promise.all(answered);
      // The answers' promise chains run in the page's next tasks.
      await page.evaluate(() => new Promise((done) => setTimeout(done, 200)));
    },
  };
}

/** What the page shows: its view, the session's title if one, and any alert. */
function shown(page: Page) {
  return page.evaluate(() => ({
    hash: location.hash,
    view: document.body.getAttribute("data-view"),
    title: document.getElementById("session-title")?.textContent ?? null,
    alert: (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText ?? null,
  }));
}

describe("moving about the session browser", { skip }, () => {
  test("a usage answer that comes after Back to a transcript is not drawn over it", async () => {
    const page = await open(`#/s/${V11.kitchenSink}`);
    const usage = await hold(page, /\/api\/usage\?/);
    await page.click('a[data-nav="usage"]');
    await usage.waitFor(1);
    await redrawn(page, () => page.goBack());
    await usage.release();
    const now = await shown(page);
    assert.equal(now.hash, `#/s/${V11.kitchenSink}`);
    assert.equal(now.view, "session");
    assert.ok(now.title, "the transcript is shown");
    assert.equal(await page.$(".view-usage"), null, "no usage chart over the transcript");
    await close(page);
  });

  test("a listing answer that comes after a session was opened is not drawn over it", async () => {
    const page = await open(`#/s/${V11.kitchenSink}`);
    const list = await hold(page, /\/api\/sessions\?/);
    await page.evaluate(() => location.hash = "#/");
    await list.waitFor(1);
    await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, rowId(3)));
    await list.release();
    const now = await shown(page);
    assert.equal(now.view, "session");
    assert.equal(now.title, rowId(3));
    assert.equal(await page.$(".view-sessions"), null, "no listing over the transcript");
    await close(page);
  });

  test("a live refresh's error for a session deleted meanwhile is not shown over the listing", async () => {
    const id = "nav_deleted_later";
    {
      await using writer = await openStore(path);
      await writer.createSession(id, "cli");
      await writer.appendMessages(id, [{ role: "user", content: "soon gone" }]);
    }
    const page = await open(`#/s/${id}`);
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    const refresh = await hold(page, /\/api\/session\?.*&after=/);
    {
      await using writer = await openStore(path);
      await writer.deleteSession(id);
    }
    await refresh.waitFor(1);
    await redrawn(page, () => page.evaluate(() => location.hash = "#/"));
    await refresh.release();
    const now = await shown(page);
    assert.equal(now.view, "sessions");
    assert.equal(now.alert, null, "no 'not found' over the listing");
    assert.ok(await page.$("#rows .row"), "the listing is shown");
    await close(page);
  });

  test("the error of a file that cannot be read goes once the live stream says recovered", async () => {
    const page = await open("#/");
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    broken.now = true;
    try {
      await page.waitForFunction(
        () => document.getElementById("live")!.classList.contains("failed"),
        { timeout: 10_000 },
      );
      await redrawn(
        page,
        () => page.evaluate((id: string) => location.hash = `#/s/${id}`, rowId(5)),
      );
      assert.match((await shown(page)).alert ?? "", /cannot be read now/);
    } finally {
      broken.now = false;
    }
    await page.waitForSelector("#session-title", { timeout: 10_000 });
    const now = await shown(page);
    assert.equal(now.title, rowId(5));
    assert.equal(now.alert, null);
    await close(page);
  });

  test("Back to the listing puts it where the reader had scrolled", async () => {
    const page = await open("#/");
    await page.$$eval("#rows .row", (rows: Element[]) => rows[40].scrollIntoView());
    const left = await page.evaluate(() => scrollY);
    assert.ok(left > 500, `scrolled down (${left} px)`);
    await redrawn(
      page,
      () => page.$$eval("#rows .row a", (links: Element[]) => (links[40] as HTMLElement).click()),
    );
    assert.equal((await shown(page)).view, "session");
    await redrawn(page, () => page.goBack());
    assert.equal((await shown(page)).view, "sessions");
    assert.equal(await page.evaluate(() => scrollY), left);
    await close(page);
  });

  test("Back to a search puts back the hits loaded with More results, scrolled as they were", async () => {
    const page = await open(`#/search?q=${SEARCH_WORD}`);
    await redrawn(page, () => page.click("#more-hits"));
    const hits = () => page.$$eval(".hit", (nodes: Element[]) => nodes.length);
    assert.equal(await hits(), 45);
    await page.$$eval(".hit", (nodes: Element[]) => nodes[40].scrollIntoView());
    const left = await page.evaluate(() => scrollY);
    assert.ok(left > 500, `scrolled down (${left} px)`);
    await redrawn(
      page,
      () => page.$$eval(".hit a", (links: Element[]) => (links[40] as HTMLElement).click()),
    );
    assert.equal((await shown(page)).view, "session");
    await redrawn(page, () => page.goBack());
    assert.equal((await shown(page)).view, "search");
    assert.equal(await hits(), 45);
    assert.equal(await page.$eval("#hit-count", (n: Element) => n.textContent), "45");
    assert.equal(await page.evaluate(() => scrollY), left);
    await close(page);
  });

  test("a live update of a search keeps the hits loaded with More results", async () => {
    const page = await open("#/search?q=sighting");
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    await redrawn(page, () => page.click("#more-hits"));
    await redrawn(page, async () => {
      await using writer = await openStore(path);
      await writer.appendMessages(rowId(7), [{ role: "user", content: "one more sighting" }]);
    });
    // 46 hits now: the 45 the reader had, and the button for the one more.
    assert.equal(await page.$$eval(".hit", (nodes: Element[]) => nodes.length), 45);
    assert.equal(await page.$eval("#hit-count", (n: Element) => n.textContent), "45+");
    await close(page);
  });

  test("typing NOTE does not flash the NOT error on the way, and a bare NOT left alone still gets it", async () => {
    const page = await open("#/");
    // Every alert the page shows, however briefly.
    await page.evaluate(() => {
      const seen: string[] = [];
      (globalThis as unknown as { alerts: string[] }).alerts = seen;
      new MutationObserver(() => {
        const alert = document.querySelector("[role=alert]");
        if (alert) seen.push(alert.textContent ?? "");
      }).observe(document.getElementById("app")!, { childList: true, subtree: true });
    });
    const alerts = () =>
      page.evaluate(() => (globalThis as unknown as { alerts: string[] }).alerts);
    await page.focus("#q");
    await redrawn(page, () => page.keyboard.type("NO"));
    // A reader's pace: each key well after the search of the one before has been asked for.
    for (const key of "TE") {
      await page.keyboard.type(key);
      await page.evaluate(() => new Promise((done) => setTimeout(done, 500)));
    }
    await page.waitForFunction(
      () => document.querySelector(".view-search h2 q")?.textContent === "NOTE",
      { timeout: 10_000 },
    );
    assert.deepEqual(await alerts(), [], "no error while typing NOTE");
    await page.keyboard.press("Backspace");
    await page.waitForFunction(
      () =>
        /a query cannot start with NOT/.test(
          document.querySelector("[role=alert]")?.textContent ?? "",
        ),
      { timeout: 10_000 },
    );
    await close(page);
  });
});
