/**
 * The options and answers of `SessionStore` deletion and pruning: the
 * transcript folder, the age and source rules, the candidates a prune would take.
 *
 * @module
 */
import { checkOptionalText } from "./session_options.ts";
import { quotedValue } from "./shown_value.ts";
import { blobAsText } from "./blob_text.ts";
import { checkOptionNames, type OptionNames } from "./option_names.ts";

/** Options of `deleteSession` and `pruneEmptyGhostSessions`. */
export interface SessionsDirOptions {
  /**
   * Folder of transcript files to remove with each session: `<id>.json`,
   * `<id>.jsonl` and `request_dump_<id>_*.json` (names compared literally).
   * Nothing is removed when empty.
   */
  sessionsDir?: string | null;
}

/** Options of `pruneSessions`. */
export interface PruneOptions extends SessionsDirOptions {
  /**
   * Prune ended sessions started more than this many days ago.
   * @default {90}
   */
  olderThanDays?: number;
  /** Only sessions of this source; all when empty. */
  source?: string | null;
}

/** Options of `maybeAutoPruneAndVacuum`. */
export interface AutoPruneOptions extends SessionsDirOptions {
  /**
   * Prune ended sessions started more than this many days ago.
   * @default {90}
   */
  retentionDays?: number;
  /**
   * Do nothing when the last run (the `last_auto_prune` marker) is more recent.
   * @default {24}
   */
  minIntervalHours?: number;
  /**
   * Run `VACUUM` after a prune that removed something.
   * @default {true}
   */
  vacuum?: boolean;
}

/** What `maybeAutoPruneAndVacuum` did. */
export interface AutoPruneResult {
  /** True when the last run was too recent and nothing was done. */
  skipped: boolean;
  /** Sessions pruned. */
  pruned: number;
  /** True when `VACUUM` ran (and succeeded). */
  vacuumed: boolean;
  /** The message of the error that stopped the run, if one did (Python's `error`). */
  error?: string;
  /** The error that stopped the run itself, with its own `cause`, if one did. */
  cause?: unknown;
}

/** Options of {@linkcode pruneCandidates}: the same as `pruneSessions`, or `ghosts`. */
export interface PruneCandidatesOptions {
  /**
   * Age in days: sessions started before now minus this many days.
   * @default {90}
   */
  olderThanDays?: number;
  /** Only this source (a blank value means every source, as in Python). */
  source?: string | null;
  /**
   * List what `pruneEmptyGhostSessions` would delete instead: ended `tui`
   * sessions with no title and no message, started more than a day ago.
   * Cannot be combined with `olderThanDays` or `source` (a `RangeError`).
   * @default {false}
   */
  ghosts?: boolean;
}

/** The options of `deleteSession` and `pruneEmptyGhostSessions`, checked by name. */
const SESSIONS_DIR_OPTION_NAMES: OptionNames<SessionsDirOptions> = { sessionsDir: true };

/** The options of `pruneSessions`, checked by name. */
const PRUNE_OPTION_NAMES: OptionNames<PruneOptions> = {
  olderThanDays: true,
  source: true,
  sessionsDir: true,
};

/** The options of `maybeAutoPruneAndVacuum`, checked by name. */
export const AUTO_PRUNE_OPTION_NAMES: OptionNames<AutoPruneOptions> = {
  retentionDays: true,
  minIntervalHours: true,
  vacuum: "boolean",
  sessionsDir: true,
};

const PRUNE_CANDIDATES_OPTION_NAMES: OptionNames<PruneCandidatesOptions> = {
  olderThanDays: true,
  source: true,
  ghosts: "boolean",
};

/**
 * Checks the options of `deleteSession` and `pruneEmptyGhostSessions`
 * (every engine calls this first) and gives their transcript folder, read
 * once before the delete: options of `null` must not fail after it
 * committed.
 *
 * @param action What the caller does, for the error ("delete session").
 * @param options The options as given (`null` is none).
 * @returns `sessionsDir`, as given.
 * @throws {TypeError} When `sessionsDir` is neither absent, `null` nor a
 *   string, or an option is not `sessionsDir`, naming it.
 */
export function checkedSessionsDir(
  action: string,
  options: SessionsDirOptions | null | undefined,
): string | null | undefined {
  checkOptionNames(action, options, SESSIONS_DIR_OPTION_NAMES);
  const sessionsDir = options?.sessionsDir;
  checkOptionalText(action, "sessionsDir", sessionsDir);
  return sessionsDir;
}

/**
 * Checks the options of `pruneSessions` (every engine calls this first).
 *
 * @param options The options as given.
 * @returns The age in days (90 when not given).
 * @throws {RangeError} On a negative or non-finite `olderThanDays`, naming it.
 * @throws {TypeError} When `source` or `sessionsDir` is neither absent,
 *   `null` nor a string, or an option is not one of these, naming it.
 */
export function checkPruneOptions(options: PruneOptions): number {
  checkOptionNames("prune sessions", options, PRUNE_OPTION_NAMES);
  checkOptionalText("prune sessions", "source", options.source);
  checkOptionalText("prune sessions", "sessionsDir", options.sessionsDir);
  const days = options.olderThanDays ?? 90;
  if (typeof days !== "number" || !Number.isFinite(days) || days < 0) {
    throw new RangeError(
      `Cannot prune sessions: olderThanDays must be a non-negative number: current value is ${
        quotedValue(days)
      }`,
    );
  }
  return days;
}

/**
 * Checks the options of `pruneCandidates` (the message names the value).
 *
 * @param options The options as given.
 * @returns The age in days (90 when not given).
 * @throws {RangeError} On a negative or non-finite `olderThanDays`, or
 *   `ghosts` with `olderThanDays` or `source`.
 * @throws {TypeError} When `source` is neither absent, `null` nor a string, naming the value,
 *   or an option is not one of these (see `option_names.ts`).
 */
export function checkPruneCandidatesOptions(options: PruneCandidatesOptions): number {
  checkOptionNames("list prune candidates", options, PRUNE_CANDIDATES_OPTION_NAMES);
  checkOptionalText("list prune candidates", "source", options.source);
  if (options.ghosts && (options.olderThanDays !== undefined || options.source)) {
    throw new RangeError(
      "Cannot list prune candidates: ghosts cannot be combined with olderThanDays or source: " +
        `current values are ${options.olderThanDays} and ${JSON.stringify(options.source)}`,
    );
  }
  const days = options.olderThanDays ?? 90;
  if (typeof days !== "number" || !Number.isFinite(days) || days < 0) {
    throw new RangeError(
      `Cannot list prune candidates: olderThanDays must be a non-negative number: current value is ${
        quotedValue(days)
      }`,
    );
  }
  return days;
}

/** A session that pruning would delete. */
export interface PruneCandidate {
  /** The session id. */
  id: string;
  /** Its source. */
  source: string;
  /** Its title, or `null`. */
  title: string | null;
  /**
   * When it started (Unix seconds). A value another writer stored as text
   * comes back as that text, as `getSession()` gives it.
   */
  started_at: number;
  /** When it ended (Unix seconds); a value stored as text comes back as that text. */
  ended_at: number;
  /** Why it ended. */
  end_reason: string | null;
  /** Its `message_count` column. */
  message_count: number;
}

/**
 * One row of a prune-candidates query as a {@linkcode PruneCandidate}.
 *
 * @param row The row (`id`, `source`, `title`, `started_at`, `ended_at`,
 *   `end_reason`, `message_count`).
 * @returns The candidate, numbers and texts normalized; a time stored as
 *   anything but a number is kept as stored (a BLOB as its text).
 */
export function toPruneCandidate(row: Readonly<Record<string, unknown>>): PruneCandidate {
  return {
    // A BLOB where text belongs (Python's sqlite3 stores `bytes` so) is its UTF-8 text.
    id: String(blobAsText(row.id)),
    source: String(blobAsText(row.source)),
    title: row.title === null ? null : String(blobAsText(row.title)),
    started_at: storedTime(row.started_at),
    ended_at: storedTime(row.ended_at),
    end_reason: row.end_reason === null ? null : String(blobAsText(row.end_reason)),
    message_count: Number(row.message_count ?? 0),
  };
}

/**
 * A time column as a number, or as the file holds it when it is not one:
 * `Number("2026-01-02 bad")` would be `NaN`, which JSON prints as `null`.
 * The type stays `number`, as the session rows' times do.
 */
function storedTime(value: unknown): number {
  if (typeof value === "number" || typeof value === "bigint") return Number(value);
  return blobAsText(value) as number;
}
