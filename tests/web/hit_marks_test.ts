/// <reference lib="dom" />
// A search hit on a row the transcript leaves out (a newer Hermes searches its compacted rows)
// carries the mark the transcript with every row puts on it (`[compacted]`), in the answer and
// in the hits the page draws; a hit on a row the transcript shows carries none, nor does any
// hit of a file whose schema has no such rows. Over copies of the v21 and v11 fixtures.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { copyFixture } from "../_helpers.ts";
import { type Browser, closePage, launchBrowser, openPage, pageBehaviourSkip } from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

interface Hit {
  id: number;
  session_id: string;
  marks: string[];
}

/** The hits of `/api/search?q=QUERY` over a copy of `fixture`, by id. */
async function hitsOf(fixture: string, query: string): Promise<Map<number, string[]>> {
  const store = await openStore(copyFixture(fixture), { readonly: true });
  try {
    const handle = createHandler(store);
    const response = await handle(
      new Request(`http://127.0.0.1:8787/api/search?q=${encodeURIComponent(query)}`),
    );
    assert.equal(response.status, 200);
    const { hits } = await response.json() as { hits: Hit[] };
    return new Map(hits.map((hit) => [hit.id, hit.marks]));
  } finally {
    await store.close();
  }
}

describe("search hits' marks (/api/search)", () => {
  test("search() marks a hit on a compacted row, and none on a row the transcript shows", async () => {
    const hits = await hitsOf("hermes-v21.db", "docker");
    // 13 is compacted into the summary (14); 1 and 6 are rows their transcripts show.
    assert.deepEqual(hits.get(13), ["[compacted]"]);
    assert.deepEqual(hits.get(1), []);
    assert.deepEqual(hits.get(6), []);
  });

  test("search() gives every hit of a v11 file no mark", async () => {
    const hits = await hitsOf("hermes-v11.db", "docker");
    assert.ok(hits.size > 0);
    for (const marks of hits.values()) assert.deepEqual(marks, []);
  });
});

const skip = pageBehaviourSkip();

describe("search hits' marks in the page", { skip }, () => {
  let browser: Browser;
  let served: Served;

  before(async () => {
    served = await serve(copyFixture("hermes-v21.db"));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await served?.close();
  });

  test("the hit on a compacted row says [compacted], as its transcript does", {
    timeout: 60_000,
  }, async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=autovacuum`);
    await page.waitForSelector(".view-search .hit");
    const rows = await page.$$eval(
      ".view-search .hit",
      (nodes: Element[]) =>
        nodes.map((node) => ({
          href: node.querySelector("a")?.getAttribute("href") ?? "",
          marks: [...node.querySelectorAll(".row-meta .mark")].map((mark) => mark.textContent),
        })),
    );
    // The hits are the two compacted rows that say it (11, 12) and the summary (14), by rank.
    const marked = rows.map((row: { href: string; marks: string[] }) =>
      `${row.href.replace(/^.*[?&]m=/, "")} ${row.marks.join(" ")}`.trim()
    ).sort();
    assert.deepEqual(marked, ["11 [compacted]", "12 [compacted]", "14"]);
    await closePage(page);
  });
});
