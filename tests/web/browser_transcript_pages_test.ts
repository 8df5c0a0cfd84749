/// <reference lib="dom" />
// The transcript of a session larger than a page, in a real chromium: the page shows the newest
// page with a "Show earlier messages" button above it, which loads the page before and keeps the
// reader where they were; a search hit in an earlier page opens at its message; a live append
// still lands below, with the earlier page the reader loaded kept.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
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
const ID = "20260501_100000_long_pages";
/** The server's page, small: the mechanism is the same at 5,000. */
const PAGE = 40;
const EARLIER = 30;

let browser: Browser;
let served: Served;
/** The ids of the session's messages, in transcript order. */
let all: number[];

before(async () => {
  if (skip !== undefined) return;
  served = await serve(copyFixture("hermes-v11.db"), { transcriptPage: PAGE });
  await served.store.createSession(ID, "cli");
  await served.store.setSessionTitle(ID, "a session of many pages");
  const messages = numberedMessages(PAGE + EARLIER);
  messages[10] = { ...messages[10], content: "the wombatquill word of message 10" };
  await served.store.appendMessages(ID, messages);
  all = (await served.store.getMessages(ID)).map((m) => m.id);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** Whether the page has drawn the message of `id`. */
async function has(page: Page, id: number): Promise<boolean> {
  return await page.$(`#m-${id}`) !== null;
}

/** How many messages the transcript shows. */
async function drawnCount(page: Page): Promise<number> {
  return await page.$$eval("#messages > article", (nodes: Element[]) => nodes.length);
}

describe("a transcript of more than one page", { skip }, () => {
  test("shows the newest page; the button loads the earlier one where the reader was", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${ID}`);
    assert.equal(await drawnCount(page), PAGE);
    assert.equal(await has(page, all.at(-1)!), true, "the newest message");
    assert.equal(await has(page, all[EARLIER - 1]), false, "not the earlier page");
    const label = await page.$eval("#earlier-messages", (node: Element) => node.textContent);
    assert.equal(label, `Show earlier messages (${EARLIER} more)`);
    // Above the transcript, and the reader at the top: where the newest page starts stays put.
    const firstShown = `#m-${all[EARLIER]}`;
    const top = async () =>
      await page.$eval(firstShown, (node: Element) => node.getBoundingClientRect().top);
    const before = await top();
    await redrawn(page, () => page.click("#earlier-messages"));
    assert.equal(await drawnCount(page), PAGE + EARLIER);
    assert.equal(await has(page, all[0]), true, "the first message");
    assert.equal(await page.$("#earlier-messages"), null, "no earlier page left");
    assert.ok(Math.abs((await top()) - before) < 4, `kept in place: ${before} → ${await top()}`);
    assert.ok(await page.evaluate(() => scrollY) > 0);
    const order = await page.$$eval(
      "#messages > article",
      (nodes: Element[]) => nodes.map((node) => Number(node.id.slice(2))),
    );
    assert.deepEqual(order, all, "each message once, in order");

    // Live: an append lands below, and the earlier page stays.
    await page.waitForSelector("#live.on", { timeout: 15_000 });
    await served.store.appendMessages(ID, [{ role: "assistant", content: "a live reply below" }]);
    await page.waitForFunction(
      () => document.getElementById("messages")!.textContent!.includes("a live reply below"),
      { timeout: 10_000 },
    );
    assert.equal(await has(page, all[0]), true, "the earlier page kept");
    assert.equal(await drawnCount(page), PAGE + EARLIER + 1);
    await closePage(page);
  });

  test("a search hit in an earlier page opens at its message", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=wombatquill`);
    await redrawn(page, () => page.click("#rows .hit a"));
    const target = `#m-${all[10]}`;
    await page.waitForSelector(`${target}.target`);
    assert.match(await page.$eval(target, (node: Element) => node.textContent), /wombatquill/);
    // In the window: on screen.
    const box = await page.$eval(target, (node: Element) => {
      const rect = node.getBoundingClientRect();
      return { top: rect.top, bottom: rect.bottom, height: innerHeight };
    });
    assert.ok(box.bottom > 0 && box.top < box.height, `on screen: ${JSON.stringify(box)}`);
    // The page after it, and the newest one, are a button away.
    assert.equal(await has(page, all.at(-1)!), false);
    await redrawn(page, () => page.click("#later-messages"));
    assert.equal(await has(page, all.at(-1)!), true, "the newest message once loaded");
    assert.equal(await page.$("#later-messages"), null);
    await closePage(page);
  });
});
