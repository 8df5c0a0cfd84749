/**
 * The SQLite engine of {@linkcode SessionStore}: a {@linkcode SessionDB}
 * whose connection never waits inside SQLite (`busy_timeout = 0`, one
 * attempt per write), with the waiting done here, between awaited pauses,
 * so the event loop keeps running while another process holds the lock. A
 * batched prune (`pruneSessions`, `pruneEmptyGhostSessions`,
 * `maybeAutoPruneAndVacuum`) runs each transaction as such a call and
 * awaits the pause between two, so a long prune does not freeze a server.
 *
 * @module
 */
import * as exporting from "./export.ts";
import * as prune from "./prune.ts";
import type { SqliteDriver } from "./driver/types.ts";
import type { Synchronous } from "./open.ts";
import { pinStore, SessionDB, storeOf, storeRead, unpinStore } from "./session_db.ts";
import { readsSessionModelUsage } from "./session_model_usage.ts";
import type { SessionStore } from "../core/session_store.ts";
import {
  checkStoreRetry,
  isBusyError,
  retryWhileBusy,
  type StoreRetryOptions,
} from "./store_retry.ts";
import type { SessionExportWithActivity } from "../core/types.ts";
import type {
  AutoPruneOptions,
  AutoPruneResult,
  PruneOptions,
  SessionsDirOptions,
} from "../core/prune_options.ts";
import { EXPORT_OPTION_NAMES, type ExportOptions } from "../core/transfer_options.ts";
import { checkOptionalText } from "../core/session_options.ts";
import { checkOptionNames } from "../core/option_names.ts";
import {
  EXPORT_PIECES,
  type ExportPiece,
  type ExportPiecesOptions,
  type ExportSelection,
} from "../core/export_pieces.ts";
import { sqliteExportPieces } from "./export_pieces.ts";
import { quotedValue } from "../core/shown_value.ts";

/** Options of {@linkcode openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * The read path: open without the schema step, without a write lock and
   * without changing a byte of the file or its sidecars (an older file is
   * read as it is, a file without the Hermes tables is refused with
   * `NotStateDbError`); every write method rejects.
   * @default {false}
   */
  readonly readonly?: boolean;
  /** Commit durability (see `SessionDBOptions.synchronous`). */
  readonly synchronous?: Synchronous;
  /** How long and how often to try again while another connection holds the lock. */
  readonly retry?: StoreRetryOptions;
  /** Seconds since the epoch, as a float (tests inject a fixed clock). */
  readonly clock?: () => number;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
}

/** One attempt per call: a locked file fails at once, and the store waits. */
const ONE_ATTEMPT = { maxAttempts: 1, busyTimeoutMs: 0 } as const;

/**
 * Opens a state.db file as a {@linkcode SessionStore}.
 *
 * @param path The database file.
 * @param options Mode, durability, retry timing.
 * @returns The open store.
 * @throws {OpenError} When the file cannot be opened (see `SessionDB.open`).
 * @throws {WriteBusyError} When the schema step found the file locked for the whole timeout.
 * @throws {RangeError} When `synchronous` is not a level or a `retry` time is not a
 *   non-negative number, naming the value; nothing is created.
 */
export async function openSqliteStore(
  path: string,
  options: SqliteStoreOptions = {},
): Promise<SessionStore> {
  options ??= {};
  checkStoreRetry(options.retry ?? {});
  const db = await retryWhileBusy(
    () =>
      SessionDB.open({
        path,
        readonly: options.readonly,
        synchronous: options.synchronous,
        clock: options.clock,
        openDriver: options.openDriver,
        retry: ONE_ATTEMPT,
      }),
    options.retry,
  );
  return new SqliteSessionStore(db, options.retry ?? {});
}

/**
 * `options` without the PostgreSQL engine's `origin` filter, which is
 * refused unless empty: a file records no origins (only `hermes-state sync`
 * does, on the server), so filtering by one here would silently answer for
 * every session. An empty one (all origins) is dropped, since `SessionDB`
 * checks its options by name.
 */
function withoutOrigin<T>(options: T): T {
  const origin = (options as { origin?: unknown } | null | undefined)?.origin;
  if (origin !== undefined && origin !== null && origin !== "") {
    throw new TypeError(
      `Cannot filter by origin on a SQLite store: origins are recorded only on a PostgreSQL store, ` +
        `by "hermes-state sync": current value is ${quotedValue(origin)}`,
    );
  }
  if (typeof options !== "object" || options === null || !Object.hasOwn(options, "origin")) {
    return options;
  }
  const { origin: _origin, ...rest } = options as Record<string, unknown>;
  return rest as T;
}

class SqliteSessionStore implements SessionStore {
  readonly engine = "sqlite" as const;
  readonly #db: SessionDB;
  readonly #retry: StoreRetryOptions;
  /** Settles when the last write still waiting for the lock has ended; none waits: `undefined`. */
  #waitingWrites: Promise<void> | undefined;

  constructor(db: SessionDB, retry: StoreRetryOptions) {
    this.#db = db;
    this.#retry = retry;
  }

  get target(): string {
    return this.#db.path;
  }

  get readonly(): boolean {
    return this.#db.readonly;
  }

  /**
   * Runs one call of the synchronous store, trying again while the file is
   * locked, until `retry.timeoutMs` after `calledAt` (a write that waited
   * behind others gets what is left of its own time, not a new one).
   */
  #call<T>(fn: (db: SessionDB) => T, calledAt?: number): Promise<T> {
    return retryWhileBusy(() => fn(this.#db), this.#retry, calledAt);
  }

  /**
   * Runs one write as {@linkcode #call} does, in the order the writes were
   * called: while one waits for another process's lock, each write called
   * after it waits behind it instead of trying on pauses of its own (appends
   * not awaited one by one landed in any order). A write called while none
   * waits runs at once, as a read does, so a read called after it sees it.
   */
  #write<T>(fn: (db: SessionDB) => T): Promise<T> {
    const ahead = this.#waitingWrites;
    let result: Promise<T>;
    if (ahead === undefined) {
      // Ended at its first try (written, or failed for another reason than the lock): none waits.
      let ended = false;
      result = this.#call((db) => {
        try {
          const value = fn(db);
          ended = true;
          return value;
        } catch (error) {
          ended = !isBusyError(error);
          throw error;
        }
      });
      if (ended) return result;
    } else {
      const calledAt = performance.now();
      result = ahead.then(() => this.#call(fn, calledAt));
    }
    // Let go as the write settles, before its caller resumes: a write called then runs at once.
    const settled: Promise<void> = result.then(
      () => this.#letGo(settled),
      () => this.#letGo(settled),
    );
    this.#waitingWrites = settled;
    return result;
  }

  /** Ends the wait behind `write` when no write was called after it. */
  #letGo(write: Promise<void>): void {
    if (this.#waitingWrites === write) this.#waitingWrites = undefined;
  }

  close(): Promise<void> {
    this.#db.close();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  createSession(...a: Parameters<SessionDB["createSession"]>) {
    return this.#write((db) => db.createSession(...a));
  }
  ensureSession(...a: Parameters<SessionDB["ensureSession"]>) {
    return this.#write((db) => db.ensureSession(...a));
  }
  endSession(...a: Parameters<SessionDB["endSession"]>) {
    return this.#write((db) => db.endSession(...a));
  }
  reopenSession(...a: Parameters<SessionDB["reopenSession"]>) {
    return this.#write((db) => db.reopenSession(...a));
  }
  updateSystemPrompt(...a: Parameters<SessionDB["updateSystemPrompt"]>) {
    return this.#write((db) => db.updateSystemPrompt(...a));
  }
  getSession(...a: Parameters<SessionDB["getSession"]>) {
    return this.#call((db) => db.getSession(...a));
  }
  updateTokenCounts(...a: Parameters<SessionDB["updateTokenCounts"]>) {
    return this.#write((db) => db.updateTokenCounts(...a));
  }
  appendMessage(...a: Parameters<SessionDB["appendMessage"]>) {
    return this.#write((db) => db.appendMessage(...a));
  }
  appendMessages(...a: Parameters<SessionDB["appendMessages"]>) {
    return this.#write((db) => db.appendMessages(...a));
  }
  replaceMessages(...a: Parameters<SessionDB["replaceMessages"]>) {
    return this.#write((db) => db.replaceMessages(...a));
  }
  clearMessages(...a: Parameters<SessionDB["clearMessages"]>) {
    return this.#write((db) => db.clearMessages(...a));
  }
  getMessages(...a: Parameters<SessionDB["getMessages"]>) {
    return this.#call((db) => db.getMessages(...a));
  }
  countMessages(...a: Parameters<SessionDB["countMessages"]>) {
    return this.#call((db) => db.countMessages(...a));
  }
  getMessagesAsConversation(...a: Parameters<SessionDB["getMessagesAsConversation"]>) {
    return this.#call((db) => db.getMessagesAsConversation(...a));
  }
  messageCount(...a: Parameters<SessionDB["messageCount"]>) {
    return this.#call((db) => db.messageCount(...a));
  }
  searchMessages(...a: Parameters<SessionDB["searchMessages"]>) {
    return this.#call((db) => db.searchMessages(a[0], withoutOrigin(a[1])));
  }
  countSearchHits(...a: Parameters<SessionDB["countSearchHits"]>) {
    return this.#call((db) => db.countSearchHits(a[0], withoutOrigin(a[1]), a[2]));
  }
  listSessionsRich(...a: Parameters<SessionDB["listSessionsRich"]>) {
    return this.#call((db) => db.listSessionsRich(withoutOrigin(a[0])));
  }
  searchSessions(...a: Parameters<SessionDB["searchSessions"]>) {
    return this.#call((db) => db.searchSessions(withoutOrigin(a[0])));
  }
  sessionCount(...a: Parameters<SessionDB["sessionCount"]>) {
    return this.#call((db) => db.sessionCount(withoutOrigin(a[0])));
  }
  listedSessionCount(...a: Parameters<SessionDB["listedSessionCount"]>) {
    return this.#call((db) => db.listedSessionCount(withoutOrigin(a[0])));
  }
  resolveSessionId(...a: Parameters<SessionDB["resolveSessionId"]>) {
    return this.#call((db) => db.resolveSessionId(...a));
  }
  sessionIdsWithPrefix(...a: Parameters<SessionDB["sessionIdsWithPrefix"]>) {
    return this.#call((db) => db.sessionIdsWithPrefix(...a));
  }
  setSessionTitle(...a: Parameters<SessionDB["setSessionTitle"]>) {
    return this.#write((db) => db.setSessionTitle(...a));
  }
  getSessionTitle(...a: Parameters<SessionDB["getSessionTitle"]>) {
    return this.#call((db) => db.getSessionTitle(...a));
  }
  getSessionByTitle(...a: Parameters<SessionDB["getSessionByTitle"]>) {
    return this.#call((db) => db.getSessionByTitle(...a));
  }
  resolveSessionByTitle(...a: Parameters<SessionDB["resolveSessionByTitle"]>) {
    return this.#call((db) => db.resolveSessionByTitle(...a));
  }
  getNextTitleInLineage(...a: Parameters<SessionDB["getNextTitleInLineage"]>) {
    return this.#call((db) => db.getNextTitleInLineage(...a));
  }
  getCompressionTip(...a: Parameters<SessionDB["getCompressionTip"]>) {
    return this.#call((db) => db.getCompressionTip(...a));
  }
  resolveResumeSessionId(...a: Parameters<SessionDB["resolveResumeSessionId"]>) {
    return this.#call((db) => db.resolveResumeSessionId(...a));
  }
  getAncestors(...a: Parameters<SessionDB["getAncestors"]>) {
    return this.#call((db) => db.getAncestors(...a));
  }
  getDescendants(...a: Parameters<SessionDB["getDescendants"]>) {
    return this.#call((db) => db.getDescendants(...a));
  }
  exportSession(...a: Parameters<SessionDB["exportSession"]>) {
    return this.#call((db) => db.exportSession(...a));
  }
  exportAll(...a: Parameters<SessionDB["exportAll"]>) {
    return this.#call((db) => db.exportAll(withoutOrigin(a[0])));
  }
  async *iterateExport(
    options: ExportOptions = {},
  ): AsyncIterableIterator<SessionExportWithActivity> {
    const given = withoutOrigin(options ?? {});
    checkOptionNames("export sessions", given, EXPORT_OPTION_NAMES);
    checkOptionalText("export sessions", "source", given.source);
    const [rows, usage] = await this.#call((db) =>
      storeRead(db, (store) =>
        [
          exporting.exportSessionRows(store, given),
          readsSessionModelUsage(store),
        ] as const)
    );
    for (const row of rows) {
      // Each session is read on its own, whole (its row again with its messages, in one
      // snapshot): no read snapshot stays open while the consumer awaits.
      const record = await this.#call((db) =>
        storeRead(db, (store) => exporting.sessionWhole(store, row.id, usage))
      );
      if (record !== undefined) yield record;
    }
  }
  /** The export in pieces (`lib/core/export_pieces.ts`), checked as `exportSession` / `iterateExport`. */
  async *[EXPORT_PIECES](
    selection: ExportSelection,
    options: Required<ExportPiecesOptions>,
  ): AsyncIterableIterator<ExportPiece> {
    if (!("id" in selection)) {
      checkOptionNames("export sessions", withoutOrigin(selection.filter), EXPORT_OPTION_NAMES);
      checkOptionalText("export sessions", "source", selection.filter?.source);
    }
    yield* sqliteExportPieces(
      {
        read: (read, on) => this.#call((db) => on === undefined ? storeRead(db, read) : read(on)),
        pin: () => this.#call(pinStore),
        unpin: (store) => unpinStore(this.#db, store),
      },
      selection,
      options,
    );
  }
  deleteSession(...a: Parameters<SessionDB["deleteSession"]>) {
    return this.#write((db) => db.deleteSession(...a));
  }
  /** The batched deletes: each transaction retried while busy, each pause between two awaited. */
  get #prune(): prune.AsyncPruneInternals {
    return { step: (fn) => this.#write(fn) };
  }
  // async: a store closed meanwhile (storeOf throws) rejects, as every other method does.
  async pruneSessions(options: PruneOptions = {}): Promise<number> {
    return await prune.pruneSessionsAsync(storeOf(this.#db), options ?? {}, this.#prune);
  }
  async pruneEmptyGhostSessions(options: SessionsDirOptions = {}): Promise<number> {
    return await prune.pruneEmptyGhostSessionsAsync(storeOf(this.#db), options ?? {}, this.#prune);
  }
  getMeta(...a: Parameters<SessionDB["getMeta"]>) {
    return this.#call((db) => db.getMeta(...a));
  }
  setMeta(...a: Parameters<SessionDB["setMeta"]>) {
    return this.#write((db) => db.setMeta(...a));
  }
  vacuum() {
    return this.#write((db) => db.vacuum());
  }
  async maybeAutoPruneAndVacuum(options: AutoPruneOptions = {}): Promise<AutoPruneResult> {
    return await prune.maybeAutoPruneAndVacuumAsync(storeOf(this.#db), options ?? {}, this.#prune);
  }
  usageByModel() {
    return this.#call((db) => db.usageByModel());
  }
  topSessionsByTokens(...a: Parameters<SessionDB["topSessionsByTokens"]>) {
    return this.#call((db) => db.topSessionsByTokens(...a));
  }
  usageBySource() {
    return this.#call((db) => db.usageBySource());
  }
  getModelUsage(...a: Parameters<SessionDB["getModelUsage"]>) {
    return this.#call((db) => db.getModelUsage(...a));
  }
  usageReport(...a: Parameters<SessionDB["usageReport"]>) {
    return this.#call((db) => db.usageReport(withoutOrigin(a[0])));
  }
  dataVersion() {
    return this.#call((db) => db.dataVersion());
  }
  inspect(...a: Parameters<SessionDB["inspect"]>) {
    return this.#call((db) => db.inspect(...a));
  }
  pruneCandidates(...a: Parameters<SessionDB["pruneCandidates"]>) {
    return this.#call((db) => db.pruneCandidates(...a));
  }
  importSession(...a: Parameters<SessionDB["importSession"]>) {
    return this.#write((db) => db.importSession(...a));
  }
  restoreParentLinks(...a: Parameters<SessionDB["restoreParentLinks"]>) {
    return this.#write((db) => db.restoreParentLinks(...a));
  }
}
