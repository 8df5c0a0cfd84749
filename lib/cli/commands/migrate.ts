/**
 * `hermes-state migrate`: the one way to upgrade an older Hermes file
 * without writing to it otherwise. Read commands read an older file as it
 * is; a write command, or this one, runs the schema step the agent runs.
 * On a PostgreSQL URL it runs the store's migrations (read commands refuse
 * a schema this version has not migrated yet).
 *
 * @module
 */
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import { fileSizes } from "../files.ts";
import { formatBytes } from "../../render/format.ts";
import { statusLine } from "../progress.ts";
import { printableArgument } from "../shown_argument.ts";
import { assertStoreExists } from "../missing_store.ts";
import { SCHEMA_VERSION } from "../../sqlite/schema/schema_sql.ts";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { lockedReason, lockGivenUp } from "../locked_file.ts";
import { CommandError } from "../usage_error.ts";

const USAGE = `Usage: hermes-state migrate [options]

Upgrade the database to schema ${SCHEMA_VERSION} as the Hermes agent does when it opens
the file: missing columns are added and, from a version before ${SCHEMA_VERSION}, both
search indexes are rebuilt from every message. Read commands never do
this; they read an older file as it is. A file from a newer Hermes is left
as it is. Says what it did on standard error.

On a postgres:// URL: runs the migrations of the store's schema that this
hermes-state knows and the schema has not had yet (creating it when it is
missing), as any write does; before/after are migration numbers there.
It also adds the columns and tables older versions ignore ("added" in --json),
which sync adds when missing: run by the schema's owner, it prepares the
server for sync roles that may not alter its tables.
Read commands refuse a schema at an older migration, after an upgrade of
hermes-state, until this (or a write) has run once.

Options:
  --json        Print {path, before, after, upgraded} as JSON (and added, on
                a postgres:// URL)
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state --db ~/old-laptop/state.db migrate
  hermes-state --db "postgres://hermes@db/hermes?schema=hermes" migrate
`;

/**
 * The schema version of the command's file, read without changing it
 * (opened as every read command opens it: a file another process holds
 * whole is waited for as `HERMES_STATE_LOCK_TIMEOUT` says).
 */
async function versionBefore(ctx: Context): Promise<number | null> {
  const store = await ctx.openStore({ access: "read" });
  try {
    return (await store.inspect({ integrity: false })).schemaVersion;
  } finally {
    await store.close();
  }
}

/** The `state_meta` keys of a full-text table still being filled (`fts_backfill.ts`). */
const BACKFILL_KEY = "fts_backfill:";

/**
 * Whether the file's upgrade stopped half-way (the new search tables made,
 * not yet filled with the older messages), read without changing it;
 * `undefined` when it cannot be read either.
 */
async function halfDone(ctx: Context): Promise<boolean | undefined> {
  try {
    const store = await ctx.openStore({ access: "read" });
    try {
      const info = await store.inspect({ integrity: false });
      return info.metaKeys.some((key) => key.startsWith(BACKFILL_KEY));
    } finally {
      await store.close();
    }
  } catch (error) {
    if (lockGivenUp(error)) return undefined;
    throw error;
  }
}

/**
 * Awaits the write open, which runs the upgrade; a lock given up on becomes
 * an error that says how far the upgrade went (nothing, or half-way, the
 * file whole either way) and that the same `migrate` goes on from there.
 */
async function stoppedByLockSaying<T>(
  ctx: Context,
  before: number | null,
  open: Promise<T>,
): Promise<T> {
  try {
    return await open;
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    const why = lockedReason(error, ctx.dbPath);
    const half = await halfDone(ctx);
    const next = "once it is free, the same migrate again goes on from there";
    const what = half === undefined
      ? `the upgrade stopped: ${why}; ${next}`
      : half
      ? `the upgrade of schema ${before ?? "none"} stopped half-way: ${why}; the file is whole, ` +
        `its search indexes not yet filled with the older messages (search finds those by ` +
        `plain substring meanwhile); ${next}`
      : `nothing was upgraded (schema ${before ?? "none"}): ${why} (once it is free, run the ` +
        `same migrate again)`;
    throw new CommandError(what, { cause: error });
  }
}

/** The PostgreSQL form: migration steps instead of schema versions. */
async function migrateServer(ctx: Context): Promise<number> {
  const { migratePostgresStore } = await import("../../postgres/postgres_store.ts");
  const { target, before, after, known, added } = await migratePostgresStore(ctx.dbPath);
  const upgraded = before !== after;
  if (ctx.json) printJson(ctx.io, { path: target, before, after, upgraded, added });
  if (before === null) ctx.io.stderr(`created the store (migration ${after})\n`);
  else if (upgraded) ctx.io.stderr(`upgraded migration ${before} → ${after}\n`);
  else if (after > known) {
    ctx.io.stderr(`migration ${after} is newer than ${known}: left as it is\n`);
  } else if (added.length > 0) {
    ctx.io.stderr(
      `migration ${after}, added ${added.join(", ")} (what older versions ignore)\n`,
    );
  } else ctx.io.stderr(`migration ${after}: nothing to upgrade\n`);
  return 0;
}

async function migrate(_args: ParsedArgs, ctx: Context): Promise<number> {
  if (isPostgresTarget(ctx.dbPath)) return await migrateServer(ctx);
  assertStoreExists(ctx.dbPath);
  const before = await versionBefore(ctx);
  // From an older version the search indexes are built from every message (a minute or more for
  // a million), silent until the end: a line on the terminal says what goes on meanwhile.
  const erase = before !== null && before < SCHEMA_VERSION
    ? statusLine(
      ctx.io,
      `Upgrading ${printableArgument(ctx.dbPath)}, ${
        formatBytes(fileSizes(sqlitePath(ctx.dbPath)).total)
      }: ` +
        `schema ${before} → ${SCHEMA_VERSION}, both search indexes built from every message…`,
    )
    : () => {};
  const store = await stoppedByLockSaying(ctx, before, ctx.openStore()).finally(erase);
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
  summary: "Upgrade an older Hermes file to schema 11 (or a server's schema)",
  usage: USAGE,
  options: {},
  minPositionals: 0,
  maxPositionals: 0,
  run: migrate,
};
