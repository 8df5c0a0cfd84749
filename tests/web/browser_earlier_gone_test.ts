/// <reference lib="dom" />
// A transcript larger than a page in a newer Hermes's file, its newest page shown: the
// messages before that page are compacted away (`active = 0`) as the summary is written. The
// live update said none was left before the page, but the "Show earlier messages (30 more)"
// button stayed, and clicking it loaded nothing.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  pageBehaviourSkip,
  shownMessageIds,
} from "./_browser.ts";
import { numberedMessages, serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
const ID = "20260501_130000_compacted_pages";
/** The server's page, small: the mechanism is the same at 5,000. */
const PAGE = 20;
const EARLIER = 30;

let browser: Browser;
let served: Served;
let path: string;

before(async () => {
  if (skip !== undefined) return;
  path = copyFixture("hermes-v21.db");
  served = await serve(path, { transcriptPage: PAGE });
  await served.store.createSession(ID, "cli");
  await served.store.appendMessages(ID, numberedMessages(EARLIER + PAGE));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

describe("the messages before the page shown compacted away", { skip }, () => {
  test("the Show earlier button goes", { timeout: 60_000 }, async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${ID}`);
    await page.waitForSelector("#live.on", { timeout: 15_000 });
    assert.equal(
      await page.$eval("#earlier-messages", (node: Element) => node.textContent),
      `Show earlier messages (${EARLIER} more)`,
    );
    const rows = await served.store.getMessages(ID);
    {
      // A newer Hermes's compaction: the earlier rows taken out of the replay, in one write.
      using raw = await rawOpen(path);
      raw.exec("BEGIN");
      raw.prepare("UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ? AND id <= ?")
        .run(ID, rows[EARLIER - 1].id);
      raw.prepare(
        `INSERT INTO messages (session_id, role, content, timestamp)
         SELECT ?, 'user', 'the summary of it all', MAX(timestamp) + 1 FROM messages`,
      ).run(ID);
      raw.exec("COMMIT");
    }
    await page.waitForFunction(
      () => document.getElementById("messages")!.textContent!.includes("the summary of it all"),
      { timeout: 20_000 },
    );
    const shown = (await served.store.getMessages(ID)).map((m) => m.id);
    assert.deepEqual(await shownMessageIds(page), shown, "each message once, in order");
    assert.equal(await page.$("#earlier-messages"), null, "no earlier message left to show");
    await closePage(page);
  });
});
