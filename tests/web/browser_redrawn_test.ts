/// <reference lib="dom" />
// The browser tests' wait for a view drawn after an action (`redrawn`) was ended by a live update
// that drew the old view in between: the test then read the old view (seen on a PostgreSQL store,
// whose change marker moves on any commit of the server, while other test files wrote to it). The
// page now says which address it drew (`body[data-drawn]`), and the wait is for a draw of the
// address the page is at. Here the interleaving is made on purpose: a live update draws the usage
// view, then the period changes while the new view's answers are held.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  pageBehaviourSkip,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

/** While set, the usage answers wait for it. */
let held: Promise<void> | undefined;
let served: Served;
let browser: Browser;

before(async () => {
  served = await serve(
    copyFixture("hermes-v11.db"),
    { pollMs: 100 },
    (handler) => async (request) => {
      if (new URL(request.url).pathname === "/api/usage") await held;
      return await handler(request);
    },
  );
  if (skip === undefined) browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

test("a view drawn by a live update before an action does not end the wait for the action's view", {
  skip,
  timeout: 60_000,
}, async () => {
  const page = await openPage(browser, `${served.origin}/#/usage?since=all`);
  try {
    await page.waitForSelector(".view-usage select[name=since]");
    await redrawn(page, async () => {
      // A write: the live update draws the usage view again, as it is.
      const drawn = await page.evaluate(() => document.body.getAttribute("data-ready"));
      await served.store.appendMessage("20260425_090019_d38f1d", { role: "user", content: "live" });
      await page.waitForFunction(
        (old: string | null) => document.body.getAttribute("data-ready") !== old,
        { timeout: 10_000 },
        drawn,
      );
      // The view drawn so far is marked: the view drawn for the new period is a new one.
      await page.$eval(".view-usage", (view: Element) => view.setAttribute("data-old", ""));
      // Then another period, whose answers come half a second later.
      let release!: () => void;
      held = new Promise((resolve) => release = resolve);
      await page.select(".view-usage select[name=since]", "7d");
      setTimeout(release, 500);
    });
    held = undefined;
    assert.match(await page.evaluate(() => location.hash), /since=7d/);
    assert.equal(
      await page.$$eval(".view-usage[data-old]", (views: Element[]) => views.length),
      0,
      "the view read is the one drawn for the new period, not the one before",
    );
    assert.equal(
      await page.$eval(
        ".view-usage select[name=since]",
        (select: Element) => (select as HTMLSelectElement).value,
      ),
      "7d",
    );
  } finally {
    held = undefined;
    await closePage(page);
  }
});
