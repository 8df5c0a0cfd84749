// The standalone HTML transcript: escaping, images, folding, and `export --format html`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../lib/open_store.ts";
import { renderHtmlDocument } from "../../lib/web/html_transcript.ts";
import { escapeHtml, visibleText } from "../../lib/web/escape_html.ts";
import { runCli, V11 } from "../_cli_io.ts";
import { rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { HOSTILE_ID, HOSTILE_TEXTS, hostileDb } from "./_served.ts";

test("renderHtmlDocument() escapes every hostile text and runs nothing", async () => {
  await using store = await openStore(await hostileDb());
  const html = renderHtmlDocument((await store.exportSession(HOSTILE_ID))!);
  assert.doesNotMatch(html, /<script|<iframe|<style>body|onerror="|href="javascript/);
  for (const text of HOSTILE_TEXTS) {
    assert.ok(html.includes(escapeHtml(visibleText(text))), text.slice(0, 40));
  }
  assert.match(
    html,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">/,
  );
  assert.match(html, /<img class="part-image" alt="image_url" src="data:image\/png;base64,/);
  assert.match(html, /\[image_url: https:\/\/tracker\.example\/pixel\.png\]/);
  assert.match(html, /\[input_audio\]/);
  assert.match(
    html,
    /<title>&lt;img src=x onerror=&quot;window.__pwned=&#39;title&#39;&quot;&gt; hostile<\/title>/,
  );
});

test("renderHtmlDocument() folds tool calls with pretty arguments and their result, and reasoning", async () => {
  await using store = await openStore(await hostileDb());
  const html = renderHtmlDocument((await store.exportSession(V11.kitchenSink))!);
  assert.match(html, /<details class="call"><summary>→ vision_analyze<\/summary>/);
  assert.match(html, /\{\n {2}&quot;image_url&quot;: &quot;attachment:\/\/screenshot-1.png&quot;/);
  assert.match(html, /<div class="figures">result<\/div>/);
  assert.match(html, /<details><summary>Reasoning<\/summary>/);
});

test("export --format html writes one standalone page with every session of the source", async () => {
  const path = await hostileDb();
  const out = join(tempDir(), "telegram.html");
  const run = await runCli([
    "--db",
    path,
    "export",
    "--format",
    "html",
    "--source",
    "telegram",
    out,
  ]);
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /^Exported \d+ sessions to /);
  const html = readFileSync(out, "utf8");
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<\/main><\/body><\/html>\n$/);
  const sessions = html.match(/<section class="session">/g)?.length ?? 0;
  assert.equal(sessions, Number(/Exported (\d+)/.exec(run.out)![1]));
  assert.doesNotMatch(html, /<script/);
});

test("export --format html --session-id writes one session to standard output", async () => {
  const run = await runCli([
    "--db",
    await hostileDb(),
    "export",
    "--format",
    "html",
    "--session-id",
    "my project #3",
  ]);
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /<h1 class="bidi">my project #3<\/h1>/);
  assert.equal(run.out.match(/<section class="session">/g)?.length, 1);
});

test("renderHtmlDocument() prints counts only when they are numbers (text in an INTEGER column)", async () => {
  // SQLite keeps text put in an INTEGER column: a meta refresh there navigated the export away.
  const path = await hostileDb();
  const meta = '<meta http-equiv="refresh" content="0;url=https://evil.example/">';
  {
    using raw = await rawOpen(path);
    raw.prepare("UPDATE messages SET token_count = ? WHERE session_id = ?").run(meta, HOSTILE_ID);
    raw.prepare(
      "UPDATE sessions SET message_count = ?, input_tokens = ?, output_tokens = ? WHERE id = ?",
    ).run(meta, meta, "NaN", HOSTILE_ID);
  }
  await using store = await openStore(path);
  const html = renderHtmlDocument((await store.exportSession(HOSTILE_ID))!);
  assert.doesNotMatch(html, /<meta http-equiv="refresh"|evil\.example/);
  assert.doesNotMatch(html, /NaN/);
  assert.match(html, /<dt>Tokens<\/dt><dd>0 in · 0 out<\/dd>/);
  assert.doesNotMatch(html, / tokens<\/span>/);
});

test("renderHtmlDocument() draws inline code, bold and fenced code as the page does, each escaped", async () => {
  await using store = await openStore(tempDbPath());
  await store.createSession("marked", "cli");
  await store.appendMessages("marked", [{
    role: "user",
    content: "Run `rm -rf <dir>` **only** once, not `</code><script>x()</script>` or " +
      '**<img src=x onerror="y()">**; a lone ** stays, and `a\nb` is no code.\n' +
      "```sh\necho **not bold** `nor code`\n```\nafter",
  }]);
  const html = renderHtmlDocument((await store.exportSession("marked"))!);
  const body = /<article[^>]*>.*<\/article>/s.exec(html)![0];
  assert.match(
    body,
    /<div class="text">Run <code>rm -rf &lt;dir&gt;<\/code> <strong>only<\/strong> once, not <code>&lt;\/code&gt;&lt;script&gt;x\(\)&lt;\/script&gt;<\/code> or <strong>&lt;img src=x onerror=&quot;y\(\)&quot;&gt;<\/strong>; a lone \*\* stays, and `a\nb` is no code.\n<\/div>/,
  );
  // Inside a fence the text is code as it stands: no bold, no inner code.
  assert.match(
    body,
    /<pre><code>echo \*\*not bold\*\* `nor code`\n<\/code><\/pre><div class="text">\nafter<\/div>/,
  );
  assert.doesNotMatch(body, /<script|<img/);
});
