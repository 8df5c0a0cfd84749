/// <reference lib="dom" />
// The session browser in a real chromium: the listing's "Export" links, with "Has children"
// checked, download the sessions the listing shows (those with a child), not every session; the
// usage page counts one session as "1 session".
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  pageBehaviourSkip,
  pageText,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
const PARENT = "20260101_090000_parent";
const CHILD = "20260101_091000_child";
const LONE = "20260101_100000_lone";
/** The one session of the last 30 days. */
const RECENT = "20260601_090000_recent";
const DAY = 86_400;

let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = tempDbPath();
  let now = Date.now() / 1000 - 200 * DAY;
  {
    await using writer = await openStore(path, { clock: () => now });
    await writer.createSession(PARENT, "cli");
    await writer.createSession(CHILD, "cli", { parentSessionId: PARENT });
    await writer.createSession(LONE, "cli");
    now = Date.now() / 1000;
    await writer.createSession(RECENT, "cli");
    for (const id of [PARENT, CHILD, LONE, RECENT]) {
      await writer.appendMessages(id, [{ role: "user", content: `words of ${id}` }]);
      await writer.updateTokenCounts(id, { inputTokens: 10, outputTokens: 5 });
    }
  }
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

describe("the listing's export follows its filters; the usage page's count", { skip }, () => {
  test('with "Has children" checked, the export holds the sessions the listing shows', async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await redrawn(page, () => page.click("#f-children"));
    const rows = await page.$$eval(
      "#rows .row a.row-link",
      (links: Element[]) => links.map((a) => decodeURIComponent(a.getAttribute("href")!.slice(4))),
    );
    assert.deepEqual(rows, [PARENT]);
    const jsonl = await page.$eval(
      "#filters .exports a:last-child",
      (a: Element) => a.getAttribute("href"),
    );
    const text = await (await fetch(`${served.origin}${jsonl}`)).text();
    const ids = text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line).id);
    assert.deepEqual(ids, rows, `${jsonl} exports what the listing shows`);
    await closePage(page);
  });

  test('the usage of one session says "1 session"', async () => {
    const page = await openPage(browser, `${served.origin}/#/usage?since=30d`);
    const totals = await pageText(page, ".totals");
    assert.match(totals, /\b1 session$/, totals);
    await closePage(page);
  });
});
