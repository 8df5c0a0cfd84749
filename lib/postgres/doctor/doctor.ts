/**
 * `doctorPostgresStore(url, options)`: checks a PostgreSQL store and, with
 * `fix`, repairs what it can without losing a message, while agents and
 * `sync` go on writing.
 *
 * The checks run in one read-only snapshot (`REPEATABLE READ`), so that
 * rows written meanwhile cannot look like faults; without `fix` every
 * transaction is read-only on the server too. With `fix`, each repair runs
 * in short transactions (a page of messages, one session), indexes are
 * built concurrently, then the checks run again. What PostgreSQL checks
 * itself (pages, b-trees) is its own business: `amcheck` and the server's
 * logs tell it.
 *
 * @module
 */
import { OpenError } from "../../core/errors.ts";
import {
  type DoctorReport,
  type HealthCheck,
  isHealthy,
  type Repair,
} from "../../core/health_report.ts";
import { lineageFinding } from "../../core/lineage_faults.ts";
import { checkSchemaInUse, connectPg } from "../_client.ts";
import type { PgClient, PgQuery } from "../_client_types.ts";
import { parsePostgresUrl } from "../store_url.ts";
import { LAST_STEP, migratePg, migrationStep, vacuumSql } from "../schema.ts";
import {
  checkSchema,
  checkSequence,
  indexesFinding,
  type IndexFaults,
  indexFaults,
  repairIndexes,
  repairSchemaVersion,
  repairSequence,
} from "./schema_checks.ts";
import {
  checkSearchRows,
  checkSearchVectors,
  repairSearchRows,
  repairSearchVectors,
} from "./search_checks.ts";
import {
  checkOrigins,
  clearBrokenParentLinks,
  counterFaults,
  countersFinding,
  pgLineageFaults,
  recountSessions,
} from "./session_checks.ts";

/** Options of {@linkcode doctorPostgresStore}. */
export interface PgDoctorOptions {
  /**
   * Repair what can be repaired: run the migrations, build indexes, move
   * the id sequence, write search rows and vectors, recount counters, clear
   * parent links in a cycle.
   * @default {false}
   */
  readonly fix?: boolean;
  /**
   * Compare the search vectors of every message (only the newest
   * `sampleAbove` otherwise).
   * @default {false}
   */
  readonly full?: boolean;
  /**
   * With `fix`, also `VACUUM (ANALYZE)` the store's tables (which does not
   * block writers on PostgreSQL).
   * @default {false}
   */
  readonly vacuum?: boolean;
  /**
   * Above this many messages the vectors of only the newest this many are compared.
   * @default {200000}
   */
  readonly sampleAbove?: number;
  /** Called while a long check or repair runs: its name, items done, items in all. */
  readonly onProgress?: (stage: string, done: number, total: number) => void;
  /** The time, in seconds since the epoch (the `origins` check). */
  readonly clock?: () => number;
}

/** What the checks found beyond their findings: what the repairs work on. */
interface Found {
  readonly checks: HealthCheck[];
  readonly indexes?: IndexFaults;
  readonly staleVectors: number[];
  readonly miscounted: string[];
}

async function runChecks(
  client: PgClient,
  schema: string,
  options: PgDoctorOptions,
): Promise<Found> {
  const step = await migrationStep(client.query, schema) ?? 0;
  const schemaCheck = await checkSchema(client.query, step);
  if (step !== LAST_STEP) return { checks: [schemaCheck], staleVectors: [], miscounted: [] };
  return await client.transaction(async (query) => {
    // One snapshot for every check: a message appended meanwhile is in all of them or none.
    await query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const indexes = await indexFaults(query, schema);
    const checks = [
      schemaCheck,
      indexesFinding(indexes),
      await checkSequence(query),
      await checkSearchRows(query),
    ];
    const vectors = await checkSearchVectors(query, {
      full: options.full ?? false,
      sampleAbove: options.sampleAbove ?? 200_000,
      onProgress: (done, total) => options.onProgress?.("checking search vectors", done, total),
    });
    const miscounted = await counterFaults(query);
    checks.push(
      vectors.check,
      countersFinding(miscounted),
      lineageFinding(await pgLineageFaults(query)),
      await checkOrigins(query, (options.clock ?? (() => Date.now() / 1000))()),
    );
    return {
      checks,
      indexes,
      staleVectors: vectors.stale,
      miscounted: miscounted.faults.map((fault) => fault.id),
    };
  });
}

function needsWork(checks: readonly HealthCheck[], name: string): boolean {
  const check = checks.find((c) => c.name === name);
  return check !== undefined && check.status !== "ok" && check.fixable;
}

/** Runs transactions for one repair and keeps the longest one's duration. */
class TimedTransactions {
  longestMs = 0;
  readonly #client: PgClient;
  constructor(client: PgClient) {
    this.#client = client;
  }
  run = async <T>(fn: (query: PgQuery) => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await this.#client.transaction(fn, { writes: true });
    } finally {
      this.longestMs = Math.max(this.longestMs, performance.now() - started);
    }
  };
}

/** Runs the repairs the findings call for, in an order where each leaves the next sound. */
async function repair(
  client: PgClient,
  schema: string,
  found: Found,
  options: PgDoctorOptions,
): Promise<Repair[]> {
  const repairs: Repair[] = [];
  const { checks } = found;
  const timed = async (name: string, work: (t: TimedTransactions) => Promise<string>) => {
    const transactions = new TimedTransactions(client);
    const summary = await work(transactions);
    repairs.push({ name, summary, longestLockMs: transactions.longestMs });
  };
  const progress = (stage: string, total: number) => (done: number) =>
    options.onProgress?.(stage, done, total);
  if (needsWork(checks, "schema")) {
    await timed("schema", (t) => repairSchemaVersion(t.run));
  }
  if (needsWork(checks, "indexes") && found.indexes !== undefined) {
    // Concurrent builds run outside any transaction; each waits for those under way.
    await timed("indexes", () => repairIndexes(client.query, schema, found.indexes!));
  }
  if (needsWork(checks, "sequence")) {
    await timed("sequence", () => repairSequence(client.query));
  }
  if (needsWork(checks, "search_rows")) {
    await timed("search_rows", (t) => repairSearchRows(t.run, progress("writing search rows", 0)));
  }
  if (needsWork(checks, "search_vectors")) {
    const ids = found.staleVectors;
    await timed(
      "search_vectors",
      (t) => repairSearchVectors(t.run, ids, progress("computing search vectors", ids.length)),
    );
  }
  if (needsWork(checks, "counters")) {
    await timed("counters", (t) => recountSessions(t.run, found.miscounted));
  }
  if (needsWork(checks, "lineage")) {
    await timed("lineage", (t) => clearBrokenParentLinks(t.run));
  }
  if (options.vacuum) {
    await timed("vacuum", async () => {
      await client.query(await vacuumSql(client.query));
      return "VACUUM (ANALYZE) of the store's tables";
    });
  }
  return repairs;
}

/**
 * Checks a PostgreSQL store and, with `fix`, repairs it: the schema (every
 * migration run, the version row), its indexes (missing, or invalid after
 * an interrupted concurrent build), the message id sequence, the search
 * rows and vectors against the messages' text, the sessions' counters and
 * parent links, and the synced files' last passes.
 *
 * @param url `postgres://user:pass@host:port/db?schema=hermes`.
 * @param options `fix`, `full`, `vacuum`, sampling, progress.
 * @returns The findings, the repairs and the findings after them; `path` is
 *   the URL with its password masked, `sqliteVersion` the server's
 *   (`PostgreSQL 15.18`).
 * @throws {OpenError} When the server cannot be reached or refuses the
 *   login, or the schema holds no store.
 *
 * @example Checking a store
 * ```ts ignore
 * import { doctorPostgresStore } from "./doctor.ts";
 * const report = await doctorPostgresStore("postgres://hermes@db.internal/hermes");
 * for (const check of report.checks) console.log(check.status, check.name, check.summary);
 * ```
 */
export async function doctorPostgresStore(
  url: string,
  options: PgDoctorOptions = {},
): Promise<DoctorReport> {
  const parsed = parsePostgresUrl(url);
  const fix = options.fix ?? false;
  const client = await connectPg(parsed.url, parsed.schema, { max: 1, readonly: !fix }, url);
  try {
    if (await migrationStep(client.query, parsed.schema) === null) {
      throw new OpenError(
        client.display,
        `schema "${parsed.schema}" holds no hermes-state store`,
        { kind: "not_found" },
      );
    }
    await checkSchemaInUse(client, parsed.schema);
    const [server] = await client.query("SELECT current_setting('server_version') AS v");
    const base = { path: client.display, sqliteVersion: `PostgreSQL ${server?.v}` };
    const found = await runChecks(client, parsed.schema, options);
    if (!fix) {
      return {
        ...base,
        checks: found.checks,
        repairs: [],
        after: undefined,
        healthy: isHealthy(found.checks),
        longestLockMs: 0,
      };
    }
    // An older schema is migrated first (as any write would), then the rest is planned on it.
    const upgrade: Repair[] = [];
    let planned = found;
    if (needsWork(found.checks, "schema") && found.indexes === undefined) {
      const started = performance.now();
      await migratePg(client, parsed.schema);
      upgrade.push({
        name: "schema",
        summary: `ran the migrations through ${LAST_STEP}`,
        longestLockMs: performance.now() - started,
      });
      planned = await runChecks(client, parsed.schema, options);
    }
    const repairs = [...upgrade, ...await repair(client, parsed.schema, planned, options)];
    const after = (await runChecks(client, parsed.schema, options)).checks;
    return {
      ...base,
      checks: found.checks,
      repairs,
      after,
      healthy: isHealthy(after),
      longestLockMs: Math.max(0, ...repairs.map((r) => r.longestLockMs)),
    };
  } finally {
    await client.close();
  }
}
