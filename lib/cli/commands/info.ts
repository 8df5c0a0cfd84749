/**
 * `hermes-state info`: what the database file is: path, schema version,
 * journal mode, sizes, row counts and a quick integrity check.
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { fileSizes } from "../files.ts";
import { alignColumns, formatBytes, formatCount } from "../format.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";

const USAGE = `Usage: hermes-state info [options]

Describe the database file: its path, schema version, SQLite version,
journal mode, the sizes of the file and its -wal and -shm companions,
pages, row counts, search tables, and the result of a quick integrity check
(PRAGMA quick_check). Exits 1 when the check finds a problem.

Options:
  --no-check    Skip the integrity check (it reads the whole file)
  --json        Print everything as one JSON document
  --db PATH     The database file
  -h, --help    Show this help

Examples:
  hermes-state info
  hermes-state --db /srv/hermes/state.db info --json
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const store = await ctx.openStore();
  const info = await store.inspect({ integrity: !args.flag("no-check") });
  const files = fileSizes(store.target);
  const ok = info.integrity === null || (info.integrity.length === 1 && info.integrity[0] === "ok");
  if (ctx.json) {
    printJson(ctx.io, { ...info, readonly: store.readonly, files, ok });
    return ok ? 0 : 1;
  }
  const { style } = ctx;
  const integrity = info.integrity === null
    ? style.dim("not checked")
    : ok
    ? style.green("ok")
    : style.red(info.integrity.join("; "));
  const rows = [
    ["Path", store.target + (store.readonly ? style.yellow(" (opened read-only)") : "")],
    ["Schema version", String(info.schemaVersion ?? "none")],
    ["SQLite", info.sqliteVersion],
    ["Journal mode", info.journalMode],
    [
      "Size",
      `${formatBytes(files.total)} (${formatBytes(files.db)} file, ${formatBytes(files.wal)} WAL, ${
        formatBytes(files.shm)
      } SHM)`,
    ],
    [
      "Pages",
      `${formatCount(info.pageCount)} × ${formatCount(info.pageSize)} B, ${
        formatCount(info.freePages)
      } free`,
    ],
    ["Sessions", info.sessions === null ? style.red("unreadable") : formatCount(info.sessions)],
    ["Messages", info.messages === null ? style.red("unreadable") : formatCount(info.messages)],
    ["Search tables", info.ftsTables.join(", ") || "none"],
    ["Meta keys", info.metaKeys.join(", ") || "none"],
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
  options: { "no-check": { type: "boolean" } },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
