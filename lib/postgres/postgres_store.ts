/**
 * The PostgreSQL engine of {@linkcode SessionStore}: the same methods, the
 * same records and the same errors as the SQLite engine, over a pool of
 * connections to one server, with the tables in their own schema. Every
 * write is one transaction (most are one statement); message counters are
 * updated in the statement that inserts the messages; a transaction
 * PostgreSQL aborts for a serialization failure or a deadlock is run again.
 *
 * @module
 */
import { importedModelUsage, type SessionModelUsage } from "../core/session_model_usage.ts";
import { parsePythonFloat, pythonFloatRepr } from "../core/python_float.ts";
import { removeTranscriptFiles } from "../files/transcript_files.ts";
import { OpenError, ReadonlyError, TitleError } from "../core/errors.ts";
import {
  checkedMessagesOptions,
  checkKeyText,
  checkOptionalText,
  checkSearchFilters,
  checkTokenCounts,
  CONVERSATION_OPTION_NAMES,
  type ConversationOptions,
  type CreateSessionOptions,
  ensureSessionModel,
  type EnsureSessionOptions,
  type MessagesOptions,
  newSessionValues,
  SEARCH_OPTION_NAMES,
  type TokenCountsUpdate,
} from "../core/session_options.ts";
import {
  EXPORT_OPTION_NAMES,
  type ExportOptions,
  IMPORT_OPTION_NAMES,
  type ImportOptions,
  type ImportResult,
  type ParentLink,
} from "../core/transfer_options.ts";
import {
  type DatabaseInfo,
  INSPECT_OPTION_NAMES,
  type InspectOptions,
} from "../core/database_info.ts";
import {
  LIST_SESSIONS_OPTION_NAMES,
  type ListSessionsOptions,
  PREFIX_OPTION_NAMES,
  type PrefixMatches,
  SEARCH_SESSIONS_OPTION_NAMES,
  type SearchSessionsOptions,
  SESSION_COUNT_OPTION_NAMES,
  type SessionCountOptions,
} from "../core/listing_options.ts";
import {
  AUTO_PRUNE_OPTION_NAMES,
  type AutoPruneOptions,
  type AutoPruneResult,
  checkedSessionsDir,
  type PruneCandidate,
  type PruneCandidatesOptions,
  type PruneOptions,
  type SessionsDirOptions,
} from "../core/prune_options.ts";
import { checkOptionNames } from "../core/option_names.ts";
import type { SearchOptions } from "../core/search/options.ts";
import type { SessionStore } from "../core/session_store.ts";
import type {
  RestoredSyncState,
  SyncedStore,
  SyncOrigin,
  SyncState,
} from "../core/synced_store.ts";
import { addSyncState, readSyncState } from "./sync_state.ts";
import type { SourceUsage, UsageReportOptions, UsageRow } from "../core/usage.ts";
import { sanitizeTitle } from "../core/titles.ts";
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
} from "../core/types.ts";
import { checkSchemaInUse, connectPg } from "./_client.ts";
import type { PgClient, PgConnectOptions, PgQuery, PgRow, PgValue } from "./_client_types.ts";
import { foreignKeyError, isUniqueViolation, namingMissingSession } from "./_pg_errors.ts";
import {
  INSERT_COLUMNS,
  insertMessagesSql,
  type MessageValues,
  newMessageValues,
  pgConversationValues,
  SESSION_COLUMNS,
  TIMESTAMP_INDEX,
  valuesList,
} from "./_rows.ts";
import { messageFromRow } from "../core/message_row.ts";
import { importSessionPg, restoreParentLinksPg } from "./import.ts";
import { checkImportRecord, checkParentLinks } from "../core/import_record.ts";
import { ensureAdditions, LAST_STEP, migratePg, migrationStep, vacuumSql } from "./schema.ts";
import { searchMessagesPg } from "./search.ts";
import { countSearchHitsPg } from "./search_count.ts";
import { isReplayedPrompt } from "../core/replayed_prompt.ts";
import { toConversationMessage } from "../core/conversation_message.ts";
import { type StoredValue, textValue, toolCallsAdded } from "../core/message_values.ts";
import { describeValue } from "../core/shown_value.ts";
import { missingParentMessage, missingSessionMessage } from "../core/missing_session.ts";
import { deleteMessagesSql, deleteSessionRows } from "./_delete.ts";
import { syncLockName } from "./sync_origin.ts";
import { activeSql } from "./_extra.ts";
import { messageSelection, selectedMessagesSql } from "./_message_selection.ts";
import { jsonParam } from "./_text_codec.ts";
import { SNAPSHOT_SQL } from "./_held_snapshot.ts";
import { outcomeUnknown } from "./_commit_outcome.ts";
import { appendOutcome, lostStatementEnded } from "./_lost_statement.ts";
import { delay } from "../core/delay.ts";
import {
  EXPORT_PIECES,
  type ExportPiece,
  type ExportPiecesOptions,
  type ExportSelection,
} from "../core/export_pieces.ts";
import { wallClockSeconds } from "../core/wall_clock.ts";
import { checkPoolSettings, checkSchemaName, parsePostgresUrl } from "./store_url.ts";
import { notOpenError } from "./_closed_store.ts";
import { type OriginFilter, withOrigin } from "./_session_filters.ts";
import {
  listedSessionCountPg,
  listSessionsRichPg,
  searchSessionsPg,
  sessionCountPg,
} from "./_listing.ts";
import {
  ancestorsPg,
  compressionTipPg,
  descendantsPg,
  lineageRootToTipPg,
  resumeSessionIdPg,
} from "./_lineage.ts";
import { exportPiecesPg, type ExportReads, exportSessionPg, iterateExportPg } from "./_export.ts";
import {
  deleteSessionsWhere,
  pruneCandidatesPg,
  pruneGhostSessionsPg,
  pruneSessionsPg,
} from "./_prune.ts";
import {
  modelUsageOfPg,
  topSessionsByTokensPg,
  usageByModelPg,
  usageBySourcePg,
  usageReportPg,
} from "./_usage.ts";
import {
  nextTitleInLineagePg,
  resolveSessionByTitlePg,
  resolveSessionIdPg,
  sessionByTitlePg,
  sessionIdsWithPrefixPg,
  sessionTitlePg,
} from "./_session_lookup.ts";
import { syncedFromPg, syncedSessionIdsPg, syncOriginsPg } from "./_synced_reads.ts";
import { inspectPg } from "./_inspect.ts";
import { ADD_TOKENS, SET_TOKENS, tokenCountParams } from "./_token_counts.ts";

export type { PgConnectOptions };

/**
 * The options of the searches, listings and exports here, checked by name:
 * every engine's and `origin`.
 */
const SEARCH_OPTIONS_HERE = withOrigin(SEARCH_OPTION_NAMES);
const LIST_OPTIONS_HERE = withOrigin(LIST_SESSIONS_OPTION_NAMES);
const SEARCH_SESSIONS_OPTIONS_HERE = withOrigin(SEARCH_SESSIONS_OPTION_NAMES);
const SESSION_COUNT_OPTIONS_HERE = withOrigin(SESSION_COUNT_OPTION_NAMES);
const EXPORT_OPTIONS_HERE = withOrigin(EXPORT_OPTION_NAMES);

/** Options of {@linkcode openPostgresStore}. */
export interface PostgresStoreOptions extends PgConnectOptions {
  /** Run no schema step; every write method rejects. */
  readonly readonly?: boolean;
  /** Seconds since the epoch, as a float (tests inject a fixed clock). */
  readonly clock?: () => number;
  /**
   * The schema holding the tables; the URL's `?schema=` otherwise.
   * @default {"hermes"}
   */
  readonly schema?: string;
}

/**
 * Refuses a read-only open of a schema this version cannot read: one that
 * holds no store yet, or one a writer of this version has not migrated yet
 * (its statements read the tables of the last step).
 */
async function checkReadable(client: PgClient, schema: string): Promise<void> {
  const step = await migrationStep(client.query, schema);
  if (step === null) {
    throw new OpenError(
      client.display,
      `schema "${schema}" holds no hermes-state store yet (copy or sync sessions into it, or open it for writing once)`,
      { kind: "not_found" },
    );
  }
  if (step < LAST_STEP) {
    throw new OpenError(
      client.display,
      `schema "${schema}" is at migration ${step} and this hermes-state reads migration ${LAST_STEP}: upgrade it once with \`hermes-state --db URL migrate\` (or any write)`,
      { kind: "other" },
    );
  }
}

/**
 * Opens the store on a PostgreSQL server: connects, creates the schema and
 * runs the migrations (under an advisory lock) unless read-only.
 *
 * @param url `postgres://user:pass@host:port/db?schema=hermes`.
 * @param options Mode, clock, schema, pool size, retry timing.
 * @returns The open store.
 * @throws {OpenError} When the URL is malformed or its schema name bad (naming
 *   the value), the server cannot be reached or refuses the login, or
 *   statements would reach another schema ({@linkcode checkSchemaInUse}), or a new
 *   store would be made in a database not encoded in UTF8; read-only, when the
 *   schema holds no store or one not migrated yet.
 * @throws {OpenError} When the `postgres` package cannot be loaded (the message
 *   says how to install it).
 * @throws {RangeError} When `max` or `maxAttempts` is not a positive integer,
 *   naming the value; nothing is connected to.
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<SessionStore> {
  options ??= {};
  checkPoolSettings(options);
  const parsed = parsePostgresUrl(url);
  const schema = options.schema ?? parsed.schema;
  checkSchemaName(url, schema);
  const client = await connectPg(
    parsed.url,
    schema,
    { ...options, max: options.max ?? parsed.poolSize },
    url,
  );
  try {
    if (options.readonly) await checkReadable(client, schema);
    else await migratePg(client, schema);
    await checkSchemaInUse(client, schema);
  } catch (error) {
    await client.close();
    throw error;
  }
  return new PostgresSessionStore(client, {
    schema,
    target: client.display,
    readonly: options.readonly ?? false,
    clock: options.clock ?? wallClockSeconds,
  });
}

/** What {@linkcode migratePostgresStore} did. */
export interface PgMigrationReport {
  /** The URL, its password masked. */
  readonly target: string;
  /** The last migration before: `null` when the schema held no store. */
  readonly before: number | null;
  /** The last migration after (`before` when it is newer than this version knows). */
  readonly after: number;
  /** The last migration this version knows. */
  readonly known: number;
  /**
   * The columns and tables added that older versions ignore (no step:
   * `sync` adds them too when missing), columns as `table.column`, tables
   * by name; none when all were there, or when the schema is newer than
   * this version.
   */
  readonly added: readonly string[];
}

/**
 * Brings a server's schema to this version's last migration, as opening it
 * for writing does, and adds the columns of this version that older ones
 * ignore (which `sync` would add when missing: added here, an owner's
 * `migrate` prepares a server for `sync` roles that may not alter its
 * tables), and says what it found: `hermes-state --db URL migrate`. A
 * schema a newer hermes-state migrated is left as it is.
 *
 * @param url `postgres://…?schema=NAME`.
 * @returns The steps before and after.
 * @throws {OpenError} When the server cannot be reached or refuses the login, or a
 *   new store would be made in a database not encoded in UTF8.
 */
export async function migratePostgresStore(url: string): Promise<PgMigrationReport> {
  const parsed = parsePostgresUrl(url);
  const client = await connectPg(parsed.url, parsed.schema, { max: 1 }, url);
  try {
    const read = await migrationStep(client.query, parsed.schema);
    const known = read === null || read <= LAST_STEP;
    // Read again under the migrations' lock: of several started at once, one creates the store.
    const before = known ? await migratePg(client, parsed.schema) : read;
    await checkSchemaInUse(client, parsed.schema);
    const added = known ? await ensureAdditions(client, parsed.schema) : [];
    const after = (await migrationStep(client.query, parsed.schema)) ?? LAST_STEP;
    return { target: client.display, before, after, known: LAST_STEP, added };
  } finally {
    await client.close();
  }
}

/** Rows per multi-row INSERT (16 parameters each, PostgreSQL allows 65535). */
const INSERT_CHUNK = 1000;
/** Spacing of the timestamps of a batch, as the SQLite engine. */
const TIMESTAMP_STEP = 1e-6;

/** Tries of a write made by one statement whose connection is lost once it was sent. */
const LOST_WRITE_ATTEMPTS = 3;

const INSERT_SESSION = `INSERT INTO sessions
  (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8::double precision)
  ON CONFLICT (id) DO NOTHING`;

interface StoreSettings {
  /** The store's PostgreSQL schema. */
  readonly schema: string;
  readonly target: string;
  readonly readonly: boolean;
  readonly clock: () => number;
}

/**
 * A free-text value as a parameter: what {@linkcode textValue} keeps (a
 * string, `null`, a number as Python binds it), a number bound as its text,
 * as the text column of a file stores it.
 *
 * @throws {TypeError} When it is not text, `null` or a finite number, naming it.
 */
function textParam(value: unknown, field: string, action: string): string | null {
  return asTextParam(textValue(value, field, action));
}

/** A value {@linkcode textValue} keeps, bound as text (a number as its digits). */
function asTextParam(stored: StoredValue): string | null {
  return stored === null ? null : String(stored);
}

class PostgresSessionStore implements SessionStore, SyncedStore {
  readonly engine = "postgres" as const;
  readonly target: string;
  readonly readonly: boolean;
  readonly #client: PgClient;
  readonly #schema: string;
  readonly #clock: () => number;
  #closed = false;
  /** Whether this store made sure of the tables older versions ignore (once, before an import of usage rows). */
  #additionsEnsured = false;

  constructor(client: PgClient, settings: StoreSettings) {
    this.#client = client;
    this.#schema = settings.schema;
    this.target = settings.target;
    this.readonly = settings.readonly;
    this.#clock = settings.clock;
  }

  /** The client's query; after `close()`, one that rejects as a closed SQLite store does. */
  get #query(): PgQuery {
    return this.#closed ? () => Promise.reject(notOpenError()) : this.#client.query;
  }

  /**
   * The store's query that asks {@linkcode #query} anew at each statement,
   * as a method that writes `this.#query(…)` for each does: what the reads in
   * files of their own (`_listing.ts`, `_lineage.ts`, `_usage.ts`…) are given,
   * so that each of their statements after `close()` rejects as a closed store's.
   */
  readonly #queryUntilClosed: PgQuery = (text, params, options) =>
    this.#query(text, params, options);

  /** What the export reads through (`_export.ts`). */
  get #exportReads(): ExportReads {
    return {
      query: this.#queryUntilClosed,
      inSnapshot: (read) => this.#inSnapshot(read),
      client: this.#client,
      closed: () => this.#closed,
    };
  }

  /** Throws what every method of a closed store throws, and a write's `ReadonlyError`. */
  #checkWritable(): void {
    if (this.#closed) throw notOpenError();
    if (this.readonly) throw new ReadonlyError(this.target);
  }

  /**
   * Runs a write transaction (rejects on a read-only or closed store). Its
   * connection lost once its COMMIT was sent, the server is asked whether it
   * committed: a write is never run twice, nor said failed when it stands.
   */
  async #write<T>(fn: (query: PgQuery) => Promise<T>): Promise<T> {
    this.#checkWritable();
    return await this.#client.transaction(fn, { writes: true });
  }

  /**
   * Reads in one snapshot of the server (a read-only REPEATABLE READ
   * transaction): what several statements read is of one state, as a SQLite
   * file's read transaction gives it.
   */
  async #inSnapshot<T>(read: (query: PgQuery) => Promise<T>): Promise<T> {
    if (this.#closed) throw notOpenError();
    return await this.#client.transaction(async (query) => {
      await query(SNAPSHOT_SQL);
      return await read(query);
    });
  }

  /**
   * The store's query for what a lost write became (`_lost_statement.ts`):
   * asked again when its own connection is lost in turn, or while the
   * server is out of reach ({@linkcode PgClient.ask}).
   */
  get #askQuery(): PgQuery {
    return this.#closed ? this.#query : this.#client.ask;
  }

  /**
   * One write statement in its own transaction, one that leaves the same
   * state however often it runs. Its connection lost once it was sent, it
   * runs again once the server process that had it has ended (three tries
   * in all); only when that cannot be told, or when a try after a lost one
   * fails (the lost one may stand), the error says that the write may have
   * been made.
   */
  async #writeOne(text: string, params: readonly PgValue[]): Promise<PgRow[]> {
    this.#checkWritable();
    /** The loss of an earlier try, which may have been made (not looked for). */
    let lostBefore: unknown;
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#client.query(text, params);
      } catch (error) {
        const lost = this.#client.sentThenLost(error);
        if (lost === undefined && lostBefore !== undefined) {
          // This try failed, but the earlier one may stand: its failure does not say it was not.
          const said = error instanceof Error ? error.message : String(error);
          throw outcomeUnknown(lostBefore, "once the write was sent", `tried again: ${said}`);
        }
        if (lost === undefined) throw error;
        lostBefore = error;
        if (attempt >= LOST_WRITE_ATTEMPTS) {
          throw outcomeUnknown(error, "once the write was sent", `lost ${attempt} times`);
        }
        const running = await lostStatementEnded(this.#askQuery, lost, delay);
        if (running !== undefined) throw outcomeUnknown(error, "once the write was sent", running);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // -- sessions ------------------------------------------------------------

  async createSession(
    id: string,
    source: string,
    options: CreateSessionOptions = {},
  ): Promise<string> {
    const row = newSessionValues(id, source, options);
    try {
      await this.#writeOne(INSERT_SESSION, [
        id,
        source,
        asTextParam(row.userId),
        asTextParam(row.model),
        row.modelConfig,
        asTextParam(row.systemPrompt),
        row.parentSessionId,
        this.#clock(),
      ]);
    } catch (error) {
      if (row.parentSessionId === null) throw error;
      throw namingMissingSession(error, missingParentMessage(id, row.parentSessionId));
    }
    return id;
  }

  async ensureSession(
    id: string,
    source = "unknown",
    options: EnsureSessionOptions = {},
  ): Promise<string> {
    return await this.createSession(id, source, { model: ensureSessionModel(options) });
  }

  async endSession(id: string, endReason: string): Promise<void> {
    checkKeyText("end session", "id", id);
    const reason = textParam(endReason, "endReason", "end session");
    await this.#writeOne(
      "UPDATE sessions SET ended_at = $1::double precision, end_reason = $2 WHERE id = $3 AND ended_at IS NULL",
      [this.#clock(), reason, id],
    );
  }

  async reopenSession(id: string): Promise<void> {
    checkKeyText("reopen session", "id", id);
    await this.#writeOne(
      "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = $1",
      [id],
    );
  }

  async updateSystemPrompt(id: string, prompt: string): Promise<void> {
    checkKeyText("update system prompt", "id", id);
    const text = textParam(prompt, "prompt", "update system prompt");
    // A newer Hermes's hash of the prompt replaced (kept among the extra columns) goes with it,
    // as on the file (sqlite/sessions.ts): a copy back would name the old prompt.
    await this.#writeOne(
      `UPDATE sessions SET system_prompt = $1,
         extra_columns = extra_columns - 'system_prompt_hash' WHERE id = $2`,
      [text, id],
    );
  }

  async getSession(id: string): Promise<SessionRow | undefined> {
    checkKeyText("read session", "id", id);
    const rows = await this.#query(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`, [
      id,
    ]);
    return rows[0] as SessionRow | undefined;
  }

  async updateTokenCounts(id: string, update: TokenCountsUpdate = {}): Promise<void> {
    checkKeyText("update token counts", "id", id);
    checkTokenCounts(update);
    const model = update.model ?? null;
    const params = tokenCountParams(id, update, model);
    const now = this.#clock();
    await this.#write(async (query) => {
      await query(INSERT_SESSION, [id, "unknown", null, model, null, null, null, now]);
      await query(update.absolute ? SET_TOKENS : ADD_TOKENS, params);
    });
  }

  // -- messages ------------------------------------------------------------

  async appendMessage(sessionId: string, message: NewMessage): Promise<number> {
    checkKeyText("append message", "sessionId", sessionId);
    const values = newMessageValues(message, "append message");
    values[TIMESTAMP_INDEX] = this.#clock();
    try {
      const rows = await this.#appendAlone(sessionId, [values], toolCallsAdded(message.toolCalls));
      return rows[0];
    } catch (error) {
      throw namingMissingSession(error, missingSessionMessage("append message", sessionId));
    }
  }

  async appendMessages(sessionId: string, list: readonly NewMessage[]): Promise<number[]> {
    checkKeyText("append messages", "sessionId", sessionId);
    if (!Array.isArray(list)) {
      throw new TypeError(
        `Cannot append messages: messages must be an array: current value is ${
          describeValue(list)
        }`,
      );
    }
    this.#checkWritable();
    if (list.length === 0) return [];
    const all = Array.from(list, (message) => newMessageValues(message, "append messages"));
    let timestamp = this.#clock();
    for (const values of all) {
      values[TIMESTAMP_INDEX] = timestamp;
      timestamp += TIMESTAMP_STEP;
    }
    let toolCalls = 0;
    for (const message of list) toolCalls += toolCallsAdded(message.toolCalls);
    try {
      if (all.length <= INSERT_CHUNK) return await this.#appendAlone(sessionId, all, toolCalls);
      return await this.#write(async (query) => {
        const ids: number[] = [];
        for (let at = 0; at < all.length; at += INSERT_CHUNK) {
          const chunk = all.slice(at, at + INSERT_CHUNK);
          const calls = at === 0 ? toolCalls : 0;
          ids.push(...await this.#insertCounted(query, sessionId, chunk, calls));
        }
        return ids;
      });
    } catch (error) {
      throw namingMissingSession(error, missingSessionMessage("append messages", sessionId));
    }
  }

  /**
   * Appends messages in one statement of its own (its own transaction, no
   * id of which is known before it runs). Its connection lost once it was
   * sent, the server is asked what became of it (`_lost_statement.ts`):
   * made, its ids are given; not made, it is made again (three tries in
   * all); and only when the server cannot tell, the error says that the
   * append may have been made, for appending again would write the messages
   * twice.
   */
  async #appendAlone(
    sessionId: string,
    rows: readonly MessageValues[],
    toolCalls: number,
  ): Promise<number[]> {
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#insertCounted(this.#query, sessionId, rows, toolCalls);
      } catch (error) {
        const lost = this.#client.sentThenLost(error);
        if (lost === undefined) throw error;
        const outcome = await appendOutcome(this.#askQuery, lost, sessionId, rows, delay);
        if (outcome.status === "committed") return outcome.ids;
        if (outcome.status === "unknown") {
          throw outcomeUnknown(error, "once the append was sent", outcome.reason);
        }
        if (attempt >= LOST_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Inserts messages and adds them to the session's counters in one
   * statement: no session, nothing inserted (and SQLite's foreign-key error).
   */
  async #insertCounted(
    query: PgQuery,
    sessionId: string,
    rows: readonly MessageValues[],
    toolCalls: number,
  ): Promise<number[]> {
    this.#checkWritable();
    const values = valuesList(rows, 4);
    const names = INSERT_COLUMNS.join(", ");
    const inserted = await query(
      insertMessagesSql(
        ["session_id", ...INSERT_COLUMNS],
        `SELECT s.id, v.* FROM s, (VALUES ${values.sql}) AS v(${names})`,
        `s AS (
           UPDATE sessions SET message_count = message_count + $2::bigint,
             tool_call_count = tool_call_count + $3::bigint
           WHERE id = $1 RETURNING id
         )`,
      ),
      [sessionId, rows.length, toolCalls, ...values.params],
    );
    if (inserted.length === 0) throw foreignKeyError();
    return inserted.map((row) => Number(row.id)).sort((a, b) => a - b);
  }

  async replaceMessages(sessionId: string, list: readonly ConversationMessage[]): Promise<void> {
    checkKeyText("replace messages", "sessionId", sessionId);
    if (!Array.isArray(list)) {
      throw new TypeError(
        `Cannot replace messages: messages must be an array: current value is ${
          describeValue(list)
        }`,
      );
    }
    // Refused before the messages are read, as every write of a read-only store.
    this.#checkWritable();
    const all = Array.from(list, (message) => pgConversationValues(message, "replace messages"));
    let timestamp = this.#clock();
    let toolCalls = 0;
    for (const [i, values] of all.entries()) {
      values[TIMESTAMP_INDEX] = timestamp;
      timestamp += TIMESTAMP_STEP;
      toolCalls += toolCallsAdded(list[i].tool_calls);
    }
    await this.#write(async (query) => {
      // The session first: an insert that its foreign key then refuses would have taken ids
      // from the sequence (never given back), where SQLite's AUTOINCREMENT rolls back with it.
      const updated = await query(
        `UPDATE sessions SET message_count = $1::bigint, tool_call_count = $2::bigint
         WHERE id = $3 RETURNING id`,
        [all.length, toolCalls, sessionId],
      );
      if (updated.length === 0 && all.length > 0) {
        throw foreignKeyError(undefined, missingSessionMessage("replace messages", sessionId));
      }
      await query(deleteMessagesSql("session_id = $1"), [sessionId]);
      for (let at = 0; at < all.length; at += INSERT_CHUNK) {
        const chunk = all.slice(at, at + INSERT_CHUNK);
        const values = valuesList(chunk, 2);
        await query(
          insertMessagesSql(
            ["session_id", ...INSERT_COLUMNS],
            `SELECT $1, v.* FROM (VALUES ${values.sql}) AS v(${INSERT_COLUMNS.join(", ")})`,
          ),
          [sessionId, ...values.params],
        );
      }
    });
  }

  async clearMessages(sessionId: string): Promise<void> {
    checkKeyText("clear messages", "sessionId", sessionId);
    await this.#write(async (query) => {
      await query(deleteMessagesSql("session_id = $1"), [sessionId]);
      await query(
        "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = $1",
        [sessionId],
      );
    });
  }

  async getMessages(sessionId: string, options: MessagesOptions = {}): Promise<MessageRow[]> {
    checkKeyText("read messages", "sessionId", sessionId);
    const checked = checkedMessagesOptions("read messages", options);
    const selection = messageSelection(sessionId, checked);
    if (selection === undefined) return [];
    const { sql, params } = selectedMessagesSql(selection, checked.take);
    return (await this.#query(sql, params)).map(messageFromRow);
  }

  async countMessages(sessionId: string, options: MessagesOptions = {}): Promise<number> {
    checkKeyText("count messages", "sessionId", sessionId);
    const checked = checkedMessagesOptions("count messages", options);
    const selection = messageSelection(sessionId, checked);
    if (selection === undefined) return 0;
    const [row] = await this.#query(
      `SELECT COUNT(*) AS n FROM messages m WHERE ${selection.where}`,
      selection.params,
    );
    const count = Number(row?.n ?? 0);
    return checked.take === undefined ? count : Math.min(count, checked.take.count);
  }

  async getMessagesAsConversation(
    sessionId: string,
    options: ConversationOptions = {},
  ): Promise<ConversationMessage[]> {
    checkKeyText("read conversation", "sessionId", sessionId);
    checkOptionNames("read conversation", options, CONVERSATION_OPTION_NAMES);
    const includeAncestors = options?.includeAncestors ?? false;
    const ids = includeAncestors
      ? await lineageRootToTipPg(this.#queryUntilClosed, sessionId)
      : [sessionId];
    const rows = await this.#query(
      `SELECT role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning,
         reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
       FROM messages m
       WHERE session_id IN (SELECT json_array_elements_text($1::text::json)) AND ${activeSql("m")}
       ORDER BY timestamp, id`,
      [jsonParam(ids)],
    );
    const conversation: ConversationMessage[] = [];
    for (const row of rows) {
      const message = toConversationMessage(row);
      if (includeAncestors && isReplayedPrompt(conversation, message)) continue;
      conversation.push(message);
    }
    return conversation;
  }

  async messageCount(sessionId?: string): Promise<number> {
    checkOptionalText("count messages", "sessionId", sessionId);
    const rows = sessionId
      ? await this.#query("SELECT COUNT(*) AS n FROM messages WHERE session_id = $1", [sessionId])
      : await this.#query("SELECT COUNT(*) AS n FROM messages");
    return Number(rows[0]?.n ?? 0);
  }

  // -- search and listing --------------------------------------------------

  async searchMessages(
    query: string,
    options: SearchOptions & OriginFilter = {},
  ): Promise<SearchHit[]> {
    const given = options ?? {};
    checkSearchFilters(given, SEARCH_OPTIONS_HERE);
    checkOptionalText("search messages", "origin", given.origin);
    // A query with nothing to search answers without the database: closed, it rejects all the same.
    if (this.#closed) throw notOpenError();
    return await searchMessagesPg(this.#query, query, given);
  }

  async countSearchHits(
    query: string,
    options: SearchOptions & OriginFilter,
    upTo: number,
  ): Promise<number> {
    const given = options ?? {};
    checkSearchFilters(given, SEARCH_OPTIONS_HERE);
    checkOptionalText("search messages", "origin", given.origin);
    if (this.#closed) throw notOpenError();
    return await countSearchHitsPg(this.#query, query, given, upTo);
  }

  async listSessionsRich(
    options: ListSessionsOptions & OriginFilter = {},
  ): Promise<RichSessionRow[]> {
    checkOptionNames("list sessions", options, LIST_OPTIONS_HERE);
    return await listSessionsRichPg(this.#queryUntilClosed, options);
  }

  async searchSessions(
    options: SearchSessionsOptions & OriginFilter = {},
  ): Promise<SessionRowWithActivity[]> {
    checkOptionNames("list sessions", options, SEARCH_SESSIONS_OPTIONS_HERE);
    return await searchSessionsPg(this.#queryUntilClosed, options);
  }

  async listedSessionCount(options: ListSessionsOptions & OriginFilter = {}): Promise<number> {
    checkOptionNames("count sessions", options, LIST_OPTIONS_HERE);
    return await listedSessionCountPg(this.#queryUntilClosed, options);
  }

  async sessionCount(options: SessionCountOptions & OriginFilter = {}): Promise<number> {
    checkOptionNames("count sessions", options, SESSION_COUNT_OPTIONS_HERE);
    return await sessionCountPg(this.#queryUntilClosed, options);
  }

  // -- ids and titles ------------------------------------------------------

  async resolveSessionId(idOrPrefix: string): Promise<string | undefined> {
    return await resolveSessionIdPg(this.#queryUntilClosed, idOrPrefix);
  }

  async sessionIdsWithPrefix(
    prefix: string,
    options: { limit?: number } = {},
  ): Promise<PrefixMatches> {
    checkOptionNames("look up ids", options, PREFIX_OPTION_NAMES);
    return await sessionIdsWithPrefixPg(this.#queryUntilClosed, prefix, options);
  }

  async syncOrigins(): Promise<SyncOrigin[]> {
    return await syncOriginsPg(this.#queryUntilClosed);
  }

  async removeSyncOrigin(origin: string): Promise<number | undefined> {
    this.#checkWritable();
    const unlock = await this.#client.lock(syncLockName(origin));
    try {
      return await this.#write(async (query) => {
        const known = await query("SELECT 1 FROM sync_origins WHERE origin = $1 FOR UPDATE", [
          origin,
        ]);
        if (known.length === 0) return undefined;
        const ids = (await query("SELECT session_id FROM sync_sessions WHERE origin = $1", [
          origin,
        ])).map((row) => String(row.session_id));
        // Their sync_sessions rows go with them (ON DELETE CASCADE).
        await deleteSessionRows(query, ids);
        await query("DELETE FROM sync_origins WHERE origin = $1", [origin]);
        return ids.length;
      });
    } finally {
      await unlock();
    }
  }

  async holdSyncPasses(): Promise<{ origins: string[]; release(): Promise<void> }> {
    const origins = (await this.syncOrigins()).map((o) => o.origin);
    if (origins.length === 0) return { origins, release: () => Promise.resolve() };
    // In one order, so that two holders never wait on each other.
    if (this.#closed) throw notOpenError();
    const release = await this.#client.lock(
      [...origins].sort().map((origin) => syncLockName(origin)),
    );
    return { origins, release };
  }

  async syncState(): Promise<SyncState> {
    // One snapshot: no session record without its origin.
    return await this.#inSnapshot(readSyncState);
  }

  async restoreSyncState(state: SyncState): Promise<RestoredSyncState> {
    this.#checkWritable();
    return await this.#write((query) => addSyncState(query, state));
  }

  async syncedSessionIds(id: string, options: { limit?: number } = {}): Promise<PrefixMatches> {
    return await syncedSessionIdsPg(this.#queryUntilClosed, id, options);
  }

  async syncedFrom(ids: readonly string[]): Promise<Map<string, string>> {
    return await syncedFromPg(this.#queryUntilClosed, ids);
  }

  async setSessionTitle(id: string, title: string | null): Promise<boolean> {
    checkKeyText("set title", "id", id);
    const clean = sanitizeTitle(title);
    const conflictWith = async (query: PgQuery) => {
      const rows = await query("SELECT id FROM sessions WHERE title = $1 AND id != $2", [
        clean,
        id,
      ]);
      return rows[0]?.id as string | undefined;
    };
    try {
      return await this.#write(async (query) => {
        if (clean) {
          const conflict = await conflictWith(query);
          if (conflict !== undefined) {
            throw new TitleError(`Title '${clean}' is already in use by session ${conflict}`);
          }
        }
        const rows = await query("UPDATE sessions SET title = $1 WHERE id = $2 RETURNING id", [
          clean,
          id,
        ]);
        return rows.length > 0;
      });
    } catch (error) {
      if (!isUniqueViolation(error, "idx_sessions_title_unique")) throw error;
      // Another writer took the title between the check and the update.
      const conflict = await conflictWith(this.#query);
      throw new TitleError(`Title '${clean}' is already in use by session ${conflict ?? "?"}`);
    }
  }

  async getSessionTitle(id: string): Promise<string | null | undefined> {
    return await sessionTitlePg(this.#queryUntilClosed, id);
  }

  async getSessionByTitle(title: string): Promise<SessionRow | undefined> {
    return await sessionByTitlePg(this.#queryUntilClosed, title);
  }

  async resolveSessionByTitle(title: string): Promise<string | undefined> {
    return await resolveSessionByTitlePg(this.#queryUntilClosed, title);
  }

  async getNextTitleInLineage(base: string): Promise<string> {
    return await nextTitleInLineagePg(this.#queryUntilClosed, base);
  }

  // -- lineage -------------------------------------------------------------

  async getCompressionTip(id: string): Promise<string> {
    return await compressionTipPg(this.#queryUntilClosed, id);
  }

  async resolveResumeSessionId(id: string): Promise<string> {
    return await resumeSessionIdPg(this.#queryUntilClosed, id);
  }

  async getAncestors(id: string): Promise<SessionRow[]> {
    return await ancestorsPg(id, (current) => this.getSession(current));
  }

  async getDescendants(id: string): Promise<SessionRow[]> {
    return await descendantsPg(this.#queryUntilClosed, id);
  }

  // -- export, delete, prune -----------------------------------------------

  async exportSession(id: string): Promise<SessionExport | undefined> {
    return await exportSessionPg(this.#exportReads, id);
  }

  async exportAll(
    options: ExportOptions & OriginFilter = {},
  ): Promise<SessionExportWithActivity[]> {
    const all: SessionExportWithActivity[] = [];
    for await (const session of this.iterateExport(options)) all.push(session);
    return all;
  }

  async *iterateExport(
    options: ExportOptions & OriginFilter = {},
  ): AsyncIterableIterator<SessionExportWithActivity> {
    checkOptionNames("export sessions", options, EXPORT_OPTIONS_HERE);
    yield* iterateExportPg(this.#exportReads, options);
  }

  /**
   * The export in pieces (`lib/core/export_pieces.ts`): the rows and values
   * of `exportSession` / `iterateExport`, each session's row read again with
   * the list of its messages' ids, which are read a chunk at a time (a
   * message deleted meanwhile is left out), or, with `holdSnapshot`, all of
   * a session's reads in one snapshot held while its pieces are consumed.
   */
  async *[EXPORT_PIECES](
    selection: ExportSelection,
    options: Required<ExportPiecesOptions>,
  ): AsyncIterableIterator<ExportPiece> {
    if (!("id" in selection)) {
      checkOptionNames("export sessions", selection.filter, EXPORT_OPTIONS_HERE);
    }
    yield* exportPiecesPg(this.#exportReads, selection, options);
  }

  async deleteSession(id: string, options: SessionsDirOptions = {}): Promise<boolean> {
    checkKeyText("delete session", "id", id);
    const sessionsDir = checkedSessionsDir("delete session", options);
    const ids = await this.#write((query) => deleteSessionsWhere(query, "id = $1", [id]));
    if (ids.length > 0 && sessionsDir) removeTranscriptFiles(sessionsDir, ids);
    return ids.length > 0;
  }

  async pruneSessions(options: PruneOptions = {}): Promise<number> {
    return await pruneSessionsPg((fn) => this.#write(fn), () => this.#clock(), options);
  }

  async pruneEmptyGhostSessions(options: SessionsDirOptions = {}): Promise<number> {
    return await pruneGhostSessionsPg((fn) => this.#write(fn), () => this.#clock(), options);
  }

  // -- meta and maintenance ------------------------------------------------

  async getMeta(key: string): Promise<string | null | undefined> {
    checkKeyText("read meta", "key", key);
    const rows = await this.#query("SELECT value FROM state_meta WHERE key = $1", [key]);
    return rows.length === 0 ? undefined : rows[0].value as string | null;
  }

  async setMeta(key: string, value: string | null): Promise<void> {
    checkKeyText("set meta", "key", key);
    const text = textParam(value, "value", "set meta");
    await this.#writeOne(
      `INSERT INTO state_meta (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [key, text],
    );
  }

  async vacuum(): Promise<void> {
    this.#checkWritable();
    await this.#query(await vacuumSql(this.#query));
  }

  async maybeAutoPruneAndVacuum(options: AutoPruneOptions = {}): Promise<AutoPruneResult> {
    // A closed store rejects, as every method then does (not a result with an error).
    if (this.#closed) throw notOpenError();
    options ??= {};
    const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
    try {
      checkOptionNames("auto-prune sessions", options, AUTO_PRUNE_OPTION_NAMES);
      const now = this.#clock();
      const hours = options.minIntervalHours ?? 24;
      const last = await this.getMeta("last_auto_prune");
      const lastRun = last ? parsePythonFloat(last) : undefined;
      if (lastRun !== undefined && now - lastRun < hours * 3600) {
        result.skipped = true;
        return result;
      }
      result.pruned = await this.pruneSessions({
        olderThanDays: options.retentionDays ?? 90,
        sessionsDir: options.sessionsDir,
      });
      if ((options.vacuum ?? true) && result.pruned > 0) {
        try {
          await this.vacuum();
          result.vacuumed = true;
        } catch {
          // As in Python: the prune is done; a VACUUM that could not run is not an error.
        }
      }
      await this.setMeta("last_auto_prune", pythonFloatRepr(now));
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
      result.cause = error;
    }
    return result;
  }

  // -- statistics ----------------------------------------------------------

  async usageByModel(): Promise<ModelUsage[]> {
    return await usageByModelPg(this.#queryUntilClosed);
  }

  async topSessionsByTokens(limit = 10): Promise<SessionTokens[]> {
    return await topSessionsByTokensPg(this.#queryUntilClosed, limit);
  }

  async usageBySource(): Promise<SourceUsage[]> {
    return await usageBySourcePg(this.#queryUntilClosed);
  }

  async getModelUsage(sessionId: string): Promise<SessionModelUsage[]> {
    checkKeyText("read model usage", "sessionId", sessionId);
    return await modelUsageOfPg(this.#query, sessionId);
  }

  async usageReport(options: UsageReportOptions & OriginFilter = {}): Promise<UsageRow[]> {
    return await usageReportPg(this.#queryUntilClosed, options);
  }

  async dataVersion(): Promise<string> {
    // The server's snapshot of transactions: the next transaction id and those still running.
    // A transaction gets an id when it first writes, so any write that commits (or aborts)
    // moves it at once, whichever connection or process made it, and a read never does. It
    // costs the server the same at a million sessions as at none. A write to another schema
    // or database of the same server moves it too: a refresh for nothing, never one missed.
    const [row] = await this.#query("SELECT pg_current_snapshot()::text AS snapshot");
    return String(row?.snapshot);
  }

  async inspect(options: InspectOptions | null = {}): Promise<DatabaseInfo> {
    checkOptionNames("inspect database", options, INSPECT_OPTION_NAMES);
    return await inspectPg(this.#queryUntilClosed, {
      target: this.target,
      sessionCount: () => this.sessionCount(),
      messageCount: () => this.messageCount(),
    });
  }

  async pruneCandidates(options: PruneCandidatesOptions = {}): Promise<PruneCandidate[]> {
    return await pruneCandidatesPg(this.#queryUntilClosed, () => this.#clock(), options);
  }

  // -- import --------------------------------------------------------------

  async importSession(record: unknown, options: ImportOptions = {}): Promise<ImportResult> {
    checkOptionNames("import session", options, IMPORT_OPTION_NAMES);
    const usage = importedModelUsage(record, options.modelUsage);
    if (usage !== undefined && usage.length > 0 && !this.#additionsEnsured) {
      // The table `sync` and `migrate` make when missing: made here too, before the write (and
      // after the record is found sound: a refused record changes nothing).
      checkImportRecord(record);
      this.#checkWritable();
      await ensureAdditions(this.#client, this.#schema);
      this.#additionsEnsured = true;
    }
    return await importSessionPg((fn) => this.#write(fn), record, {
      ...options,
      modelUsage: usage,
    });
  }

  async restoreParentLinks(links: readonly ParentLink[]): Promise<number> {
    checkParentLinks(links);
    // A read-only store refuses every write, an empty list too (as `appendMessages([])` does).
    this.#checkWritable();
    return await restoreParentLinksPg((fn) => this.#write(fn), links);
  }
}
