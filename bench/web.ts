/**
 * The web server's benchmark (issue 14): `hermes-state serve` as its own
 * process over the 200,000-message corpus, four clients "typing" search
 * queries at once (every prefix of each query from two characters on, each
 * request sent when the previous answer arrived) with a listing page
 * between queries; search and listing latency p50 / p95 as the clients see
 * them, and the bytes of a first page load.
 *
 * `deno run -A bench/web.ts [--sessions 2000] [--messages 100] [--seed 7]
 *   [--clients 4] [--rounds 2] [--reuse FILE] [--keep]` (also `bun bench/web.ts …`).
 * Targets: search p95 ≤ 100 ms, listing p95 ≤ 20 ms, first load ≤ 200 KB.
 *
 * @module
 */
import process from "node:process";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { corpusArgs, planCorpus, sessionMessages } from "./corpus.ts";
import { TickClock } from "./build.ts";
import { QUERIES } from "./queries.ts";
import { summarize, type Summary } from "./measure.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** Builds the corpus through the library, one session at a time. */
async function build(path: string): Promise<void> {
  const corpus = planCorpus(corpusArgs(process.argv));
  const clock = new TickClock();
  const db = await SessionDB.open({ path, clock: clock.now, synchronous: "normal" });
  try {
    for (const plan of corpus.sessions) {
      clock.set(plan.startedAt);
      db.createSession(plan.id, plan.source, {
        model: plan.model,
        systemPrompt: plan.systemPrompt,
        userId: plan.userId,
        parentSessionId: plan.parentId,
      });
      clock.set(plan.startedAt + plan.step, plan.step);
      const list = sessionMessages(corpus, plan);
      if (list.length > 0) db.appendMessages(plan.id, list);
      clock.set(plan.endedAt ?? plan.startedAt + plan.count * plan.step + 1);
      if (plan.endedAt !== null) db.endSession(plan.id, plan.endReason!);
      if (plan.title !== null) db.setSessionTitle(plan.id, plan.title);
      db.updateTokenCounts(plan.id, {
        inputTokens: plan.inputTokens,
        outputTokens: plan.outputTokens,
        model: plan.model,
        estimatedCostUsd: plan.costUsd,
        apiCallCount: 1,
      });
      if (plan.index % 500 === 499) process.stderr.write(`  built ${plan.index + 1} sessions\n`);
    }
  } finally {
    db.close();
  }
}

/** Starts `cli.ts serve` on a free port; resolves with its base URL and a stop function. */
function startServer(path: string): Promise<{ base: string; stop: () => Promise<void> }> {
  const runtime = runtimeName();
  const cli = join(ROOT, "cli.ts");
  const args = runtime === "deno" ? ["run", "-A", "--no-lock", cli] : [cli];
  const child = spawn(process.execPath, [...args, "--db", path, "serve", "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const open = /^Open (\S+)$/m.exec(out);
      if (open && out.includes("Ctrl-C")) {
        resolve({
          base: open[1],
          stop: async () => {
            child.kill("SIGTERM");
            await closed;
          },
        });
      }
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** Latencies, all and of the answers the server computed (not from its cache). */
interface Times {
  readonly all: number[];
  readonly computed: number[];
}

/** Times one GET into `times`; throws unless it answers 200. */
async function get(url: string, times?: Times): Promise<void> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  times?.all.push(ms);
  if (response.headers.get("x-hermes-cache") !== "hit") times?.computed.push(ms);
}

/** What one typing client does: every prefix of every query, a listing page between queries. */
async function client(
  base: string,
  index: number,
  rounds: number,
  times: { search: Times; listing: Times },
): Promise<void> {
  const queries = QUERIES.map((q) => q.text);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < queries.length; k++) {
      // Each client starts at a different query, so they type different things at once.
      const query = [...queries[(k + index * 7) % queries.length]];
      for (let n = Math.min(2, query.length); n <= query.length; n++) {
        const text = query.slice(0, n).join("");
        await get(`${base}api/search?q=${encodeURIComponent(text)}&limit=30`, times.search);
      }
      const order = k % 2 === 0 ? "last-active" : "started";
      const offset = (k * 50 + index * 200) % 1000;
      await get(`${base}api/sessions?limit=50&offset=${offset}&order=${order}`, times.listing);
    }
  }
}

async function firstLoadBytes(base: string): Promise<number> {
  let total = 0;
  for (const path of ["", "assets/app.js", "assets/app.css"]) {
    total += (await (await fetch(base + path)).arrayBuffer()).byteLength;
  }
  return total;
}

function line(name: string, s: Summary, target: string, ok: boolean): string {
  return `| ${name} | ${s.p50.toFixed(1)} / ${s.p95.toFixed(1)} | ${s.n} | ${target} | ${
    ok ? "yes" : "**no**"
  } |`;
}

const clients = Number(option("--clients") ?? 4);
const rounds = Number(option("--rounds") ?? 2);
const reuse = option("--reuse");
const dir = mkdtempSync(join(tmpdir(), "hermes-web-bench-"));
const path = reuse ?? join(dir, "corpus.db");
try {
  if (!existsSync(path)) {
    process.stderr.write(`building the corpus in ${path}\n`);
    await build(path);
  }
  const server = await startServer(path);
  try {
    const bytes = await firstLoadBytes(server.base);
    // Warm-up (statement and page caches) with requests the clients never send, so the
    // server's answer cache starts empty for them.
    for (const word of ["warm", "up", "zebra", "quartz", "记录", "テスト"]) {
      await get(`${server.base}api/search?q=${encodeURIComponent(word)}&limit=30`);
    }
    await get(`${server.base}api/sessions?limit=50&offset=1500`);
    const times = {
      search: { all: [], computed: [] } as Times,
      listing: { all: [], computed: [] } as Times,
    };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, (_, i) => client(server.base, i, rounds, times)),
    );
    const seconds = (performance.now() - started) / 1000;
    const search = summarize(times.search.all);
    const listing = summarize(times.listing.all);
    const searchComputed = summarize(times.search.computed);
    const listingComputed = summarize(times.listing.computed);
    const report = [
      `Web server, ${runtimeName()}, ${clients} clients typing at once, ${seconds.toFixed(1)} s`,
      "",
      "| request | ms p50 / p95 | requests | target | met |",
      "| --- | ---: | ---: | --- | :-: |",
      line("search API (every prefix ≥ 2 characters)", search, "p95 ≤ 100 ms", search.p95 <= 100),
      line("listing API (50 per page)", listing, "p95 ≤ 20 ms", listing.p95 <= 20),
      line("search, computed answers only (first asker)", searchComputed, "—", true),
      line("listing, computed answers only", listingComputed, "—", true),
      `| first page load (HTML + JS + CSS) | ${(bytes / 1024).toFixed(1)} KB | 3 | ≤ 200 KB | ${
        bytes <= 200 * 1024 ? "yes" : "**no**"
      } |`,
    ].join("\n");
    process.stdout.write(`${report}\n`);
    const out = join(ROOT, "bench", "out");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, `web-${runtimeName()}.json`),
      JSON.stringify(
        {
          clients,
          rounds,
          seconds,
          search,
          listing,
          searchComputed,
          listingComputed,
          firstLoadBytes: bytes,
        },
        null,
        2,
      ),
    );
  } finally {
    await server.stop();
  }
} finally {
  if (!process.argv.includes("--keep")) rmSync(dir, { recursive: true, force: true });
  else process.stderr.write(`kept ${dir}\n`);
}
