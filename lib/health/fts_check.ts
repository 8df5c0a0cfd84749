/**
 * The checks of one full-text table: present, not marked stale, its three
 * triggers exactly the v11 text, its FTS5 index sound (telling the known
 * SQLite 3.40 trigram condition apart from damage), and its coverage: one
 * row per message holding exactly the text the triggers write, and no row
 * without a message. A table laid out by a newer Hermes (see
 * `sqlite/schema/fts_layout.ts`) is that Hermes's: its index is checked and
 * its triggers must be there, but their text and its coverage follow its
 * own rules, and hermes-state does not rebuild it.
 *
 * @module
 */
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { type FtsTable, indexedTextSql } from "../sqlite/schema/schema_sql.ts";
import { expectedSql } from "./expected_schema.ts";
import { staleFtsTables } from "../sqlite/fts_stale.ts";
import { pendingBackfills } from "../sqlite/schema/fts_backfill.ts";
import { explainIntegrity } from "../sqlite/known_issues.ts";
import { isCorruption } from "../sqlite/integrity.ts";
import { hasNewerLayout, newerSchemaVersion } from "../sqlite/schema/fts_layout.ts";
import { ftsTriggerNames } from "../sqlite/schema/fts_triggers.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { groupedCount } from "../core/grouped_digits.ts";
import { DAMAGED_TEXT_DETAIL, textDamagedInPlace } from "./damaged_text.ts";

/** Options of {@linkcode checkFtsTable}. */
export interface FtsCheckOptions {
  /** What the integrity pragma said about this table (`undefined`: nothing, so sound). */
  readonly integrityLines?: readonly string[];
  /** The pragma stopped at damage before the end: saying nothing, it did not check the table. */
  readonly integrityStopped?: boolean;
  /** Check the coverage of every message, however many. */
  readonly full?: boolean;
  /** Above this many messages the coverage check samples (unless `full`). */
  readonly sampleAbove: number;
}

const FIX = "hermes-state doctor --fix (rebuilds the table in batches while writers run)";

/** The fix of a table that holds a message's text damaged in place. */
const DAMAGED_FIX = "hermes-state doctor --fix (takes each damaged text back from the table, " +
  "then rebuilds it in batches while writers run); a rebuild by any other means, or recover, " +
  "indexes the damaged text and drops the sound one";

/** The fix of a newer Hermes's table: that Hermes rebuilds its own layout. */
function newerFix(db: SqliteConnection): string {
  const version = newerSchemaVersion(db);
  return `open the file with the Hermes that wrote it (schema ${version}): it rebuilds its own ` +
    "search tables and triggers (hermes-state rebuilds only the v11 layout)";
}

function exists(db: SqliteConnection, type: string, name: string): string | null | undefined {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE type = ? AND name = ?").get(
    type,
    name,
  );
  return row === undefined ? undefined : (row.sql as string | null);
}

/**
 * Names of the triggers of `table` that are missing or differ from the v11
 * text (a newer Hermes's may differ: `newer`).
 */
function triggerProblems(
  db: SqliteConnection,
  openDriver: SqliteDriver,
  table: FtsTable,
  newer: boolean,
): string[] {
  const problems: string[] = [];
  for (const name of ftsTriggerNames(table)) {
    const sql = exists(db, "trigger", name);
    if (sql === undefined) {
      problems.push(`trigger ${name} is missing${newer ? ": new messages are not indexed" : ""}`);
    } else if (!newer && sql !== expectedSql(openDriver, name)) {
      problems.push(`trigger ${name} differs from the v11 text`);
    }
  }
  return problems;
}

/** The index check of the table (`fts:<table>`). */
function indexFinding(
  db: SqliteConnection,
  openDriver: SqliteDriver,
  table: FtsTable,
  options: FtsCheckOptions,
): HealthCheck {
  const name = `fts:${table}`;
  if (exists(db, "table", table) === undefined) {
    if (newerSchemaVersion(db) !== undefined) {
      // A newer Hermes drops a table to refill it; a v11 one in its place would take its rows.
      return finding(name, "warning", `${table} is missing: search reads messages by substring`, {
        fix: newerFix(db),
        fixable: false,
      });
    }
    return finding(name, "problem", `${table} is missing: search cannot find anything`, {
      fix: FIX,
      fixable: true,
    });
  }
  const problems: string[] = [];
  const stale = staleFtsTables(db).find((entry) => entry.table === table);
  if (stale !== undefined) problems.push(`marked stale in state_meta: ${stale.reason}`);
  const filling = pendingBackfills(db).find((entry) => entry.table === table);
  if (filling !== undefined) {
    problems.push(
      filling.next > filling.upto
        ? "filled, but the mark of an interrupted fill (upgrade or doctor --fix) is still set"
        : "still being filled, interrupted (an upgrade or doctor --fix): " +
          `message ids ${filling.next}–${filling.upto} left; new messages are indexed`,
    );
  }
  const newer = hasNewerLayout(db, table);
  problems.push(...triggerProblems(db, openDriver, table, newer));
  const lines = options.integrityLines ?? [];
  if (newer) {
    problems.push(...lines.map((line) => `integrity-check: ${line}`));
    if (problems.length === 0) {
      return finding(name, "ok", `${table}: index sound, in the layout of a newer Hermes`);
    }
    return finding(name, "problem", `${table}: ${problems[0]}`, {
      fix: newerFix(db),
      fixable: false,
      details: problems,
    });
  }
  if (problems.length === 0 && lines.length > 0) {
    // The condition `info` names too (one module: known_issues.ts).
    const { issues, unexplained } = explainIntegrity(db, lines);
    if (issues.length > 0 && unexplained.length === 0) {
      return finding(name, "warning", issues[0].message, {
        fix: FIX,
        fixable: true,
        details: lines,
      });
    }
  }
  if (lines.length > 0) problems.push(...lines.map((line) => `integrity-check: ${line}`));
  if (problems.length === 0 && options.integrityStopped) {
    return finding(
      name,
      "warning",
      `${table}: index not checked: the integrity check stopped at the damage it names; ` +
        "triggers v11",
    );
  }
  if (problems.length === 0) return finding(name, "ok", `${table}: index sound, triggers v11`);
  return finding(name, "problem", `${table}: ${problems[0]}`, {
    fix: FIX,
    fixable: true,
    details: problems,
  });
}

/** The coverage check of the table (`coverage:<table>`). */
function coverageFinding(
  db: SqliteConnection,
  table: FtsTable,
  options: FtsCheckOptions,
  messages: number,
): HealthCheck {
  const name = `coverage:${table}`;
  if (exists(db, "table", table) === undefined) {
    if (newerSchemaVersion(db) !== undefined) {
      return finding(name, "ok", `not compared: ${table} is missing (see fts:${table})`);
    }
    return finding(name, "problem", `${table} is missing`, { fix: FIX, fixable: true });
  }
  if (hasNewerLayout(db, table)) {
    // Its rows hold what its own view gives; FTS5's integrity-check compares them.
    return finding(
      name,
      "ok",
      `not compared row by row: ${table} indexes by the rules of a newer Hermes`,
    );
  }
  const stride = !options.full && messages > options.sampleAbove
    ? Math.ceil(messages / options.sampleAbove)
    : 1;
  const sample = stride > 1 ? `AND m.id % ${stride} = 0` : "";
  try {
    const differing = db.prepare(
      `SELECT m.id AS id, f.rowid IS NULL AS missing FROM messages m
       LEFT JOIN ${table} f ON f.rowid = m.id
       WHERE f.content IS NOT (${indexedTextSql("m")}) ${sample} ORDER BY m.id`,
    ).all();
    const extra = db.prepare(
      `SELECT rowid AS id FROM ${table} WHERE rowid NOT IN (SELECT id FROM messages) ORDER BY rowid`,
    ).all();
    const missing = differing.filter((row) => Number(row.missing) === 1);
    const differs = differing.filter((row) => Number(row.missing) !== 1);
    // A message's text damaged in place, which this table holds whole: taken back by --fix.
    const damaged = textDamagedInPlace(db, table, differs.map((row) => Number(row.id)));
    const damagedIds = new Set(damaged.map((text) => text.id));
    const wrong = differs.filter((row) => !damagedIds.has(Number(row.id)));
    const scope = stride > 1 ? ` (1 message in ${stride} sampled; --full checks all)` : "";
    if (differing.length === 0 && extra.length === 0) {
      return finding(name, "ok", `every message has its row in ${table}${scope}`);
    }
    const parts = [
      missing.length > 0
        ? `${groupedCount(missing.length, "message has", "messages have")} no row`
        : "",
      damaged.length > 0
        ? `${
          groupedCount(damaged.length, "message's text is", "messages' texts are")
        } damaged in place (no longer valid UTF-8), which this table holds whole`
        : "",
      wrong.length > 0
        ? `${groupedCount(wrong.length, "row holds", "rows hold")} other text than their message`
        : "",
      extra.length > 0 ? `${groupedCount(extra.length, "row has", "rows have")} no message` : "",
    ].filter((part) => part !== "");
    return finding(name, "problem", `${table}: ${parts.join(", ")}${scope}`, {
      fix: damaged.length > 0 ? DAMAGED_FIX : FIX,
      fixable: true,
      details: [
        ...damaged.map((text) => `message ${text.id}: ${DAMAGED_TEXT_DETAIL}; ${table} holds it`),
        ...missing.map((row) => `message ${row.id}: no row`),
        ...wrong.map((row) => `message ${row.id}: other text`),
        ...extra.map((row) => `row ${row.id}: no message`),
      ],
    });
  } catch (error) {
    if (!isCorruption(error)) throw error;
    return finding(name, "problem", `${table} cannot be read: ${error.message}`, {
      fix: FIX,
      fixable: true,
    });
  }
}

/**
 * Checks one full-text table.
 *
 * @param db The connection.
 * @param openDriver Opens the scratch database holding the v11 schema.
 * @param table The table.
 * @param options What the integrity pragma said, sampling.
 * @returns Two findings: `fts:<table>` and `coverage:<table>`.
 */
export function checkFtsTable(
  db: SqliteConnection,
  openDriver: SqliteDriver,
  table: FtsTable,
  options: FtsCheckOptions,
): HealthCheck[] {
  let messages = 0;
  try {
    messages = Number(db.prepare("SELECT count(*) AS n FROM messages").get()?.n ?? 0);
  } catch (error) {
    if (!isCorruption(error)) throw error;
  }
  let index: HealthCheck;
  try {
    index = indexFinding(db, openDriver, table, options);
  } catch (error) {
    if (!isCorruption(error)) throw error;
    index = finding(`fts:${table}`, "problem", `${table} cannot be read: ${error.message}`, {
      fix: FIX,
      fixable: true,
    });
  }
  return [index, coverageFinding(db, table, options, messages)];
}
