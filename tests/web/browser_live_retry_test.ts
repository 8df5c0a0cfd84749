/// <reference lib="dom" />
// The page's live stream when the server refuses it with an error status (a 503: its most open
// streams reached): the browser's EventSource gives up on an error status for good, so the page
// asks again itself, and is live once a place is free.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import { type Browser, closePage, launchBrowser, openPage, pageBehaviourSkip } from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  served = await serve(copyFixture("hermes-v11.db"), { maxLiveStreams: 1 });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

test("a page whose live stream was refused (503) is live once another page's place is free", {
  skip,
  timeout: 60_000,
}, async () => {
  // Two browser contexts: tabs of one share a single stream (they elect a leader).
  const first = await browser.createBrowserContext();
  const second = await browser.createBrowserContext();
  try {
    const holder = await openPage(first, `${served.origin}/`);
    await holder.waitForSelector("#live.on", { timeout: 15_000 });
    const refused = await openPage(second, `${served.origin}/`);
    // Its stream is refused while the other holds the only place: the dot says it is retrying.
    await refused.waitForFunction(
      () => document.getElementById("live")!.title === "Live updates disconnected; retrying",
      { timeout: 15_000 },
    );
    assert.equal(await refused.$eval("#live", (n: Element) => n.classList.contains("on")), false);
    await closePage(holder);
    await refused.waitForSelector("#live.on", { timeout: 20_000 });
    await closePage(refused);
  } finally {
    await first.close();
    await second.close();
  }
});
