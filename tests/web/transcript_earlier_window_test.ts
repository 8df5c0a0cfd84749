/// <reference lib="dom" />
// A transcript opened at an earlier message (a search hit deep in a long session), later
// messages not shown, while a gateway appends to it: each live change read the whole window
// again (`from=FIRST&limit=COUNT`, up to 5,000 messages) and drew it anew. Now a change asks
// only the counts after the last message shown (`beyond=LAST&limit=0`): an append makes the
// "Show later" count grow and nothing else; a deletion or a rewrite of the messages shown has
// the window read and drawn again; "Show later" still loads what was appended.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  redrawn,
  shownMessageIds,
} from "./_browser.ts";
import { numberedMessages, serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();
const ID = "20260501_140000_earlier_window";
const REWRITTEN = "20260501_150000_earlier_rewritten";
/** The server's page, small: the mechanism is the same at 5,000. */
const PAGE = 40;
const TOTAL = 100;
/** The message the page is opened at: 20 above it are shown, then the rest of the page. */
const AT = 40;
const FIRST = AT - 20;

let browser: Browser;
let served: Served;
let path: string;

before(async () => {
  if (skip !== undefined) return;
  path = copyFixture("hermes-v11.db");
  served = await serve(path, { transcriptPage: PAGE });
  for (const id of [ID, REWRITTEN]) {
    await served.store.createSession(id, "cli");
    await served.store.appendMessages(id, numberedMessages(TOTAL));
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** The shown message ids of session `id`, in transcript order. */
async function ids(id: string): Promise<number[]> {
  return (await served.store.getMessages(id)).map((m) => m.id);
}

/** Opens session `id` at its message number {@linkcode AT}, live. */
async function openAtEarlier(id: string): Promise<Page> {
  const page = await openPage(browser, `${served.origin}/#/s/${id}?m=${(await ids(id))[AT]}`);
  await page.waitForSelector("#live.on", { timeout: 15_000 });
  return page;
}

/** The "Show later" button's text, or null when there is none. */
async function laterLabel(page: Page): Promise<string | null> {
  return await page.evaluate(() => document.getElementById("later-messages")?.textContent ?? null);
}

/** Waits until the "Show later" button says `count` more. */
async function laterSays(page: Page, count: number): Promise<void> {
  await page.waitForFunction(
    (text: string) => document.getElementById("later-messages")?.textContent === text,
    { timeout: 10_000 },
    `Show later messages (${count} more)`,
  );
}

/** The `/api/session` answers the page gets from now on: each one's address and length. */
function sessionAnswers(page: Page): Promise<{ url: string; length: number }>[] {
  const answers: Promise<{ url: string; length: number }>[] = [];
  page.on("response", (response: { url(): string; text(): Promise<string> }) => {
    const url = response.url();
    if (!url.includes("/api/session?")) return;
    answers.push(response.text().then((text) => ({ url, length: text.length })));
  });
  return answers;
}

describe("a transcript opened at an earlier message, while messages are appended", { skip }, () => {
  test("an append changes only the later count; a deletion in the window redraws it; Show later loads the appended", async () => {
    const page = await openAtEarlier(ID);
    const all = await ids(ID);
    assert.deepEqual(await shownMessageIds(page), all.slice(FIRST, FIRST + PAGE));
    assert.equal(await laterLabel(page), `Show later messages (${TOTAL - FIRST - PAGE} more)`);
    // A node of the window, marked: drawn anew, it is gone.
    await page.evaluate((id: number) => {
      document.getElementById(`m-${id}`)!.setAttribute("data-kept", "yes");
    }, all[AT]);
    const answers = sessionAnswers(page);

    // (a) Each append, a change of its own: the later count grows by one.
    const appended: number[] = [];
    for (let i = 1; i <= 3; i++) {
      appended.push(await served.store.appendMessage(ID, { role: "user", content: `later ${i}` }));
      await laterSays(page, TOTAL - FIRST - PAGE + i);
    }
    // (b) Not read again: only count answers, each far smaller than the window's.
    const window = await (await fetch(
      `${served.origin}/api/session?id=${ID}&from=${all[FIRST]}&limit=${PAGE}`,
    )).text();
    const got = await Promise.all(answers);
    assert.ok(got.length >= 3, `an answer a change: ${JSON.stringify(got)}`);
    for (const answer of got) {
      assert.match(answer.url, new RegExp(`&beyond=${all[FIRST + PAGE - 1]}&limit=0$`));
      assert.ok(answer.length * 4 < window.length, `${answer.length} of ${window.length}`);
    }
    assert.equal(await page.$("[data-kept]") !== null, true, "the window not drawn again");
    assert.deepEqual(await shownMessageIds(page), all.slice(FIRST, FIRST + PAGE));

    // (c) A message of the window deleted: the window read and drawn again, without it.
    const gone = all[AT + 5];
    {
      using raw = await rawOpen(path);
      raw.prepare("DELETE FROM messages WHERE id = ?").run(gone);
    }
    await page.waitForFunction((id: number) => !document.getElementById(`m-${id}`), {
      timeout: 10_000,
    }, gone);
    const left = [...all, ...appended].filter((id) => id !== gone);
    assert.deepEqual(await shownMessageIds(page), left.slice(FIRST, FIRST + PAGE));
    assert.equal(await page.$("[data-kept]"), null, "drawn again");
    assert.ok((await Promise.all(answers)).some((answer) => answer.url.includes("&from=")));
    await laterSays(page, left.length - FIRST - PAGE);

    // (d) Show later, until none is left: the appended messages, each once, in order.
    while (await laterLabel(page) !== null) {
      await redrawn(page, () => page.click("#later-messages"));
    }
    assert.deepEqual(await shownMessageIds(page), left.slice(FIRST));
    await closePage(page);
  });

  test("the session rewritten (replaceMessages): the window's messages gone, the transcript drawn again", async () => {
    const page = await openAtEarlier(REWRITTEN);
    await served.store.replaceMessages(REWRITTEN, [
      { role: "user", content: "the compacted summary" },
    ]);
    await page.waitForFunction(
      () => document.getElementById("messages")!.textContent!.includes("the compacted summary"),
      { timeout: 10_000 },
    );
    assert.deepEqual(await shownMessageIds(page), await ids(REWRITTEN));
    assert.equal(await laterLabel(page), null);
    await closePage(page);
  });
});
