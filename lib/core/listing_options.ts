/**
 * The options of the session listing methods of `SessionStore` (the rich
 * list, search by text, counts) and the answer of an id-prefix lookup.
 *
 * @module
 */
import { checkSeconds } from "./paging.ts";
import type { OptionNames } from "./option_names.ts";
/** Options of `listSessionsRich`. */
export interface ListSessionsOptions {
  /** Only sessions of this source (`cli`, `telegram`…); all when empty. */
  source?: string | null;
  /** Leave out sessions of these sources (`["tool"]` hides third-party tool runs). */
  excludeSources?: readonly string[] | null;
  /** Only sessions started at or after this time (Unix seconds). */
  startedAfter?: number | null;
  /** Only sessions started before this time (Unix seconds). */
  startedBefore?: number | null;
  /** Only sessions that have at least one child session (delegates, branches, continuations). */
  hasChildren?: boolean;
  /**
   * At most this many sessions.
   * @default {20}
   */
  limit?: number;
  /**
   * Skip this many sessions first.
   * @default {0}
   */
  offset?: number;
  /**
   * List every session. By default a child is listed only when its parent
   * ended as `branched` before the child started; delegates and compression
   * continuations are hidden.
   * @default {false}
   */
  includeChildren?: boolean;
  /**
   * Show a compression chain as one entry: the root's row with the id, title,
   * counts, preview and activity of the chain's live tip (and
   * `_lineage_root_id`). Not applied with `includeChildren`.
   * @default {true}
   */
  projectCompressionTips?: boolean;
  /**
   * Order by latest activity (of the whole compression chain), not by start.
   * @default {false}
   */
  orderByLastActive?: boolean;
  /**
   * In a file from a newer Hermes (with `sessions.archived`), also list the
   * archived sessions, which that Hermes hides.
   * @default {false}
   */
  includeArchived?: boolean;
}

/** Options of `searchSessions`. */
export interface SearchSessionsOptions {
  /** Only sessions of this source; all when empty. */
  source?: string | null;
  /**
   * At most this many sessions.
   * @default {20}
   */
  limit?: number;
  /**
   * Skip this many sessions first.
   * @default {0}
   */
  offset?: number;
}

/** Options of `sessionCount`. */
export interface SessionCountOptions {
  /** Only sessions of this source; all when empty. */
  source?: string | null;
}

/** The options of `listSessionsRich` and `listedSessionCount`, checked by name. */
export const LIST_SESSIONS_OPTION_NAMES: OptionNames<ListSessionsOptions> = {
  source: true,
  excludeSources: true,
  startedAfter: true,
  startedBefore: true,
  hasChildren: "boolean",
  limit: true,
  offset: true,
  includeChildren: "boolean",
  projectCompressionTips: "boolean",
  orderByLastActive: "boolean",
  includeArchived: "boolean",
};

/** The options of `searchSessions`, checked by name. */
export const SEARCH_SESSIONS_OPTION_NAMES: OptionNames<SearchSessionsOptions> = {
  source: true,
  limit: true,
  offset: true,
};

/** The options of `sessionCount`, checked by name. */
export const SESSION_COUNT_OPTION_NAMES: OptionNames<SessionCountOptions> = { source: true };

/** The options of `sessionIdsWithPrefix`, checked by name. */
export const PREFIX_OPTION_NAMES: OptionNames<{ limit?: number }> = { limit: true };

/** Sessions whose id starts with a prefix: how many, and the newest few. */
export interface PrefixMatches {
  /** How many sessions match. */
  readonly count: number;
  /** The ids of the newest-started matches, at most `limit`. */
  readonly ids: readonly string[];
}

/**
 * The start-time bounds of a listing or an export, checked (every engine
 * calls this).
 *
 * @param options The listing's or the export's options.
 * @param action What the caller does, for the error (`list sessions`).
 * @returns `startedAfter` and `startedBefore`, `null` when not given.
 * @throws {RangeError} When either is not a finite number.
 */
export function checkStartedRange(
  options: Pick<ListSessionsOptions, "startedAfter" | "startedBefore">,
  action = "list sessions",
): { after: number | null; before: number | null } {
  return {
    after: checkSeconds(action, "startedAfter", options.startedAfter),
    before: checkSeconds(action, "startedBefore", options.startedBefore),
  };
}
