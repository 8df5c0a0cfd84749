/**
 * Schema: the version, objects missing or extra against the v11 DDL, and
 * triggers whose text differs from the v11 text. Extra objects of a newer
 * Hermes are fine and said so; leftovers of an interrupted rebuild are not.
 *
 * @module
 */
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { pendingBackfills } from "../sqlite/schema/fts_backfill.ts";
import { sharedTitles } from "./title_check.ts";
import { DECLARED_COLUMNS, SCHEMA_VERSION } from "../sqlite/schema/schema_sql.ts";
import { readSchemaVersion } from "../sqlite/schema/schema_version.ts";
import { expectedSchema, type SchemaObject, schemaObjects } from "./expected_schema.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { recoverCommand } from "../core/salvage_hint.ts";

/** Names of the tables and triggers a batched FTS rebuild works with. */
export const REBUILD_LEFTOVER = /^messages_fts(_trigram)?_rebuild/;

/** The full-text tables, their shadow tables and their triggers (checked as `fts:<table>`). */
const SEARCH_OBJECT =
  /^messages_fts(_trigram)?(_(data|idx|content|docsize|config|insert|delete|update))?$/;

/**
 * A CREATE text with identifier quotes and runs of white space removed:
 * `ALTER TABLE … RENAME` (the swap of a batched rebuild) quotes the new name.
 */
export function normalizedSql(sql: string | null): string {
  return (sql ?? "").replace(/["'`]/g, "").replace(/\s+/g, " ").trim();
}

function missingColumns(db: SqliteConnection, live: readonly SchemaObject[]): string[] {
  const tables = new Set(live.filter((o) => o.type === "table").map((o) => o.name));
  const missing: string[] = [];
  const seen = new Map<string, Set<string>>();
  for (const column of DECLARED_COLUMNS) {
    if (!tables.has(column.table)) continue;
    let names = seen.get(column.table);
    if (names === undefined) {
      names = new Set(
        db.prepare("SELECT name FROM pragma_table_info(?)").all(column.table).map((r) =>
          String(r.name)
        ),
      );
      seen.set(column.table, names);
    }
    if (!names.has(column.name)) missing.push(`${column.table}.${column.name}`);
  }
  return missing;
}

/** What {@linkcode compareSchema} found. */
export interface SchemaDifferences {
  /** The `schema_version` row (`undefined`: no table; `null`: no row). */
  readonly version: number | null | undefined;
  /** Expected objects that are absent. */
  readonly missing: readonly SchemaObject[];
  /** Objects the v11 schema does not have (a newer Hermes's, or a user's). */
  readonly extra: readonly SchemaObject[];
  /** Expected objects whose text differs (triggers exactly; others up to quoting and spaces). */
  readonly differing: readonly SchemaObject[];
  /** Declared columns a table lacks, as `table.column`. */
  readonly missingColumns: readonly string[];
}

/**
 * Compares the file's schema with the v11 schema.
 *
 * @param db The connection.
 * @param openDriver Opens the scratch database holding the v11 schema.
 * @returns The differences.
 */
export function compareSchema(db: SqliteConnection, openDriver: SqliteDriver): SchemaDifferences {
  const expected = expectedSchema(openDriver);
  const live = schemaObjects(db);
  const byName = new Map(live.map((object) => [object.name, object]));
  const wanted = new Set(expected.map((object) => object.name));
  const missing: SchemaObject[] = [];
  const differing: SchemaObject[] = [];
  // Python's migration of a v10 file keeps `id INTEGER PRIMARY KEY` without AUTOINCREMENT
  // (fixtures/expected/migrate_v10.json): no table of such a file needs sqlite_sequence.
  const autoincrement = live.some((o) =>
    o.type === "table" && /\bAUTOINCREMENT\b/i.test(o.sql ?? "")
  );
  for (const object of expected) {
    const found = byName.get(object.name);
    if (object.name === "sqlite_sequence" && found === undefined && !autoincrement) continue;
    if (found === undefined || found.type !== object.type) {
      missing.push(object);
      continue;
    }
    // Tables gain ALTER TABLE … ADD COLUMN text; their columns are compared instead.
    if (object.type === "table" && !/^CREATE VIRTUAL/.test(object.sql ?? "")) continue;
    const same = object.type === "trigger"
      ? found.sql === object.sql
      : normalizedSql(found.sql) === normalizedSql(object.sql);
    if (!same) differing.push(found);
  }
  const extra = live.filter((object) => !wanted.has(object.name));
  return {
    version: readSchemaVersion(db),
    missing,
    extra,
    differing,
    missingColumns: missingColumns(db, live),
  };
}

/**
 * The `schema` finding.
 *
 * @param db The connection.
 * @param openDriver Opens the scratch database holding the v11 schema.
 * @param path The database file, for the `recover` line of a fix.
 * @returns ok (extra objects of a newer Hermes named), a warning, or a problem.
 */
export function checkSchema(
  db: SqliteConnection,
  openDriver: SqliteDriver,
  path: string,
): HealthCheck {
  const diff = compareSchema(db, openDriver);
  const { version } = diff;
  const problems: string[] = [];
  const notes: string[] = [];
  let fixable = true;
  let upgrade = false;
  if (version === undefined || version === null) {
    problems.push(version === undefined ? "no schema_version table" : "no schema_version row");
    fixable = false;
  } else if (version < SCHEMA_VERSION && pendingBackfills(db).length > 0) {
    problems.push(
      `schema version ${version}: an upgrade to 11 was interrupted while filling the search tables`,
    );
  } else if (version < SCHEMA_VERSION) {
    problems.push(`schema version ${version}: hermes-state migrate upgrades it to 11`);
    upgrade = true;
  }
  const core = diff.missing.filter((o) =>
    o.type === "table" && /^(sessions|messages)$/.test(o.name)
  );
  if (core.length > 0) fixable = false;
  // A newer Hermes may lay out its search tables its own way (`fts:<table>` checks them).
  const newerFile = typeof version === "number" && version > SCHEMA_VERSION;
  const ours = (o: SchemaObject) => !(newerFile && SEARCH_OBJECT.test(o.name));
  const ownSearch = [...diff.missing, ...diff.differing].filter((o) => !ours(o));
  if (ownSearch.length > 0) {
    notes.push(
      `schema ${version} lays out its search tables its own way (${ownSearch.length} objects differ from v11)`,
    );
  }
  // Without its unique index, titles may be shared: the index cannot come back until they differ.
  const shared = diff.missing.some((o) => o.name === "idx_sessions_title_unique")
    ? sharedTitles(db)
    : [];
  problems.push(
    ...shared.map(({ title, ids }) =>
      `title ${JSON.stringify(title)} is shared by ${ids.length} sessions (${ids.join(", ")}): ` +
      "the unique title index cannot be created"
    ),
  );
  problems.push(...diff.missing.filter(ours).map((o) => `${o.type} ${o.name} is missing`));
  problems.push(
    ...diff.differing.filter(ours).map((o) => `${o.type} ${o.name} differs from the v11 text`),
  );
  problems.push(...diff.missingColumns.map((c) => `column ${c} is missing`));
  const leftovers = diff.extra.filter((o) => REBUILD_LEFTOVER.test(o.name));
  const newer = diff.extra.filter((o) => !REBUILD_LEFTOVER.test(o.name));
  if (newer.length > 0) {
    const whose = version !== undefined && version !== null && version > SCHEMA_VERSION
      ? `schema ${version} (a newer Hermes): its`
      : "not in v11 (a newer Hermes's or your own, kept):";
    notes.push(`${whose} ${newer.length} extra objects are fine`);
  }
  const details = [
    ...problems,
    ...ownSearch.map((o) => `${o.type} ${o.name}: the newer Hermes's own`),
    ...leftovers.map((o) => `${o.type} ${o.name}: left by an interrupted doctor --fix`),
    ...newer.map((o) => `${o.type} ${o.name}: extra`),
  ];
  if (problems.length > 0) {
    return finding("schema", "problem", problems[0], {
      fix: !fixable
        ? core.length > 0
          ? recoverCommand(path)
          : "hermes-state migrate (upgrades it as the agent does)"
        : upgrade
        ? "hermes-state migrate, or hermes-state doctor --fix (which runs it, then repairs the rest)"
        : shared.length > 0
        ? "hermes-state doctor --fix (gives the later sessions of each shared title the next " +
          'title of its lineage, "… #2", and creates the index)'
        : "hermes-state doctor --fix (finishes an interrupted upgrade, creates what is missing, restores the v11 triggers)",
      fixable,
      details,
    });
  }
  if (leftovers.length > 0) {
    return finding(
      "schema",
      "warning",
      `${leftovers.length} objects left by an interrupted rebuild`,
      {
        fix: "hermes-state doctor --fix (drops them)",
        fixable: true,
        details,
      },
    );
  }
  const summary = version === SCHEMA_VERSION
    ? "schema version 11, every v11 object present with the v11 text"
    : ownSearch.length > 0
    ? `schema version ${version}, every v11 object present apart from the search tables`
    : `schema version ${version}, every v11 object present`;
  return finding("schema", "ok", [summary, ...notes].join("; "), { details });
}
