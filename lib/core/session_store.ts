/**
 * `SessionStore`: the asynchronous twin of {@linkcode SessionDB}, the one
 * seam every engine sits behind (SQLite today, PostgreSQL next) and the only
 * API the CLI and the web server use. Each method has the name, arguments,
 * records and errors of the `SessionDB` method of the same name, and returns
 * a Promise of what that one returns; the full contract of each is on
 * `SessionDB`.
 *
 * @example The same store, asynchronously
 * ```ts
 * import assert from "node:assert/strict";
 * import { openStore } from "../open_store.ts";
 * const dir = await Deno.makeTempDir();
 * await using store = await openStore(`${dir}/state.db`);
 * assert.equal(store.engine, "sqlite");
 * await store.createSession("s1", "cli");
 * await store.appendMessage("s1", { role: "user", content: "prune docker images" });
 * const [hit] = await store.searchMessages("docker");
 * assert.equal(hit.session_id, "s1");
 * for await (const session of store.iterateExport()) assert.equal(session.messages.length, 1);
 * ```
 *
 * @module
 */
import type { SessionModelUsage } from "./session_model_usage.ts";
import type {
  ConversationOptions,
  CreateSessionOptions,
  EnsureSessionOptions,
  MessagesOptions,
  TokenCountsUpdate,
} from "./session_options.ts";
import type { ExportOptions, ImportOptions, ImportResult, ParentLink } from "./transfer_options.ts";
import type { DatabaseInfo, InspectOptions } from "./database_info.ts";
import type {
  ListSessionsOptions,
  PrefixMatches,
  SearchSessionsOptions,
  SessionCountOptions,
} from "./listing_options.ts";
import type {
  AutoPruneOptions,
  AutoPruneResult,
  PruneCandidate,
  PruneCandidatesOptions,
  PruneOptions,
  SessionsDirOptions,
} from "./prune_options.ts";
import type { SearchOptions } from "./search/options.ts";
import type { SourceUsage, UsageReportOptions, UsageRow } from "./usage.ts";
import type {
  ConversationMessage,
  MessageRow,
  ModelUsage,
  NewMessage,
  RichSessionRow,
  SearchHit,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  SessionRowWithActivity,
  SessionTokens,
} from "./types.ts";

/** The storage engine behind a {@linkcode SessionStore}. */
export type StoreEngine = "sqlite" | "postgres";

/**
 * The Hermes session store, asynchronous, over any engine. Obtain one with
 * {@linkcode openStore}; close it with `close()` or `await using`.
 *
 * Every method answers exactly as the {@linkcode SessionDB} method of the
 * same name does on the same data (see there for each contract), except that
 * it returns a Promise, waits for a locked store without blocking the event
 * loop (the pauses of a batched prune between its transactions are awaited
 * too), and `iterateExport` is an async iterator.
 *
 * Calls made without awaiting the one before run side by side, each its own
 * transaction. Appends not awaited one by one still replay in the order
 * they were called: on SQLite the writes of one store run in call order
 * (while one waits for another process's lock, those called after it wait
 * behind it, each until `retry.timeoutMs` after its own call); on
 * PostgreSQL each message is stamped when called, though ids may be given
 * in another order. A read made meanwhile may not see them yet, and one
 * write's failure does not stop the next: await each write whose outcome
 * matters, or give a turn's messages to one `appendMessages`.
 *
 * @example Reading a file read-only
 * ```ts
 * import assert from "node:assert/strict";
 * import { openStore } from "../open_store.ts";
 * import { ReadonlyError } from "./errors.ts";
 * const dir = await Deno.makeTempDir();
 * {
 *   await using writer = await openStore(`${dir}/state.db`);
 *   await writer.createSession("s1", "cli");
 * }
 * await using store = await openStore(`sqlite:${dir}/state.db`, { readonly: true });
 * assert.equal((await store.getSession("s1"))?.source, "cli");
 * await assert.rejects(store.endSession("s1", "cli_close"), ReadonlyError);
 * ```
 */
export interface SessionStore extends AsyncDisposable {
  /** Which engine this is. */
  readonly engine: StoreEngine;
  /** What was opened: the file path, or the URL with its password masked. */
  readonly target: string;
  /** True when opened read-only: every write method rejects. */
  readonly readonly: boolean;
  /**
   * Releases the store; a second call does nothing. After it every method
   * rejects with a `StorageError` `database is not open` (a `SqliteError`
   * on the SQLite engine), as does an `iterateExport` resumed;
   * `engine`, `target` and `readonly` still answer.
   */
  close(): Promise<void>;

  /** See {@linkcode SessionDB.createSession}. */
  createSession(id: string, source: string, options?: CreateSessionOptions): Promise<string>;
  /** See {@linkcode SessionDB.ensureSession}. */
  ensureSession(id: string, source?: string, options?: EnsureSessionOptions): Promise<string>;
  /** See {@linkcode SessionDB.endSession}. */
  endSession(id: string, endReason: string): Promise<void>;
  /** See {@linkcode SessionDB.reopenSession}. */
  reopenSession(id: string): Promise<void>;
  /** See {@linkcode SessionDB.updateSystemPrompt}. */
  updateSystemPrompt(id: string, prompt: string): Promise<void>;
  /** See {@linkcode SessionDB.getSession}. */
  getSession(id: string): Promise<SessionRow | undefined>;
  /** See {@linkcode SessionDB.updateTokenCounts}. */
  updateTokenCounts(id: string, update?: TokenCountsUpdate): Promise<void>;

  /** See {@linkcode SessionDB.appendMessage}. */
  appendMessage(sessionId: string, message: NewMessage): Promise<number>;
  /** See {@linkcode SessionDB.appendMessages}. */
  appendMessages(sessionId: string, list: readonly NewMessage[]): Promise<number[]>;
  /** See {@linkcode SessionDB.replaceMessages}. */
  replaceMessages(sessionId: string, list: readonly ConversationMessage[]): Promise<void>;
  /** See {@linkcode SessionDB.clearMessages}. */
  clearMessages(sessionId: string): Promise<void>;
  /** See {@linkcode SessionDB.getMessages}. */
  getMessages(sessionId: string, options?: MessagesOptions): Promise<MessageRow[]>;
  /**
   * See {@linkcode SessionDB.countMessages}: how many messages `getMessages`
   * returns with the same options, counted by the engine (a transcript's
   * page asks how many lie before and after it without reading them).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { openStore } from "../open_store.ts";
   * const dir = await Deno.makeTempDir();
   * await using store = await openStore(`${dir}/state.db`);
   * await store.createSession("s1", "cli");
   * const [first] = await store.appendMessages("s1", [
   *   { role: "user", content: "a" },
   *   { role: "assistant", content: "b" },
   * ]);
   * assert.equal(await store.countMessages("s1", { fromId: first, limit: 1 }), 1);
   * assert.equal(await store.countMessages("s1", { beforeId: first }), 0);
   * ```
   */
  countMessages(sessionId: string, options?: MessagesOptions): Promise<number>;
  /** See {@linkcode SessionDB.getMessagesAsConversation}. */
  getMessagesAsConversation(
    sessionId: string,
    options?: ConversationOptions,
  ): Promise<ConversationMessage[]>;
  /** See {@linkcode SessionDB.messageCount}. */
  messageCount(sessionId?: string): Promise<number>;

  /** See {@linkcode SessionDB.searchMessages}. */
  searchMessages(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** See {@linkcode SessionDB.countSearchHits}. */
  countSearchHits(query: string, options: SearchOptions, upTo: number): Promise<number>;
  /** See {@linkcode SessionDB.listSessionsRich}. */
  listSessionsRich(options?: ListSessionsOptions): Promise<RichSessionRow[]>;
  /** See {@linkcode SessionDB.searchSessions}. */
  searchSessions(options?: SearchSessionsOptions): Promise<SessionRowWithActivity[]>;
  /** See {@linkcode SessionDB.sessionCount}. */
  sessionCount(options?: SessionCountOptions): Promise<number>;
  /** See {@linkcode SessionDB.listedSessionCount}. */
  listedSessionCount(options?: ListSessionsOptions): Promise<number>;

  /** See {@linkcode SessionDB.resolveSessionId}. */
  resolveSessionId(idOrPrefix: string): Promise<string | undefined>;
  /** See {@linkcode SessionDB.sessionIdsWithPrefix}. */
  sessionIdsWithPrefix(prefix: string, options?: { limit?: number }): Promise<PrefixMatches>;
  /** See {@linkcode SessionDB.setSessionTitle}. */
  setSessionTitle(id: string, title: string | null): Promise<boolean>;
  /** See {@linkcode SessionDB.getSessionTitle}. */
  getSessionTitle(id: string): Promise<string | null | undefined>;
  /** See {@linkcode SessionDB.getSessionByTitle}. */
  getSessionByTitle(title: string): Promise<SessionRow | undefined>;
  /** See {@linkcode SessionDB.resolveSessionByTitle}. */
  resolveSessionByTitle(title: string): Promise<string | undefined>;
  /** See {@linkcode SessionDB.getNextTitleInLineage}. */
  getNextTitleInLineage(base: string): Promise<string>;

  /** See {@linkcode SessionDB.getCompressionTip}. */
  getCompressionTip(id: string): Promise<string>;
  /** See {@linkcode SessionDB.resolveResumeSessionId}. */
  resolveResumeSessionId(id: string): Promise<string>;
  /** See {@linkcode SessionDB.getAncestors}. */
  getAncestors(id: string): Promise<SessionRow[]>;
  /** See {@linkcode SessionDB.getDescendants}. */
  getDescendants(id: string): Promise<SessionRow[]>;

  /** See {@linkcode SessionDB.exportSession}. */
  exportSession(id: string): Promise<SessionExport | undefined>;
  /** See {@linkcode SessionDB.exportAll}. */
  exportAll(options?: ExportOptions): Promise<SessionExportWithActivity[]>;
  /**
   * See {@linkcode SessionDB.iterateExport}: the same sessions in the same
   * order, read in pages so no read transaction stays open across awaits.
   * A bad option (a `source` that is not a string, a start bound that is
   * not a finite number) rejects the first `next()`, not the call.
   */
  iterateExport(options?: ExportOptions): AsyncIterableIterator<SessionExportWithActivity>;
  /** See {@linkcode SessionDB.deleteSession}. */
  deleteSession(id: string, options?: SessionsDirOptions): Promise<boolean>;
  /** See {@linkcode SessionDB.pruneSessions}. */
  pruneSessions(options?: PruneOptions): Promise<number>;
  /** See {@linkcode SessionDB.pruneEmptyGhostSessions}. */
  pruneEmptyGhostSessions(options?: SessionsDirOptions): Promise<number>;
  /** See {@linkcode SessionDB.getMeta}. */
  getMeta(key: string): Promise<string | null | undefined>;
  /** See {@linkcode SessionDB.setMeta}. */
  setMeta(key: string, value: string | null): Promise<void>;
  /** See {@linkcode SessionDB.vacuum}. */
  vacuum(): Promise<void>;
  /** See {@linkcode SessionDB.maybeAutoPruneAndVacuum}. */
  maybeAutoPruneAndVacuum(options?: AutoPruneOptions): Promise<AutoPruneResult>;

  /** See {@linkcode SessionDB.usageByModel}. */
  usageByModel(): Promise<ModelUsage[]>;
  /** See {@linkcode SessionDB.topSessionsByTokens}. */
  topSessionsByTokens(limit?: number): Promise<SessionTokens[]>;
  /** See {@linkcode SessionDB.usageBySource}. */
  usageBySource(): Promise<SourceUsage[]>;
  /** See {@linkcode SessionDB.usageReport}. */
  usageReport(options?: UsageReportOptions): Promise<UsageRow[]>;
  /**
   * See {@linkcode SessionDB.getModelUsage}. On PostgreSQL, the rows `sync`
   * or an import with `modelUsage` wrote, under the server's session id.
   */
  getModelUsage(sessionId: string): Promise<SessionModelUsage[]>;
  /**
   * See {@linkcode SessionDB.dataVersion}. On PostgreSQL, the server's
   * snapshot of transactions, which any commit moves at once: a write to
   * another schema or database of the same server moves it too (a refresh
   * for nothing, never a change missed), a read never does.
   */
  dataVersion(): Promise<string>;
  /** See {@linkcode SessionDB.inspect}. */
  inspect(options?: InspectOptions): Promise<DatabaseInfo>;
  /** See {@linkcode SessionDB.pruneCandidates}. */
  pruneCandidates(options?: PruneCandidatesOptions): Promise<PruneCandidate[]>;

  /** See {@linkcode SessionDB.importSession}. */
  importSession(record: unknown, options?: ImportOptions): Promise<ImportResult>;
  /** See {@linkcode SessionDB.restoreParentLinks}. */
  restoreParentLinks(links: readonly ParentLink[]): Promise<number>;
}
