/// <reference lib="dom" />
// A transcript of three pages: "Show earlier messages" clicked, and a message written before
// its answer came. The live update asked for then (the page's first message the one before
// the click) answered after it, and its count of the messages before that old first one was
// taken as the count still to load: the button said "90 more" where 50 were left.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import type { Handler } from "../../lib/web/handler.ts";
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
const ID = "20260501_100000_three_pages";
/** The server's page, small: the mechanism is the same at 5,000. */
const PAGE = 40;
const TOTAL = 130;
/** How long each /api/ answer waits: the live update is asked for before the click's answer. */
const SLOW_MS = 1500;

let browser: Browser;
let served: Served;
/** Whether the /api/ answers wait {@linkcode SLOW_MS}: from the click on, not while the page opens. */
let slow = false;

/** `handler`, each /api/ request held {@linkcode SLOW_MS} while {@linkcode slow} (as `slowed`). */
function lateWhileSlow(handler: Handler): Handler {
  return async (request) => {
    if (slow && new URL(request.url).pathname.startsWith("/api/")) {
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      // The client went away meanwhile (the page closed): not handed to the handler.
      if (request.signal.aborted) return new Response(null, { status: 499 });
    }
    return await handler(request);
  };
}

before(async () => {
  if (skip !== undefined) return;
  served = await serve(copyFixture("hermes-v11.db"), { transcriptPage: PAGE }, lateWhileSlow);
  await served.store.createSession(ID, "cli");
  await served.store.appendMessages(ID, numberedMessages(TOTAL));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

describe("Show earlier while a live update is on its way", { skip }, () => {
  test("the button counts the messages left to load", { timeout: 60_000 }, async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${ID}`);
    await page.waitForSelector("#live.on", { timeout: 15_000 });
    const answers: string[] = [];
    page.on("response", (response: { url(): string }) => {
      if (response.url().includes("/api/session?")) answers.push(response.url());
    });
    // From here each answer is late: the live update is asked for before the click's answer.
    slow = true;
    await page.click("#earlier-messages");
    await served.store.appendMessages(ID, [{ role: "assistant", content: "a live reply" }]);
    // The click's answer, then the live update's (asked for again, the page shown changed).
    await page.waitForFunction(
      () => document.getElementById("messages")!.textContent!.includes("a live reply"),
      { timeout: 20_000 },
    );
    assert.ok(answers.length >= 2, answers.join("\n"));
    assert.match(answers[0], /&before=/, "the click answered first");
    const ids = await shownMessageIds(page);
    const all = (await served.store.getMessages(ID)).map((m) => m.id);
    assert.deepEqual(ids, all.slice(-ids.length), "the newest messages, each once, in order");
    assert.equal(ids.length, 2 * PAGE + 1);
    const label = await page.$eval("#earlier-messages", (node: Element) => node.textContent);
    assert.equal(label, `Show earlier messages (${TOTAL - 2 * PAGE} more)`);
    await closePage(page);
  });
});
