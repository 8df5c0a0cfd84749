/**
 * `hermes-state vacuum`: rebuilds the database file to give the pages freed
 * by deletes back to the disk.
 *
 * @module
 */
import type { SessionStore } from "../../core/session_store.ts";
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import type { Command, Context } from "../command.ts";
import { fileSizes, serverBytes } from "../files.ts";
import { formatBytes } from "../../render/format.ts";
import { printJson } from "../json.ts";
import { statusLine } from "../progress.ts";
import { printableArgument } from "../shown_argument.ts";
import type { ParsedArgs } from "../parse.ts";
import { lockedReason, lockGivenUp } from "../locked_file.ts";
import { CommandError } from "../usage_error.ts";

const USAGE = `Usage: hermes-state vacuum [options]

Rebuild the database file so that the space freed by deleted sessions goes
back to the disk (SQLite's VACUUM, after a checkpoint of the WAL). Nothing
is deleted. It holds the write lock for the whole rewrite: stop the gateway
first. While another process writes, it waits as other writes do
(HERMES_STATE_LOCK_TIMEOUT), then fails with "database is locked"; while
another connection reads, the rewritten pages stay in the -wal until a later
checkpoint (the line says so). Reports the size before and after. On a
postgres:// URL: VACUUM (ANALYZE) of the store's tables, which
other connections may go on using; the space of deleted rows is reused by
new ones rather than given back (that would take VACUUM FULL, which locks
every table for its whole run).

Options:
  --json        Report the sizes as JSON
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state prune --older-than 90 --yes && hermes-state vacuum
`;

/** PostgreSQL: VACUUM (ANALYZE) of the store's tables; the space of deleted rows becomes reusable. */
async function vacuumServer(ctx: Context, store: SessionStore): Promise<number> {
  const before = (await serverBytes(store))!;
  await store.vacuum();
  const after = (await serverBytes(store))!;
  await store.close();
  if (ctx.json) printJson(ctx.io, { path: store.target, bytes_before: before, bytes_after: after });
  else {
    ctx.io.stdout(
      `Vacuumed ${store.target}: ${formatBytes(before)} → ${
        formatBytes(after)
      } (the space of deleted rows is reused by new ones; the tables keep their size).\n`,
    );
  }
  return 0;
}

/**
 * Why the sizes after include a `-wal`: the final checkpoint left the
 * rebuilt pages there (another connection was reading), so the file has not
 * shrunk yet, and the total can be larger than before.
 */
function pendingNote(walBytes: number): string {
  return ` for now: another connection was reading the file, so the rebuilt pages wait in its ` +
    `-wal (${formatBytes(walBytes)}) and the file shrinks at a later checkpoint, once that ` +
    `read is over (vacuum again then to have it at once)`;
}

/**
 * Awaits `work` (the open or the rebuild); a lock given up on becomes an
 * error that says the file was not rebuilt, and what to do.
 */
async function unlessLocked<T>(ctx: Context, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    throw new CommandError(
      `the file was not rebuilt: ${
        lockedReason(error, ctx.dbPath)
      } (stop the gateway, or wait until it is free, then run vacuum again)`,
      { cause: error },
    );
  }
}

async function run(_args: ParsedArgs, ctx: Context): Promise<number> {
  if (isPostgresTarget(ctx.dbPath)) {
    return await vacuumServer(ctx, await unlessLocked(ctx, ctx.openStore()));
  }
  // Measured before opening: what is on disk, not the -shm this connection adds.
  const before = fileSizes(sqlitePath(ctx.dbPath)).total;
  const store = await unlessLocked(ctx, ctx.openStore());
  // The rewrite takes 47 s for a million messages (3 GiB) here and says nothing until the end:
  // a line on the terminal says what is going on meanwhile.
  const erase = statusLine(
    ctx.io,
    `Rebuilding ${printableArgument(store.target)}, ${
      formatBytes(before)
    }: the whole file is rewritten…`,
  );
  await unlessLocked(ctx, store.vacuum()).finally(erase);
  // VACUUM writes the rebuilt file through the WAL: closing (the last
  // connection checkpoints) lets the file itself shrink before it is measured.
  await store.close();
  const sizes = fileSizes(store.target);
  const after = sizes.total;
  if (ctx.json) {
    printJson(ctx.io, {
      path: store.target,
      bytes_before: before,
      bytes_after: after,
      wal_bytes_after: sizes.wal,
    });
  } else {
    ctx.io.stdout(
      `Vacuumed ${store.target}: ${formatBytes(before)} → ${formatBytes(after)}${
        sizes.wal > 0 ? pendingNote(sizes.wal) : ""
      }.\n`,
    );
  }
  return 0;
}

/** The `vacuum` command. */
export const vacuumCommand: Command = {
  name: "vacuum",
  summary: "Give the space of deleted sessions back to the disk",
  usage: USAGE,
  options: {},
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
