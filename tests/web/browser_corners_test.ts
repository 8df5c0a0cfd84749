/// <reference lib="dom" />
// The session browser in a real chromium, in corners an operator meets: a right-to-left message
// reads right to left (its full stop at its end, the left), in the page and in its HTML export, and
// so do words typed in the search box;
// the usage chart of all time, per day, over more than 1,000 days still ends at the newest day;
// a session id longer than a search takes, pasted in the search box, still names its session.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
const RTL = "20260105_120000_rtl";
/** Arabic, ending with a full stop (a neutral character: its side is the paragraph's end). */
const ARABIC = "ما هو الخطأ في السطر الأول.";
/** 2023-01-02 12:00 UTC and 2026-01-05 12:00 UTC: 1,099 days apart. */
const OLDEST = Date.UTC(2023, 0, 2, 12) / 1000;
const NEWEST = Date.UTC(2026, 0, 5, 12) / 1000;
/** A session id longer than a search query may be (1,000 characters), as a tool may make one. */
const LONG_ID = `20260105_120000_${"x".repeat(1500)}`;

let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = tempDbPath();
  let now = OLDEST;
  {
    await using writer = await openStore(path, { clock: () => now });
    await writer.createSession("20230102_120000_old", "cli");
    now = NEWEST;
    await writer.createSession(RTL, "cli");
    await writer.appendMessages(RTL, [{ role: "user", content: ARABIC }]);
    await writer.createSession(LONG_ID, "cli");
    await writer.appendMessages(LONG_ID, [{ role: "user", content: "words of the long id" }]);
  }
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** Where the full stop and the letters of the first `.text` block sit, from the left. */
function fullStopAndLetters(page: Page): Promise<{ stop: number; letters: number[] }> {
  return page.evaluate(() => {
    const node = document.querySelector(".text")!.firstChild!;
    const text = node.textContent!;
    const left = (i: number) => {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      return range.getBoundingClientRect().left;
    };
    const letters = [...text].flatMap((c, i) => /\p{L}/u.test(c) ? [left(i)] : []);
    return { stop: left(text.length - 1), letters };
  });
}

describe(
  "corners an operator meets: right-to-left text, a long usage span, a long id",
  { skip },
  () => {
    test("a right-to-left message reads right to left: its full stop at its end, on the left", async () => {
      const page = await openPage(browser, `${served.origin}/#/s/${RTL}`);
      const shown = await fullStopAndLetters(page);
      assert.ok(
        shown.letters.every((x) => shown.stop < x),
        `the full stop left of every letter: ${JSON.stringify(shown)}`,
      );
      await closePage(page);
      // The HTML export shares the transcript's style: the same there (in a page of its own: the
      // page's policy allows no inline style).
      const html = await (await fetch(`${served.origin}/api/export?format=html&session=${RTL}`))
        .text();
      const file = await browser.newPage();
      await file.setContent(html);
      const exported = await fullStopAndLetters(file);
      assert.ok(exported.letters.every((x) => exported.stop < x), JSON.stringify(exported));
      await file.close();
    });

    test("right-to-left words typed in the search box read right to left", async () => {
      const page = await openPage(browser, `${served.origin}/#/`);
      await page.focus("#q");
      await page.keyboard.type(ARABIC);
      assert.equal(
        await page.$eval("#q", (box: Element) => getComputedStyle(box).direction),
        "rtl",
      );
      await page.keyboard.press("Escape");
      await closePage(page);
    });

    test("the usage of all time, per day, over more than 1,000 days ends at the newest day", async () => {
      const page = await openPage(browser, `${served.origin}/#/usage?since=all&by=day`, {
        timeZone: "UTC",
      });
      const days = await page.$$eval(
        "#usage-time figure:first-child rect.bar title",
        (nodes: Element[]) => nodes.map((node) => node.textContent!.slice(0, 10)),
      );
      assert.equal(days[0], "2023-01-02");
      assert.equal(days.at(-1), "2026-01-05", "the newest day is charted");
      await closePage(page);
    });

    test("a session id longer than a search takes, pasted in the search box, names its session", async () => {
      const page = await openPage(browser, `${served.origin}/#/`);
      await redrawn(page, () =>
        page.evaluate((id: string) => {
          const box = document.getElementById("q") as HTMLInputElement;
          box.value = id;
          box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
        }, LONG_ID));
      assert.equal(await page.$(".error"), null, "no error in place of the session");
      const named = await page.$eval("#named .row a", (a: Element) => a.getAttribute("href"));
      assert.equal(named, `#/s/${LONG_ID}`);
      assert.match(
        await page.$eval("#search-refused", (node: Element) => node.textContent),
        /^The messages were not searched: q is too long/,
      );
      await redrawn(page, () => page.click("#named .row a"));
      assert.match(
        await page.$eval("#messages", (node: Element) => node.textContent),
        /words of the long id/,
      );
      await closePage(page);
    });
  },
);
