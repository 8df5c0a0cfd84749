/**
 * `SessionDB`: the session store the agent holds. Each method delegates to
 * the module of its concept; no SQL lives here.
 *
 * @module
 */
import type { OpenDriver } from "./driver/types.ts";
import { openConnection, type Synchronous } from "./open.ts";
import { defaultDbPath } from "./paths.ts";
import { Store } from "./store.ts";
import type { RetryOptions } from "./write.ts";
import type {
  ConversationMessage,
  MessageRow,
  ModelUsage,
  NewMessage,
  RichSessionRow,
  SearchHit,
  SessionExport,
  SessionRow,
  SessionTokens,
} from "./types.ts";
import * as sessions from "./sessions.ts";
import * as tokens from "./tokens.ts";
import * as messages from "./messages.ts";
import * as conversation from "./conversation.ts";
import * as titles from "./titles.ts";
import * as lineage from "./lineage.ts";
import * as listing from "./listing.ts";
import * as search from "./search/search.ts";
import * as exporting from "./export.ts";
import * as prune from "./prune.ts";
import * as meta from "./meta.ts";
import * as stats from "./stats.ts";
import * as importing from "./import.ts";
import * as inspecting from "./inspect.ts";
import * as sourceUsage from "./source_usage.ts";
import * as pruneCandidates from "./prune_candidates.ts";
import * as usage from "./usage_report.ts";
import * as version from "./data_version.ts";

/** Options of {@linkcode SessionDB.open}. */
export interface SessionDBOptions {
  /**
   * The database file.
   * @default {"$HERMES_HOME/state.db, else ~/.hermes/state.db"}
   */
  path?: string;
  /**
   * Open without creating or changing anything: no schema step, no write
   * lock, no byte of the file or its sidecars changed (an older file is read
   * as it is; a file without the Hermes tables is refused with
   * `NotStateDbError`). Every write method throws.
   * @default {false}
   */
  readonly?: boolean;
  /**
   * `"full"` syncs every commit; `"normal"` is faster and still safe against
   * a process crash, but a power loss may lose the last commits.
   * @default {"full"}
   */
  synchronous?: Synchronous;
  /** Busy-retry settings (tests inject `sleep` and `random`). */
  retry?: RetryOptions;
  /** Seconds since the epoch, as a float (tests inject a fixed clock). */
  clock?: () => number;
  /** The driver opener; the running runtime's by default. */
  openDriver?: OpenDriver;
}

/** The internal store behind each open {@linkcode SessionDB} (for the asynchronous store). */
const STORES = new WeakMap<SessionDB, Store>();

/**
 * The internal store behind `db`; for the modules of this library only (not exported from `mod.ts`).
 *
 * @param db An open database.
 * @returns Its store.
 */
export function storeOf(db: SessionDB): Store {
  const store = STORES.get(db);
  if (store === undefined) throw new TypeError("Cannot find the store of a SessionDB");
  return store;
}

/**
 * The Hermes session store over one `state.db` file, shared safely with
 * other processes (Python Hermes included).
 *
 * @example Recording and searching a conversation
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * const db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli", { model: "gpt-5" });
 * db.appendMessage("s1", { role: "user", content: "How do I prune docker images?" });
 * console.assert(db.getMessages("s1").length === 1);
 * db.close();
 * ```
 */
export class SessionDB {
  readonly #store: Store;
  #closed = false;

  private constructor(store: Store) {
    this.#store = store;
    STORES.set(this, store);
  }

  /**
   * Opens (and creates, and migrates) a database file.
   *
   * @param options Path and settings.
   * @returns The open store.
   * @throws {OpenError} When the path is a folder, not SQLite, damaged or not writable.
   */
  static async open(options: SessionDBOptions = {}): Promise<SessionDB> {
    const path = options.path ?? defaultDbPath();
    const readonly = options.readonly ?? false;
    const { db, writer } = await openConnection({
      path,
      readonly,
      synchronous: options.synchronous,
      retry: options.retry,
      openDriver: options.openDriver,
    });
    return new SessionDB(new Store(db, writer, { path, readonly, clock: options.clock }));
  }

  /** The database file path. */
  get path(): string {
    return this.#store.path;
  }

  /** True when opened with `readonly: true`. */
  get readonly(): boolean {
    return this.#store.readonly;
  }

  /**
   * Checkpoints the WAL (best effort: emptied when no other connection is
   * busy) and closes the connection. A second call does nothing.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#store.checkpoint("truncate");
    this.#store.db.close();
  }

  /** Same as {@linkcode SessionDB.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  // ── Sessions ────────────────────────────────────────────────────────────

  /**
   * Creates a session; an existing id is left as it is (first write wins).
   *
   * @param id The session id.
   * @param source Where it runs: `cli`, `telegram`, `discord`…
   * @param options Model, config, system prompt, user, parent.
   * @returns The id.
   * @throws {SqliteError} When the parent session does not exist.
   */
  createSession(id: string, source: string, options: sessions.CreateSessionOptions = {}): string {
    return sessions.createSession(this.#store, id, source, options);
  }

  /**
   * Makes sure a session row exists (used to recover from a failed create).
   *
   * @param id The session id.
   * @param source Its source.
   * @param options The model.
   * @returns The id.
   */
  ensureSession(
    id: string,
    source = "unknown",
    options: sessions.EnsureSessionOptions = {},
  ): string {
    return sessions.ensureSession(this.#store, id, source, options);
  }

  /**
   * Ends a session that is not ended yet (the first reason stays).
   *
   * @param id The session id.
   * @param endReason Why it ended (`compression`, `branched`, `cli_close`…).
   */
  endSession(id: string, endReason: string): void {
    sessions.endSession(this.#store, id, endReason);
  }

  /**
   * Clears the end time and reason of a session.
   *
   * @param id The session id.
   */
  reopenSession(id: string): void {
    sessions.reopenSession(this.#store, id);
  }

  /**
   * Replaces the stored system prompt.
   *
   * @param id The session id.
   * @param prompt The new prompt.
   */
  updateSystemPrompt(id: string, prompt: string): void {
    sessions.updateSystemPrompt(this.#store, id, prompt);
  }

  /**
   * Reads one session with every column, including ones a newer Hermes added.
   *
   * @param id The session id.
   * @returns The row, or `undefined`.
   */
  getSession(id: string): SessionRow | undefined {
    return sessions.getSession(this.#store, id);
  }

  /**
   * Adds (or, with `absolute`, sets) token counts and cost of a session.
   *
   * @param id The session id.
   * @param update Counts, cost and billing fields.
   */
  updateTokenCounts(id: string, update: tokens.TokenCountsUpdate = {}): void {
    tokens.updateTokenCounts(this.#store, id, update);
  }

  // ── Messages ────────────────────────────────────────────────────────────

  /**
   * Appends one message and updates the session counters.
   *
   * @param sessionId The session.
   * @param message The message.
   * @returns The new message id.
   * @throws {SqliteError} When the session does not exist.
   */
  appendMessage(sessionId: string, message: NewMessage): number {
    return messages.appendMessage(this.#store, sessionId, message);
  }

  /**
   * Appends many messages in one transaction (same rules as `appendMessage`).
   *
   * @param sessionId The session.
   * @param list The messages, in order.
   * @returns The new ids, in order.
   */
  appendMessages(sessionId: string, list: readonly NewMessage[]): number[] {
    return messages.appendMessages(this.#store, sessionId, list);
  }

  /**
   * Replaces the whole transcript of a session with a conversation.
   *
   * @param sessionId The session.
   * @param list Messages in the shape `getMessagesAsConversation` returns.
   */
  replaceMessages(sessionId: string, list: readonly ConversationMessage[]): void {
    messages.replaceMessages(this.#store, sessionId, list);
  }

  /**
   * Deletes every message of a session and resets its counters.
   *
   * @param sessionId The session.
   */
  clearMessages(sessionId: string): void {
    messages.clearMessages(this.#store, sessionId);
  }

  /**
   * Reads a transcript with every column (JSON parsed, content decoded).
   * In a file from a newer Hermes, rewound and compacted rows
   * (`active = 0`) are left out, as that Hermes does, unless
   * `includeInactive`.
   *
   * @param sessionId The session.
   * @param options `includeInactive`.
   * @returns The messages by `timestamp, id`.
   */
  getMessages(sessionId: string, options: messages.MessagesOptions = {}): MessageRow[] {
    return messages.getMessages(this.#store, sessionId, options);
  }

  /**
   * Reads a transcript in the OpenAI chat shape, for replay.
   *
   * @param sessionId The session.
   * @param options `includeAncestors` prepends the compression chain.
   * @returns The conversation.
   */
  getMessagesAsConversation(
    sessionId: string,
    options: conversation.ConversationOptions = {},
  ): ConversationMessage[] {
    return conversation.getMessagesAsConversation(this.#store, sessionId, options);
  }

  /**
   * Counts messages of one session, or of all.
   *
   * @param sessionId The session; all messages when omitted.
   * @returns The count.
   */
  messageCount(sessionId?: string): number {
    return messages.messageCount(this.#store, sessionId);
  }

  // ── Search and listing ──────────────────────────────────────────────────

  /**
   * Searches every message. Never throws on user text.
   *
   * @param query What the user typed.
   * @param options Filters and paging.
   * @returns The hits, best first, each with its context.
   */
  searchMessages(query: string, options: search.SearchOptions = {}): SearchHit[] {
    return search.searchMessages(this.#store, query, options);
  }

  /**
   * Lists sessions with preview and last activity, as `hermes sessions list` does.
   *
   * @param options Filters, paging, ordering.
   * @returns The sessions.
   */
  listSessionsRich(options: listing.ListSessionsOptions = {}): RichSessionRow[] {
    return listing.listSessionsRich(this.#store, options);
  }

  /**
   * Counts the entries `listSessionsRich` lists with these filters, over all
   * pages (a compression chain counts once).
   *
   * @param options The listing's filters (paging and order are ignored).
   * @returns The count.
   */
  listedSessionCount(options: listing.ListSessionsOptions = {}): number {
    return listing.listedSessionCount(this.#store, options);
  }

  /**
   * Lists sessions, newest first.
   *
   * @param options Source filter and paging.
   * @returns The sessions.
   */
  searchSessions(options: listing.SearchSessionsOptions = {}): SessionRow[] {
    return listing.searchSessions(this.#store, options);
  }

  /**
   * Counts sessions.
   *
   * @param options Source filter.
   * @returns The count.
   */
  sessionCount(options: listing.SessionCountOptions = {}): number {
    return listing.sessionCount(this.#store, options);
  }

  // ── Titles and ids ──────────────────────────────────────────────────────

  /**
   * Resolves an exact id or a unique id prefix.
   *
   * @param idOrPrefix What the user typed.
   * @returns The id, or `undefined` when none or several match.
   */
  resolveSessionId(idOrPrefix: string): string | undefined {
    return titles.resolveSessionId(this.#store, idOrPrefix);
  }

  /**
   * The sessions whose id starts with `prefix`: how many, and the newest
   * (to say which ones an ambiguous prefix names).
   *
   * @param prefix The id prefix.
   * @param options `limit`: the most ids (default 10).
   * @returns The count and ids.
   */
  sessionIdsWithPrefix(prefix: string, options: { limit?: number } = {}): titles.PrefixMatches {
    return titles.sessionIdsWithPrefix(this.#store, prefix, options);
  }

  /**
   * Sets (or, with an empty title, clears) the title of a session.
   *
   * @param id The session.
   * @param title The title; sanitized first.
   * @returns True when the session exists.
   * @throws {TitleError} When the title is too long or used by another session.
   */
  setSessionTitle(id: string, title: string | null): boolean {
    return titles.setSessionTitle(this.#store, id, title);
  }

  /**
   * Reads the title of a session.
   *
   * @param id The session.
   * @returns The title, `null` when it has none, `undefined` for an unknown session.
   */
  getSessionTitle(id: string): string | null | undefined {
    return titles.getSessionTitle(this.#store, id);
  }

  /**
   * Finds the session with exactly this title.
   *
   * @param title The title.
   * @returns The session, or `undefined`.
   */
  getSessionByTitle(title: string): SessionRow | undefined {
    return titles.getSessionByTitle(this.#store, title);
  }

  /**
   * Resolves a title to a session id, preferring the newest `"<title> #N"`.
   *
   * @param title The title.
   * @returns The id, or `undefined`.
   */
  resolveSessionByTitle(title: string): string | undefined {
    return titles.resolveSessionByTitle(this.#store, title);
  }

  /**
   * The next free title of a lineage: `"base #N"`.
   *
   * @param base A title, with or without a `#N` suffix.
   * @returns The next title.
   */
  getNextTitleInLineage(base: string): string {
    return titles.getNextTitleInLineage(this.#store, base);
  }

  // ── Lineage ─────────────────────────────────────────────────────────────

  /**
   * Follows a compression chain to its live end.
   *
   * @param id A session of the chain.
   * @returns The tip's id (the id itself when it is not compressed).
   */
  getCompressionTip(id: string): string {
    return lineage.getCompressionTip(this.#store, id);
  }

  /**
   * The session to resume when the user asks for `id`.
   *
   * @param id The requested session.
   * @returns The session that holds the conversation.
   */
  resolveResumeSessionId(id: string): string {
    return lineage.resolveResumeSessionId(this.#store, id);
  }

  /**
   * The session and its ancestors, self first, up to the root.
   *
   * @param id The session.
   * @returns Full rows; `[]` for an unknown id.
   */
  getAncestors(id: string): SessionRow[] {
    return lineage.getAncestors(this.#store, id);
  }

  /**
   * The session and its descendants, self first, children before grandchildren.
   *
   * @param id The session.
   * @returns Full rows; `[]` for an unknown id.
   */
  getDescendants(id: string): SessionRow[] {
    return lineage.getDescendants(this.#store, id);
  }

  // ── Export and cleanup ──────────────────────────────────────────────────

  /**
   * One session with its messages.
   *
   * @param id The session.
   * @returns The export, or `undefined`.
   */
  exportSession(id: string): SessionExport | undefined {
    return exporting.exportSession(this.#store, id);
  }

  /**
   * Every session with its messages, newest first.
   *
   * @param options Source filter.
   * @returns The exports.
   */
  exportAll(options: exporting.ExportOptions = {}): SessionExport[] {
    return exporting.exportAll(this.#store, options);
  }

  /**
   * What `exportAll` returns, one session at a time (memory stays flat).
   *
   * @param options Source filter.
   * @returns A generator of exports.
   */
  iterateExport(options: exporting.ExportOptions = {}): Generator<SessionExport> {
    return exporting.iterateExport(this.#store, options);
  }

  /**
   * Deletes a session and its messages; its children become roots.
   *
   * @param id The session.
   * @param options `sessionsDir` whose transcript files go too.
   * @returns True when it existed.
   */
  deleteSession(id: string, options: prune.SessionsDirOptions = {}): boolean {
    return prune.deleteSession(this.#store, id, options);
  }

  /**
   * Deletes ended sessions started before the cutoff.
   *
   * @param options Age, source, `sessionsDir`.
   * @returns How many were deleted.
   */
  pruneSessions(options: prune.PruneOptions = {}): number {
    return prune.pruneSessions(this.#store, options);
  }

  /**
   * Deletes ended sessions that have no messages and no title.
   *
   * @param options `sessionsDir`.
   * @returns How many were deleted.
   */
  pruneEmptyGhostSessions(options: prune.SessionsDirOptions = {}): number {
    return prune.pruneEmptyGhostSessions(this.#store, options);
  }

  /**
   * Reads a `state_meta` value.
   *
   * @param key The key.
   * @returns The value, or `undefined`.
   */
  getMeta(key: string): string | undefined {
    return meta.getMeta(this.#store, key);
  }

  /**
   * Writes a `state_meta` value.
   *
   * @param key The key.
   * @param value The value.
   */
  setMeta(key: string, value: string): void {
    meta.setMeta(this.#store, key, value);
  }

  /** Rebuilds the file to reclaim free pages. */
  vacuum(): void {
    prune.vacuum(this.#store);
  }

  /**
   * Prunes and vacuums at most once per interval (shares Python's marker).
   *
   * @param options Retention, interval, vacuum, `sessionsDir`.
   * @returns What was done; never throws.
   */
  maybeAutoPruneAndVacuum(options: prune.AutoPruneOptions = {}): prune.AutoPruneResult {
    return prune.maybeAutoPruneAndVacuum(this.#store, options);
  }

  // ── Statistics ──────────────────────────────────────────────────────────

  /**
   * Sessions, tokens and cost by model, highest cost first.
   *
   * @returns One row per model.
   */
  usageByModel(): ModelUsage[] {
    return stats.usageByModel(this.#store);
  }

  /**
   * The sessions that used the most tokens.
   *
   * @param limit How many.
   * @returns The sessions, most first.
   */
  topSessionsByTokens(limit = 10): SessionTokens[] {
    return stats.topSessionsByTokens(this.#store, limit);
  }

  /**
   * Sessions, messages, tokens and cost per source, most sessions first.
   *
   * @returns One row per source.
   */
  usageBySource(): sourceUsage.SourceUsage[] {
    return sourceUsage.usageBySource(this.#store);
  }

  /**
   * Sessions, tokens and cost per day, week, month, model or source.
   *
   * @param options Grouping, period and source.
   * @returns One row per group.
   * @throws {RangeError} On a bad grouping or period.
   */
  usageReport(options: usage.UsageReportOptions = {}): usage.UsageRow[] {
    return usage.usageReport(this.#store, options);
  }

  /**
   * A marker that changes whenever anything is committed to the file, by any
   * connection (cheap enough to poll every second).
   *
   * @returns An opaque text.
   */
  dataVersion(): string {
    return version.dataVersion(this.#store);
  }

  /**
   * Schema version, journal mode, pages, row counts and a quick integrity check.
   *
   * @param options `integrity: false` skips the check.
   * @returns The description.
   */
  inspect(options: inspecting.InspectOptions = {}): inspecting.DatabaseInfo {
    return inspecting.inspectDatabase(this.#store, options);
  }

  /**
   * The sessions `pruneSessions` with the same options would delete.
   *
   * @param options Age and source.
   * @returns The sessions, oldest first.
   */
  pruneCandidates(
    options: pruneCandidates.PruneCandidatesOptions = {},
  ): pruneCandidates.PruneCandidate[] {
    return pruneCandidates.pruneCandidates(this.#store, options);
  }

  // ── Import ──────────────────────────────────────────────────────────────

  /**
   * Imports one exported session (a JSONL export line) with its original
   * columns and timestamps, all or nothing; a present session is skipped,
   * or replaced with `replace`.
   *
   * @param record The parsed record.
   * @param options `replace`.
   * @returns What was done.
   * @throws {TypeError} When the record is not an exported session.
   */
  importSession(record: unknown, options: importing.ImportOptions = {}): importing.ImportResult {
    return importing.importSession(this.#store, record, options);
  }

  /**
   * Links imported children to parents imported after them.
   *
   * @param links The `deferredParent` answers of `importSession`.
   * @returns How many links were made.
   */
  restoreParentLinks(links: readonly importing.ParentLink[]): number {
    return importing.restoreParentLinks(this.#store, links);
  }
}
