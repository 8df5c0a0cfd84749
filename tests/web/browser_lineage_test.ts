/// <reference lib="dom" />
// The transcript view in a real chromium on hard cases: a 3000-deep compression chain and a
// session with 2000 children (the viewed session always in the lineage panel, the panel a sane
// size, the cut said), the details list not stretched beside a tall lineage, tool-call ids that
// are names of built-in JS properties, and the live dot when the store cannot be read.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  withBreakableMarker,
} from "./_browser.ts";
import { CHAIN, chainId, lineageDb, WIDE, wideId } from "./_lineage_db.ts";
import { slowed } from "./_served.ts";

const skip = pageBehaviourSkip();

/** Tool-call ids that are names on every JS object. */
const BUILT_IN_IDS = ["toString", "constructor", "valueOf", "__proto__", "hasOwnProperty"];

let browser: Browser;
let store: SessionStore;
let server: Listening;
let origin: string;
/** While true, the store cannot be read (as a stopped database). */
const broken = { now: false };

before(async () => {
  if (skip !== undefined) return;
  const path = await lineageDb();
  {
    await using writer = await openStore(path);
    await writer.createSession("calls", "cli");
    await writer.appendMessages("calls", [
      { role: "user", content: "call things" },
      {
        role: "assistant",
        content: "calling",
        toolCalls: [...BUILT_IN_IDS, "call_ok"].map((id) => ({
          id,
          type: "function",
          function: { name: `tool_${id}`, arguments: "{}" },
        })),
      },
      { role: "tool", toolCallId: "call_ok", toolName: "ok", content: "the one result" },
    ]);
  }
  store = await openStore(path, { readonly: true });
  const breakable = withBreakableMarker(
    store,
    broken,
    () => new Error("the database went away"),
  );
  server = await listen(slowed(createHandler(breakable, { pollMs: 100 })), {
    host: "127.0.0.1",
    port: 0,
  });
  origin = `http://127.0.0.1:${server.port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
});

function open(hash: string): Promise<Page> {
  return openPage(browser, `${origin}/${hash}`);
}
const close = closePage;

/** What the lineage panel shows. */
function panel(page: Page) {
  return page.evaluate(() => {
    const nav = document.querySelector(".lineage") as HTMLElement | null;
    return {
      nodes: document.querySelectorAll(".lineage li:not(.cut)").length,
      current: (document.querySelector(".lineage li.current > strong") as HTMLElement | null)
        ?.innerText ?? null,
      cuts: [...document.querySelectorAll(".lineage li.cut")].map((li) =>
        (li as HTMLElement).innerText
      ),
      height: nav?.getBoundingClientRect().height ?? 0,
      rows: [...document.querySelectorAll(".details-list dt")].map((dt) =>
        dt.getBoundingClientRect().top
      ),
    };
  });
}

describe("the transcript view on hard cases", { skip }, () => {
  test("a 3000-deep chain's lineage shows the viewed session, says the cut, and stays short", async () => {
    for (const i of [CHAIN - 1, 1500, 3]) {
      const page = await open(`#/s/${chainId(i)}`);
      const shown = await panel(page);
      assert.equal(shown.current, chainId(i));
      assert.ok(shown.nodes <= 12, `${shown.nodes} nodes`);
      assert.ok(
        shown.cuts.some((cut: string) => /more in the chain|not shown/.test(cut)),
        `${shown.cuts}`,
      );
      assert.ok(shown.height < 860, `the panel is ${shown.height} px tall`);
      // The details list keeps its rows together beside the lineage (not spread to its height).
      const gaps = shown.rows.slice(1).map((top: number, k: number) => top - shown.rows[k]);
      assert.ok(Math.max(...gaps) < 40, `rows ${gaps} px apart`);
      await close(page);
    }
  });

  test("a child among 2000 is in its lineage panel, with how many siblings are not shown", async () => {
    const page = await open(`#/s/${wideId(WIDE - 1)}`);
    const shown = await panel(page);
    assert.equal(shown.current, wideId(WIDE - 1));
    assert.ok(shown.nodes <= 31, `${shown.nodes} nodes`);
    assert.ok(shown.cuts.includes(`… ${(WIDE - 30).toLocaleString("en-US")} more not shown`));
    // Beside a lineage taller than itself, the details list keeps its rows together.
    const gaps = shown.rows.slice(1).map((top: number, k: number) => top - shown.rows[k]);
    assert.ok(Math.max(...gaps) < 40, `rows ${gaps} px apart`);
    await close(page);
  });

  test("tool calls with ids named like built-in properties get no bogus result link", async () => {
    const page = await open("#/s/calls");
    const links = await page.$$eval(
      ".call a.jump",
      (as: Element[]) => as.map((a) => a.getAttribute("href")),
    );
    assert.equal(links.length, 1, `links: ${links}`);
    assert.match(links[0], /^#m-\d+$/);
    await close(page);
  });

  test("the live dot shows failed while the store cannot be read, and live again after", async () => {
    const page = await open("#/");
    const live = () => page.evaluate(() => document.getElementById("live")!.className);
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    broken.now = true;
    try {
      await page.waitForFunction(
        () => document.getElementById("live")!.classList.contains("failed"),
        { timeout: 10_000 },
      );
      assert.doesNotMatch(await live(), /\bon\b/);
      assert.match(await page.$eval("#live", (n: Element) => n.textContent), /failed/);
    } finally {
      broken.now = false;
    }
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"), {
      timeout: 10_000,
    });
    assert.doesNotMatch(await live(), /failed/);
    await close(page);
  });
});
