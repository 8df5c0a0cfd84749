/// <reference lib="dom" />
// The session browser in a real chromium, as an attacker would try it: hostile text in every
// stored field (source, model, tool names, tool-call arguments, image URLs) shown and never
// run; the HTML export opened from disk runs nothing and loads nothing; and a page of another
// site in the operator's browser cannot make the API work for it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { openStore } from "../../lib/open_store.ts";
import type { SearchOptions } from "../../lib/core/search/options.ts";
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
import { listen } from "../../lib/web/listen.ts";
import { copyFixture } from "../_helpers.ts";

const skip = pageBehaviourSkip();

/** Markup that runs script wherever it is drawn as HTML, not as text. */
const X = `"><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
const EVIL_ID = `evil"id<b>`;

let browser: Browser;
let served: Served;
let searches = 0;

/** A copy of the v11 fixture with a session whose every field is hostile. */
async function evilDb(): Promise<string> {
  const path = copyFixture("hermes-v11.db");
  await using store = await openStore(path, { clock: () => 1777550400 });
  await store.createSession(EVIL_ID, `src${X}`, { model: `model${X}` });
  await store.setSessionTitle(EVIL_ID, `t<img src=x onerror="window.__pwned=3">`);
  await store.appendMessages(EVIL_ID, [
    {
      role: "user",
      content: [
        { type: "text", text: `text ${X} ![md](https://tracker.example/md.png)` },
        { type: "image_url", image_url: { url: "javascript:window.__pwned=4" } },
        {
          type: "image_url",
          image_url: { url: "data:text/html,<script>parent.__pwned=5</script>" },
        },
        {
          type: "image_url",
          image_url: { url: "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoNik+" },
        },
        { type: "image_url", image_url: { url: `https://tracker.example/p.png${X}` } },
      ],
    },
    {
      role: "assistant",
      content: `reply ${X}`,
      toolCalls: [{
        id: `c1${X}`,
        type: "function",
        function: { name: `tool${X}`, arguments: JSON.stringify({ a: X }) },
      }],
    },
    { role: "tool", toolName: `tool${X}`, toolCallId: `c1${X}`, content: `result ${X}` },
  ]);
  return path;
}

before(async () => {
  if (skip !== undefined) return;
  served = await serve(await evilDb(), {
    search: (query: string, options: SearchOptions) => {
      searches++;
      return served.store.searchMessages(query, options);
    },
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** Records what `page` asks of other origins and every dialog it opens. */
function watch(page: Page, own: string): { outside: string[]; dialogs: string[] } {
  const seen = { outside: [] as string[], dialogs: [] as string[] };
  page.on("request", (request: { url(): string }) => {
    const url = request.url();
    if (!url.startsWith(own) && !url.startsWith("data:")) seen.outside.push(url);
  });
  page.on("dialog", (dialog: { message(): string; dismiss(): Promise<void> }) => {
    seen.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return seen;
}

describe("hostile stored fields in the browser", { skip }, () => {
  test("the listing, the transcript and the usage view show every field as text and run nothing", async () => {
    const page = await browser.newPage();
    const seen = watch(page, served.origin);
    for (
      const hash of [
        `#/?source=${encodeURIComponent(`src${X}`)}`,
        `#/s/${encodeURIComponent(EVIL_ID)}`,
        "#/usage?by=model&since=all",
        "#/usage?by=source&since=all",
      ]
    ) {
      // A change of the hash returns before the view is drawn again: waited for by its mark.
      await redrawn(page, () => page.goto(`${served.origin}/${hash}`, { waitUntil: "load" }));
      await page.$$eval(
        "details",
        (all: HTMLDetailsElement[]) => all.forEach((d) => d.open = true),
      );
      await new Promise((ok) => setTimeout(ok, 300));
      const state = await page.evaluate(() => ({
        pwned: (globalThis as { __pwned?: unknown }).__pwned,
        injected: document.querySelectorAll("#app script, #app iframe, #app object, #app embed")
          .length,
        images: Array.from(
          document.querySelectorAll("#app img"),
          (i) => (i as HTMLImageElement).src,
        ),
        links: Array.from(document.querySelectorAll("a[href]"), (a) => a.getAttribute("href")!)
          .filter((href) => !/^(#|\/api\/)/.test(href)),
        text: (document.getElementById("app") as HTMLElement).innerText,
      }));
      assert.equal(state.pwned, undefined, `no hostile script ran on ${hash}`);
      assert.equal(state.injected, 0, hash);
      assert.deepEqual(state.images, [], `no image of a stored URL is drawn on ${hash}`);
      assert.deepEqual(state.links, [], `no link leaves the page on ${hash}`);
      assert.ok(
        state.text.includes('"><img src=x onerror='),
        `the markup is shown as text on ${hash}`,
      );
    }
    assert.deepEqual(seen.outside, [], "nothing is asked of another origin");
    assert.deepEqual(seen.dialogs, []);
    await closePage(Object.assign(page, { errors: [] }));
  });

  test("the HTML export opened from disk runs no script and loads nothing", async () => {
    const response = await fetch(
      `${served.origin}/api/export?format=html&session=${encodeURIComponent(EVIL_ID)}`,
    );
    assert.equal(response.status, 200);
    const file = join(tmpdir(), `hermes-websec-${Date.now()}.html`);
    writeFileSync(file, await response.text());
    const page = await browser.newPage();
    const seen = watch(page, `file://${file}`);
    await page.goto(`file://${file}`, { waitUntil: "load" });
    await new Promise((ok) => setTimeout(ok, 300));
    const state = await page.evaluate(() => ({
      pwned: (globalThis as { __pwned?: unknown }).__pwned,
      scripts: document.querySelectorAll("script, iframe, object, embed, form, base").length,
      images: document.querySelectorAll("img").length,
      links: document.querySelectorAll("a[href]").length,
    }));
    assert.equal(state.pwned, undefined);
    assert.equal(state.scripts, 0);
    assert.equal(state.images, 0, "no stored URL becomes an image");
    assert.equal(state.links, 0);
    assert.deepEqual(seen.outside, []);
    assert.deepEqual(seen.dialogs, []);
    await page.close();
  });
});

describe("a page of another site in the operator's browser", { skip }, () => {
  test("cannot make the API search, export or stream for it (cross-site and same-site requests are refused)", async () => {
    // The attacker's page, with no policy of its own, on another port: under `localhost` it is
    // another site than `127.0.0.1`; under `127.0.0.1` the same site (another local service).
    const evil = await listen(
      () =>
        Promise.resolve(
          new Response("<!doctype html><title>evil</title>", {
            headers: { "content-type": "text/html" },
          }),
        ),
      { host: "127.0.0.1", port: 0 },
    );
    try {
      for (const name of ["localhost", "127.0.0.1"]) {
        const attacker = await browser.newPage();
        await attacker.goto(`http://${name}:${evil.port}/`, { waitUntil: "load" });
        const before = searches;
        const kinds = await attacker.evaluate(async (target: string) => {
          const out: string[] = [];
          for (const path of ["/api/search?q=hello", "/api/export?format=jsonl", "/api/events"]) {
            // Sent all the same; the answer is refused to the page (CORP), or is opaque.
            try {
              const r = await fetch(target + path, { mode: "no-cors", credentials: "include" });
              out.push(r.type);
              await r.body?.cancel().catch(() => {});
            } catch {
              out.push("blocked");
            }
          }
          await new Promise<void>((ok) => {
            const img = new Image();
            img.onload = img.onerror = () => ok();
            img.src = `${target}/api/search?q=world`;
          });
          return out;
        }, served.origin);
        assert.equal(kinds.length, 3);
        assert.equal(searches, before, `no search ran for the page at ${name}`);
        await attacker.close();
      }
    } finally {
      await evil.close();
    }
    const before = searches;
    const own = await openPage(browser, `${served.origin}/#/search?q=hello`);
    await own.waitForFunction(() => document.querySelector(".hit, .empty, [role=alert]"), {
      timeout: 10_000,
    }).catch(() => {});
    assert.ok(searches > before, "the server's own page still searches");
    await closePage(own);
  });
});
