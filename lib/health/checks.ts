/**
 * Every check of `doctor`, in order, over one connection: SQLite's
 * integrity and foreign keys, each FTS table, counters, the message id
 * sequence, lineage, schema,
 * the WAL, free pages and the files.
 *
 * @module
 */
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { FTS_TABLES } from "../sqlite/schema/schema_sql.ts";
import { checkCounters } from "./counter_check.ts";
import { checkFtsTable } from "./fts_check.ts";
import { foreignKeyCheck, integrityCheck, isCorruption } from "../sqlite/integrity.ts";
import { checkLineage } from "./lineage_check.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { checkSchema } from "./schema_check.ts";
import { checkFiles, checkFreePages, type CheckpointResult, checkWal } from "./storage_check.ts";
import { walSpoilingDamage } from "../sqlite/foreign_wal.ts";
import { foreignWalHint } from "../sqlite/damaged_file.ts";
import { recoverCommand, salvageFix } from "../core/salvage_hint.ts";
import { groupedCount, groupedInteger } from "../core/grouped_digits.ts";
import { damagedIndexes, danglingEntries, indexDamageFinding } from "./index_check.ts";
import { checkMessageSequence } from "./sequence_check.ts";

/** Options of {@linkcode runChecks}. */
export interface CheckOptions {
  /**
   * `integrity_check` instead of `quick_check`, and the FTS coverage of every
   * message however many there are.
   * @default {false}
   */
  readonly full?: boolean;
  /**
   * Above this many messages the FTS coverage check samples.
   * @default {200000}
   */
  readonly sampleAbove?: number;
  /** What a checkpoint run by `--fix` answered. */
  readonly checkpoint?: CheckpointResult;
  /**
   * The `-wal` and `-shm` there before the doctor opened the file; others
   * are its own connection's and the `files` check leaves them out.
   */
  readonly existedBefore?: ReadonlySet<string>;
}

/**
 * The finding of a file SQLite reads as damaged. When it was read through
 * a `-wal` and is sound alone, the `-wal` is what spoils it (another
 * database's, or an older copy's): recovering the file through it would
 * salvage a mix, and setting it aside is the fix. Damage only in indexes
 * (the table data whole) is `doctor --fix`'s to mend; any other, `recover`'s.
 */
function damageFinding(
  db: SqliteConnection,
  lines: string[],
  openDriver: SqliteDriver,
  path: string,
  full: boolean,
): HealthCheck {
  const spoiling = walSpoilingDamage(path, openDriver, full);
  if (spoiling !== undefined) {
    return finding("integrity", "problem", spoiling, { fix: foreignWalHint(path), details: lines });
  }
  const indexes = damagedIndexes(lines) ?? [];
  // An index listing rows its table lacks may be the last witness of rows a table page lost.
  const witnesses = indexes.map((index) => ({ index, rows: danglingEntries(db, index) }))
    .filter((found) => found.rows !== 0);
  if (indexes.length > 0 && witnesses.length === 0) return indexDamageFinding(indexes, lines);
  const notes = witnesses.map(({ index, rows }) =>
    rows === undefined
      ? `index ${index}: whether it lists rows its table lost cannot be told, so it is not rebuilt`
      : `index ${index} lists ${
        groupedCount(rows, "row its table no longer holds", "rows its table no longer holds")
      }: the table may have lost them, and the index is their witness (recover names them)`
  );
  return finding("integrity", "problem", lines[0], {
    fix: salvageFix(path),
    details: [...notes, ...lines],
  });
}

/**
 * Runs `check`; a damaged page becomes a problem finding instead of an
 * error, its fix the `recover` of `path`.
 */
function guarded(
  name: string,
  path: string,
  check: () => HealthCheck | HealthCheck[],
): HealthCheck[] {
  try {
    const result = check();
    return Array.isArray(result) ? result : [result];
  } catch (error) {
    if (isCorruption(error)) {
      return [
        finding(name, "problem", `cannot be checked: ${error.message}`, { fix: salvageFix(path) }),
      ];
    }
    if (error instanceof SqliteError && /^no such (table|column)/.test(error.message)) {
      return [finding(name, "problem", `cannot be checked: ${error.message}`, {
        fix: `${recoverCommand(path)} (rebuilds a v11 file from the rows it can read)`,
      })];
    }
    throw error;
  }
}

function foreignKeyFinding(db: SqliteConnection): HealthCheck {
  const violations = foreignKeyCheck(db);
  const orphans = violations.filter((v) => v.table === "messages");
  const parents = violations.filter((v) => v.table === "sessions");
  if (orphans.length > 0) {
    return finding(
      "foreign_keys",
      "problem",
      `${groupedCount(orphans.length, "message belongs", "messages belong")} to no session`,
      {
        fix: "hermes-state doctor --fix (recreates their sessions, source 'unknown')",
        fixable: true,
        details: orphans.map((v) => `message ${v.rowid}`),
      },
    );
  }
  const other = violations.filter((v) => v.table !== "messages" && v.table !== "sessions");
  if (other.length > 0) {
    return finding(
      "foreign_keys",
      "problem",
      `${groupedCount(other.length, "row points", "rows point")} at missing rows`,
      {
        details: other.map((v) => `${v.table} row ${v.rowid} → ${v.parent}`),
      },
    );
  }
  const note = parents.length > 0
    ? ` (${groupedInteger(parents.length)} missing parents: see lineage)`
    : "";
  return finding("foreign_keys", "ok", `every message belongs to a session${note}`);
}

/**
 * Runs every check.
 *
 * @param db The connection (read-only is enough).
 * @param openDriver Opens the scratch database holding the v11 schema.
 * @param path The database file (for the WAL and file checks).
 * @param options `full`, `sampleAbove`.
 * @returns The findings, in a fixed order.
 */
export function runChecks(
  db: SqliteConnection,
  openDriver: SqliteDriver,
  path: string,
  options: CheckOptions = {},
): HealthCheck[] {
  const checks: HealthCheck[] = [];
  const integrity = integrityCheck(db, { full: options.full });
  const sound = integrity.lines.length === 1 && integrity.lines[0] === "ok";
  const integrityFinding = sound
    ? finding("integrity", "ok", `${options.full ? "integrity_check" : "quick_check"}: ok`)
    : damageFinding(db, integrity.lines, openDriver, path, options.full ?? false);
  checks.push(integrityFinding);
  checks.push(...guarded("foreign_keys", path, () => foreignKeyFinding(db)));
  for (const table of FTS_TABLES) {
    checks.push(...guarded(`fts:${table}`, path, () =>
      checkFtsTable(db, openDriver, table, {
        integrityLines: integrity.fts[table],
        integrityStopped: integrity.stopped,
        full: options.full,
        sampleAbove: options.sampleAbove ?? 200_000,
      })));
  }
  checks.push(...guarded("counters", path, () => checkCounters(db)));
  checks.push(...guarded("sequence", path, () => checkMessageSequence(db)));
  checks.push(...guarded("lineage", path, () => checkLineage(db)));
  checks.push(...guarded("schema", path, () => checkSchema(db, openDriver, path)));
  checks.push(checkWal(path, options.checkpoint));
  checks.push(...guarded("free_pages", path, () => checkFreePages(db)));
  checks.push(checkFiles(path, options.existedBefore));
  // Index faults alone: `doctor --fix` rebuilds those indexes first, then repairs the rest.
  if (sound || integrityFinding.fixable) return checks;
  // `doctor --fix` writes nothing to a damaged file: every fix goes through recover.
  return checks.map((check) =>
    check.fix?.includes("doctor --fix")
      ? {
        ...check,
        fix: `${salvageFix(path)} (doctor --fix does not write to a damaged file)`,
        fixable: false,
      }
      : check
  );
}
