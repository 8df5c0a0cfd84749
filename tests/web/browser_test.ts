/// <reference lib="dom" />
// The session browser in a real chromium: listing, search as you type
// (English and CJK), a hit opening its message, lineage links, the usage
// chart, live updates, hostile content shown and never run, the token and
// Host guards; screenshots at 1280 and 375 px, light and dark, in tests/out/.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { V11 } from "../_cli_io.ts";
import {
  type Browser,
  browserSkip,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageCheckSkip,
  type PageOptions,
  pageText,
  paintedText,
  redrawn,
  screenshot,
} from "./_browser.ts";
import { HOSTILE_ID, hostileDb, serve, type Served } from "./_served.ts";
import { copyFixture } from "../_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";

// A string skips the suites with that message (no browser here); CI=true throws instead.
const skip = browserSkip();
// A test of a behaviour of the page's script runs under one of Bun and Node (see `pageCheckSkip`):
// which one, to share the time between them. Those of the serving run under all three.
const onBun = { skip: pageCheckSkip("bun") };
const onNode = { skip: pageCheckSkip("node") };

let browser: Browser;
let served: Served;
let path: string;

before(async () => {
  if (skip !== undefined) return;
  path = await hostileDb({ huge: true });
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/**
 * A new page that records script errors; `hash` is the view to open, in `timeZone` if given,
 * with `script` run before the page's own.
 */
function open(hash: string, options: PageOptions = {}): Promise<Page> {
  return openPage(browser, `${served.origin}/${hash}`, { dark: false, ...options });
}
const close = closePage;
const shot = screenshot;
const text = pageText;

describe("session browser", { skip }, () => {
  test("the listing shows titles, previews and a compression chain as one row, at 1280 and 375 px", async () => {
    // 1280 px in light under every runtime; the other looks, the page's style alone, under one of
    // Bun and Node each (both widths under each of them).
    const looks = [
      { width: 1280, dark: false, here: true },
      { width: 1280, dark: true, here: onNode.skip === undefined },
      { width: 375, dark: false, here: onBun.skip === undefined },
      { width: 375, dark: true, here: onNode.skip === undefined },
    ];
    for (const { width, dark } of looks.filter((look) => look.here)) {
      const page = await open("#/", { width, dark });
      const listing = await text(page);
      assert.match(listing, /my project #3/);
      assert.match(listing, /chain/);
      assert.doesNotMatch(listing, /my project #2/, "the chain's middle is not a row of its own");
      const exports = await page.$$eval(
        ".exports a",
        (links: Element[]) => links.map((a) => a.getAttribute("href")),
      );
      assert.deepEqual(exports, [
        "/api/export?format=html",
        "/api/export?format=md",
        "/api/export?format=jsonl",
      ]);
      const overflow = await page.evaluate(() =>
        document.documentElement.scrollWidth - document.documentElement.clientWidth
      );
      assert.ok(overflow <= 0, `no sideways scrolling at ${width} px (${overflow} px)`);
      await shot(page, `sessions-${width}-${dark ? "dark" : "light"}`);
      await close(page);
    }
  });

  test(
    "typing a search shows highlighted hits, puts the query in the URL, and Enter opens the message",
    onNode,
    async () => {
      const page = await open("#/");
      await page.keyboard.press("/");
      await redrawn(page, () => page.keyboard.type("docker compose", { delay: 30 }));
      // However slowly the keys arrive, the page ends on the whole query.
      await page.waitForFunction(
        () => document.querySelector(".view-search h2 q")?.textContent === "docker compose",
        { timeout: 15_000 },
      );
      const marks = await page.$$eval(
        ".hit mark",
        (nodes: Element[]) => nodes.map((n) => n.textContent),
      );
      assert.ok(marks.some((m: string) => /docker/i.test(m)));
      // Around each hit: the messages before and after it, not the hit again.
      const contexts = await page.$$eval(
        ".hit",
        (hits: Element[]) => hits.map((h) => h.querySelectorAll(".ctx").length),
      );
      assert.ok(contexts.every((n: number) => n <= 2) && contexts.some((n: number) => n === 2));
      assert.match(await page.evaluate(() => location.hash), /^#\/search\?q=docker\+compose$/);
      await shot(page, "search-1280-light");
      await page.keyboard.press("Escape"); // leaves the search box
      await page.keyboard.press("j");
      const hitId = await page.$eval(".row.selected a", (a: Element) => a.getAttribute("href"));
      await redrawn(page, () => page.keyboard.press("Enter"));
      const messageId = /m=(\d+)/.exec(hitId)![1];
      const target = await page.$eval(`#m-${messageId}`, (node: Element) => {
        const box = node.getBoundingClientRect();
        return {
          target: node.classList.contains("target"),
          top: box.top,
          bottom: box.bottom,
          height: innerHeight,
        };
      });
      assert.equal(target.target, true);
      assert.ok(target.top < target.height && target.bottom > 0, "the hit is scrolled into view");
      await shot(page, "search-hit-1280-light");
      await redrawn(page, () => page.keyboard.press("Escape"));
      assert.match(await page.evaluate(() => location.hash), /^#\/search/);
      await close(page);
    },
  );

  test(
    "a hit's neighbour without text (an assistant that only called tools) says so",
    onBun,
    async () => {
      const page = await open(`#/search?q=disk`);
      await page.waitForSelector(".view-search .hit");
      const empty = await page.$$eval(
        ".view-search .hit .ctx",
        (lines: Element[]) =>
          lines.filter((line) => line.querySelector("em")?.textContent === "(no text)")
            .map((line) => line.textContent),
      );
      assert.ok(
        empty.length > 0 && empty.every((line: string | null) => line === "assistant (no text)"),
        empty.join(),
      );
      await close(page);
    },
  );

  test(
    "a CJK search finds the Chinese session, and a deep link to a query opens its results",
    onNode,
    async () => {
      const page = await open(`#/search?q=${encodeURIComponent("记忆")}`, { width: 375 });
      await page.waitForSelector(".view-search .hit");
      assert.match(await text(page), /记忆/);
      assert.equal(await page.$eval("#q", (input: HTMLInputElement) => input.value), "记忆");
      // Narrowing to one source keeps the query and shows only that source's hits.
      await redrawn(page, () => page.select(".view-search select[name=source]", "telegram"));
      assert.match(await page.evaluate(() => location.hash), /source=telegram/);
      const metas = await page.$$eval(
        ".hit .row-meta",
        (nodes: Element[]) => nodes.map((n) => n.textContent),
      );
      assert.ok(metas.length > 0);
      for (const meta of metas) assert.match(meta, /telegram/);
      await shot(page, "search-cjk-375-light");
      await close(page);
    },
  );

  test("a substring hit's excerpt shows … where its message goes on", onBun, async () => {
    const page = await open(`#/search?q=${encodeURIComponent("数据")}`);
    await page.waitForSelector(".view-search .hit");
    const snippets = await page.$$eval(
      ".hit .snippet",
      (nodes: Element[]) => nodes.map((n) => n.textContent ?? ""),
    );
    // A message with 数据 101 characters in: its window starts 40 before it.
    const cut = snippets.find((s: string) => s.includes("lds reproducibly"));
    assert.match(cut ?? "", /^…lds reproducibly/, snippets.join("\n"));
    assert.ok(
      snippets.some((s: string) => s.startsWith("我们来制定数据库")),
      "uncut from the start",
    );
    await close(page);
  });

  test("a lineage link opens the other session of the chain", onNode, async () => {
    const page = await open(`#/s/${V11.compressionMid}`);
    assert.match(await text(page, ".lineage"), /my project #3/);
    await redrawn(page, () => page.click(`.lineage a[href="#/s/${V11.compressionTip}"]`));
    assert.equal(await text(page, "#session-title"), "my project #3");
    const tree = await text(page, ".lineage");
    assert.match(tree, /compression/);
    await shot(page, "transcript-1280-light");
    await close(page);
  });

  test(
    "the transcript folds tool calls with pretty arguments and their results beside them",
    onBun,
    async () => {
      const page = await open(`#/s/${V11.kitchenSink}`, { dark: true });
      const calls = await page.$$("details.call");
      assert.ok(calls.length > 0);
      await page.$eval("details.call", (d: HTMLDetailsElement) => d.open = true);
      const call = await text(page, "details.call");
      assert.match(call, /arguments/);
      assert.match(
        call,
        /\{\n {2}"image_url": "attachment:\/\/screenshot-1\.png",/,
        "arguments pretty-printed",
      );
      assert.match(
        call,
        /result · message\n\{\n {2}"analysis": /,
        "the result beside them, pretty-printed",
      );
      await shot(page, "transcript-1280-dark");
      await close(page);
    },
  );

  test("the usage view draws the charts with the table beside them", onNode, async () => {
    for (const width of [1280, 375]) {
      const page = await open("#/usage?since=all&by=day", { width, timeZone: "UTC" });
      const bars = await page.$$eval("svg.chart rect.bar", (nodes: Element[]) => nodes.length);
      assert.ok(bars > 5, `${bars} bars`);
      // Every day from the first session (2025-12-21) to the last (2026-04-30) has its slot.
      const days = await page.$eval(
        "#usage-time svg.chart",
        (svg: Element) =>
          new Set(
            Array.from(svg.querySelectorAll("rect.bar title"), (t) => t.textContent!.slice(0, 10)),
          ).size,
      );
      assert.equal(days, 131);
      const tables = await page.$$eval(
        ".usage-table",
        (nodes: Element[]) => nodes.map((n) => n.textContent).join(" "),
      );
      assert.match(tables, /anthropic\/claude-sonnet-4\.5/);
      assert.match(tables, /telegram/);
      await shot(page, `usage-${width}-light`);
      await close(page);
    }
  });

  test("the usage view counts the days of its reader's time zone", onNode, async () => {
    const page = await open("#/usage?since=all&by=day", { timeZone: "Asia/Shanghai" });
    await page.waitForSelector(".usage-detail .usage-table");
    const rows = await page.$$eval(
      ".usage-detail .usage-table tbody tr",
      (trs: Element[]) =>
        trs.slice(0, 2).map((tr) =>
          Array.from(tr.querySelectorAll("td"), (td) => td.textContent).slice(0, 2).join(" ")
        ),
    );
    // Four of the six sessions of 2025-12-21 (UTC) started after 16:00 UTC, midnight in Shanghai.
    assert.deepEqual(rows, ["2025-12-21 2", "2025-12-22 4"]);
    assert.equal(await text(page, ".usage-detail summary"), "Table per day · Asia/Shanghai");
    await close(page);
  });

  test(
    "the usage view falls back to UTC days when the server does not know the reader's zone",
    onBun,
    async () => {
      // A browser whose zone the server's time zone data does not have (newer, or unknown).
      const page = await open("#/usage?since=all&by=day", {
        script: `{
        const resolved = Intl.DateTimeFormat.prototype.resolvedOptions;
        Intl.DateTimeFormat.prototype.resolvedOptions = function () {
          return { ...resolved.call(this), timeZone: "Mars/Olympus_Mons" };
        };
      }`,
      });
      await page.waitForSelector(".usage-detail .usage-table");
      assert.equal(await text(page, ".usage-detail summary"), "Table per day · UTC");
      assert.equal(await page.$(".error"), null);
      await close(page);
    },
  );

  test("hostile content is shown as text, never run, and does not break the layout", async () => {
    // The page over each runtime's server at 1280 px; at 375 (its style alone) under Bun.
    for (const width of [1280, ...(onBun.skip === undefined ? [375] : [])]) {
      const page = await open(`#/s/${HOSTILE_ID}`, { width });
      const shown = await text(page);
      const has = (pattern: RegExp, what: string) =>
        assert.ok(
          pattern.test(shown),
          `${what} at ${width} px; the page showed:\n${shown.slice(0, 2000)}`,
        );
      has(/<script>window\.__pwned = 'script'<\/script>/, "the script tag is shown as text");
      has(/<img src=x onerror=/, "the img tag is shown as text");
      has(/⟦U\+202E⟧/, "bidi overrides are made visible");
      has(/nul␀byte/, "NUL is made visible");
      await page.$eval("details.tool-result", (d: HTMLDetailsElement) => d.open = true);
      const more = await page.$eval("button.more", (b: Element) => b.textContent);
      assert.equal(more, "Show all 10,485,760 characters", "the 10 MB message is cut");
      const state = await page.evaluate(() => ({
        pwned: (globalThis as { __pwned?: unknown }).__pwned,
        scripts: document.querySelectorAll("#app script, #app iframe, #app style").length,
        images: Array.from(
          document.querySelectorAll("#app img"),
          (img) => (img as HTMLImageElement).src.slice(0, 15),
        ),
        javascriptLinks: document.querySelectorAll('a[href^="javascript:"]').length,
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      }));
      assert.equal(state.pwned, undefined, "no hostile script ran");
      assert.equal(state.scripts, 0);
      assert.deepEqual(state.images, ["data:image/png;"], "only the data-URL image is shown");
      assert.equal(state.javascriptLinks, 0);
      assert.ok(state.overflow <= 0, `no sideways scrolling at ${width} px (${state.overflow} px)`);
      await shot(page, `hostile-${width}-light`);
      await close(page);
    }
  });

  test(
    "the text the tests read is the painted one, even when read as the view is drawn",
    onBun,
    async () => {
      // Chromium leaves the messages' text (content-visibility: auto) out of innerText read
      // before a frame: a CI run once read the hostile transcript without its first message.
      const page = await open(`#/s/${HOSTILE_ID}`, {
        width: 375,
        script: `{
        const painted = ${paintedText.toString()};
        new MutationObserver((_, observer) => {
          if (!document.body?.hasAttribute("data-ready")) return;
          observer.disconnect();
          painted(document.getElementById("app")).then((text) => { window.__early = text; });
        }).observe(document, { attributes: true, childList: true, subtree: true });
      }`,
      });
      await page.waitForFunction(() => "__early" in globalThis);
      const early: string = await page.evaluate(() => (globalThis as { __early?: string }).__early);
      assert.match(early, /<script>window\.__pwned = 'script'<\/script>/, early.slice(0, 2000));
      assert.match(early, /nul␀byte/);
      await close(page);
    },
  );

  test("a day picked in the listing is the reader's day, in their time zone, for the rows and the exports", async () => {
    // 01:00 on 2 June in Shanghai (UTC+8) is 17:00 UTC on the 1st (nothing else that week).
    const started = Date.UTC(2026, 5, 1, 17) / 1000;
    const db = await SessionDB.open({ path, clock: () => started });
    try {
      db.createSession("20260602_010000_shanghai", "cli");
      db.setSessionTitle("20260602_010000_shanghai", "Just after midnight in Shanghai");
    } finally {
      db.close();
    }
    // From and To the same day: that whole day ("To" takes in the day picked).
    const page = await open("#/?from=2026-06-02&to=2026-06-02", { timeZone: "Asia/Shanghai" });
    const rows = await page.$$eval(
      "#rows li",
      (items: Element[]) => items.map((li) => (li as HTMLElement).innerText),
    );
    assert.equal(rows.length, 1, rows.join("\n"));
    assert.match(rows[0], /Just after midnight in Shanghai/);
    const from = Date.UTC(2026, 5, 1, 16) / 1000;
    const to = Date.UTC(2026, 5, 2, 16) / 1000;
    const exports = await page.$$eval(
      ".exports a",
      (links: Element[]) => links.map((a) => a.getAttribute("href")),
    );
    assert.equal(exports[0], `/api/export?format=html&from=${from}&to=${to}`);
    const exported = await (await fetch(`${served.origin}${exports[2]}`)).text();
    assert.deepEqual(
      exported.trim().split("\n").map((line) => JSON.parse(line).id),
      ["20260602_010000_shanghai"],
    );
    const picked = await page.$eval(
      "input[name=from]",
      (i: Element) => (i as HTMLInputElement).value,
    );
    assert.equal(picked, "2026-06-02", "the page keeps showing the day picked");
    await close(page);
  });

  test("an open page updates live when another process writes the file", async () => {
    const page = await open("#/");
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    const db = await SessionDB.open({ path });
    try {
      db.createSession("20260501_000000_livetest", "telegram");
      db.appendMessage("20260501_000000_livetest", {
        role: "user",
        content: "hello from the gateway",
      });
      db.setSessionTitle("20260501_000000_livetest", "Arrived while watching");
    } finally {
      db.close();
    }
    await page.waitForFunction(
      () => document.getElementById("app")!.innerText.includes("Arrived while watching"),
      { timeout: 10_000 },
    );
    await close(page);
  });

  test("a live update of an open transcript adds the new message and keeps what the reader unfolded", async () => {
    const page = await open(`#/s/${V11.kitchenSink}`);
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    await page.$eval("details.call", (d: HTMLDetailsElement) => d.open = true);
    const db = await SessionDB.open({ path });
    try {
      db.appendMessage(V11.kitchenSink, {
        role: "user",
        content: "one more thing, from the gateway",
      });
    } finally {
      db.close();
    }
    await page.waitForFunction(
      () =>
        document.getElementById("messages")!.innerText.includes("one more thing, from the gateway"),
      { timeout: 10_000 },
    );
    assert.equal(await page.$eval("details.call", (d: HTMLDetailsElement) => d.open), true);
    await close(page);
  });

  test("a live transcript gets only the new messages, a call's result when it comes, and all again after a rewrite", async () => {
    const id = "20260501_000000_livecall";
    const write = async (change: (db: SessionDB) => void) => {
      const db = await SessionDB.open({ path });
      try {
        change(db);
      } finally {
        db.close();
      }
    };
    await write((db) => {
      db.createSession(id, "telegram");
      db.appendMessage(id, { role: "user", content: "check the containers" });
    });
    const page = await open(`#/s/${id}`);
    await page.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    // An expando on the first drawn message: it survives only if that node is kept.
    await page.$eval(
      "#messages article",
      (a: Element) => (a as unknown as { probe: number }).probe = 7,
    );
    const probe = () =>
      page.$eval("#messages article", (a: Element) => (a as unknown as { probe?: number }).probe);
    const messagesText = () => text(page, "#messages");
    await write((db) =>
      db.appendMessage(id, {
        role: "assistant",
        content: null,
        toolCalls: [{
          id: "call_live",
          type: "function",
          function: { name: "terminal", arguments: '{"command":"docker ps"}' },
        }],
      })
    );
    await page.waitForFunction(() => document.querySelector("#messages details.call") !== null, {
      timeout: 10_000,
    });
    await page.$eval("details.call", (d: HTMLDetailsElement) => d.open = true);
    await write((db) =>
      db.appendMessage(id, {
        role: "tool",
        toolCallId: "call_live",
        toolName: "terminal",
        content: "CONTAINER ID   STATUS   live result text",
      })
    );
    await page.waitForFunction(
      () => document.querySelector("details.call .call-grid")!.textContent!.includes("live result"),
      { timeout: 10_000 },
    );
    assert.equal(await page.$eval("details.call", (d: HTMLDetailsElement) => d.open), true);
    assert.equal(await probe(), 7, "the first message was not drawn again");
    assert.equal(await page.$$eval("#messages article", (a: Element[]) => a.length), 3);
    assert.match(await text(page, ".details-list"), /Messages\s+3 /, "the head is drawn again");
    await write((db) =>
      db.replaceMessages(id, [{ role: "user", content: "rewritten from the start" }])
    );
    await page.waitForFunction(
      () => document.getElementById("messages")!.innerText.includes("rewritten from the start"),
      { timeout: 10_000 },
    );
    assert.doesNotMatch(await messagesText(), /live result text|check the containers/);
    assert.equal(await probe(), undefined, "a rewrite draws the transcript again");
    await close(page);
  });
});

/** Adds a session with `contents` as its user messages, through the Python-compatible writer. */
async function addSession(id: string, contents: string[]): Promise<void> {
  const db = await SessionDB.open({ path });
  try {
    db.createSession(id, "cli");
    for (const content of contents) db.appendMessage(id, { role: "user", content });
  } finally {
    db.close();
  }
}

describe("answers the page gets right", { skip }, () => {
  test(
    "a query that starts with NOT shows the CLI's usage error instead of the word's hits",
    onBun,
    async () => {
      const page = await open("#/search?q=NOT%20docker");
      const alert = await text(page, "[role=alert]");
      assert.match(alert, /a query cannot start with NOT/);
      assert.equal(await page.$$eval(".hit", (hits: Element[]) => hits.length), 0);
      await close(page);
    },
  );

  test(
    "a message holding >>> and <<< itself is highlighted only where the search matched",
    onBun,
    async () => {
      await addSession("20260503_000000_repl", [
        "In the REPL: >>> import kraken then tr a-z A-Z <<< kraken done",
      ]);
      const page = await open("#/search?q=kraken");
      const snippet = await page.$eval(".hit .snippet", (node: Element) => ({
        text: node.textContent,
        marks: Array.from(node.querySelectorAll("mark"), (m) => m.textContent),
      }));
      assert.deepEqual(snippet.marks, ["kraken", "kraken"]);
      assert.match(
        snippet.text!,
        /^In the REPL: >>> import kraken then tr a-z A-Z <<< kraken done/,
      );
      await close(page);
    },
  );

  test(
    "a search with more hits than a page shows them on asking for More results",
    onNode,
    async () => {
      await addSession(
        "20260504_000000_many",
        Array.from({ length: 45 }, (_, i) => `zebrafish observation number ${i}`),
      );
      const page = await open("#/search?q=zebrafish");
      const count = () => page.$$eval(".hit", (hits: Element[]) => hits.length);
      assert.equal(await count(), 30);
      assert.match(await text(page, "#hit-count"), /^30\+$/);
      await redrawn(page, () => page.click("#more-hits"));
      assert.equal(await count(), 45);
      assert.equal(await text(page, "#hit-count"), "45");
      assert.equal(await page.$eval("#more-hits", (b: Element) => (b as HTMLElement).hidden), true);
      await close(page);
    },
  );

  test(
    "a deep link with a malformed session id shows an error, not a blank page",
    onBun,
    async () => {
      const page = await open("#/s/%E0%A4");
      assert.match(await text(page, "[role=alert]"), /not valid URL encoding/);
      await close(page);
    },
  );

  test(
    "the sessions named . and .. open (their ids go in the API's query, not its path)",
    onBun,
    async () => {
      await addSession("..", ["the session named two dots"]);
      const page = await open("#/s/..");
      assert.equal(await text(page, "#session-title"), "..");
      assert.match(await text(page, "#messages"), /the session named two dots/);
      await close(page);
    },
  );

  test(
    "the pager says where it is: nothing when nothing matches, a way back past the end",
    onNode,
    async () => {
      const none = await open("#/?source=no-such-source");
      assert.equal(await text(none, "#pager-where"), "");
      await close(none);
      const far = await open("#/?offset=1000000");
      assert.match(await text(far, "#pager-where"), /^Nothing past row 1,000,000$/);
      const back = await far.$eval(".pager button", (b: Element) => ({
        text: b.textContent,
        disabled: (b as HTMLButtonElement).disabled,
      }));
      assert.deepEqual(back, { text: "← First page", disabled: false });
      await redrawn(far, () => far.click(".pager button"));
      assert.equal(await far.evaluate(() => location.hash), "#/");
      assert.match(await text(far, "#pager-where"), /^1–\d+$/);
      await close(far);
    },
  );

  test(
    "the usage view keeps its time axis for a grouping the selector does not offer, with round ticks",
    onNode,
    async () => {
      const page = await open("#/usage?by=model&since=all");
      const captions = await page.$$eval(
        "figcaption",
        (nodes: Element[]) => nodes.map((n) => n.textContent),
      );
      assert.equal(captions.filter((c: string) => c === "Tokens per model").length, 1);
      assert.ok(captions.includes("Tokens per day"), captions.join());
      assert.equal(
        await page.$eval("select[name=by]", (s: Element) => (s as HTMLSelectElement).value),
        "day",
      );
      const ticks = await page.$$eval(
        "#usage-time figure:first-child text[text-anchor=end]",
        (nodes: Element[]) => nodes.map((n) => n.textContent),
      );
      assert.equal(ticks.length, 5);
      for (const tick of ticks) assert.doesNotMatch(tick!, /\.\d/, ticks.join(" "));
      await close(page);
    },
  );

  test(
    "Esc on a deep link opened fresh goes to the listing, not out of the page",
    onBun,
    async () => {
      const page = await open(`#/s/${V11.kitchenSink}`);
      await redrawn(page, () => page.keyboard.press("Escape"));
      assert.equal(await page.evaluate(() => location.hash), "#/");
      assert.match(page.url(), new RegExp(`^${served.origin}/`));
      await close(page);
    },
  );

  test("eight tabs of one server all load, and live updates reach a tab without its own stream", async () => {
    // The first reads the stream (live before the others open), the other seven open at once.
    const first = await open("#/");
    await first.waitForSelector("#live.on");
    const tabs: Page[] = [first, ...await Promise.all(Array.from({ length: 7 }, () => open("#/")))];
    const last = tabs[7];
    await last.waitForFunction(() => document.getElementById("live")!.classList.contains("on"));
    await addSession("20260505_000000_shared", ["shared stream"]);
    await last.waitForFunction(
      () => document.getElementById("app")!.innerText.includes("shared stream"),
      { timeout: 10_000 },
    );
    // The tab that read the stream goes: another takes it over.
    await close(tabs[0]);
    const db = await SessionDB.open({ path });
    try {
      db.setSessionTitle("20260505_000000_shared", "Handed over");
    } finally {
      db.close();
    }
    await last.waitForFunction(
      () => document.getElementById("app")!.innerText.includes("Handed over"),
      { timeout: 10_000 },
    );
    for (const tab of tabs.slice(1)) await close(tab);
  });
});

describe("writes in the browser", { skip }, () => {
  test("with --allow-writes, Rename asks for the title and Delete asks first, then both land", async () => {
    const writable = await serve(await hostileDb(), { allowWrites: true });
    const page = await browser.newPage();
    try {
      const answers = ["renamed from the page", "accept"];
      const asked: string[] = [];
      page.on(
        "dialog",
        async (dialog: { message(): string; accept(text?: string): Promise<void> }) => {
          asked.push(dialog.message());
          const answer = answers.shift();
          await (answer === "accept" ? dialog.accept() : dialog.accept(answer));
        },
      );
      await page.goto(`${writable.origin}/#/s/${V11.compressionTip}`, { waitUntil: "load" });
      await page.waitForSelector("body[data-ready]");
      // Each waited for by what it draws, not by the next redraw: the rename draws the view
      // twice (once on its answer, once on the live update of its write), and with a slow
      // server the second came after Delete was clicked and was taken for the delete's.
      await page.click(".actions button:not(.danger)");
      await page.waitForFunction(
        () => document.getElementById("session-title")?.textContent === "renamed from the page",
      );
      assert.equal(
        await writable.store.getSessionTitle(V11.compressionTip),
        "renamed from the page",
      );
      // Clicked in the page, in one event: the rename's live update may redraw the view between
      // the mouse's press and release (two events), which then make no click (seen once, Node).
      await page.evaluate(() =>
        (document.querySelector(".actions button.danger") as HTMLElement).click()
      );
      await page.waitForFunction(
        () => location.hash === "#/" && document.body.getAttribute("data-view") === "sessions",
      );
      assert.match(asked[1], /^Delete session 20260425_090019_d38f1d and its 5 messages\?/);
      assert.equal(await writable.store.getSession(V11.compressionTip), undefined);
    } finally {
      await page.close();
      await writable.close();
    }
  });
});

// The page over a PostgreSQL store: each test under one of Bun and Node. Serving it is
// the same code as over SQLite (driven under all three above), and the handler over PostgreSQL
// is tested under all three in handler_postgres_test.ts.
describe(
  "session browser over a PostgreSQL store that sync fills",
  { skip: skip ?? PG_SKIP },
  () => {
    test(
      "an origin filter appears, and narrows the listing and the search to one host's file",
      onNode,
      async () => {
        const url = schemaUrl(freshSchema());
        const client = await connectSyncTarget(url);
        try {
          await syncFile(client, copyFixture("hermes-v11.db"), {
            host: "a.example",
            origin: "web-1",
          });
          await syncFile(client, copyFixture("hermes-v11.db"), {
            host: "b.example",
            origin: "web-2",
          });
        } finally {
          await client.close();
        }
        const central = await serve(url);
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (error: Error) => errors.push(error.message));
        try {
          await page.setViewport({ width: 1280, height: 860 });
          await page.goto(`${central.origin}/#/`, { waitUntil: "load" });
          await page.waitForSelector("body[data-ready]");
          const options = await page.$$eval(
            "#filters select[name=origin] option",
            (nodes: Element[]) =>
              nodes.map((n) => [n.getAttribute("value"), n.getAttribute("title")]),
          );
          // Each origin shows its host and file when hovered.
          assert.deepEqual(options.map(([value]: string[]) => value), ["", "web-1", "web-2"]);
          assert.match(options[1][1], /^a\.example:\/.+\.db$/);
          assert.match(options[2][1], /^b\.example:\/.+\.db$/);
          const listed = async () =>
            await page.$$eval(
              "#rows .row a.row-link",
              (links: Element[]) =>
                links.map((a) => decodeURIComponent(a.getAttribute("href")!.slice("#/s/".length))),
            );
          assert.ok((await listed()).some((id: string) => id.startsWith("web-1/")));
          await redrawn(page, () => page.select("#filters select[name=origin]", "web-2"));
          assert.match(await page.evaluate(() => location.hash), /^#\/\?origin=web-2$/);
          const ids = await listed();
          assert.ok(
            ids.length > 0 && ids.every((id: string) => id.startsWith("web-2/")),
            ids.join(),
          );
          const exportLink = await page.$eval(
            "#filters .exports a",
            (a: Element) => a.getAttribute("href"),
          );
          assert.equal(exportLink, "/api/export?format=html&origin=web-2");
          await shot(page, "origins-1280-light");
          await redrawn(page, () => page.goto(`${central.origin}/#/search?q=docker&origin=web-1`));
          await page.waitForSelector(".view-search");
          const hits = await page.$$eval(
            ".hit a.row-link",
            (links: Element[]) =>
              links.map((a) =>
                decodeURIComponent(/#\/s\/([^?]+)/.exec(a.getAttribute("href")!)![1])
              ),
          );
          assert.ok(
            hits.length > 0 && hits.every((id: string) => id.startsWith("web-1/")),
            hits.join(),
          );
          assert.equal(
            await page.$eval(
              ".view-search select[name=origin]",
              (select: Element) => (select as HTMLSelectElement).value,
            ),
            "web-1",
          );
          // The usage view adds tokens per origin.
          await redrawn(page, () => page.goto(`${central.origin}/#/usage?since=all`));
          await page.waitForSelector("#usage-origin");
          assert.match(
            await text(page, "#usage-origin"),
            /Tokens per origin[\s\S]*web-1[\s\S]*web-2/,
          );
          // And one origin's usage, chosen in the form.
          await redrawn(page, () => page.select(".view-usage select[name=origin]", "web-2"));
          assert.match(await page.evaluate(() => location.hash), /[?&]origin=web-2(&|$)/);
          assert.match(await text(page, "#usage-origin"), /web-2/);
          assert.doesNotMatch(await text(page, "#usage-origin"), /web-1/);
          await shot(page, "usage-origin-1280-light");
          assert.deepEqual(errors, [], "no script error on the page");
        } finally {
          await page.close();
          await central.close();
        }
      },
    );

    test(
      "a synced session shows its origin; Rename and Delete say what its file brings back",
      onBun,
      async () => {
        const url = schemaUrl(freshSchema());
        const client = await connectSyncTarget(url);
        try {
          await syncFile(client, copyFixture("hermes-v11.db"), { origin: "web-1" });
        } finally {
          await client.close();
        }
        const central = await serve(url, { allowWrites: true });
        const page = await browser.newPage();
        const asked: string[] = [];
        page.on(
          "dialog",
          async (dialog: { message(): string; accept(text?: string): Promise<void> }) => {
            asked.push(dialog.message());
            await dialog.accept(asked.length === 1 ? "renamed on the server" : undefined);
          },
        );
        try {
          const id = `web-1/${V11.compressionTip}`;
          await page.goto(`${central.origin}/#/s/${encodeURIComponent(id)}`, { waitUntil: "load" });
          await page.waitForSelector("body[data-ready]");
          assert.match(await text(page, ".details-list"), /Origin\s+web-1/);
          // Waited for by what each answer draws: a live update of the rename's write may redraw
          // the page first (a CI run on a loaded machine read the store before the delete).
          await page.click(".actions button:not(.danger)");
          await page.waitForFunction(
            () => document.getElementById("session-title")?.textContent === "renamed on the server",
          );
          assert.equal(
            asked[0],
            "New title (empty clears it). It came from a synced file (origin web-1): its next change on its host brings back the title its file has.",
          );
          assert.equal(await central.store.getSessionTitle(id), "renamed on the server");
          await page.click(".actions button.danger");
          await page.waitForFunction(() => location.hash === "#/");
          assert.match(
            asked[1],
            /^Delete session web-1\/20260425_090019_d38f1d and its 5 messages\? .* It came from a synced file \(origin web-1\): while the file holds it, each sync pass ships it back\.$/,
          );
          assert.equal(await central.store.getSession(id), undefined);
        } finally {
          await page.close();
          await central.close();
        }
      },
    );
  },
);

describe("guards in the browser", { skip }, () => {
  test("a non-loopback server answers 401 without the token, then works with it; a foreign Host gets 403", async () => {
    const guarded = await serve(path, { host: "0.0.0.0", token: "browser-token" });
    const port = new URL(guarded.origin).port;
    // Chromium resolves every *.localhost name to loopback: a rebinding page's name, locally.
    // A context of its own (as a fresh browser): no cookie of another test's server.
    const rebinding = await browser.createBrowserContext();
    try {
      const page = await rebinding.newPage();
      const denied = await page.goto(`${guarded.origin}/`);
      assert.equal(denied.status(), 401);
      const allowed = await page.goto(`${guarded.origin}/?token=browser-token`, {
        waitUntil: "load",
      });
      assert.equal(allowed.status(), 200);
      assert.equal(new URL(page.url()).search, "", "the token leaves the address bar");
      await page.waitForSelector("body[data-ready]");
      assert.match(await text(page), /my project #3/);
      const foreign = await page.goto(`http://rebind.localhost:${port}/`);
      assert.equal(foreign.status(), 403);
    } finally {
      await rebinding.close();
      await guarded.close();
    }
  });

  test("the token link followed from another site opens the page (the Strict cookie goes on the next, same-site, request)", async () => {
    const guarded = await serve(path, { host: "0.0.0.0", token: "cross-site-token" });
    const fresh = await browser.createBrowserContext();
    try {
      const page = await fresh.newPage();
      const link = `${guarded.origin}/?token=cross-site-token#/usage`;
      // A page of another site (an opaque origin) with the link, as a chat or a mail shows it.
      await page.goto(`data:text/html,${encodeURIComponent(`<a id="l" href="${link}">open</a>`)}`);
      await Promise.all([page.waitForNavigation(), page.click("#l")]);
      await page.waitForSelector("body[data-ready]", { timeout: 10_000 });
      assert.equal(new URL(page.url()).search, "", "the token leaves the address bar");
      assert.equal(new URL(page.url()).hash, "#/usage", "the deep link is kept");
      assert.match(await text(page), /Tokens per day/);
    } finally {
      await fresh.close();
      await guarded.close();
    }
  });
});
