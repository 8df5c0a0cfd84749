/**
 * The options and answers of `SessionStore` export and import.
 *
 * @module
 */
import type { SessionModelUsage } from "./session_model_usage.ts";
import type { OptionNames } from "./option_names.ts";

/** Options of `exportAll` and `iterateExport`. */
export interface ExportOptions {
  /** Only sessions of this source; every source when omitted or empty. */
  source?: string | null;
  /** Only sessions started at or after this time (Unix seconds), as the listing's. */
  startedAfter?: number | null;
  /** Only sessions started before this time (Unix seconds), as the listing's. */
  startedBefore?: number | null;
}

/** Options of {@linkcode importSession}. */
export interface ImportOptions {
  /**
   * Replace a session that is already present (its row is updated and its
   * messages rewritten) instead of skipping it.
   * @default {false}
   */
  replace?: boolean;
  /**
   * The session's per-model usage rows (a newer Hermes's
   * `session_model_usage`, as `getModelUsage` reads them), written with it
   * in the same transaction, replacing the rows it had; a store without a
   * place for them (a v11 file) names `session_model_usage` in
   * `droppedColumns` when any is given. Not given: the rows the record
   * carries under `hermes_state_model_usage` (an export's), else the
   * session's rows are left as they are. Each row needs a `model`; the other
   * columns default to `''`, `0` or `null`; no two rows may share a model,
   * route and task.
   */
  modelUsage?: readonly SessionModelUsage[];
}

/** The options of `exportAll` and `iterateExport`, checked by name. */
export const EXPORT_OPTION_NAMES: OptionNames<ExportOptions> = {
  source: true,
  startedAfter: true,
  startedBefore: true,
};

/** The options of `importSession`, checked by name. */
export const IMPORT_OPTION_NAMES: OptionNames<ImportOptions> = {
  replace: "boolean",
  modelUsage: true,
};

/** What {@linkcode importSession} did with one record. */
export interface ImportResult {
  /** `imported` (new), `replaced` (was present, `replace` given) or `skipped` (was present). */
  outcome: "imported" | "replaced" | "skipped";
  /** The session id. */
  id: string;
  /** Messages written (0 when skipped). */
  messages: number;
  /**
   * The parent named by the record when it is not in the file yet: the
   * session is (or stays) without a parent, and
   * {@linkcode restoreParentLinks} links it once the parent is imported.
   * `null` otherwise.
   */
  deferredParent: string | null;
  /**
   * Columns of the record this file has no place for (a file of an older
   * schema than the one that wrote the export): `archived` for a session
   * column, `messages.active` for a message column. Their values were not
   * kept. `[]` when skipped, or when every column fits.
   */
  droppedColumns: string[];
  /**
   * True when the session was already present without the parent its
   * record names (an earlier import ran before the parent was in), and
   * that parent is in the file now: the link was restored.
   */
  relinked: boolean;
  /**
   * The title the session got when another session already had the
   * record's: the lineage's next numbered title (`"notes #2"`), as
   * `getNextTitleInLineage` gives it, so that nothing of the session is
   * lost. `null` when it kept the record's title (or was skipped).
   */
  renamedTo: string | null;
}

/** A child whose parent link waits for the parent: see {@linkcode restoreParentLinks}. */
export interface ParentLink {
  /** The child session. */
  id: string;
  /** The parent it names. */
  parentId: string;
}
