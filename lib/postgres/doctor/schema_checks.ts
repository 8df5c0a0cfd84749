/**
 * The PostgreSQL doctor's checks of the schema itself, with their repairs:
 *
 * - `schema`: every migration this version knows has run, and
 *   `schema_version` holds the one row of 11;
 * - `indexes`: each index the migrations create is there, and no index of
 *   the schema is invalid (what an interrupted `CREATE INDEX CONCURRENTLY`
 *   or `REINDEX CONCURRENTLY` leaves: writes still maintain it, no query
 *   uses it);
 * - `sequence`: the message id sequence is past the newest id (rows copied
 *   in with their ids by hand leave it behind, and every append then fails
 *   on a duplicate key).
 *
 * @module
 */
import type { PgQuery } from "../_client_types.ts";
import { quoteIdentifier } from "../../core/sql_identifier.ts";
import { expectedIndexes, LAST_STEP, SCHEMA_VERSION } from "../schema.ts";
import { finding, type HealthCheck } from "../../core/health_report.ts";

/**
 * The `schema` finding of a schema whose last migration is `step`.
 *
 * @param query Runs a statement.
 * @param step The last migration recorded.
 * @returns ok; a fixable problem when a migration or the version row is
 *   missing; a warning when a newer hermes-state upgraded the schema.
 */
export async function checkSchema(query: PgQuery, step: number): Promise<HealthCheck> {
  if (step > LAST_STEP) {
    return finding(
      "schema",
      "warning",
      `upgraded by a newer hermes-state (migration ${step}; this one knows up to ${LAST_STEP}): nothing else checked`,
      { fix: "run the doctor of the hermes-state that upgraded it" },
    );
  }
  if (step < LAST_STEP) {
    return finding(
      "schema",
      "problem",
      `at migration ${step} of ${LAST_STEP}: nothing else checked until it is upgraded`,
      { fix: "hermes-state doctor --fix (or hermes-state --db URL migrate)", fixable: true },
    );
  }
  const rows = await query("SELECT version FROM schema_version");
  const versions = rows.map((row) => Number(row.version));
  if (versions.length === 1 && versions[0] === SCHEMA_VERSION) {
    return finding("schema", "ok", `migration ${step}, schema version ${SCHEMA_VERSION}`);
  }
  return finding(
    "schema",
    "problem",
    `schema_version holds ${
      versions.length === 0 ? "no row" : versions.join(", ")
    } instead of the one row ${SCHEMA_VERSION}`,
    { fix: "hermes-state doctor --fix (writes the one row)", fixable: true },
  );
}

/** Writes the one `schema_version` row, in one transaction. */
export async function repairSchemaVersion(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
): Promise<string> {
  await transaction(async (query) => {
    await query("DELETE FROM schema_version");
    await query(`INSERT INTO schema_version (version) VALUES (${SCHEMA_VERSION})`);
  });
  return `schema_version holds ${SCHEMA_VERSION}`;
}

/** An index of the schema as the catalog has it. */
interface IndexState {
  readonly name: string;
  readonly valid: boolean;
}

/** What is wrong with the indexes. */
export interface IndexFaults {
  /** Expected indexes that are not there. */
  readonly missing: readonly string[];
  /** Invalid indexes to build again (`REINDEX CONCURRENTLY`). */
  readonly invalid: readonly string[];
  /** Invalid leftovers of an interrupted `REINDEX CONCURRENTLY` (`…_ccnew`, `…_ccold`), to drop. */
  readonly leftovers: readonly string[];
}

const LEFTOVER = /_cc(new|old)\d*$/;

/**
 * Finds missing and invalid indexes.
 *
 * @param query Runs a statement.
 * @param schema The schema.
 * @returns The faults.
 */
export async function indexFaults(query: PgQuery, schema: string): Promise<IndexFaults> {
  const rows = await query(
    `SELECT c.relname AS name, i.indisvalid AS valid
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)`,
    [schema],
  );
  const present: IndexState[] = rows.map((row) => ({
    name: String(row.name),
    valid: row.valid === true,
  }));
  const names = new Set(present.map((index) => index.name));
  const bad = present.filter((index) => !index.valid).map((index) => index.name).sort();
  return {
    missing: [...expectedIndexes().keys()].filter((name) => !names.has(name)).sort(),
    invalid: bad.filter((name) => !LEFTOVER.test(name)),
    leftovers: bad.filter((name) => LEFTOVER.test(name)),
  };
}

/**
 * The `indexes` finding.
 *
 * @param faults What {@linkcode indexFaults} found.
 * @returns ok, or a fixable problem naming the indexes.
 */
export function indexesFinding({ missing, invalid, leftovers }: IndexFaults): HealthCheck {
  if (missing.length + invalid.length + leftovers.length === 0) {
    return finding("indexes", "ok", `every index is there and valid`);
  }
  const parts = [
    missing.length > 0 ? `${missing.length} missing (their queries scan whole tables)` : "",
    invalid.length + leftovers.length > 0
      ? `${invalid.length + leftovers.length} invalid (an interrupted concurrent build: ` +
        "every write still updates them, no query uses them)"
      : "",
  ].filter((part) => part !== "");
  return finding("indexes", "problem", parts.join("; "), {
    fix: "hermes-state doctor --fix (builds them without blocking writes)",
    fixable: true,
    details: [
      ...missing.map((name) => `${name}: missing`),
      ...invalid.map((name) => `${name}: invalid (built again by REINDEX CONCURRENTLY)`),
      ...leftovers.map((name) => `${name}: invalid leftover of a REINDEX CONCURRENTLY (dropped)`),
    ],
  });
}

/**
 * Builds missing indexes and invalid ones again, and drops leftovers, each
 * statement concurrently (writers go on; each waits for the transactions
 * under way). An index that cannot be built (a unique index over duplicate
 * titles) is named in the summary, and its invalid remains dropped.
 *
 * @param query Runs one statement outside any transaction.
 * @param schema The schema.
 * @param faults What {@linkcode indexFaults} found.
 * @returns What was done, in one line.
 */
export async function repairIndexes(
  query: PgQuery,
  schema: string,
  faults: IndexFaults,
): Promise<string> {
  const qualified = (name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
  const done: string[] = [];
  const failed: string[] = [];
  const expected = expectedIndexes();
  for (const name of faults.leftovers) {
    await query(`DROP INDEX CONCURRENTLY IF EXISTS ${qualified(name)}`);
    done.push(`dropped ${name}`);
  }
  for (const name of [...faults.missing, ...faults.invalid]) {
    try {
      if (faults.missing.includes(name)) await query(expected.get(name)!.createSql);
      else await query(`REINDEX INDEX CONCURRENTLY ${qualified(name)}`);
      done.push(`built ${name}`);
    } catch (error) {
      // A failed concurrent build leaves an invalid index behind: not one more to maintain.
      if (faults.missing.includes(name)) {
        await query(`DROP INDEX CONCURRENTLY IF EXISTS ${qualified(name)}`);
      }
      failed.push(`could not build ${name}: ${(error as Error).message}`);
    }
  }
  return [...done, ...failed].join("; ");
}

/**
 * The `sequence` finding: the next message id is past the newest one.
 *
 * @param query Runs a statement.
 * @returns ok, or a fixable problem; a warning when the role may not read
 *   the sequence (it failed the whole report).
 */
export async function checkSequence(query: PgQuery): Promise<HealthCheck> {
  // A role that may read the tables only (read commands need no more): asked first, the
  // statement refused would end the report's transaction.
  const [allowed] = await query(
    "SELECT has_sequence_privilege('messages_id_seq', 'SELECT') AS reads",
  );
  if (allowed.reads !== true) {
    return finding(
      "sequence",
      "warning",
      "not checked: this role may not read the message id sequence messages_id_seq",
      { fix: "run doctor as the store's owner, or GRANT SELECT ON SEQUENCE messages_id_seq" },
    );
  }
  const [row] = await query(
    `SELECT s.last_value, s.is_called, (SELECT max(id) FROM messages) AS newest
     FROM messages_id_seq s`,
  );
  const next = Number(row.last_value) + (row.is_called === true ? 1 : 0);
  const newest = row.newest == null ? 0 : Number(row.newest);
  if (next > newest) {
    return finding("sequence", "ok", `the next message id (${next}) is past the newest`);
  }
  return finding(
    "sequence",
    "problem",
    `the next message id would be ${next}, and message ${newest} exists: appends fail on a duplicate key`,
    { fix: "hermes-state doctor --fix (moves the sequence past the newest id)", fixable: true },
  );
}

/** Moves the message id sequence past the newest id (never back). */
export async function repairSequence(query: PgQuery): Promise<string> {
  const [row] = await query(
    `SELECT setval('messages_id_seq', GREATEST(
       (SELECT max(id) FROM messages), (SELECT last_value FROM messages_id_seq))) AS at`,
  );
  return `the sequence is at ${Number(row.at)}`;
}
