/// <reference lib="dom" />
// A transcript of 3000 messages in a real chromium: all of it is there, its first message at the
// top and its last reachable at the end; a search hit deep inside opens at its message; Back
// puts the reader at the message they were reading though the messages out of view are only
// laid out once scrolled to (content-visibility), their heights guessed until then.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { NewMessage } from "../../lib/core/types.ts";
import { copyFixture } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  paintedText,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

const LONG = "long_transcript";
const COUNT = 3000;
const FIRST = "the very first message 第一条消息";
const LAST = "the very last message 最後のメッセージ";
/** The one message with this word, near the middle. */
const RARE = "quokka";
const RARE_AT = 1501;

/** 3000 messages: a user question, an answer that calls a tool, the tool's result, by turns. */
function messages(): NewMessage[] {
  const list: NewMessage[] = [];
  for (let i = 0; list.length < COUNT; i++) {
    list.push({ role: "user", content: `question ${i}: how big is the disk? 容量はどれくらい` });
    list.push({
      role: "assistant",
      content: `Answer ${i}, with code:\n\`\`\`sh\ndf -h /srv/${i}\n\`\`\`\nand **bold** words.`,
      reasoning: `thinking about question ${i}`,
      toolCalls: [{
        id: `call_${i}`,
        type: "function",
        function: { name: "terminal", arguments: JSON.stringify({ command: `df -h /srv/${i}` }) },
      }],
    });
    list.push({
      role: "tool",
      toolCallId: `call_${i}`,
      toolName: "terminal",
      content: JSON.stringify({ output: `/dev/sda${i} 100G\n`.repeat(3), exit_code: 0 }),
    });
  }
  list[0] = { role: "user", content: FIRST };
  list[RARE_AT] = { role: "user", content: `a ${RARE} crossed the road` };
  list[COUNT - 1] = { role: "assistant", content: LAST };
  return list;
}

let browser: Browser;
let served: Served;
let origin: string;
let path: string;

before(async () => {
  if (skip !== undefined) return;
  path = copyFixture("hermes-v11.db");
  let tick = 1777700000;
  {
    await using writer = await openStore(path, { clock: () => tick++ });
    await writer.createSession(LONG, "cli");
    await writer.setSessionTitle(LONG, "A long transcript");
    await writer.appendMessages(LONG, messages());
  }
  served = await serve(path, { pollMs: 100 });
  origin = served.origin;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** Waits until the page has drawn the frames its last scroll asked for. */
function settled(page: Page): Promise<void> {
  return page.evaluate(() =>
    new Promise<void>((done) =>
      requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 50)))
    )
  );
}

/** Where an article is in the window, and its text once painted. */
async function article(page: Page, selector: string) {
  const text: string = await page.$eval(selector, paintedText);
  const place = await page.$eval(selector, (node: Element) => {
    const box = node.getBoundingClientRect();
    return {
      id: node.id,
      top: box.top,
      bottom: box.bottom,
      inView: box.bottom > 0 && box.top < innerHeight,
    };
  });
  return { ...place, text };
}

describe("a transcript of 3000 messages", { skip }, () => {
  test("shows every message: the first at the top, the last reachable at the end", async () => {
    const page = await openPage(browser, `${origin}/#/s/${LONG}`);
    assert.equal(await page.$$eval("#messages > article", (a: Element[]) => a.length), COUNT);
    const first = await article(page, "#messages > article:first-child");
    assert.ok(first.inView, "the first message is in view");
    assert.match(first.text, new RegExp(FIRST));
    // To the end, as the End key does, until the page stops growing (heights are guessed
    // until the messages are laid out).
    for (let i = 0; i < 10; i++) {
      const moved = await page.evaluate(() => {
        const before = scrollY;
        scrollTo(0, document.documentElement.scrollHeight);
        return scrollY !== before;
      });
      await settled(page);
      if (!moved) break;
    }
    const last = await article(page, "#messages > article:last-child");
    assert.ok(last.inView, `the last message is in view (top ${last.top}, bottom ${last.bottom})`);
    assert.match(last.text, new RegExp(LAST));
    assert.match(last.text, /^ASSISTANT/);
    await closePage(page);
  });

  test("a search hit deep inside opens at its message, marked", async () => {
    const page = await openPage(browser, `${origin}/#/search?q=${RARE}`);
    assert.deepEqual(
      await page.$$eval(".hit mark", (m: Element[]) => m.map((n) => n.textContent)),
      [
        RARE,
      ],
    );
    await redrawn(page, () => page.click(".hit a"));
    await settled(page);
    const target = await article(page, "#messages > article.target");
    assert.match(target.text, new RegExp(`a ${RARE} crossed the road`));
    assert.ok(target.inView, `the hit's message is in view (top ${target.top})`);
    await closePage(page);
  });

  test("Back to it puts the reader at the message they were reading", async () => {
    const page = await openPage(browser, `${origin}/#/s/${LONG}`);
    await page.$eval("#messages > article:nth-child(2000)", (a: Element) => a.scrollIntoView());
    await page.evaluate(() => scrollBy(0, -100));
    await settled(page);
    const left = await article(page, "#messages > article:nth-child(2000)");
    assert.ok(left.inView);
    await redrawn(page, () => page.evaluate(() => location.hash = "#/"));
    assert.equal(await page.evaluate(() => document.body.getAttribute("data-view")), "sessions");
    await redrawn(page, () => page.goBack());
    await settled(page);
    const back = await article(page, "#messages > article:nth-child(2000)");
    assert.equal(back.id, left.id);
    assert.ok(Math.abs(back.top - left.top) < 2, `at ${back.top} px, as before (${left.top} px)`);
    await closePage(page);
  });

  test("a message written while it is being drawn comes once, at the end", async () => {
    // The batches drawn slowly (each 150 ms after the one before): the write lands among them.
    const page = await openPage(browser, `${origin}/#/`, {
      script: `const later = window.setTimeout;
        window.setTimeout = (f, ms, ...rest) => later(f, ms === 0 ? 150 : ms, ...rest);`,
    });
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    await page.evaluate((id: string) => location.hash = `#/s/${id}`, LONG);
    await page.waitForSelector("#messages");
    {
      await using writer = await openStore(path);
      await writer.appendMessage(LONG, { role: "user", content: "written while drawing" });
    }
    await page.waitForFunction(
      (count: number) =>
        document.querySelectorAll("#messages > article").length === count &&
        document.querySelector("#messages > article:last-child")!.textContent!.includes(
          "written while drawing",
        ),
      { timeout: 10_000 },
      COUNT + 1,
    );
    await settled(page);
    const texts = await page.$$eval(
      "#messages > article",
      (all: Element[]) =>
        all.filter((a) => a.textContent!.includes("written while drawing")).length,
    );
    assert.equal(texts, 1);
    await closePage(page);
  });
});
