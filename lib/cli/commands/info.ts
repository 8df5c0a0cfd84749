/**
 * `hermes-state info`: what the database file is: path, schema version,
 * journal mode, sizes, row counts and a quick integrity check.
 *
 * @module
 */
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import { SCHEMA_VERSION } from "../../sqlite/schema/schema_sql.ts";
import type { DatabaseInfo } from "../../core/database_info.ts";
import type { Command, Context } from "../command.ts";
import { fileSizes, sizeText } from "../files.ts";
import { alignColumns, formatBytes, formatCount } from "../../render/format.ts";
import { visibleInline } from "../../render/transcript.ts";
import { printJson } from "../json.ts";
import { statusLine } from "../progress.ts";
import { printableArgument } from "../shown_argument.ts";
import type { ParsedArgs } from "../parse.ts";
import { UsageError } from "../usage_error.ts";
import { readOnlyPart } from "../writable.ts";

const USAGE = `Usage: hermes-state info [options]

Describe the database file: its path (and whether it may be written),
schema version, SQLite version, journal mode, the sizes of the file and its
-wal and -shm companions, pages, row counts, search tables, and the result
of a quick integrity check of every table and index (PRAGMA quick_check, a
table at a time: seconds for a million messages). Exits 1 when the check
finds damage; a known harmless condition is named with its fix instead.
Nothing in the file is changed. On a postgres:// URL: the server version,
the size of the store's tables with their indexes, row counts and search
columns (no integrity check: the server keeps its own).

Options:
  --full        Check the whole file at once, which also verifies the
                search indexes against the messages (as doctor does; about
                40 s per million messages)
  --no-check    Skip the integrity check (it reads every table)
  --json        Print everything as one JSON document
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state info
  hermes-state info --full
  hermes-state --db /srv/hermes/state.db info --json
`;

/** What the schema version means to this build, or `null` for ours. */
function schemaNote(version: number | null): string | null {
  if (version === null) return "no schema_version row";
  if (version > SCHEMA_VERSION) {
    return `newer than ${SCHEMA_VERSION}: read as ${SCHEMA_VERSION}, extra columns kept`;
  }
  if (version < SCHEMA_VERSION) {
    return `older than ${SCHEMA_VERSION}: read as it is; "hermes-state migrate" upgrades it`;
  }
  return null;
}

/** The status line shown on a terminal while the integrity check runs. */
function checkingLine(path: string, bytes: number, full: boolean): string {
  const what = full ? "every page and both search indexes" : "every table and index";
  return `Checking ${printableArgument(path)}, ${
    formatBytes(bytes)
  }: ${what} (--no-check skips it)…`;
}

/** The FTS tables, each stale one marked (its triggers dropped after damage). */
function searchTables(info: DatabaseInfo, mark: (text: string) => string): string {
  const stale = new Set(info.staleFtsTables.map((s) => s.table as string));
  const names = info.ftsTables.map((name) =>
    stale.has(name) ? name + mark(" (stale: run hermes-state doctor --fix)") : name
  );
  return names.join(", ") || "none";
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const server = isPostgresTarget(ctx.dbPath);
  // Measured before opening: what is on disk, not what a connection adds.
  const files = server ? null : fileSizes(sqlitePath(ctx.dbPath));
  const store = await ctx.openStore();
  if (args.flag("full") && args.flag("no-check")) {
    throw new UsageError("give either --full or --no-check, not both", { command: "info" });
  }
  const check = !args.flag("no-check");
  // The check reads every table (3 s for a million messages, over 10 s from a cold disk) and
  // says nothing until the end: a line on the terminal says what is going on meanwhile.
  const erase = check && files !== null
    ? statusLine(ctx.io, checkingLine(store.target, files.total, args.flag("full")))
    : () => {};
  const info = await store.inspect({ integrity: check, searchIndexes: args.flag("full") })
    .finally(erase);
  const readOnly = server ? null : readOnlyPart(store.target) ?? null;
  // On PostgreSQL: the schema's tables, indexes and TOAST.
  const bytes = files?.total ?? info.pageCount * info.pageSize;
  const ok = info.damage.length === 0;
  const note = schemaNote(info.schemaVersion);
  if (ctx.json) {
    printJson(ctx.io, {
      path: info.path,
      read_only: readOnly,
      schema_version: info.schemaVersion,
      schema_note: note,
      sqlite_version: info.sqliteVersion,
      sqlite_warning: info.sqliteWarning,
      journal_mode: info.journalMode,
      wal_bytes: info.walBytes,
      files,
      bytes,
      page_size: info.pageSize,
      page_count: info.pageCount,
      free_pages: info.freePages,
      sessions: info.sessions,
      messages: info.messages,
      fts_tables: info.ftsTables,
      stale_fts_tables: info.staleFtsTables,
      meta_keys: info.metaKeys,
      integrity: info.integrity,
      search_indexes_checked: info.searchIndexesChecked,
      known_issues: info.knownIssues,
      damage: info.damage,
      ok,
    });
    return ok ? 0 : 1;
  }
  const { style } = ctx;
  const integrity = info.integrity === null
    ? style.dim("not checked")
    : !ok
    ? style.red(info.damage.join("; "))
    : info.knownIssues.length === 0
    ? style.green("ok") + (info.searchIndexesChecked
      ? ""
      : style.dim(" (tables and indexes; --full also verifies the search indexes)"))
    : info.knownIssues.map((issue) =>
      `${style.yellow("known condition")}: ${issue.message} (fix: ${issue.fix})`
    ).join("; ");
  const version = String(info.schemaVersion ?? "none") + (note === null ? "" : ` (${note})`);
  const storage = files === null
    ? [
      ["Server", info.sqliteVersion],
      ["Size", sizeText(null, bytes)],
    ]
    : [
      [
        "SQLite",
        info.sqliteVersion +
        (info.sqliteWarning === null ? "" : style.yellow(` (${info.sqliteWarning})`)),
      ],
      ["Journal mode", info.journalMode],
      ["Size", sizeText(files, bytes)],
      [
        "Pages",
        `${formatCount(info.pageCount)} × ${formatCount(info.pageSize)} B, ${
          formatCount(info.freePages)
        } free`,
      ],
    ];
  const rows = [
    ["Path", store.target + (readOnly === null ? "" : style.yellow(` (read-only ${readOnly})`))],
    ["Schema version", version],
    ...storage,
    ["Sessions", info.sessions === null ? style.red("unreadable") : formatCount(info.sessions)],
    ["Messages", info.messages === null ? style.red("unreadable") : formatCount(info.messages)],
    ["Search tables", searchTables(info, style.yellow)],
    // A key is any text a writer chose: its control characters shown, never sent to the terminal.
    ["Meta keys", info.metaKeys.map(visibleInline).join(", ") || "none"],
    ["Integrity", integrity],
  ];
  ctx.io.stdout(alignColumns(rows.map(([k, v]) => [style.dim(k), v])).join("\n") + "\n");
  return ok ? 0 : 1;
}

/** The `info` command. */
export const infoCommand: Command = {
  name: "info",
  summary: "File, schema, journal mode, sizes and an integrity check",
  usage: USAGE,
  options: { full: { type: "boolean" }, "no-check": { type: "boolean" } },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
