/**
 * Checks a database after writers ran (or were killed): every acknowledged
 * append is there exactly once, no batch is half-written, the counters match
 * the rows, and SQLite and both FTS indexes are sound.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import type { SqliteConnection } from "../../lib/sqlite/driver/types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";

/** One call a writer started: the messages it tried to append. */
export interface Attempt {
  /** The session written to. */
  readonly session: string;
  /** The tokens of its messages. */
  readonly tokens: readonly string[];
}

/** What the writers reported. */
export interface Ledger {
  /** Every call started. */
  readonly attempts: Attempt[];
  /** Acknowledged appends: token → message id. */
  readonly acks: Map<string, number>;
}

/** An empty ledger. */
export function newLedger(): Ledger {
  return { attempts: [], acks: new Map() };
}

/**
 * Adds a writer's stdout lines (`try …`, `ack …`) to `ledger`.
 *
 * @param ledger The ledger to fill.
 * @param lines The lines.
 */
export function record(ledger: Ledger, lines: readonly string[]): void {
  for (const line of lines) {
    const parts = line.split(" ");
    if (parts[0] === "try") {
      ledger.attempts.push({ session: parts[1], tokens: parts[2].split(",") });
    } else if (parts[0] === "ack") {
      if (ledger.acks.has(parts[1])) throw new Error(`Token acknowledged twice: ${parts[1]}`);
      ledger.acks.set(parts[1], Number(parts[2]));
    }
  }
}

/** What {@linkcode verify} found. Every list is empty on a sound file. */
export interface Verdict {
  /** Acknowledged appends. */
  appends: number;
  /** Message rows in the file. */
  rows: number;
  /** Acknowledged tokens with no row. */
  lost: string[];
  /** Tokens with more than one row. */
  duplicated: string[];
  /** Acknowledged tokens whose row has another id or session. */
  misplaced: string[];
  /** Calls of which some but not all messages are present. */
  halfWritten: string[];
  /** Rows that no writer tried to write. */
  unexpected: string[];
  /** Sessions whose `message_count` or `tool_call_count` differ from their rows. */
  counters: string[];
  /** `PRAGMA integrity_check` result (`"ok"` when sound). */
  integrity: string;
  /** FTS problems: a failed integrity-check, or an index row that differs from its message. */
  fts: string[];
}

/** True when the verdict has no problem at all. */
export function sound(verdict: Verdict): boolean {
  return verdict.integrity === "ok" && [
    verdict.lost,
    verdict.duplicated,
    verdict.misplaced,
    verdict.halfWritten,
    verdict.unexpected,
    verdict.counters,
    verdict.fts,
  ].every((list) => list.length === 0);
}

/** A one-line summary of the problems of `verdict`, for assertion messages. */
export function describeVerdict(verdict: Verdict): string {
  const parts = Object.entries(verdict)
    .filter(([, value]) => Array.isArray(value) && value.length > 0)
    .map(([key, value]) => `${key}: ${(value as string[]).slice(0, 5).join(" ")}`);
  return [`integrity ${verdict.integrity}`, ...parts].join("; ");
}

const TOKEN = /^hello (\S+) from /;

function ftsProblems(db: SqliteConnection): string[] {
  const problems: string[] = [];
  for (const table of ["messages_fts", "messages_fts_trigram"]) {
    try {
      db.exec(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`);
    } catch (error) {
      problems.push(`${table} integrity-check: ${(error as Error).message}`);
    }
    const differing = db.prepare(
      `SELECT m.id AS id FROM messages m LEFT JOIN ${table} f ON f.rowid = m.id
       WHERE f.content IS NOT (COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') ||
         ' ' || COALESCE(m.tool_calls, ''))`,
    ).all();
    for (const row of differing) problems.push(`${table} row ${row.id} differs`);
    const extra = db.prepare(
      `SELECT count(*) AS n FROM ${table} WHERE rowid NOT IN (SELECT id FROM messages)`,
    ).get()!;
    if (Number(extra.n) > 0) problems.push(`${table} has ${extra.n} rows without a message`);
  }
  return problems;
}

function counterProblems(db: SqliteConnection): string[] {
  const rows = db.prepare(
    `SELECT s.id AS id, s.message_count AS mc, s.tool_call_count AS tc,
       (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS real_mc,
       (SELECT COALESCE(sum(json_array_length(m.tool_calls)), 0) FROM messages m
         WHERE m.session_id = s.id) AS real_tc
     FROM sessions s`,
  ).all();
  return rows
    .filter((r) => Number(r.mc) !== Number(r.real_mc) || Number(r.tc) !== Number(r.real_tc))
    .map((r) => `${r.id} message_count ${r.mc}/${r.real_mc} tool_call_count ${r.tc}/${r.real_tc}`);
}

/**
 * Opens `path` as a user would (schema step included), then checks it
 * against `ledger` with a raw connection. Writers must have stopped.
 *
 * @param path The database file.
 * @param ledger What the writers reported.
 * @returns The verdict.
 */
export async function verify(path: string, ledger: Ledger): Promise<Verdict> {
  (await SessionDB.open({ path })).close();
  const db = (await loadDriver())(path);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const found = new Map<string, Array<{ id: number; session: string }>>();
    const unexpected: string[] = [];
    let rows = 0;
    for (const row of db.prepare("SELECT id, session_id, content FROM messages").iterate()) {
      rows++;
      const token = TOKEN.exec(String(row.content))?.[1];
      if (token === undefined) {
        unexpected.push(`#${row.id}`);
        continue;
      }
      const list = found.get(token) ?? [];
      list.push({ id: Number(row.id), session: String(row.session_id) });
      found.set(token, list);
    }
    const tried = new Map<string, Attempt>();
    for (const attempt of ledger.attempts) {
      for (const token of attempt.tokens) tried.set(token, attempt);
    }
    const verdict: Verdict = {
      appends: ledger.acks.size,
      rows,
      lost: [],
      duplicated: [],
      misplaced: [],
      halfWritten: [],
      unexpected,
      counters: counterProblems(db),
      integrity: String(db.prepare("PRAGMA integrity_check").get()!.integrity_check),
      fts: ftsProblems(db),
    };
    for (const [token, list] of found) {
      if (list.length > 1) verdict.duplicated.push(token);
      if (!tried.has(token)) verdict.unexpected.push(token);
    }
    for (const [token, id] of ledger.acks) {
      const list = found.get(token);
      if (list === undefined) verdict.lost.push(token);
      else if (list[0].id !== id || list[0].session !== tried.get(token)?.session) {
        verdict.misplaced.push(token);
      }
    }
    for (const attempt of ledger.attempts) {
      const present = attempt.tokens.filter((token) => found.has(token)).length;
      if (present !== 0 && present !== attempt.tokens.length) {
        verdict.halfWritten.push(attempt.tokens.join(","));
      }
    }
    return verdict;
  } finally {
    db.close();
  }
}

/**
 * The SHA-256 of every file in `dir`, by name: a snapshot to compare before
 * and after an open that must not change anything.
 *
 * @param dir The folder.
 * @returns `{ name: hex digest }`.
 */
export function snapshot(dir: string): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    hashes[name] = createHash("sha256").update(readFileSync(`${dir}/${name}`)).digest("hex");
  }
  return hashes;
}
