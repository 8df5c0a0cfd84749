/**
 * A search whose hits are long tool outputs (logs that repeat the searched
 * word): the library's page against the raw statement that asks FTS5's
 * `snippet()` for every hit, as the library did before `long_snippet.ts`.
 * Both read the same page of the same file in the same run.
 *
 * `deno run -A bench/long_snippet.ts [--sessions N] [--lines L]` (defaults: 100 sessions, each with
 * a tool output of 2,000 log lines, ~150 KB, and a few short messages).
 *
 * @module
 */
import process from "node:process";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { pageSql } from "../lib/sqlite/search/ranked.ts";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(argv[at + 1]);
};
const sessions = arg("sessions", 100);
const lines = arg("lines", 2000);
const dir = mkdtempSync(join(tmpdir(), "hermes-long-snippet-"));

function p50(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

try {
  const path = join(dir, "state.db");
  let clock = 1_700_000_000;
  {
    using db = await SessionDB.open({ path, synchronous: "normal", clock: () => clock++ });
    for (let s = 0; s < sessions; s++) {
      const id = `s${s}`;
      db.createSession(id, "cli");
      const log = Array.from(
        { length: lines },
        (_, i) => `12:00:${i % 60} worker-${(i + s) % 7} error: connection reset by peer (${i})`,
      ).join("\n");
      db.appendMessages(id, [
        { role: "user", content: `why does worker ${s} log an error?` },
        { role: "tool", toolName: "terminal", content: log },
        { role: "assistant", content: "The error is a reset by the peer." },
      ]);
    }
  }
  using db = await SessionDB.open({ path, readonly: true });
  const raw = (await loadDriver())(path, { readonly: true });
  const floor = raw.prepare(pageSql("messages_fts", ""));
  const out: Record<string, unknown> = { sessions, lines_per_output: lines };
  for (const query of ["error", '"connection reset"', "worker"]) {
    const library: number[] = [];
    const fts5: number[] = [];
    for (let round = 0; round < 7; round++) {
      let t = performance.now();
      db.searchMessages(query, { limit: 20 });
      library.push(performance.now() - t);
      t = performance.now();
      floor.all(query, 20, 0);
      fts5.push(performance.now() - t);
    }
    out[query] = {
      library_p50_ms: +p50(library).toFixed(1),
      fts5_snippet_page_p50_ms: +p50(fts5).toFixed(1),
      ratio: +(p50(library) / p50(fts5)).toFixed(3),
    };
  }
  raw.close();
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
