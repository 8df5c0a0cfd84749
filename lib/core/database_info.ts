/**
 * The answer of `SessionStore.inspect` (`hermes-state info`): what a store
 * is made of, the full-text tables left stale by damage, and the known
 * integrity problems it explains.
 *
 * @module
 */
import type { OptionNames } from "./option_names.ts";

/** Options of {@linkcode inspectDatabase}. */
export interface InspectOptions {
  /**
   * Run `PRAGMA quick_check` on every table and index, one table at a time
   * (reads each of their pages once: 2–3 s for a file of a million messages).
   * @default {true}
   */
  integrity?: boolean;
  /**
   * With `integrity`, run it over the whole file at once, which also
   * verifies each full-text index against the messages' text (SQLite 3.44
   * and later; `hermes-state doctor` does the same) and accounts for the
   * free pages: about 40 s per million messages, where the trigram index
   * costs most.
   * @default {false}
   */
  searchIndexes?: boolean;
}

/** The options of `inspect`, checked by name. */
export const INSPECT_OPTION_NAMES: OptionNames<InspectOptions> = {
  integrity: "boolean",
  searchIndexes: "boolean",
};

/** The answer of {@linkcode inspectDatabase}. */
export interface DatabaseInfo {
  /** The database path. */
  path: string;
  /** The `schema_version` row; `null` when the table has none. */
  schemaVersion: number | null;
  /** The SQLite library version. */
  sqliteVersion: string;
  /**
   * Why the linked SQLite is unsafe (older than 3.51.3, with a WAL-reset
   * bug that corrupts databases under concurrent use); `null` when it is not.
   */
  sqliteWarning: string | null;
  /** `wal` for a Hermes file. */
  journalMode: string;
  /** Bytes of the `-wal` file (0 when there is none). */
  walBytes: number;
  /** Full-text tables no longer kept current after damage (`doctor --fix` rebuilds them). */
  staleFtsTables: StaleFtsTable[];
  /** Bytes per page. */
  pageSize: number;
  /** Pages in the main file. */
  pageCount: number;
  /** Unused pages (what `vacuum` would reclaim). */
  freePages: number;
  /** Rows of `sessions`; `null` when the table is damaged. */
  sessions: number | null;
  /** Rows of `messages`; `null` when the table is damaged. */
  messages: number | null;
  /** The FTS5 tables present (`messages_fts`, `messages_fts_trigram`). */
  ftsTables: string[];
  /** The `state_meta` keys. */
  metaKeys: string[];
  /** `["ok"]` for a sound file, else the problems found; `null` when not run. */
  integrity: string[] | null;
  /** Whether the check also verified the full-text indexes (`searchIndexes`). */
  searchIndexesChecked: boolean;
  /**
   * Known, harmless conditions among the problems found (with their fix):
   * the file is sound when every line of `integrity` is one of theirs.
   */
  knownIssues: KnownIssue[];
  /** The lines of `integrity` that are real damage; `[]` when sound or not checked. */
  damage: string[];
}

/** A full-text table that is no longer kept current, and why. */
export interface StaleFtsTable {
  /** The FTS5 table. */
  readonly table: "messages_fts" | "messages_fts_trigram";
  /** Why it was marked (the SQLite error that failed a write). */
  readonly reason: string;
  /** When it was marked, in Unix seconds; `null` when the value is not ours. */
  readonly at: number | null;
}

/** A known condition found by the integrity check. */
export interface KnownIssue {
  /** A stable name: `trigram_nul_prefix`. */
  code: "trigram_nul_prefix";
  /** What it is, in one sentence. */
  message: string;
  /** The command that repairs it. */
  fix: string;
  /** The lines of the check it explains. */
  lines: string[];
}
