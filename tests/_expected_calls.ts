/**
 * Replays the calls recorded in the fixtures' `expected/*.json` files on
 * our API (`ts_call` with `ts_args`), for data-driven tests.
 */
import type { SessionDB } from "../lib/sqlite/session_db.ts";
import { expected } from "./_helpers.ts";

/** One recorded call and the Python answer. */
export interface ExpectedEntry {
  call: string;
  ts_call: string;
  ts_args: unknown[];
  result?: unknown;
  error?: { type: string; message: string };
}

/** Calls whose Python `None` means "not found", which our API answers with `undefined`. */
const NOT_FOUND_CALLS = new Set([
  "getSession",
  "exportSession",
  "resolveSessionId",
  "resolveSessionByTitle",
  "getSessionTitle",
  "getMeta",
  "getSessionByTitle",
]);

/** The entries of `file` whose `ts_call` is one of `calls`. */
export async function entriesOf(file: string, calls: readonly string[]): Promise<ExpectedEntry[]> {
  const data = await expected<{ entries: ExpectedEntry[] }>(file);
  return data.entries.filter((e) => calls.includes(e.ts_call));
}

/** What our API should return for `entry`. */
export function wanted(entry: ExpectedEntry): unknown {
  return entry.result === null && NOT_FOUND_CALLS.has(entry.ts_call) ? undefined : entry.result;
}

/** Runs `entry` on `db`. */
export function replay(db: SessionDB, entry: ExpectedEntry): unknown {
  const method = (db as unknown as Record<string, (...args: unknown[]) => unknown>)[entry.ts_call];
  return method.apply(db, entry.ts_args);
}

/** A short test-name label for `entry`. */
export function label(entry: ExpectedEntry): string {
  const args = JSON.stringify(entry.ts_args);
  return `${entry.ts_call}(${args.length > 60 ? args.slice(1, 58) + "…" : args.slice(1, -1)})`;
}
