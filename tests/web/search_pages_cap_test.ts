/// <reference lib="dom" />
/**
 * A search page may start at offset 10,000 at most. The API said `more`
 * at that depth although the next page was refused (a 400), and the page
 * then replaced every hit it had loaded with that error. Now `more` is
 * false where the next page could not be asked for, `capped` says hits are
 * left, and a "More results" that fails keeps the hits shown, says why
 * below them, and may be clicked again.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import { MAX_SEARCH_OFFSET } from "../../lib/web/api.ts";
import type { Handler } from "../../lib/web/handler.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  pageBehaviourSkip,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const ID = "20260601_090000_needles";
/** Two pages of 200 past the deepest offset. */
const NEEDLES = MAX_SEARCH_OFFSET + 400;

let served: Served;
/** Whether a search page past the first fails (a 503, as a locked file gives). */
let failMore = false;

/** `handler`, failing a search page with an offset while {@linkcode failMore}. */
function failingMore(handler: Handler): Handler {
  return async (request) => {
    const url = new URL(request.url);
    if (failMore && url.pathname === "/api/search" && url.searchParams.has("offset")) {
      return Response.json({ error: { status: 503, message: "the database is locked" } }, {
        status: 503,
      });
    }
    return await handler(request);
  };
}

before(async () => {
  const path = tempDbPath();
  {
    await using store = await openStore(path);
    await store.createSession(ID, "cli");
    await store.appendMessages(
      ID,
      Array.from({ length: NEEDLES }, (_, i) => ({ role: "user", content: `needle ${i}` })),
    );
  }
  served = await serve(path, {}, failingMore);
});

after(async () => {
  await served?.close();
});

async function searchPage(offset: number): Promise<Record<string, unknown>> {
  const response = await fetch(
    `${served.origin}/api/search?q=needle&limit=200&offset=${offset}`,
  );
  assert.equal(response.status, 200);
  return await response.json();
}

describe("search pages past the deepest offset", () => {
  test("more is true while the next page may be asked for, then capped says hits are left", async () => {
    const before = await searchPage(MAX_SEARCH_OFFSET - 200);
    assert.equal((before.hits as unknown[]).length, 200);
    assert.deepEqual([before.more, before.capped], [true, false]);
    const last = await searchPage(MAX_SEARCH_OFFSET);
    assert.equal((last.hits as unknown[]).length, 200);
    // Before the fix: more true, and the page it offered a 400.
    assert.deepEqual([last.more, last.capped], [false, true]);
    const next = await fetch(`${served.origin}/api/search?q=needle&limit=200&offset=10200`);
    assert.equal(next.status, 400);
    await next.body?.cancel();
  });
});

const skip = pageBehaviourSkip();

describe("the page's More results", { skip }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    failMore = false;
    await browser?.close();
  });

  test("a page that fails keeps the hits shown, says why, and may be asked for again", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=needle`);
    const shown = () => page.$$eval("#rows .hit", (hits: Element[]) => hits.length);
    const first = await shown();
    assert.ok(first > 0);
    failMore = true;
    await page.click("#more-hits");
    await page.waitForFunction(() => !document.getElementById("more-failed")?.hidden);
    assert.equal(await shown(), first, "the hits loaded stay");
    assert.match(
      await page.$eval("#more-failed", (p: Element) => p.textContent),
      /^More results could not be loaded: .*locked/,
    );
    assert.equal(await page.$eval("#more-failed", (p: Element) => p.getAttribute("role")), "alert");
    failMore = false;
    await redrawn(page, () => page.click("#more-hits"));
    await page.waitForFunction(
      (n: number) => document.querySelectorAll("#rows .hit").length > n,
      {},
      first,
    );
    assert.equal(await page.$eval("#more-failed", (p: HTMLElement) => p.hidden), true);
    // Hidden, no alert is left for a reader's tools (nor for the other views' checks of alerts).
    assert.equal(await page.$eval("#more-failed", (p: Element) => p.getAttribute("role")), null);
    await closePage(page);
  });
});
