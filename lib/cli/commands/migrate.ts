/**
 * `hermes-state migrate`: the one way to upgrade an older Hermes file
 * without writing to it otherwise. Read commands read an older file as it
 * is; a write command, or this one, runs the schema step the agent runs.
 *
 * @module
 */
import { openStore } from "../../open_store.ts";
import { SCHEMA_VERSION } from "../../sqlite/schema/schema_sql.ts";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";

const USAGE = `Usage: hermes-state migrate [options]

Upgrade the database to schema ${SCHEMA_VERSION} as the Hermes agent does when it opens
the file: missing columns are added and, from a version before ${SCHEMA_VERSION}, both
search indexes are rebuilt from every message. Read commands never do
this; they read an older file as it is. A file from a newer Hermes is left
as it is. Says what it did on standard error.

Options:
  --json        Print {path, before, after, upgraded} as JSON
  --db PATH     The database file
  -h, --help    Show this help

Examples:
  hermes-state --db ~/old-laptop/state.db migrate
`;

/** The schema version of `path`, read without changing the file. */
async function versionOf(path: string): Promise<number | null> {
  await using store = await openStore(path, { readonly: true });
  return (await store.inspect({ integrity: false })).schemaVersion;
}

async function migrate(_args: ParsedArgs, ctx: Context): Promise<number> {
  const before = await versionOf(ctx.dbPath.replace(/^sqlite:/, ""));
  const store = await ctx.openStore();
  const after = (await store.inspect({ integrity: false })).schemaVersion;
  const upgraded = before !== after;
  if (ctx.json) printJson(ctx.io, { path: store.target, before, after, upgraded });
  if (upgraded) ctx.io.stderr(`upgraded schema ${before ?? "none"} → ${after}\n`);
  else if ((after ?? 0) > SCHEMA_VERSION) {
    ctx.io.stderr(`schema ${after} is newer than ${SCHEMA_VERSION}: left as it is\n`);
  } else ctx.io.stderr(`schema ${after}: nothing to upgrade\n`);
  return 0;
}

/** The `migrate` command. */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "Upgrade an older Hermes file to schema 11",
  usage: USAGE,
  options: {},
  minPositionals: 0,
  maxPositionals: 0,
  run: migrate,
};
