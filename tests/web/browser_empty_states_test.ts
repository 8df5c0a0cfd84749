/// <reference lib="dom" />
// What the session browser shows where there is little to show: an empty database (no session
// yet, and how sessions get there), filters that match nothing (and a way to clear them), a
// search hit in an untitled session (named by its first words, as the listing names it, its id
// below), and an assistant message without text, reasoning or tool calls (a note, not an empty
// box; the HTML export says the same), and a tool result without text (the same note, not an
// empty fold, in the message and beside the call).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { renderHtmlDocument } from "../../lib/web/html_transcript.ts";
import { tempDbPath } from "../_helpers.ts";
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

const UNTITLED = "empty_states_untitled";
const TITLED = "empty_states_titled";
const SILENT_REPLY = "empty_states_silent_reply";
const SILENT_TOOL = "empty_states_silent_tool";
const FIRST_WORDS = "Where does the wombat sleep at noon";

/** A new database with an untitled, a titled session and one with an empty assistant reply. */
async function statesDb(): Promise<string> {
  const path = tempDbPath();
  let tick = 1777900000;
  await using writer = await openStore(path, { clock: () => tick++ });
  await writer.createSession(UNTITLED, "cli");
  await writer.appendMessages(UNTITLED, [
    { role: "user", content: `${FIRST_WORDS}? asks the zookeeper` },
    { role: "assistant", content: "In its burrow." },
  ]);
  await writer.createSession(TITLED, "cli");
  await writer.setSessionTitle(TITLED, "Marsupials");
  await writer.appendMessages(TITLED, [{ role: "user", content: "a wombat is a marsupial" }]);
  await writer.createSession(SILENT_REPLY, "cli");
  await writer.appendMessages(SILENT_REPLY, [
    { role: "user", content: "say nothing" },
    { role: "assistant", content: null },
    { role: "assistant", content: "   " },
  ]);
  await writer.createSession(SILENT_TOOL, "cli");
  await writer.appendMessages(SILENT_TOOL, [
    { role: "user", content: "run them" },
    {
      role: "assistant",
      content: "running",
      toolCalls: ["call_null", "call_blank", "call_said"].map((id) => ({
        id,
        type: "function",
        function: { name: `tool_${id}`, arguments: "{}" },
      })),
    },
    { role: "tool", toolCallId: "call_null", toolName: "quiet", content: null },
    { role: "tool", toolCallId: "call_blank", toolName: "blank", content: " \n " },
    { role: "tool", toolCallId: "call_said", toolName: "said", content: "the one result" },
  ]);
  return path;
}

/** An empty database, with the Hermes tables. */
async function emptyDb(): Promise<string> {
  const path = tempDbPath();
  await using _created = await openStore(path);
  return path;
}

describe("search hits of untitled sessions (handler)", () => {
  test("GET /api/search sends an untitled session's listing preview; a titled one's is empty", async () => {
    await using store = await openStore(await statesDb());
    const handle = createHandler(store, { pollMs: 50 });
    const get = async (url: string) =>
      await (await handle(new Request(`http://127.0.0.1:8787${url}`))).json();
    const listed = await get("/api/sessions?limit=50");
    const preview = listed.sessions.find((s: { id: string }) => s.id === UNTITLED).preview;
    assert.match(preview, /^Where does the wombat sleep/);
    const { hits } = await get("/api/search?q=wombat&limit=50");
    const named = Object.fromEntries(
      hits.map((h: { session_id: string; title: string; preview: string }) => [
        h.session_id,
        [h.title, h.preview],
      ]),
    );
    assert.deepEqual(named, { [UNTITLED]: [null, preview], [TITLED]: ["Marsupials", ""] });
  });
});

describe("empty states in the browser", { skip }, () => {
  let browser: Browser;
  let served: Served;
  let empty: Served;

  before(async () => {
    served = await serve(await statesDb());
    empty = await serve(await emptyDb());
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await served?.close();
    await empty?.close();
  });

  test("an empty database says there is no session yet and how sessions get there", async () => {
    const page = await openPage(browser, `${empty.origin}/#/`);
    const text = await pageText(page, "#no-sessions");
    assert.match(text, /^No sessions yet\./);
    assert.match(text, /hermes-state import/);
    assert.match(text, /hermes-state demo/);
    assert.doesNotMatch(text, /match/);
    assert.equal(await page.$("#clear-filters"), null);
    await closePage(page);
  });

  test("filters that match nothing say so, and the link clears them (the order kept)", async () => {
    const page = await openPage(browser, `${served.origin}/#/?source=nosuch&order=started`);
    assert.equal(await pageText(page, "#no-sessions"), "No sessions match. Clear the filters");
    await redrawn(page, () => page.click("#clear-filters"));
    assert.equal(await page.evaluate(() => location.hash), "#/?order=started");
    assert.equal(await page.$("#no-sessions"), null);
    assert.equal(await page.$$eval(".view-sessions .row", (rows: Element[]) => rows.length), 4);
    await closePage(page);
  });

  test("an untitled session's hit is named by its first words, as in the listing, its id below", async () => {
    const listing = await openPage(browser, `${served.origin}/#/`);
    const listed = await listing.$$eval(
      ".view-sessions .row-title",
      (titles: Element[]) => titles.map((t) => t.textContent),
    );
    await closePage(listing);
    const page = await openPage(browser, `${served.origin}/#/search?q=wombat`);
    const hits = await page.$$eval(
      ".hit",
      (all: Element[]) =>
        all.map((hit) => [
          hit.querySelector(".row-title")?.textContent,
          hit.querySelector(".hit-id")?.textContent ?? null,
        ]),
    );
    const untitled = hits.find(([, id]: (string | null)[]) => id === UNTITLED);
    assert.ok(untitled, JSON.stringify(hits));
    assert.match(untitled[0], /^Where does the wombat sleep/);
    assert.ok(listed.includes(untitled[0]), `${untitled[0]} in ${listed.join(" | ")}`);
    assert.deepEqual(hits.find(([title]: (string | null)[]) => title === "Marsupials"), [
      "Marsupials",
      null,
    ]);
    await closePage(page);
  });

  test("an assistant message without text, reasoning or tool calls shows a muted note", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${SILENT_REPLY}`);
    const bodies = await page.$$eval(
      "#messages article.role-assistant .content",
      (all: Element[]) =>
        all.map((c) => [c.textContent, getComputedStyle(c.firstElementChild!).color]),
    );
    const muted = await page.evaluate(() =>
      getComputedStyle(document.querySelector("#messages .msg-head time")!).color
    );
    assert.deepEqual(bodies.map(([text]: string[]) => text), ["(no text)", "(no text)"]);
    for (const [, color] of bodies) assert.equal(color, muted);
    await closePage(page);
  });

  test("a tool result without text shows the muted note, not an empty fold, beside its call too", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${SILENT_TOOL}`);
    const tools = await page.$$eval(
      "#messages article.role-tool",
      (all: Element[]) =>
        all.map((a) => [
          a.querySelector(".tool-result") !== null,
          a.querySelector(".no-text")?.textContent ?? null,
          a.querySelector(".no-text") ? getComputedStyle(a.querySelector(".no-text")!).color : null,
        ]),
    );
    const muted = await page.evaluate(() =>
      getComputedStyle(document.querySelector("#messages .msg-head time")!).color
    );
    assert.deepEqual(tools, [
      [false, "(no text)", muted],
      [false, "(no text)", muted],
      [true, null, null],
    ]);
    const results = await page.$$eval(
      "#messages details.call .call-grid > div:nth-child(2)",
      (all: Element[]) => all.map((side) => side.querySelector(".no-text")?.textContent ?? null),
    );
    assert.deepEqual(results, ["(no text)", "(no text)", null]);
    await closePage(page);
  });
});

test("renderHtmlDocument() notes an assistant message without text, as the page does", async () => {
  await using store = await openStore(await statesDb());
  const html = renderHtmlDocument((await store.exportSession(SILENT_REPLY))!);
  const notes = html.match(/<em class="no-text">\(no text\)<\/em>/g) ?? [];
  assert.equal(notes.length, 2);
  assert.match(html, /\.no-text \{ color: var\(--muted\)/);
  const reply = await openStore(await statesDb());
  const spoken = renderHtmlDocument((await reply.exportSession(UNTITLED))!);
  await reply.close();
  assert.doesNotMatch(spoken, /no-text">/);
});

test("renderHtmlDocument() notes a tool result without text, as the page does", async () => {
  await using store = await openStore(await statesDb());
  const html = renderHtmlDocument((await store.exportSession(SILENT_TOOL))!);
  const articles = html.match(/<article class="msg role-tool"[\s\S]*?<\/article>/g) ?? [];
  assert.equal(articles.length, 3);
  const shown = articles.map((
    a,
  ) => [/<summary>Tool result</.test(a), /no-text">\(no text\)</.test(a)]);
  assert.deepEqual(shown, [[false, true], [false, true], [true, false]]);
  // Beside the calls too: the two empty results, and not the one that said something.
  const calls = html.match(/<details class="call">[\s\S]*?<\/details>/g) ?? [];
  assert.deepEqual(calls.map((c) => /no-text">\(no text\)</.test(c)), [true, true, false]);
});
