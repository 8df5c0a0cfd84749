/// <reference lib="dom" />
// The session browser in a real chromium on what a reader meets now and then: names of tools
// hundreds of characters long without a space, a search with exactly one hit, a Japanese
// search, a session without messages, and a database without any session.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture, tempDbPath } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  pageBehaviourSkip,
  pageText,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

const LONG_NAMES = "odd_long_names";
const LONG_NAME = "x".repeat(300);
const JAPANESE = "odd_japanese";
const SILENT = "odd_no_messages";

let browser: Browser;
let served: Served;
let empty: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = copyFixture("hermes-v11.db");
  {
    let tick = 1777900000;
    await using writer = await openStore(path, { clock: () => tick++ });
    await writer.createSession(LONG_NAMES, "cli");
    await writer.appendMessages(LONG_NAMES, [
      { role: "user", content: "run the tool with the long name" },
      {
        role: "assistant",
        content: "running it",
        toolCalls: [{
          id: "call_long",
          type: "function",
          function: { name: LONG_NAME, arguments: "{}" },
        }],
      },
      { role: "tool", toolCallId: "call_long", toolName: LONG_NAME, content: "done" },
    ]);
    await writer.createSession(JAPANESE, "telegram");
    await writer.appendMessages(JAPANESE, [
      { role: "user", content: "東京タワーに行きたいです。天気はどうですか？" },
      { role: "assistant", content: "東京は晴れです。" },
    ]);
    await writer.createSession(SILENT, "cli");
  }
  served = await serve(path);
  const nothing = tempDbPath();
  {
    await using _created = await openStore(nothing);
  }
  empty = await serve(nothing);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
  await empty?.close();
});

describe("odd sessions in the browser", { skip }, () => {
  test("tool names of 300 characters without a space stay inside their message, folds open", async () => {
    for (const width of [1280, 375]) {
      const page = await openPage(browser, `${served.origin}/#/s/${LONG_NAMES}`, { width });
      await page.$$eval(
        "details",
        (all: HTMLDetailsElement[]) => all.forEach((d) => d.open = true),
      );
      const wide = await page.$$eval(
        "#messages article",
        (all: Element[]) =>
          all.filter((a) => a.scrollWidth > a.clientWidth).map((a) =>
            `${a.id}: ${a.scrollWidth} > ${a.clientWidth}`
          ),
      );
      assert.deepEqual(wide, [], `at ${width} px`);
      assert.match(await pageText(page, "details.call summary"), /x{20}/);
      await closePage(page);
    }
  });

  test("a Japanese search marks its words, and says 1 result, not 1 results", async () => {
    const page = await openPage(
      browser,
      `${served.origin}/#/search?q=${encodeURIComponent("東京タワー")}`,
    );
    assert.deepEqual(
      await page.$$eval(".hit .snippet mark", (m: Element[]) => m.map((n) => n.textContent)),
      ["東京タワー"],
    );
    assert.match(await pageText(page, ".view-search h2"), /^1 result for “?東京タワー”?$/);
    await closePage(page);
  });

  test("a session without messages says so; an id search offers it with no hit", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${SILENT}`);
    assert.equal(await pageText(page, "#messages"), "No messages.");
    await closePage(page);
    const search = await openPage(browser, `${served.origin}/#/search?q=${SILENT}`);
    assert.match(await pageText(search, "#named"), new RegExp(`Session ${SILENT}`));
    assert.match(await pageText(search, ".view-search h2"), /^0 results for/);
    assert.equal(await pageText(search, ".empty"), "No message matches.");
    await closePage(search);
  });

  test("a database without sessions shows an empty listing, search and usage, without errors", async () => {
    const page = await openPage(browser, `${empty.origin}/#/`);
    assert.match(await pageText(page, ".empty"), /^No sessions yet\./);
    await closePage(page);
    const search = await openPage(
      browser,
      `${empty.origin}/#/search?q=${encodeURIComponent("北京")}`,
    );
    assert.equal(await pageText(search, ".empty"), "Nothing found.");
    await closePage(search);
    const usage = await openPage(browser, `${empty.origin}/#/usage`);
    assert.equal(await pageText(usage, "#usage-none"), "No usage in this period.");
    await closePage(usage);
  });
});
