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
import { parsePythonFloat, pythonFloatRepr } from "../core/python_float.ts";
import { removeTranscriptFiles } from "../files/transcript_files.ts";
import { OpenError, ReadonlyError, StorageError, TitleError } from "../core/errors.ts";
import {
  checkedMessagesOptions,
  checkKeyText,
  checkOptionalText,
  checkSearchFilters,
  checkTextList,
  checkTokenCounts,
  type ConversationOptions,
  type CreateSessionOptions,
  type EnsureSessionOptions,
  type MessagesOptions,
  newSessionValues,
  type TokenCountsUpdate,
} from "../core/session_options.ts";
import type {
  ExportOptions,
  ImportOptions,
  ImportResult,
  ParentLink,
} from "../core/transfer_options.ts";
import type { DatabaseInfo, InspectOptions } from "../core/database_info.ts";
import { checkStartedRange } from "../core/listing_options.ts";
import type {
  ListSessionsOptions,
  PrefixMatches,
  SearchSessionsOptions,
  SessionCountOptions,
} from "../core/listing_options.ts";
import { checkCount } from "../core/paging.ts";
import type {
  AutoPruneOptions,
  AutoPruneResult,
  PruneCandidate,
  PruneCandidatesOptions,
  PruneOptions,
  SessionsDirOptions,
} from "../core/prune_options.ts";
import { checkPruneCandidatesOptions, toPruneCandidate } from "../core/prune_options.ts";
import type { SearchOptions } from "../core/search/options.ts";
import type { SessionStore } from "../core/session_store.ts";
import type {
  RestoredSyncState,
  SyncedStore,
  SyncOrigin,
  SyncState,
} from "../core/synced_store.ts";
import { addSyncState, readSyncState } from "./sync_state.ts";
import type { SourceUsage, UsageGrouping, UsageReportOptions, UsageRow } from "../core/usage.ts";
import { nextLineageTitle, sanitizeTitle, titleStem } from "../core/titles.ts";
import {
  checkUsageOptions,
  COST_COLUMNS,
  localTimeSql,
  startRangeSql,
  TOKEN_TOTALS,
  toSourceUsage,
  toUsageRow,
} from "../core/usage.ts";
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
import {
  checkSchemaInUse,
  connectPg,
  foreignKeyError,
  isUniqueViolation,
  type PgClient,
  type PgConnectOptions,
  type PgQuery,
  type PgRow,
  type PgValue,
} from "./_client.ts";
import { maskPassword } from "./_url.ts";
import {
  INSERT_COLUMNS,
  insertMessagesSql,
  type MessageValues,
  newMessageValues,
  pgConversationValues,
  SESSION_COLUMNS,
  TIMESTAMP_INDEX,
  valuesList,
  withPreview,
} from "./_rows.ts";
import { messageFromRow } from "../core/message_row.ts";
import { importSessionPg, restoreParentLinksPg } from "./import.ts";
import { checkParentLinks } from "../core/import_record.ts";
import { LAST_STEP, migratePg, migrationStep } from "./schema.ts";
import { searchMessagesPg } from "./search.ts";
import { countSearchHitsPg } from "./search_count.ts";
import { isReplayedPrompt } from "../core/replayed_prompt.ts";
import { toConversationMessage } from "../core/conversation_message.ts";
import { type StoredValue, textValue, toolCallsAdded } from "../core/message_values.ts";
import { describeValue, quotedValue } from "../core/shown_value.ts";
import { withTipLent } from "../core/listing_rows.ts";
import { escapeLike } from "../core/like_pattern.ts";
import { deleteMessagesSql, deleteSessionRows } from "./_delete.ts";
import { syncLockName } from "./sync_origin.ts";
import { activeSql, notArchivedSql } from "./_extra.ts";
import { messageSelection, selectedMessagesSql } from "./_message_selection.ts";
import { jsonParam } from "./_text_codec.ts";
import { holdSnapshot, SNAPSHOT_SQL } from "./_held_snapshot.ts";
import { outcomeUnknown } from "./_commit_outcome.ts";
import { appendOutcome, lostStatementEnded } from "./_lost_statement.ts";
import { delay } from "../core/delay.ts";
import {
  EXPORT_PIECES,
  type ExportPiece,
  type ExportPiecesOptions,
  type ExportSelection,
} from "../core/export_pieces.ts";
import {
  EXACT_MESSAGE_COLUMNS,
  EXACT_SESSION_COLUMNS,
  exactMessageRow,
  exactSessionRow,
} from "./_exact_rows.ts";
import { wallClockSeconds } from "../core/wall_clock.ts";

/** The sessions `pruneEmptyGhostSessions` deletes: `$1` is now minus a day. */
const GHOST_CRITERIA = `source = 'tui' AND title IS NULL AND ended_at IS NOT NULL
  AND started_at < $1::double precision
  AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)`;

/** A child session of `s` exists (delegates, branches, continuations). */
const HAS_CHILDREN = "EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

export type { PgConnectOptions };

/**
 * The filter by origin the PostgreSQL engine adds to `listSessionsRich`,
 * `searchSessions`, `sessionCount`, `searchMessages`, `exportAll` and
 * `iterateExport`: only sessions that `hermes-state sync` shipped from that
 * origin.
 */
export interface OriginFilter {
  /** An origin name (`sync_origins.origin`); all sessions when empty. */
  readonly origin?: string | null;
}

const BY_ORIGIN = (n: number) =>
  `s.id IN (SELECT so.session_id FROM sync_sessions so WHERE so.origin = $${n})`;

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

/** A plain identifier, as the store quotes none of its own. */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;
/** PostgreSQL's longest identifier, in bytes (ASCII here: characters). */
const MAX_IDENTIFIER = 63;
/** The server's own schemas: no store can be made there (`pg_` is refused by the server). */
const SYSTEM_SCHEMA = /^(pg_|information_schema$)/;

/** Why `schema` cannot hold a store, or `undefined` when it can. */
function schemaNameProblem(schema: string): string | undefined {
  if (typeof schema !== "string" || !PLAIN_IDENTIFIER.test(schema)) {
    return "the schema must be a plain identifier (letters, digits, _ and $)";
  }
  if (schema.length > MAX_IDENTIFIER) {
    return "the schema name must be at most 63 characters (PostgreSQL's limit)";
  }
  if (SYSTEM_SCHEMA.test(schema)) return "the schema must not be one of the server's own";
  return undefined;
}

/** Refuses a schema name that cannot hold a store, naming it. */
function checkSchemaName(url: string, schema: string): void {
  const problem = schemaNameProblem(schema);
  if (problem === undefined) return;
  throw new OpenError(
    maskPassword(url),
    `${problem}: current value is ${quotedValue(schema)}`,
    { kind: "other" },
  );
}

/**
 * Refuses a pool size or a number of attempts that is not a positive
 * integer, naming it, before any connection is made: the client took `0`
 * as a pool that never connects (a 30 s wait, then "the server did not
 * accept the connection") and `NaN` or `1.5` with "Invalid array length".
 */
function checkPoolSettings(options: PgConnectOptions): void {
  for (const [name, value] of [["max", options.max], ["maxAttempts", options.maxAttempts]]) {
    if (value === undefined || (Number.isInteger(value) && (value as number) >= 1)) continue;
    throw new RangeError(
      `Cannot open database: ${name} must be a positive integer: current value is ${
        quotedValue(value)
      }`,
    );
  }
}

/** The most connections `?pool_size=` may ask for. */
const MAX_POOL_SIZE = 1000;

/** The query parameters the store reads itself, not sent to the server. */
const STORE_PARAMETERS = new Set(["schema", "pool_size"]);

/** A server URL with the store's own parameters taken off. */
export interface ParsedPostgresUrl {
  /** The URL without `?schema=` and `?pool_size=`, its other parameters as written. */
  readonly url: string;
  /** `?schema=`: `hermes` when absent. */
  readonly schema: string;
  /** `?pool_size=`: the connections of the pool, when given. */
  readonly poolSize?: number;
}

/** The single value of the store's parameter `name` in `params`, refusing it twice. */
function singleParameter(
  url: string,
  params: URLSearchParams,
  name: string,
): string | undefined {
  const given = params.getAll(name);
  if (given.length > 1) {
    throw new OpenError(
      maskPassword(url),
      `the URL gives ?${name}= ${given.length} times: current values are ${
        given.map(quotedValue).join(", ")
      }`,
      { kind: "other" },
    );
  }
  return given[0];
}

/** `?pool_size=`'s value as a number of connections, refusing any other text, naming it. */
function poolSizeOf(url: string, text: string): number {
  const size = Number(text);
  if (!/^\d{1,4}$/.test(text) || size < 1 || size > MAX_POOL_SIZE) {
    throw new OpenError(
      maskPassword(url),
      `?pool_size= must be a whole number of connections from 1 to ${MAX_POOL_SIZE}: current value is ${
        quotedValue(text)
      }`,
      { kind: "other" },
    );
  }
  return size;
}

/**
 * Splits the store's own query parameters off a server URL: `?schema=` (the
 * PostgreSQL schema holding the tables) and `?pool_size=` (the connections
 * of the pool; 4 by default: a role with a lower `CONNECTION LIMIT`, or a
 * server with few connections to share, can ask for fewer).
 *
 * @param url A `postgres://` URL, maybe with `?schema=NAME` and `?pool_size=N`.
 * @returns The URL without them, the schema (`hermes` by default) and the pool size if given.
 * @throws {OpenError} When the schema is not a plain identifier of at most
 *   63 characters, is one of the server's own (`pg_…`, `information_schema`),
 *   or either parameter is given twice, or the pool size is not a whole
 *   number from 1 to 1000.
 */
export function parsePostgresUrl(url: string): ParsedPostgresUrl {
  const at = url.indexOf("?");
  if (at === -1) return { url, schema: "hermes" };
  const params = new URLSearchParams(url.slice(at + 1));
  const schema = singleParameter(url, params, "schema") ?? "hermes";
  checkSchemaName(url, schema);
  const poolText = singleParameter(url, params, "pool_size");
  // The other parameters as written (re-encoding them would change what errors show).
  const rest = url.slice(at + 1).split("&").filter((part) =>
    part !== "" && !STORE_PARAMETERS.has(new URLSearchParams(part).keys().next().value ?? "")
  );
  return {
    url: url.slice(0, at) + (rest.length > 0 ? `?${rest.join("&")}` : ""),
    schema,
    ...(poolText === undefined ? {} : { poolSize: poolSizeOf(url, poolText) }),
  };
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
}

/**
 * Brings a server's schema to this version's last migration, as opening it
 * for writing does, and says what it found: `hermes-state --db URL migrate`.
 * A schema a newer hermes-state migrated is left as it is.
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
    const before = await migrationStep(client.query, parsed.schema);
    if (before === null || before <= LAST_STEP) await migratePg(client, parsed.schema);
    await checkSchemaInUse(client, parsed.schema);
    const after = (await migrationStep(client.query, parsed.schema)) ?? LAST_STEP;
    return { target: client.display, before, after, known: LAST_STEP };
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
const MAX_COMPRESSION_STEPS = 100;
const MAX_RESUME_STEPS = 32;
const MAX_LINEAGE_DEPTH = 1000;
const MAX_CONVERSATION_LINEAGE = 100;
/** Messages read per page of `iterateExport`. */
const EXPORT_PAGE = 2000;

const ADD_TOKENS = `UPDATE sessions SET
  input_tokens = input_tokens + $1::numeric,
  output_tokens = output_tokens + $2::numeric,
  cache_read_tokens = cache_read_tokens + $3::numeric,
  cache_write_tokens = cache_write_tokens + $4::numeric,
  reasoning_tokens = reasoning_tokens + $5::numeric,
  estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE($6::double precision, 0),
  actual_cost_usd = CASE WHEN $7::double precision IS NULL THEN actual_cost_usd
    ELSE COALESCE(actual_cost_usd, 0) + $7::double precision END,
  cost_status = COALESCE($8::text, cost_status),
  cost_source = COALESCE($9::text, cost_source),
  pricing_version = COALESCE($10::text, pricing_version),
  billing_provider = COALESCE(billing_provider, $11::text),
  billing_base_url = COALESCE(billing_base_url, $12::text),
  billing_mode = COALESCE(billing_mode, $13::text),
  model = COALESCE(model, $14::text),
  api_call_count = COALESCE(api_call_count, 0) + $15::numeric
  WHERE id = $16`;

const SET_TOKENS = `UPDATE sessions SET
  input_tokens = $1::numeric,
  output_tokens = $2::numeric,
  cache_read_tokens = $3::numeric,
  cache_write_tokens = $4::numeric,
  reasoning_tokens = $5::numeric,
  estimated_cost_usd = COALESCE($6::double precision, 0),
  actual_cost_usd = CASE WHEN $7::double precision IS NULL THEN actual_cost_usd
    ELSE $7::double precision END,
  cost_status = COALESCE($8::text, cost_status),
  cost_source = COALESCE($9::text, cost_source),
  pricing_version = COALESCE($10::text, pricing_version),
  billing_provider = COALESCE(billing_provider, $11::text),
  billing_base_url = COALESCE(billing_base_url, $12::text),
  billing_mode = COALESCE(billing_mode, $13::text),
  model = COALESCE(model, $14::text),
  api_call_count = $15::numeric
  WHERE id = $16`;

const INSERT_SESSION = `INSERT INTO sessions
  (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8::double precision)
  ON CONFLICT (id) DO NOTHING`;

/**
 * The listing columns of session `s`: the first user message's first 200
 * characters, and the time of its last message. The first message is found
 * by its timestamp first (one step of the session index, which orders by
 * time only), then by id among the rows that share it: ordering by
 * `timestamp, id` sorted all of a session's user messages, 42–48 ms for a
 * page of 20 sessions of 10,000 messages. The rows a newer Hermes's search
 * skips (`search_hidden`: rewound, hidden) are skipped, as its preview does.
 */
const RICH_COLUMNS = `
  COALESCE(
    (SELECT substr(m.content, 1, 200)
     FROM messages m
     WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
       AND NOT m.search_hidden
       AND m.timestamp = (
         SELECT y.timestamp FROM messages y
         WHERE y.session_id = s.id AND y.role = 'user' AND y.content IS NOT NULL
           AND NOT y.search_hidden
         ORDER BY y.timestamp LIMIT 1)
     ORDER BY m.id LIMIT 1),
    ''
  ) AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)
    AS last_active`;

const VISIBLE_ONLY = `(s.parent_session_id IS NULL
  OR EXISTS (SELECT 1 FROM sessions p
             WHERE p.id = s.parent_session_id
               AND p.end_reason = 'branched'
               AND s.started_at >= p.ended_at))`;

const EXPORT_SESSIONS = (where: string) =>
  `SELECT ${EXACT_SESSION_COLUMNS}, COALESCE(m.last_active, s.started_at) AS last_active
   FROM sessions s
   LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id) m
     ON m.session_id = s.id
   ${where}
   ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC`;

/**
 * The rows of {@linkcode EXPORT_SESSIONS} of the sessions `$1` names (a JSON
 * array of ids), unordered: each one's activity read by the index, not by
 * a grouping of every message.
 */
const EXPORT_SESSIONS_BY_IDS = `SELECT ${EXACT_SESSION_COLUMNS},
    COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)
      AS last_active
  FROM sessions s WHERE s.id IN (SELECT json_array_elements_text($1::text::json))`;

interface StoreSettings {
  readonly target: string;
  readonly readonly: boolean;
  readonly clock: () => number;
}

/** The summed columns of a usage row, and their aggregates (a cost sum stays NULL without values). */
const USAGE_NAMES = [...TOKEN_TOTALS.map((t) => t.column), ...COST_COLUMNS].join(", ");
const USAGE_SUMS = TOKEN_TOTALS.map(({ column }) => `COALESCE(SUM(${column}), 0) AS ${column}`)
  .concat(COST_COLUMNS.map((column) => `SUM(${column}) AS ${column}`)).join(", ");
/** The token totals of one source. */
const SOURCE_TOTALS = TOKEN_TOTALS.map((t) => `COALESCE(SUM(s.${t.column}), 0) AS ${t.total}`)
  .join(", ");

/**
 * The group key of each usage grouping, a closed set: days, weeks from Monday and months of
 * `time`, which is `started_at` shifted into the report's time zone.
 */
const USAGE_KEYS: Readonly<Record<UsageGrouping, (time: string) => string>> = {
  day: (time) => `to_char(to_timestamp(${time}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  week: (time) =>
    `to_char(date_trunc('week', to_timestamp(${time}) AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`,
  month: (time) => `to_char(to_timestamp(${time}) AT TIME ZONE 'UTC', 'YYYY-MM')`,
  model: () => "model",
  source: () => "source",
  origin: () => "(SELECT so.origin FROM sync_sessions so WHERE so.session_id = sessions.id)",
};

/** The order of usage rows, as the SQLite engine gives it (a missing model first among ties). */
const USAGE_BY_COST =
  `COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key COLLATE "C" NULLS FIRST`;
const USAGE_ORDER: Readonly<Record<UsageGrouping, string>> = {
  day: "key",
  week: "key",
  month: "key",
  model: USAGE_BY_COST,
  source: USAGE_BY_COST,
  origin: USAGE_BY_COST,
};

/**
 * The WHERE of `searchSessions`, `sessionCount` and `iterateExport`: one
 * source and one origin, each when given; their values are appended to
 * `params`.
 */
function sourceAndOrigin(
  options: { readonly source?: string | null } & OriginFilter,
  params: PgValue[],
  action: string,
): string {
  checkOptionalText(action, "source", options.source);
  checkOptionalText(action, "origin", options.origin);
  const clauses: string[] = [];
  if (options.source) {
    params.push(options.source);
    clauses.push(`s.source = $${params.length}`);
  }
  if (options.origin) {
    params.push(options.origin);
    clauses.push(BY_ORIGIN(params.length));
  }
  return clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
}

/**
 * The WHERE clauses of a start-time range on sessions `s` (a listing's, an
 * export's), the bounds checked; their values are appended to `params`.
 */
function startedRangeClauses(
  options: Pick<ListSessionsOptions, "startedAfter" | "startedBefore">,
  params: PgValue[],
  action?: string,
): string[] {
  const range = checkStartedRange(options, action);
  const clauses: string[] = [];
  if (range.after !== null) {
    params.push(range.after);
    clauses.push(`s.started_at >= $${params.length}`);
  }
  if (range.before !== null) {
    params.push(range.before);
    clauses.push(`s.started_at < $${params.length}`);
  }
  return clauses;
}

/** The WHERE of a listing and its parameters (`$1`…), as `listing.ts` filters on SQLite. */
function listingFilters(
  options: ListSessionsOptions & OriginFilter,
): { where: string; params: PgValue[] } {
  const clauses: string[] = [];
  const params: PgValue[] = [];
  checkOptionalText("list sessions", "source", options.source);
  checkTextList("list sessions", "excludeSources", options.excludeSources);
  checkOptionalText("list sessions", "origin", options.origin);
  if (!options.includeChildren) clauses.push(VISIBLE_ONLY);
  if (!options.includeArchived) clauses.push(notArchivedSql("s"));
  if (options.source) {
    params.push(options.source);
    clauses.push(`s.source = $${params.length}`);
  }
  if (options.excludeSources && options.excludeSources.length > 0) {
    params.push(jsonParam(options.excludeSources));
    clauses.push(
      `s.source NOT IN (SELECT json_array_elements_text($${params.length}::text::json))`,
    );
  }
  clauses.push(...startedRangeClauses(options, params));
  if (options.hasChildren) clauses.push(HAS_CHILDREN);
  if (options.origin) {
    params.push(options.origin);
    clauses.push(BY_ORIGIN(params.length));
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * Whether a listing's filters keep few of the sessions active lately, so
 * that seeking its page among them ({@linkcode PostgresSessionStore}'s
 * listing by activity) would only add to reading the whole listing: one
 * origin or source, sessions started before a time, parents only.
 */
function recencyBlind(options: ListSessionsOptions & OriginFilter): boolean {
  return Boolean(options.origin || options.source || options.hasChildren) ||
    (options.startedBefore !== undefined && options.startedBefore !== null);
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

/**
 * What every method of a closed store rejects with: the message of a closed
 * SQLite store (`database is not open`), not the client's `CONNECTION_ENDED`.
 */
function notOpenError(): StorageError {
  return new StorageError("database is not open", "other");
}

class PostgresSessionStore implements SessionStore, SyncedStore {
  readonly engine = "postgres" as const;
  readonly target: string;
  readonly readonly: boolean;
  readonly #client: PgClient;
  readonly #clock: () => number;
  #closed = false;

  constructor(client: PgClient, settings: StoreSettings) {
    this.#client = client;
    this.target = settings.target;
    this.readonly = settings.readonly;
    this.#clock = settings.clock;
  }

  /** The client's query; after `close()`, one that rejects as a closed SQLite store does. */
  get #query(): PgQuery {
    return this.#closed ? () => Promise.reject(notOpenError()) : this.#client.query;
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
    return id;
  }

  ensureSession(
    id: string,
    source = "unknown",
    options: EnsureSessionOptions = {},
  ): Promise<string> {
    return this.createSession(id, source, { model: (options ?? {}).model });
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
    await this.#writeOne("UPDATE sessions SET system_prompt = $1 WHERE id = $2", [text, id]);
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
    const params: PgValue[] = [
      update.inputTokens ?? 0,
      update.outputTokens ?? 0,
      update.cacheReadTokens ?? 0,
      update.cacheWriteTokens ?? 0,
      update.reasoningTokens ?? 0,
      update.estimatedCostUsd ?? null,
      update.actualCostUsd ?? null,
      update.costStatus ?? null,
      update.costSource ?? null,
      update.pricingVersion ?? null,
      update.billingProvider ?? null,
      update.billingBaseUrl ?? null,
      update.billingMode ?? null,
      model,
      update.apiCallCount ?? 0,
      id,
    ];
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
    const rows = await this.#appendAlone(sessionId, [values], toolCallsAdded(message.toolCalls));
    return rows[0];
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
      const updated = await query(
        `UPDATE sessions SET message_count = $1::bigint, tool_call_count = $2::bigint
         WHERE id = $3 RETURNING id`,
        [all.length, toolCalls, sessionId],
      );
      if (updated.length === 0 && all.length > 0) throw foreignKeyError();
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
    const includeAncestors = options?.includeAncestors ?? false;
    const ids = includeAncestors ? await this.#lineageRootToTip(sessionId) : [sessionId];
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

  async #lineageRootToTip(sessionId: string): Promise<string[]> {
    if (!sessionId) return [sessionId];
    const chain: string[] = [];
    const seen = new Set<string>();
    let current: unknown = sessionId;
    for (let step = 0; step < MAX_CONVERSATION_LINEAGE; step++) {
      if (typeof current !== "string" || current === "" || seen.has(current)) break;
      seen.add(current);
      chain.push(current);
      const rows = await this.#query("SELECT parent_session_id FROM sessions WHERE id = $1", [
        current,
      ]);
      if (rows.length === 0) break;
      current = rows[0].parent_session_id;
    }
    return chain.reverse();
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
    checkSearchFilters(given);
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
    checkSearchFilters(given);
    checkOptionalText("search messages", "origin", given.origin);
    if (this.#closed) throw notOpenError();
    return await countSearchHitsPg(this.#query, query, given, upTo);
  }

  async listSessionsRich(
    options: ListSessionsOptions & OriginFilter = {},
  ): Promise<RichSessionRow[]> {
    options ??= {};
    const limit = checkCount("list sessions", "limit", options.limit ?? 20);
    const offset = checkCount("list sessions", "offset", options.offset ?? 0);
    const { where, params } = listingFilters(options);
    const n = params.length + 1;
    const rows =
      (options.orderByLastActive
        ? await this.#byLastActive(where, params, limit, offset, !recencyBlind(options))
        : await this.#query(
          `WITH page AS (
           SELECT s.id FROM sessions s ${where}
           ORDER BY s.started_at DESC, s.id COLLATE "C" LIMIT $${n} OFFSET $${n + 1}
         )
         SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS}
         FROM page JOIN sessions s ON s.id = page.id
         ORDER BY s.started_at DESC, s.id COLLATE "C"`,
          [...params, limit, offset],
        )).map(withPreview);
    if (options.projectCompressionTips === false || options.includeChildren) return rows;
    const projected: RichSessionRow[] = [];
    for (const row of rows) projected.push(await this.#projectTip(row));
    return projected;
  }

  /**
   * A page of the listing by last activity. Each listed session's activity
   * (its newest message, else its start; a compression chain's, the newest
   * of its members') is one index probe: at a million sessions, reading
   * them all took 6.5 s. So the page is first sought among the sessions
   * active since a time T, taken at the 8×, then 64×, then 512×
   * (offset + limit)-th newest message: the sessions with a message at or
   * after T, those without messages started at or after T, and the
   * sessions above them (chain roots). Every listed entry whose activity is
   * at or after T is among them, so when at least offset + limit of them
   * are, the page is theirs, exactly as the whole listing orders it; else
   * the next T, and at last the whole listing. Without `seek` (a filter that
   * keeps few of the recently active: {@linkcode recencyBlind}), straight
   * to the whole listing.
   */
  async #byLastActive(
    where: string,
    params: readonly PgValue[],
    limit: number,
    offset: number,
    seek: boolean,
  ): Promise<Record<string, unknown>[]> {
    if (limit === 0) return [];
    const n = params.length + 1;
    for (const spread of seek ? [8, 64, 512] : []) {
      const [mark] = await this.#query(
        "SELECT timestamp FROM messages ORDER BY timestamp DESC OFFSET $1 LIMIT 1",
        [(offset + limit) * spread],
      );
      if (mark === undefined) break; // fewer messages than that: the whole listing is as cheap
      const rows = await this.#query(this.#byLastActiveSql(where, n, n + 2), [
        ...params,
        limit,
        offset,
        Number(mark.timestamp),
      ]);
      if (rows.length === limit) return rows;
      // Under half a page: the recent ones are mostly filtered out; a wider bound costs more.
      if (rows.length < limit / 2) break;
    }
    return await this.#query(this.#byLastActiveSql(where, n), [...params, limit, offset]);
  }

  /**
   * The listing by last activity, `LIMIT $n OFFSET $n+1`; with `since`, only
   * among the entries active at or after `$since` (see {@linkcode #byLastActive}).
   */
  #byLastActiveSql(where: string, n: number, since?: number): string {
    const lastMessage = (id: string) =>
      `(SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${id})`;
    const bounded = since === undefined ? "" : `
     active(id) AS (
       SELECT DISTINCT m.session_id FROM messages m WHERE m.timestamp >= $${since}
       UNION
       SELECT s.id FROM sessions s
       WHERE s.started_at >= $${since}
         AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
     ),
     above(id) AS (
       SELECT id FROM active
       UNION
       SELECT s.parent_session_id FROM above JOIN sessions s ON s.id = above.id
       WHERE s.parent_session_id IS NOT NULL
     ),`;
    const among = since === undefined
      ? where
      : `${where ? `${where} AND` : "WHERE"} s.id IN (SELECT id FROM above)`;
    return `WITH RECURSIVE${bounded}
     listed(id, started_at, end_reason, ended_at) AS (
       SELECT s.id, s.started_at, s.end_reason, s.ended_at FROM sessions s ${among}
     ),
     chain(root_id, root_started, cur_id, cur_started, cur_reason, cur_ended) AS (
       SELECT id, started_at, id, started_at, end_reason, ended_at
       FROM listed WHERE end_reason = 'compression'
       UNION
       SELECT chain.root_id, chain.root_started,
         child.id, child.started_at, child.end_reason, child.ended_at
       FROM chain JOIN sessions child ON child.parent_session_id = chain.cur_id
       WHERE chain.cur_reason = 'compression' AND child.started_at >= chain.cur_ended
     ),
     activity(root_id, root_started, effective) AS (
       SELECT id, started_at, COALESCE(${lastMessage("listed.id")}, started_at)
       FROM listed WHERE end_reason IS DISTINCT FROM 'compression'
       UNION ALL
       SELECT root_id, root_started, MAX(COALESCE(${lastMessage("chain.cur_id")}, cur_started))
       FROM chain GROUP BY root_id, root_started
     ),
     page AS (
       SELECT root_id, root_started, effective FROM activity
       ${since === undefined ? "" : `WHERE effective >= $${since}`}
       ORDER BY effective DESC, root_started DESC, root_id COLLATE "C" DESC
       LIMIT $${n} OFFSET $${n + 1}
     )
     SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS}
     FROM page JOIN sessions s ON s.id = page.root_id
     ORDER BY page.effective DESC, page.root_started DESC, page.root_id COLLATE "C" DESC`;
  }

  async #projectTip(row: RichSessionRow): Promise<RichSessionRow> {
    if (row.end_reason !== "compression") return row;
    const tipId = await this.getCompressionTip(row.id);
    if (tipId === row.id) return row;
    const rows = await this.#query(
      `SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS} FROM sessions s WHERE s.id = $1`,
      [tipId],
    );
    if (rows.length === 0) return row;
    return withTipLent(row, withPreview(rows[0]));
  }

  async searchSessions(
    options: SearchSessionsOptions & OriginFilter = {},
  ): Promise<SessionRowWithActivity[]> {
    options ??= {};
    const limit = checkCount("search sessions", "limit", options.limit ?? 20);
    const offset = checkCount("search sessions", "offset", options.offset ?? 0);
    const params: PgValue[] = [limit, offset];
    const where = sourceAndOrigin(options, params, "search sessions");
    return await this.#query(
      `SELECT ${SESSION_COLUMNS},
         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)
           AS last_active
       FROM sessions s ${where}
       ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC
       LIMIT $1 OFFSET $2`,
      params,
    ) as SessionRowWithActivity[];
  }

  async listedSessionCount(options: ListSessionsOptions & OriginFilter = {}): Promise<number> {
    options ??= {};
    const { where, params } = listingFilters(options);
    const rows = await this.#query(`SELECT COUNT(*) AS n FROM sessions s ${where}`, params);
    return Number(rows[0].n);
  }

  async sessionCount(options: SessionCountOptions & OriginFilter = {}): Promise<number> {
    options ??= {};
    const params: PgValue[] = [];
    const where = sourceAndOrigin(options, params, "count sessions");
    const rows = await this.#query(`SELECT COUNT(*) AS n FROM sessions s ${where}`, params);
    return Number(rows[0].n);
  }

  // -- ids and titles ------------------------------------------------------

  async resolveSessionId(idOrPrefix: string): Promise<string | undefined> {
    checkKeyText("resolve session id", "idOrPrefix", idOrPrefix);
    const exact = await this.#query("SELECT id FROM sessions WHERE id = $1", [idOrPrefix]);
    if (exact.length > 0) return exact[0].id as string;
    const rows = await this.#query(
      `SELECT id FROM sessions WHERE id ILIKE $1 ESCAPE E'\\\\'
       ORDER BY started_at DESC LIMIT 2`,
      [`${escapeLike(idOrPrefix)}%`],
    );
    return rows.length === 1 ? rows[0].id as string : undefined;
  }

  async sessionIdsWithPrefix(
    prefix: string,
    options: { limit?: number } = {},
  ): Promise<PrefixMatches> {
    checkKeyText("find sessions by id prefix", "prefix", prefix);
    const limit = checkCount("find sessions by id prefix", "limit", (options ?? {}).limit ?? 10);
    const pattern = `${escapeLike(prefix)}%`;
    const count = await this.#query(
      "SELECT COUNT(*) AS n FROM sessions WHERE id ILIKE $1 ESCAPE E'\\\\'",
      [pattern],
    );
    const rows = await this.#query(
      `SELECT id FROM sessions WHERE id ILIKE $1 ESCAPE E'\\\\'
       ORDER BY started_at DESC, id COLLATE "C" LIMIT $2`,
      [pattern, limit],
    );
    return { count: Number(count[0].n), ids: rows.map((row) => row.id as string) };
  }

  async syncOrigins(): Promise<SyncOrigin[]> {
    const rows = await this.#query(
      `SELECT o.origin, o.host, o.path, o.last_pass_at,
              (SELECT COUNT(*) FROM sync_sessions so WHERE so.origin = o.origin) AS sessions
       FROM sync_origins o ORDER BY o.origin COLLATE "C"`,
    );
    return rows.map((row) => ({
      origin: row.origin as string,
      host: row.host as string,
      path: row.path as string,
      lastPassAt: row.last_pass_at === null ? null : Number(row.last_pass_at),
      sessions: Number(row.sessions),
    }));
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
    const limit = options.limit ?? 10;
    for (const [test, value] of [["= $1", id], ["ILIKE $1 ESCAPE E'\\\\'", `${escapeLike(id)}%`]]) {
      const rows = await this.#query(
        `SELECT so.session_id AS id, COUNT(*) OVER () AS n
         FROM sync_sessions so JOIN sessions s ON s.id = so.session_id
         WHERE so.source_id ${test}
         ORDER BY s.started_at DESC, so.session_id COLLATE "C" LIMIT $2`,
        [value, limit],
      );
      if (rows.length > 0) {
        return { count: Number(rows[0].n), ids: rows.map((row) => row.id as string) };
      }
    }
    return { count: 0, ids: [] };
  }

  async syncedFrom(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#query(
      `SELECT session_id, origin FROM sync_sessions
       WHERE session_id IN (SELECT json_array_elements_text($1::text::json))`,
      [jsonParam(ids)],
    );
    return new Map(rows.map((row) => [String(row.session_id), String(row.origin)]));
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
    checkKeyText("read title", "id", id);
    const rows = await this.#query("SELECT title FROM sessions WHERE id = $1", [id]);
    return rows.length === 0 ? undefined : rows[0].title as string | null;
  }

  async getSessionByTitle(title: string): Promise<SessionRow | undefined> {
    checkKeyText("find session by title", "title", title);
    const rows = await this.#query(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.title = $1`, [
      title,
    ]);
    return rows[0] as SessionRow | undefined;
  }

  async resolveSessionByTitle(title: string): Promise<string | undefined> {
    checkKeyText("resolve title", "title", title);
    const numbered = await this.#query(
      `SELECT id FROM sessions WHERE title ILIKE $1 ESCAPE E'\\\\' ORDER BY started_at DESC LIMIT 1`,
      [`${escapeLike(title)} #%`],
    );
    if (numbered.length > 0) return numbered[0].id as string;
    return (await this.getSessionByTitle(title))?.id;
  }

  async getNextTitleInLineage(base: string): Promise<string> {
    checkKeyText("number title", "base", base);
    const stem = titleStem(base);
    const rows = await this.#query(
      `SELECT title FROM sessions WHERE title = $1 OR title ILIKE $2 ESCAPE E'\\\\'`,
      [stem, `${escapeLike(stem)} #%`],
    );
    return nextLineageTitle(stem, rows.map((row) => row.title));
  }

  // -- lineage -------------------------------------------------------------

  async getCompressionTip(id: string): Promise<string> {
    checkKeyText("find compression tip", "id", id);
    let current = id;
    for (let step = 0; step < MAX_COMPRESSION_STEPS; step++) {
      const rows = await this.#query(
        `SELECT id FROM sessions
         WHERE parent_session_id = $1
           AND started_at >= (SELECT ended_at FROM sessions WHERE id = $1 AND end_reason = 'compression')
         ORDER BY started_at DESC LIMIT 1`,
        [current],
      );
      if (rows.length === 0) return current;
      current = rows[0].id as string;
    }
    return current;
  }

  async resolveResumeSessionId(id: string): Promise<string> {
    checkKeyText("resolve resume session", "id", id);
    if (!id) return id;
    const hasMessages = async (sessionId: string) =>
      (await this.#query("SELECT 1 FROM messages WHERE session_id = $1 LIMIT 1", [sessionId]))
        .length > 0;
    if (await hasMessages(id)) return id;
    const seen = new Set([id]);
    let current = id;
    for (let step = 0; step < MAX_RESUME_STEPS; step++) {
      const rows = await this.#query(
        `SELECT id FROM sessions WHERE parent_session_id = $1
         ORDER BY started_at DESC, id COLLATE "C" DESC LIMIT 1`,
        [current],
      );
      const child = rows[0]?.id as string | undefined;
      if (!child || seen.has(child)) return id;
      seen.add(child);
      if (await hasMessages(child)) return child;
      current = child;
    }
    return id;
  }

  async getAncestors(id: string): Promise<SessionRow[]> {
    checkKeyText("read ancestors", "id", id);
    const rows: SessionRow[] = [];
    const seen = new Set<string>();
    let current: string | null = id;
    while (current !== null && !seen.has(current) && rows.length <= MAX_LINEAGE_DEPTH) {
      const row: SessionRow | undefined = await this.getSession(current);
      if (row === undefined) break;
      rows.push(row);
      seen.add(current);
      current = row.parent_session_id;
    }
    return rows;
  }

  async getDescendants(id: string): Promise<SessionRow[]> {
    checkKeyText("read descendants", "id", id);
    return await this.#query(
      `WITH RECURSIVE tree(id, depth) AS (
         SELECT id, 0 FROM sessions WHERE id = $1
         UNION ALL
         SELECT child.id, tree.depth + 1
         FROM tree JOIN sessions child ON child.parent_session_id = tree.id
         WHERE tree.depth < $2 AND child.id != $1
       )
       SELECT ${SESSION_COLUMNS} FROM tree JOIN sessions s ON s.id = tree.id
       ORDER BY tree.depth, s.started_at, s.id COLLATE "C"`,
      [id, MAX_LINEAGE_DEPTH],
    ) as SessionRow[];
  }

  // -- export, delete, prune -----------------------------------------------

  async exportSession(id: string): Promise<SessionExport | undefined> {
    checkKeyText("export session", "id", id);
    // The row and its messages of one state (a message written between two reads came with a
    // row that did not count it).
    const read = await this.#inSnapshot(async (query) => {
      const [session] = await query(
        `SELECT ${EXACT_SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`,
        [id],
      );
      if (session === undefined) return undefined;
      // Every message (those a newer Hermes marks inactive too), as getMessages with
      // includeInactive.
      const rows = await query(
        `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = $1
         ORDER BY m.timestamp, m.id`,
        [id],
      );
      return { session, rows };
    });
    if (read === undefined) return undefined;
    const messages = read.rows.map((row) => messageFromRow(exactMessageRow(row)));
    return { ...exactSessionRow(read.session) as unknown as SessionRow, messages };
  }

  async exportAll(
    options: ExportOptions & OriginFilter = {},
  ): Promise<SessionExportWithActivity[]> {
    const all: SessionExportWithActivity[] = [];
    for await (const session of this.iterateExport(options)) all.push(session);
    return all;
  }

  /** The sessions an export covers, without their messages, in export order. */
  async #exportSessions(
    options: ExportOptions & OriginFilter,
  ): Promise<SessionRowWithActivity[]> {
    const params: PgValue[] = [];
    let where = sourceAndOrigin(options, params, "export sessions");
    const range = startedRangeClauses(options, params, "export sessions");
    if (range.length > 0) where += `${where === "" ? "WHERE " : " AND "}${range.join(" AND ")}`;
    return (await this.#query(EXPORT_SESSIONS(where), params))
      .map(exactSessionRow) as unknown as SessionRowWithActivity[];
  }

  async *iterateExport(
    options: ExportOptions & OriginFilter = {},
  ): AsyncIterableIterator<SessionExportWithActivity> {
    const sessions = await this.#exportSessions(options ?? {});
    for (let at = 0; at < sessions.length;) {
      // A page of sessions holds about EXPORT_PAGE messages (at least one session), so memory
      // stays bounded however the messages are spread.
      let end = at + 1;
      let messages = Number(sessions[at].message_count ?? 0);
      while (
        end < sessions.length && messages + Number(sessions[end].message_count ?? 0) <= EXPORT_PAGE
      ) {
        messages += Number(sessions[end].message_count ?? 0);
        end++;
      }
      const listed = sessions.slice(at, end);
      at = end;
      // The page's rows read again with their messages, in one snapshot: the listing is older
      // (a row that did not count a message written since, or a session deleted since, which
      // is left out as the SQLite engine leaves it out).
      const ids = jsonParam(listed.map((s) => s.id));
      const { again, rows } = await this.#inSnapshot(async (query) => ({
        again: await query(EXPORT_SESSIONS_BY_IDS, [ids]),
        rows: await query(
          `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m
           WHERE m.session_id IN (SELECT json_array_elements_text($1::text::json))
           ORDER BY m.session_id, m.timestamp, m.id`,
          [ids],
        ),
      }));
      const byId = new Map(
        again.map((row) => exactSessionRow(row) as unknown as SessionRowWithActivity)
          .map((row) => [row.id, row]),
      );
      const page = listed.flatMap((s) => byId.get(s.id) ?? []);
      const bySession = new Map<string, MessageRow[]>();
      for (const row of rows) {
        const message = messageFromRow(exactMessageRow(row));
        let list = bySession.get(message.session_id);
        if (list === undefined) bySession.set(message.session_id, list = []);
        list.push(message);
      }
      for (const session of page) {
        // Resumed after close(), it rejects as every method then does (a closed SQLite store's).
        if (this.#closed) throw notOpenError();
        yield { ...session, messages: bySession.get(session.id) ?? [] };
      }
    }
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
    if ("id" in selection) {
      yield* this.#sessionPieces(selection.id, false, options);
      return;
    }
    for (const session of await this.#exportSessions(selection.filter ?? {})) {
      yield* this.#sessionPieces(session.id, true, options);
    }
  }

  /**
   * One session of an export in pieces, each of its reads in one snapshot
   * held while the pieces are consumed when `holdSnapshot` asks (a session
   * cleared and written again meanwhile came as its first chunks, the
   * others left out: a transcript the server never held).
   */
  async *#sessionPieces(
    id: string,
    listed: boolean,
    options: Required<ExportPiecesOptions>,
  ): AsyncGenerator<ExportPiece> {
    // Each read after close() rejects as every method then does (a closed SQLite store's).
    const whileOpen = (read: PgQuery): PgQuery => (text, params, settings) =>
      this.#closed ? Promise.reject(notOpenError()) : read(text, params, settings);
    if (!options.holdSnapshot) {
      yield* this.#sessionPiecesBy(whileOpen(this.#client.query), id, listed, options.chunk);
      return;
    }
    if (this.#closed) throw notOpenError();
    const held = await holdSnapshot(this.#client);
    let done = false;
    try {
      yield* this.#sessionPiecesBy(whileOpen(held.query), id, listed, options.chunk);
      done = true;
    } finally {
      // Stopped early or failed: the snapshot ends, and the error (if any) stands.
      if (done) await held.end();
      else await held.end().catch(() => {});
    }
  }

  /**
   * One session of an export in pieces: its row, then its messages `chunk`
   * at a time; nothing when it is gone. The row (with `last_active` when it
   * was `listed`) is read again with the list of its messages, in one
   * statement, so both are of one state, as the SQLite engine reads them:
   * the listing's row, read before a write the messages came after, said 2
   * messages where 3 followed, and a session deleted since the listing came
   * as its row without messages.
   */
  async *#sessionPiecesBy(
    query: PgQuery,
    id: string,
    listed: boolean,
    chunk: number,
  ): AsyncGenerator<ExportPiece> {
    const row = listed
      ? EXPORT_SESSIONS("WHERE s.id = $1")
      : `SELECT ${EXACT_SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`;
    const [found] = await query(
      `SELECT r.*, (SELECT json_agg(m.id::text ORDER BY m.timestamp, m.id) FROM messages m
         WHERE m.session_id = $1)::text AS hermes_message_ids
       FROM (${row}) r`,
      [id],
    );
    if (found === undefined) return;
    const { hermes_message_ids: listedIds, ...read } = found;
    const session = exactSessionRow(read) as unknown as SessionRow;
    const ids = JSON.parse(String(listedIds ?? "[]")) as string[];
    // Resumed after close(), it rejects as every method then does (a closed SQLite store's).
    if (this.#closed) throw notOpenError();
    yield { session };
    for (let at = 0; at < ids.length; at += chunk) {
      const rows = await query(
        `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m
         WHERE m.id IN (SELECT json_array_elements_text($1::text::json)::bigint)
         ORDER BY m.timestamp, m.id`,
        [jsonParam(ids.slice(at, at + chunk))],
      );
      const messages = rows.map((row) => messageFromRow(exactMessageRow(row)));
      if (messages.length > 0) yield { messages };
    }
  }

  /** Deletes the sessions `criteria` selects, orphaning their children; returns their ids. */
  async #deleteWhere(query: PgQuery, criteria: string, params: PgValue[]): Promise<string[]> {
    const ids = (await query(`SELECT id FROM sessions WHERE ${criteria} FOR UPDATE`, params))
      .map((row) => row.id as string);
    if (ids.length > 0) await deleteSessionRows(query, ids);
    return ids;
  }

  async deleteSession(id: string, options: SessionsDirOptions = {}): Promise<boolean> {
    checkKeyText("delete session", "id", id);
    // Read before the delete: options of null must not fail after it committed.
    const sessionsDir = options?.sessionsDir;
    checkOptionalText("delete session", "sessionsDir", sessionsDir);
    const ids = await this.#write((query) => this.#deleteWhere(query, "id = $1", [id]));
    if (ids.length > 0 && sessionsDir) removeTranscriptFiles(sessionsDir, ids);
    return ids.length > 0;
  }

  async pruneSessions(options: PruneOptions = {}): Promise<number> {
    options ??= {};
    checkOptionalText("prune sessions", "source", options.source);
    checkOptionalText("prune sessions", "sessionsDir", options.sessionsDir);
    const days = options.olderThanDays ?? 90;
    if (typeof days !== "number" || !Number.isFinite(days) || days < 0) {
      throw new RangeError(
        `Cannot prune sessions: olderThanDays must be a non-negative number: current value is ${
          describeValue(days)
        }`,
      );
    }
    const cutoff = this.#clock() - days * 86400;
    let criteria = "started_at < $1::double precision AND ended_at IS NOT NULL";
    const params: PgValue[] = [cutoff];
    if (options.source) {
      criteria += " AND source = $2";
      params.push(options.source);
    }
    const ids = await this.#write((query) => this.#deleteWhere(query, criteria, params));
    if (ids.length > 0 && options.sessionsDir) removeTranscriptFiles(options.sessionsDir, ids);
    return ids.length;
  }

  async pruneEmptyGhostSessions(options: SessionsDirOptions = {}): Promise<number> {
    options ??= {};
    checkOptionalText("prune ghost sessions", "sessionsDir", options.sessionsDir);
    const cutoff = this.#clock() - 86400;
    const ids = await this.#write((query) => this.#deleteWhere(query, GHOST_CRITERIA, [cutoff]));
    if (ids.length > 0 && options.sessionsDir) removeTranscriptFiles(options.sessionsDir, ids);
    return ids.length;
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
    await this.#query(
      "VACUUM (ANALYZE) sessions, messages, message_words, state_meta, sync_origins, sync_sessions",
    );
  }

  async maybeAutoPruneAndVacuum(options: AutoPruneOptions = {}): Promise<AutoPruneResult> {
    // A closed store rejects, as every method then does (not a result with an error).
    if (this.#closed) throw notOpenError();
    options ??= {};
    const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
    try {
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
    return await this.#query(
      `SELECT model, COUNT(*) AS session_count, SUM(input_tokens) AS total_input,
         SUM(output_tokens) AS total_output, SUM(estimated_cost_usd) AS total_cost
       FROM sessions WHERE model IS NOT NULL
       GROUP BY model
       ORDER BY total_cost DESC NULLS LAST, model COLLATE "C"`,
    ) as unknown as ModelUsage[];
  }

  async topSessionsByTokens(limit = 10): Promise<SessionTokens[]> {
    checkCount("rank sessions", "limit", limit);
    return await this.#query(
      `SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
       FROM sessions ORDER BY total_tokens DESC NULLS LAST, id COLLATE "C" LIMIT $1`,
      [limit],
    ) as unknown as SessionTokens[];
  }

  async usageBySource(): Promise<SourceUsage[]> {
    const rows = await this.#query(
      `SELECT s.source AS source, COUNT(*) AS session_count,
         COALESCE(SUM(m.n), 0) AS message_count, ${SOURCE_TOTALS},
         SUM(s.estimated_cost_usd) AS estimated_cost,
         SUM(s.actual_cost_usd) AS actual_cost
       FROM sessions s
       LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id) m
         ON m.session_id = s.id
       GROUP BY s.source
       ORDER BY session_count DESC, s.source COLLATE "C"`,
    );
    return rows.map(toSourceUsage);
  }

  async usageReport(options: UsageReportOptions & OriginFilter = {}): Promise<UsageRow[]> {
    options ??= {};
    const checked = checkUsageOptions(options);
    checkOptionalText("report usage", "origin", options.origin);
    const { by, since, until, source, timeZone } = checked;
    const clauses: string[] = [];
    const params: PgValue[] = [];
    if (since !== null) {
      params.push(since);
      clauses.push(`started_at >= $${params.length}`);
    }
    if (until !== null) {
      params.push(until);
      clauses.push(`started_at < $${params.length}`);
    }
    if (source !== null) {
      params.push(source);
      clauses.push(`source = $${params.length}`);
    }
    if (options.origin) {
      params.push(options.origin);
      clauses.push(
        `id IN (SELECT so.session_id FROM sync_sessions so WHERE so.origin = $${params.length})`,
      );
    }
    const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
    let time = "started_at";
    const rangeSql = startRangeSql(checked, where);
    if (rangeSql !== undefined) {
      // Two statements, not one snapshot: as on a file (lib/sqlite/usage_report.ts).
      const [range] = await this.#query(rangeSql, params);
      time = localTimeSql(timeZone, range?.first, range?.last, (seconds) => {
        params.push(seconds);
        return `$${params.length}::bigint`;
      });
    }
    const rows = await this.#query(
      `SELECT key, sessions, ${USAGE_NAMES}
       FROM (
         SELECT ${USAGE_KEYS[by](time)} AS key, COUNT(*) AS sessions, ${USAGE_SUMS}
         FROM sessions ${where}
         GROUP BY 1
       ) AS grouped
       ORDER BY ${USAGE_ORDER[by]}`,
      params,
    );
    return rows.map(toUsageRow);
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

  async inspect(_options: InspectOptions | null = {}): Promise<DatabaseInfo> {
    const [version] = await this.#query("SELECT version FROM schema_version LIMIT 1");
    const [server] = await this.#query(
      `SELECT current_setting('server_version') AS v, current_setting('block_size') AS bs,
         (SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
          WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r') AS bytes`,
    );
    const meta = await this.#query('SELECT key FROM state_meta ORDER BY key COLLATE "C"');
    const pageSize = Number(server.bs);
    return {
      path: this.target,
      schemaVersion: version === undefined ? null : Number(version.version),
      sqliteVersion: `PostgreSQL ${server.v}`,
      sqliteWarning: null,
      journalMode: "postgresql",
      walBytes: 0,
      staleFtsTables: [],
      pageSize,
      pageCount: Math.ceil(Number(server.bytes) / pageSize),
      freePages: 0,
      sessions: await this.sessionCount(),
      messages: await this.messageCount(),
      ftsTables: ["message_words.search_words", "messages.search_grams"],
      metaKeys: meta.map((row) => String(row.key)),
      integrity: null,
      searchIndexesChecked: false,
      knownIssues: [],
      damage: [],
    };
  }

  async pruneCandidates(options: PruneCandidatesOptions = {}): Promise<PruneCandidate[]> {
    options ??= {};
    const days = checkPruneCandidatesOptions(options);
    const columns = "id, source, title, started_at, ended_at, end_reason, message_count";
    const order = `ORDER BY started_at, id COLLATE "C"`;
    if (options.ghosts) {
      const rows = await this.#query(
        `SELECT ${columns} FROM sessions WHERE ${GHOST_CRITERIA} ${order}`,
        [this.#clock() - 86400],
      );
      return rows.map(toPruneCandidate);
    }
    const cutoff = this.#clock() - days * 86400;
    const bySource = options.source ? " AND source = $2" : "";
    const params: PgValue[] = options.source ? [cutoff, options.source] : [cutoff];
    const rows = await this.#query(
      `SELECT ${columns}
       FROM sessions WHERE started_at < $1::double precision AND ended_at IS NOT NULL${bySource}
       ${order}`,
      params,
    );
    return rows.map(toPruneCandidate);
  }

  // -- import --------------------------------------------------------------

  importSession(record: unknown, options: ImportOptions = {}): Promise<ImportResult> {
    return importSessionPg((fn) => this.#write(fn), record, options);
  }

  async restoreParentLinks(links: readonly ParentLink[]): Promise<number> {
    checkParentLinks(links);
    // A read-only store refuses every write, an empty list too (as `appendMessages([])` does).
    this.#checkWritable();
    return await restoreParentLinksPg((fn) => this.#write(fn), links);
  }
}
