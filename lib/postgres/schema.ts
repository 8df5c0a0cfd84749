/**
 * The PostgreSQL schema: the v11 tables, columns and indexes of SPEC.md with
 * matching types (REAL → double precision, INTEGER → bigint, the counters
 * SQLite may fill with a REAL → numeric, message ids from a sequence), in
 * their own schema (`hermes` by default), plus the search columns: a vector
 * of substring grams (the characters and pairs of CJK, Thai, Lao, Myanmar
 * and Khmer) on `messages`, and a `simple` word vector in the narrow
 * `message_words` table (one row per message), both GIN indexed.
 * Migrations are an append-only list, run under an advisory lock of their
 * schema so many processes can start at once (stores in other schemas of the
 * database do not wait); each runs in one transaction, with the rows
 * a step must write again computed here (a backfill) when SQL cannot. A
 * column older versions can ignore is no step: the code that uses it adds
 * it when missing ({@linkcode ensureAddedColumns}), so an older writer
 * still finds every step it knows and none newer.
 *
 * No `pg_trgm` index: on this corpus a GIN trigram index over the searchable
 * text cost more to maintain than both search vectors together (3.7 s to
 * build for 10,000 messages against 1.2 s; 16 s for 200,000, whose whole sync
 * took 27 s), and every substring it could
 * answer is either of those scripts (the grams answer it, of any length,
 * which `pg_trgm` cannot below three characters) or a rare other substring
 * in such a query or an emoji one, which a scan answers.
 *
 * @module
 */
import { OpenError } from "../core/errors.ts";
import type { PgClient, PgQuery, PgValue } from "./_client_types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { COUNTER_COLUMNS } from "./_rows.ts";
import { UNSPACED_CLASS } from "../core/search/cjk.ts";
import { documentOf, gramsVector, searchDocument, wordsVector } from "./text_search.ts";
import { jsonParam } from "./_text_codec.ts";
import { sqlState } from "./_pg_errors.ts";

/** The schema version the SQLite file format has; PostgreSQL records the same number. */
export const SCHEMA_VERSION = 11;

/** One step of the PostgreSQL schema. */
interface PgMigration {
  /** Sequence number (recorded in `hermes_migrations`). */
  readonly step: number;
  /** What it does. */
  readonly name: string;
  /** The statements. */
  readonly sql: readonly string[];
  /** Rows to write again after the statements, in the same transaction, with values computed here. */
  readonly backfill?: (query: PgQuery) => Promise<void>;
}

// A recorded step is for a change an older writer would get wrong (a column it would have to fill,
// a table it no longer writes to): an older hermes-state refuses to write to a schema with a step
// it does not know. A change older versions can ignore (a new column with a default, that only new
// code reads and writes) is not a step: it goes in ADDED_COLUMNS, ensured by the code that uses it
// (`ensureAddedColumns`), so the first host upgraded does not lock the others out of the server.
const MIGRATIONS: readonly PgMigration[] = [
  {
    step: 1,
    name: "v11 tables",
    sql: [
      `CREATE TABLE IF NOT EXISTS schema_version (version bigint NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS sessions (
        id text PRIMARY KEY,
        source text NOT NULL,
        user_id text,
        model text,
        model_config text,
        system_prompt text,
        parent_session_id text REFERENCES sessions(id),
        started_at double precision NOT NULL,
        ended_at double precision,
        end_reason text,
        message_count bigint DEFAULT 0,
        tool_call_count bigint DEFAULT 0,
        input_tokens bigint DEFAULT 0,
        output_tokens bigint DEFAULT 0,
        cache_read_tokens bigint DEFAULT 0,
        cache_write_tokens bigint DEFAULT 0,
        reasoning_tokens bigint DEFAULT 0,
        billing_provider text,
        billing_base_url text,
        billing_mode text,
        estimated_cost_usd double precision,
        actual_cost_usd double precision,
        cost_status text,
        cost_source text,
        pricing_version text,
        title text,
        api_call_count bigint DEFAULT 0
      )`,
      `CREATE TABLE IF NOT EXISTS messages (
        id bigserial PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions(id),
        role text NOT NULL,
        content text,
        tool_call_id text,
        tool_calls text,
        tool_name text,
        timestamp double precision NOT NULL,
        token_count bigint,
        finish_reason text,
        reasoning text,
        reasoning_content text,
        reasoning_details text,
        codex_reasoning_items text,
        codex_message_items text,
        search_words tsvector NOT NULL DEFAULT ''::tsvector,
        search_grams tsvector NOT NULL DEFAULT ''::tsvector
      )`,
      `CREATE TABLE IF NOT EXISTS state_meta (key text PRIMARY KEY, value text)`,
      `CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)`,
      `CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)`,
      `CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)`,
      `CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp)`,
      `CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title)
        WHERE title IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS idx_messages_search_words ON messages USING gin (search_words)`,
      `CREATE INDEX IF NOT EXISTS idx_messages_search_grams ON messages USING gin (search_grams)`,
      `INSERT INTO schema_version (version)
        SELECT ${SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM schema_version)`,
    ],
  },
  {
    step: 2,
    name: "sync origins",
    sql: [
      // Each state.db shipped here by `hermes-state sync` (its sessions are `<origin>/<id>`).
      `CREATE TABLE IF NOT EXISTS sync_origins (
        origin text PRIMARY KEY,
        host text NOT NULL,
        path text NOT NULL,
        last_pass_at double precision,
        UNIQUE (host, path)
      )`,
      // Per synced session: where it came from and what of it the server holds.
      `CREATE TABLE IF NOT EXISTS sync_sessions (
        session_id text PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        origin text NOT NULL REFERENCES sync_origins(origin),
        source_id text NOT NULL,
        source_parent text,
        row_digest text NOT NULL,
        message_count bigint NOT NULL,
        max_message_id bigint NOT NULL,
        UNIQUE (origin, source_id)
      )`,
    ],
  },
  {
    step: 3,
    name: "counters as numeric",
    // SQLite's type affinity lets an INTEGER column hold a REAL (an older Hermes wrote
    // fractional token counts): numeric keeps such a value exactly, and every integer too.
    sql: [
      `ALTER TABLE messages ALTER COLUMN token_count TYPE numeric`,
      `ALTER TABLE sessions ${
        COUNTER_COLUMNS.map((c) => `ALTER COLUMN ${c} TYPE numeric`).join(", ")
      }`,
    ],
  },
  {
    step: 4,
    name: "messages newest first",
    // The order of substring and short-CJK hits: a frequent term's newest 20 matches are
    // read from the top of this index instead of sorting every match (148 → 2 ms for a
    // 2-character CJK query on 200,000 messages).
    sql: [`CREATE INDEX IF NOT EXISTS idx_messages_newest ON messages (timestamp DESC, id)`],
  },
  {
    step: 5,
    name: "word vectors in a narrow table",
    // Ranking a frequent word reads the vector of every match: from rows of ~800 bytes
    // instead of the messages' (content, tool calls, reasoning, both vectors), the vector
    // kept in the row (storage MAIN) rather than moved out to TOAST. The message's session, role and timestamp come
    // along, so every search filter and time order is answered here; none of them change
    // once written. No foreign key (1.6 s of a 200,000-message sync): every delete of
    // messages deletes their rows here in the same statement (`deleteMessagesSql`).
    sql: [
      // First, so no message is written between the copy below and the end of the step (it
      // would have no word row); readers and writers wait for the step (5 s at 200,000).
      `LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`,
      `CREATE TABLE message_words (
        id bigint PRIMARY KEY,
        session_id text NOT NULL,
        role text,
        timestamp double precision,
        search_words tsvector NOT NULL
      )`,
      `ALTER TABLE message_words ALTER COLUMN search_words SET STORAGE MAIN`,
      `INSERT INTO message_words (id, session_id, role, timestamp, search_words)
        SELECT id, session_id, role, timestamp, search_words FROM messages`,
      `CREATE INDEX idx_message_words_search ON message_words USING gin (search_words)`,
      `DROP INDEX idx_messages_search_words`,
      `ALTER TABLE messages DROP COLUMN search_words`,
    ],
  },
  {
    step: 6,
    name: "columns of a newer Hermes",
    // What a newer Hermes's file holds beyond v11 (`sessions.archived`, `messages.active`,
    // `compacted`, `display_kind`…), kept whole (`_extra.ts`); `search_hidden` is what its
    // search leaves out, in both tables a search reads; `extra_digest` lets `sync` see rows
    // a rewind or a compaction changed in place. None of these rewrites a table.
    sql: [
      `ALTER TABLE sessions ADD COLUMN extra_columns jsonb`,
      `ALTER TABLE messages ADD COLUMN extra_columns jsonb`,
      `ALTER TABLE messages ADD COLUMN search_hidden boolean NOT NULL DEFAULT false`,
      `ALTER TABLE message_words ADD COLUMN search_hidden boolean NOT NULL DEFAULT false`,
      `ALTER TABLE sync_sessions ADD COLUMN extra_digest text`,
    ],
  },
  {
    step: 7,
    name: "grams of Thai, Lao, Myanmar and Khmer",
    // These scripts, written without spaces, are searched by substring as CJK is; without
    // grams of their own such a query read every message (76–172 ms at 200,000). A row that
    // holds none of their characters has the grams it had: only the others are written again.
    sql: [],
    backfill: writeUnspacedGrams,
  },
  {
    step: 8,
    name: "sync message digests and pass tokens",
    // A digest of each synced session's message ids and times (`sync.ts`, `MESSAGE_DIGEST_SQL`),
    // beside their count and highest id, which miss a transcript rewritten to the same two. NULL
    // is "not recorded yet": a pass records it for an unchanged session without shipping it.
    // And a token per origin that each pass takes anew and each of its transactions checks
    // (`sync_origin.ts`, `startPass`): a pass that lost its advisory lock stops writing.
    sql: [
      `ALTER TABLE sync_sessions ADD COLUMN message_digest bigint`,
      `ALTER TABLE sync_origins ADD COLUMN pass_token bigint NOT NULL DEFAULT 0`,
    ],
  },
  {
    step: 9,
    name: "sync goal digests",
    // A digest of each synced session's per-session `state_meta` keys (its goal, carried as
    // `goal:<origin>/<id>`; `_sync_meta.ts`). NULL is "none": a session without a goal keeps
    // the record an earlier release wrote, and one with a goal has it shipped by the next pass.
    sql: [`ALTER TABLE sync_sessions ADD COLUMN meta_digest text`],
  },
  {
    step: 10,
    name: "sync digests of visibility columns",
    // A digest of each synced session's messages' `active`, `compacted` and `display_kind`
    // (`_sync_shown.ts`), read on every pass of a newer Hermes's file: that Hermes changes them
    // in place, the session's row and message count unchanged. NULL is "not recorded": the next
    // pass checks the rows the server holds against the file, and records it.
    sql: [`ALTER TABLE sync_sessions ADD COLUMN shown_digest text`],
  },
  {
    step: 11,
    name: "words folded as SQLite folds them",
    // Words are folded and split by SQLite's own tables now (measured: `_unicode61_data.ts`),
    // where they were JavaScript's: `ΚΩΔΙΚΟΣ` was `κωδικος` (FTS5 has `κωδικοσ`), `µs` kept its
    // micro sign, `⁨Alice⁩` was `alice`. Only a message with a character outside ASCII can have
    // another vector; of those, only the vectors that changed are written again. A step: an
    // older writer would go on writing the old words beside the new.
    sql: [],
    backfill: writeFoldedWords,
  },
];

/** The store's tables that deletes leave dead rows in: what `vacuum` and `doctor --fix` vacuum. */
const VACUUMED_TABLES: readonly string[] = [
  "sessions",
  "messages",
  "message_words",
  "state_meta",
  "sync_origins",
  "sync_sessions",
];

/**
 * The statement that vacuums (and analyzes) the store's tables: the
 * migrations' and those of {@linkcode ADDED_TABLES} the schema has.
 *
 * @param query The store's query, its `search_path` the schema.
 * @returns `VACUUM (ANALYZE) sessions, messages, …`.
 */
export async function vacuumSql(query: PgQuery): Promise<string> {
  const added = await query(
    `SELECT name FROM json_array_elements_text($1::text::json) AS t(name)
     WHERE to_regclass(quote_ident(name)) IS NOT NULL`,
    [jsonParam(ADDED_TABLES.map((added) => added.table))],
  );
  const tables = [...VACUUMED_TABLES, ...added.map((row) => String(row.name))];
  return `VACUUM (ANALYZE) ${tables.join(", ")}`;
}

/** A column older hermes-state versions ignore: added when missing, not by a recorded step. */
interface AddedColumn {
  /** Its table. */
  readonly table: string;
  /** Its name. */
  readonly column: string;
  /** Its type and default (which every row an older version writes takes). */
  readonly definition: string;
}

const ADDED_COLUMNS: readonly AddedColumn[] = [
  // Per origin, the file ids of the sessions its passes deleted because the file no longer held
  // them, newest first, the last 10,000 (`_sync_departed.ts`): a pass that would bring one back
  // while deleting others, or delete one again, is two files shipping as one origin (a cloned
  // machine), refused. A column, not a table: nothing more for `vacuum` or `copy` to carry. Only
  // `sync` reads it; an older `sync` leaves it as it is, and inserts origins with `{}`.
  { table: "sync_origins", column: "departed", definition: "text[] NOT NULL DEFAULT '{}'" },
];

/** A table older hermes-state versions ignore: made when missing, not by a recorded step. */
interface AddedTable {
  /** Its name. */
  readonly table: string;
  /** Its columns and constraints, in the schema named by `schema` (quoted). */
  readonly definition: (schema: string) => string;
}

const ADDED_TABLES: readonly AddedTable[] = [
  // A newer Hermes's per-model usage (its schema 22: `task` in the key), which `sync` carries with
  // each session (`_sync_model_usage.ts`) and the usage report reads (`../core/usage_by_model.ts`):
  // a session that switched models splits between them. Rows go with their session (the foreign
  // key), whatever version deletes it; an older `sync` leaves them as they are, and a newer one
  // sees by its row digest that they are not the file's and ships them.
  {
    table: "session_model_usage",
    definition: (schema) =>
      `(
      session_id text NOT NULL REFERENCES ${schema}.sessions(id) ON DELETE CASCADE,
      model text NOT NULL DEFAULT '',
      billing_provider text NOT NULL DEFAULT '',
      billing_base_url text NOT NULL DEFAULT '',
      billing_mode text NOT NULL DEFAULT '',
      task text NOT NULL DEFAULT '',
      api_call_count bigint NOT NULL DEFAULT 0,
      input_tokens bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0,
      cache_read_tokens bigint NOT NULL DEFAULT 0,
      cache_write_tokens bigint NOT NULL DEFAULT 0,
      reasoning_tokens bigint NOT NULL DEFAULT 0,
      estimated_cost_usd double precision NOT NULL DEFAULT 0,
      actual_cost_usd double precision NOT NULL DEFAULT 0,
      cost_status text,
      cost_source text,
      first_seen double precision,
      last_seen double precision,
      PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
    )`,
  },
];

/** Messages read per round trip by {@linkcode rewriteVectors}. */
const BACKFILL_PAGE = 1_000;

/** A vector a backfill writes again: where it is kept, and how a write computes it. */
interface BackfilledVector {
  /** The table and its alias (`messages m`). */
  readonly table: string;
  /** The column. */
  readonly column: string;
  /** The vector of a message's searchable text, as a write makes it. */
  readonly vectorOf: (document: string) => string;
}

/**
 * Computes `vector` again for every message `condition` selects (SQL over
 * `content`, `tool_name`, `tool_calls`, its parameters from `$2`), as a
 * write computes it, and stores those that changed, a page at a time.
 */
async function rewriteVectors(
  query: PgQuery,
  condition: string,
  params: readonly PgValue[],
  vector: BackfilledVector,
): Promise<void> {
  const alias = vector.table.split(" ")[1];
  // The id's digits, never a number: past 2^53 one rounds down, and the same page came back forever.
  let after = "0";
  for (;;) {
    const rows = await query(
      `SELECT id::text AS id_text, content, tool_name, tool_calls FROM messages
       WHERE id > $1::bigint AND (${condition}) ORDER BY id LIMIT ${BACKFILL_PAGE}`,
      [after, ...params],
    );
    if (rows.length === 0) return;
    after = String(rows[rows.length - 1].id_text);
    const vectors = rows.map((row) => ({
      id: String(row.id_text),
      vector: vector.vectorOf(
        searchDocument(
          row.content as string | null,
          row.tool_name as string | null,
          row.tool_calls as string | null,
        ),
      ),
    }));
    await query(
      `UPDATE ${vector.table} SET ${vector.column} = v.vector::tsvector
       FROM jsonb_to_recordset($1::text::jsonb) AS v(id bigint, vector text)
       WHERE ${alias}.id = v.id AND ${alias}.${vector.column} <> v.vector::tsvector`,
      [jsonParam(vectors)],
    );
  }
}

/**
 * Computes the grams of every message holding a character of Thai, Lao,
 * Myanmar or Khmer again, as a write computes them (`gramsVector`), and
 * stores those that changed: migration 7's rows.
 */
async function writeUnspacedGrams(query: PgQuery): Promise<void> {
  await rewriteVectors(
    query,
    "content ~ $2 OR tool_name ~ $2 OR tool_calls ~ $2",
    [UNSPACED_CLASS],
    { table: "messages m", column: "search_grams", vectorOf: gramsVector },
  );
}

/**
 * Computes the words of every message holding a character outside ASCII
 * again, as a write computes them (`wordsVector`), and stores those that
 * changed: migration 11's rows.
 */
async function writeFoldedWords(query: PgQuery): Promise<void> {
  // In UTF-8, a text holds a character outside ASCII when it has more bytes than characters.
  await rewriteVectors(
    query,
    `octet_length(content) <> char_length(content)
      OR octet_length(tool_name) <> char_length(tool_name)
      OR octet_length(tool_calls) <> char_length(tool_calls)`,
    [],
    { table: "message_words w", column: "search_words", vectorOf: wordsVector },
  );
}

/** The last migration this version knows: what its statements read and write. */
export const LAST_STEP: number = Math.max(...MIGRATIONS.map((migration) => migration.step));

/** An index the migrations create, beside those of the tables' keys and unique constraints. */
export interface ExpectedIndex {
  /** Its name. */
  readonly name: string;
  /** The statement that creates it without blocking writes (`CREATE INDEX CONCURRENTLY IF NOT EXISTS`). */
  readonly createSql: string;
}

const CREATE_INDEX = /^CREATE (UNIQUE )?INDEX (?:IF NOT EXISTS )?(\w+) ON (\w+)([\s\S]*)$/;
const DROP_INDEX = /^DROP INDEX (?:IF EXISTS )?(\w+)$/;

/**
 * The indexes the last migration leaves, read off the migrations' own
 * statements (an index a later step drops is not among them): what
 * `doctor` expects to find, and how it creates one that is missing.
 *
 * @returns The indexes, by name.
 */
export function expectedIndexes(): Map<string, ExpectedIndex> {
  const found = new Map<string, ExpectedIndex>();
  for (const statement of MIGRATIONS.flatMap((migration) => migration.sql)) {
    const created = CREATE_INDEX.exec(statement);
    if (created !== null) {
      const [, unique = "", name, table, rest] = created;
      const createSql =
        `CREATE ${unique}INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${table}${rest}`;
      found.set(name, { name, createSql });
    }
    const dropped = DROP_INDEX.exec(statement);
    if (dropped !== null) found.delete(dropped[1]);
  }
  return found;
}

/** The searchable columns of a message (alias `m`), in the order the search document joins them. */
export const SEARCH_COLUMNS_SQL: readonly string[] = ["m.content", "m.tool_name", "m.tool_calls"];

/**
 * The text the search indexes see, as SQLite's FTS triggers build it:
 * `content ‖ ' ' ‖ tool_name ‖ ' ' ‖ tool_calls`.
 */
export const SEARCH_DOCUMENT_SQL: string = documentOf(SEARCH_COLUMNS_SQL);

/**
 * Advisory lock key every migration once took, whatever its schema ("hermes"
 * in ASCII). Now taken shared: stores in other schemas no longer wait for
 * each other, and an older hermes-state, which takes it whole, still waits
 * for (and is waited for by) this one.
 */
const MIGRATION_LOCK = 0x6865726d6573;

/** The advisory lock key of the migrations of one schema (`$1` is its name). */
const SCHEMA_MIGRATION_LOCK = "hashtextextended('hermes-state migrate ' || $1, 0)";

/**
 * The last migration recorded in `schema`, or `null` when it holds no
 * hermes-state tables (or does not exist). Changes nothing.
 *
 * @param query Runs a statement.
 * @param schema The schema name.
 * @returns The step, or `null`.
 */
export async function migrationStep(query: PgQuery, schema: string): Promise<number | null> {
  const table = `${quoteIdentifier(schema)}.hermes_migrations`;
  const [found] = await query("SELECT to_regclass($1) IS NOT NULL AS present", [table]);
  if (!found?.present) return null;
  const [row] = await query(`SELECT max(step) AS step FROM ${table}`);
  return row?.step == null ? null : Number(row.step);
}

/**
 * Refuses to make a store in a database not encoded in UTF8: a `LATIN1` one
 * cannot hold most scripts (migration 7 already fails on the Thai of its
 * pattern), and a `SQL_ASCII` one stores any bytes but can neither convert
 * them for the search of a non-ASCII term nor fold their case. A store an
 * older version made there is left to work as it did (and to be copied out).
 */
async function checkNewStoreEncoding(client: PgClient): Promise<void> {
  const [row] = await client.query(
    "SELECT current_setting('server_encoding') AS encoding, current_database() AS db",
  );
  if (row?.encoding === "UTF8") return;
  const database = JSON.stringify(row?.db);
  throw new OpenError(
    client.display,
    `database ${database} is encoded in ${row?.encoding}, and hermes-state needs a UTF8 database for text of every script: create one with CREATE DATABASE name ENCODING 'UTF8' TEMPLATE template0`,
    { kind: "other" },
  );
}

/**
 * Creates the schema and runs every migration not yet recorded, under an
 * advisory lock of the schema (concurrent openers of it wait, then find
 * nothing left to do; stores in other schemas of the database do not wait).
 *
 * @param client The pool.
 * @param schema The schema name.
 * @param through The last step to run (tests build an older schema with it). @default {every step}
 * @returns The last step recorded before this call, as read under the lock
 *   when it ran migrations (another opener may have run them meanwhile);
 *   `null` for a schema that held no store.
 * @throws {OpenError} When a newer hermes-state has run migrations this one does not know,
 *   or the schema holds no store and the database is not encoded in UTF8.
 */
export async function migratePg(
  client: PgClient,
  schema: string,
  through = Infinity,
): Promise<number | null> {
  // Up to date (as nearly every open finds it): no lock to wait for, and nothing written, so a
  // server that takes no writes (a standby) fails the first write, not the open.
  const step = await migrationStep(client.query, schema);
  if (step !== null && step >= Math.min(through, LAST_STEP) && step <= LAST_STEP) return step;
  if (step === null) await checkNewStoreEncoding(client);
  return await client.transaction(async (query) => {
    await takeMigrationLock(query, schema);
    // Only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE right on the database even
    // for a schema that exists, which a role given a schema of its own does not have.
    const exists = await query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.length === 0) {
      try {
        await query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
      } catch (error) {
        // Read from the server's error (the query's is a StorageError with it as its cause).
        const cause = (error as Error).cause ?? error;
        if (sqlState(cause) !== "42501") throw error;
        throw new OpenError(
          client.display,
          `the role may not create schema ${quoteIdentifier(schema)} (${
            (cause as Error).message
          }): have a role that may run CREATE SCHEMA ${
            quoteIdentifier(schema)
          } AUTHORIZATION <this role>, or grant this role CREATE on the database`,
          { kind: "other", cause: error },
        );
      }
    }
    await query(`SET LOCAL search_path TO ${quoteIdentifier(schema)}`);
    await query(`CREATE TABLE IF NOT EXISTS hermes_migrations (
      step integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await query("SELECT step FROM hermes_migrations")).map((row) => Number(row.step)),
    );
    const newer = Math.max(0, ...done);
    const found = done.size === 0 ? null : newer;
    if (newer > LAST_STEP) {
      // Its tables may have moved on (as step 5 moved the word vectors): writing with this
      // version's statements could fail halfway or leave rows a newer reader does not index.
      throw new OpenError(
        client.display,
        `the schema was upgraded by a newer hermes-state (migration ${newer}; this one knows up to ${LAST_STEP}): upgrade hermes-state, or open it read-only`,
        { kind: "other" },
      );
    }
    for (const migration of MIGRATIONS) {
      if (done.has(migration.step) || migration.step > through) continue;
      for (const statement of migration.sql) await query(statement);
      await migration.backfill?.(query);
      await query("INSERT INTO hermes_migrations (step, name) VALUES ($1, $2)", [
        migration.step,
        migration.name,
      ]);
    }
    // A new or upgraded store has them from the start (an older schema, built for a test, not).
    if (through >= LAST_STEP) await addMissingColumns(query, schema, client.display);
    return found;
  });
}

/**
 * Takes the advisory locks of the migrations of `schema`, as the first
 * statements of a transaction: openers of the schema take turns.
 */
async function takeMigrationLock(query: PgQuery, schema: string): Promise<void> {
  // Whatever the server's default_transaction_isolation: under repeatable read or serializable
  // the snapshot is taken before the lock is waited for, and an opener that waited would see
  // none of the steps the holder committed, and run them again (a column "does not exist").
  await query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
  // The wait for another opener's migration ends with it, not at the server's lock_timeout or
  // statement_timeout (the steps themselves keep both).
  await query("SET LOCAL lock_timeout = 0");
  await query("SET LOCAL statement_timeout = 0");
  // Per schema: two stores side by side in one database migrate at once, while openers of the
  // same schema take turns. Shared on the old database-wide key, for an older hermes-state.
  await query(`SELECT pg_advisory_xact_lock_shared(${MIGRATION_LOCK})`);
  await query(`SELECT pg_advisory_xact_lock(${SCHEMA_MIGRATION_LOCK})`, [schema]);
  await query("SET LOCAL lock_timeout TO DEFAULT");
  await query("SET LOCAL statement_timeout TO DEFAULT");
}

/** The {@linkcode ADDED_COLUMNS} `schema` lacks, read from the catalog (no table lock). */
async function missingColumns(query: PgQuery, schema: string): Promise<AddedColumn[]> {
  const rows = await query(
    `SELECT c.relname || '.' || a.attname AS name
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
       AND a.attnum > 0 AND NOT a.attisdropped
       AND c.relname || '.' || a.attname IN (SELECT json_array_elements_text($2::text::json))`,
    [schema, jsonParam(ADDED_COLUMNS.map(({ table, column }) => `${table}.${column}`))],
  );
  const present = new Set(rows.map((row) => String(row.name)));
  return ADDED_COLUMNS.filter(({ table, column }) => !present.has(`${table}.${column}`));
}

/** The {@linkcode ADDED_TABLES} `schema` lacks, read from the catalog (no lock). */
async function missingTables(query: PgQuery, schema: string): Promise<AddedTable[]> {
  const rows = await query(
    `SELECT c.relname AS name FROM pg_class c
     WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
       AND c.relname IN (SELECT json_array_elements_text($2::text::json))`,
    [schema, jsonParam(ADDED_TABLES.map(({ table }) => table))],
  );
  const present = new Set(rows.map((row) => String(row.name)));
  return ADDED_TABLES.filter(({ table }) => !present.has(table));
}

/** Makes the {@linkcode ADDED_TABLES} `schema` lacks; under the migrations' lock. */
async function addMissingTables(
  query: PgQuery,
  schema: string,
  shown: string,
): Promise<string[]> {
  const missing = await missingTables(query, schema);
  for (const { table, definition } of missing) {
    try {
      await query(
        `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(schema)}.${quoteIdentifier(table)} ${
          definition(quoteIdentifier(schema))
        }`,
      );
    } catch (error) {
      const cause = (error as Error).cause ?? error;
      if (sqlState(cause) !== "42501") throw error;
      throw new OpenError(
        shown,
        `the role may not make the table ${table} this version uses (${
          (cause as Error).message
        }): the schema's owner makes it by running "hermes-state --db URL migrate" once`,
        { kind: "other", cause: error },
      );
    }
  }
  return missing.map(({ table }) => table);
}

/** Adds the {@linkcode ADDED_COLUMNS} `schema` lacks; under the migrations' lock. */
async function addMissingColumns(
  query: PgQuery,
  schema: string,
  shown: string,
): Promise<string[]> {
  const missing = await missingColumns(query, schema);
  for (const { table, column, definition } of missing) {
    try {
      await query(
        `ALTER TABLE ${quoteIdentifier(schema)}.${quoteIdentifier(table)}
         ADD COLUMN IF NOT EXISTS ${quoteIdentifier(column)} ${definition}`,
      );
    } catch (error) {
      // Read from the server's error (the query's is a StorageError with it as its cause).
      const cause = (error as Error).cause ?? error;
      if (sqlState(cause) !== "42501") throw error;
      throw new OpenError(
        shown,
        `the role may not add the column ${table}.${column} this version uses (${
          (cause as Error).message
        }): the table's owner adds it by running "hermes-state --db URL migrate" once`,
        { kind: "other", cause: error },
      );
    }
  }
  return missing.map(({ table, column }) => `${table}.${column}`);
}

/**
 * Adds the columns and tables this version's code uses and an older
 * hermes-state ignores, when missing: a column with a default that an
 * older writer leaves as it is, a table whose rows go with their session
 * whatever version deletes it; neither is therefore a recorded step (an
 * older version refuses to write to a schema with a step it does not
 * know). Read from the catalog first: when everything is there, as nearly
 * every call finds, nothing is locked or written (`ADD COLUMN IF NOT
 * EXISTS` takes the table's ACCESS EXCLUSIVE lock even then); otherwise
 * added under the migrations' advisory lock, so that many processes
 * starting at once take turns and the later ones find them there.
 *
 * @param client The pool, its schema migrated ({@linkcode migratePg}).
 * @param schema The schema name.
 * @returns What was added: columns as `table.column`, tables by name (none when all were there).
 * @throws {OpenError} When the role may not add them (naming what, and who can).
 */
export async function ensureAdditions(client: PgClient, schema: string): Promise<string[]> {
  const columns = await missingColumns(client.query, schema);
  const tables = await missingTables(client.query, schema);
  if (columns.length === 0 && tables.length === 0) return [];
  return await client.transaction(async (query) => {
    await takeMigrationLock(query, schema);
    return [
      ...await addMissingColumns(query, schema, client.display),
      ...await addMissingTables(query, schema, client.display),
    ];
  });
}
