/**
 * What a database file is made of: schema version, journal mode, pages,
 * row counts, FTS tables and a quick integrity check (`hermes-state info`).
 * The integrity check is the one `doctor` runs (`lib/sqlite/integrity.ts`).
 *
 * @module
 */
import { SQLITE, SqliteError } from "./driver/sqlite_error.ts";
import { sqliteVersionWarning, walBytes } from "./durability.ts";
import { staleFtsTables } from "./fts_stale.ts";
import { integrityCheck } from "./integrity.ts";
import { readSchemaVersion } from "./schema/schema_version.ts";
import type { Store } from "./store.ts";
import { explainIntegrity } from "./known_issues.ts";
import type { DatabaseInfo, InspectOptions } from "../core/database_info.ts";

/** Runs `read`; a damaged page gives `fallback(message)` instead of an error. */
function unlessCorrupt<T>(read: () => T, fallback: (message: string) => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof SqliteError && error.code === SQLITE.CORRUPT) {
      return fallback(error.message);
    }
    throw error;
  }
}

/** `PRAGMA quick_check` through the check `doctor` shares: b-tree lines, then FTS lines. */
function quickCheckLines(store: Store, searchIndexes: boolean): string[] {
  const { lines, fts } = integrityCheck(store.db, { searchIndexes });
  const ftsLines = Object.values(fts).flat();
  if (ftsLines.length === 0) return lines;
  return lines.length === 1 && lines[0] === "ok" ? ftsLines : [...lines, ...ftsLines];
}

function rowCount(store: Store, table: "sessions" | "messages"): number | null {
  if (!store.hasTable(table)) return 0;
  return unlessCorrupt(() => numberOf(store, `SELECT COUNT(*) FROM ${table}`), () => null);
}

function numberOf(store: Store, sql: string): number {
  const row = store.statement(sql).get();
  return row === undefined ? 0 : Number(Object.values(row)[0] ?? 0);
}

/** Implements `SessionDB.inspect`: versions, pragmas, counts and the integrity check. */
export function inspectDatabase(store: Store, options: InspectOptions = {}): DatabaseInfo {
  const version = readSchemaVersion(store.db);
  const journal = store.statement("PRAGMA journal_mode").get();
  const fts = store.statement(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%' " +
      "ORDER BY name",
  ).all();
  const meta = store.hasTable("state_meta")
    ? store.statement("SELECT key FROM state_meta ORDER BY key").all()
    : [];
  const checked = options.integrity !== false;
  const searchIndexes = checked && options.searchIndexes === true;
  const integrity = checked ? quickCheckLines(store, searchIndexes) : null;
  const problems = integrity === null || (integrity.length === 1 && integrity[0] === "ok")
    ? []
    : integrity;
  const explained = problems.length === 0
    ? { issues: [], unexplained: [] }
    : unlessCorrupt(() => explainIntegrity(store.db, problems), () => ({
      issues: [],
      unexplained: problems,
    }));
  const sqliteVersion = String(store.statement("SELECT sqlite_version() AS v").get()?.v ?? "");
  return {
    path: store.path,
    schemaVersion: version ?? null,
    sqliteVersion,
    sqliteWarning: sqliteVersionWarning(sqliteVersion),
    journalMode: String(journal?.journal_mode ?? ""),
    walBytes: walBytes(store.path),
    staleFtsTables: staleFtsTables(store.db),
    pageSize: numberOf(store, "PRAGMA page_size"),
    pageCount: numberOf(store, "PRAGMA page_count"),
    freePages: numberOf(store, "PRAGMA freelist_count"),
    sessions: rowCount(store, "sessions"),
    messages: rowCount(store, "messages"),
    ftsTables: fts.map((row) => String(row.name)),
    metaKeys: meta.map((row) => String(row.key)),
    integrity,
    searchIndexesChecked: searchIndexes,
    knownIssues: explained.issues,
    damage: explained.unexplained,
  };
}
