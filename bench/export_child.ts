/**
 * Child process of the benchmark: streams the whole export of one file and
 * reports time and peak memory, so the parent's corpus build does not count.
 *
 * Usage: `<runtime> bench/export_child.ts <path> ours|raw|native`. Prints one
 * JSON line: `{ ms, sessions, messages, bytes, baselineMb, peakMb }`, where
 * `peakMb` is the process's peak resident set (Linux `VmHWM`) and
 * `baselineMb` its resident set before the export started.
 *
 * @module
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { loadNative, type RawConnection } from "./native.ts";
import { rawIterateExport, rawPragmas } from "./raw.ts";

function statusMb(field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? NaN);
  return kb / 1024;
}

async function main(path: string, mode: string): Promise<void> {
  let rows: Iterable<Record<string, unknown>>;
  let close: () => void;
  if (mode === "ours") {
    const db = await SessionDB.open({ path, readonly: true });
    rows = { [Symbol.iterator]: () => db.iterateExport() };
    close = () => db.close();
  } else {
    const conn: RawConnection = mode === "raw"
      ? (await loadDriver())(path, { readonly: true })
      : (await loadNative())(path, true);
    rawPragmas(conn, "readonly");
    rows = { [Symbol.iterator]: () => rawIterateExport(conn) };
    close = () => conn.close();
  }
  const baselineMb = statusMb("VmRSS");
  const start = performance.now();
  let sessions = 0, messages = 0, bytes = 0;
  for (const session of rows) {
    sessions++;
    messages += (session.messages as unknown[]).length;
    // What a JSONL export writes; the text is dropped at once.
    bytes += JSON.stringify(session).length + 1;
  }
  const ms = performance.now() - start;
  close();
  const peakMb = statusMb("VmHWM");
  process.stdout.write(
    JSON.stringify({ ms, sessions, messages, bytes, baselineMb, peakMb }) + "\n",
  );
}

if (import.meta.main) await main(process.argv[2], process.argv[3]);
