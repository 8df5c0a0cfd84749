/**
 * `hermes-state backup DEST`: an online, consistent, verified copy of the
 * database while writers run.
 *
 * @module
 */
import { BackupError } from "../../core/errors.ts";
import { backupDatabase } from "../../health/backup.ts";
import { isPostgresTarget } from "../../open_store.ts";
import type { Command, Context } from "../command.ts";
import { formatBytes, formatCount } from "../../render/format.ts";
import { printJson, snakeKeys } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { CommandError, InterruptedError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { assertStoreExists } from "../missing_store.ts";
import { lockTimeoutMs } from "../context.ts";
import { redrawsLines } from "../progress.ts";
import { groupedCount, groupedInteger } from "../../core/grouped_digits.ts";
import { recoverCommand } from "../../core/salvage_hint.ts";

const USAGE = `Usage: hermes-state backup [options] DEST

Copy the database to DEST while Hermes keeps writing: one consistent
snapshot (VACUUM INTO), checked before it takes its name (integrity_check
of every table and index, and row counts, on the copy), mode 0600. Never
writes over the database, nor over an existing file unless --force.

To restore: stop every writer (the gateway, the CLI), copy the backup over
state.db, delete state.db-wal and state.db-shm, then run
\`hermes-state doctor\`. A compressed backup is unpacked with gunzip first.

Options:
  --compress    Write the copy gzip-compressed (name it *.db.gz; a DEST
                ending in .gz is compressed without it)
  --full        Also run the search indexes' own checks on the copy
                (slower: about 35 s more at a million messages)
  --force       Replace DEST when it exists
  --json        Report the result as JSON
  --db PATH     The database file
  -h, --help    Show this help

Examples:
  hermes-state backup ~/backups/state-$(date +%F).db
  hermes-state backup --compress /mnt/nas/hermes/state.db.gz
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const [dest] = args.positionals;
  checkFileArgument(dest, { command: "backup", name: "DEST", role: "output" });
  if (isPostgresTarget(ctx.dbPath)) {
    throw new CommandError(
      "backup copies a SQLite state.db file; for a PostgreSQL store use pg_dump, " +
        "or hermes-state copy URL FILE to write its sessions into a new state.db",
    );
  }
  assertStoreExists(ctx.dbPath);
  const terminal = redrawsLines(ctx.io);
  let shown = "";
  // Ctrl-C or SIGTERM stops the backup at its next stage and removes its temporary files.
  const stop = new AbortController();
  const stopListening = ctx.io.onInterrupt?.((signal) => stop.abort(new InterruptedError(signal)));
  const result = await backupDatabase(ctx.dbPath, dest, {
    signal: stop.signal,
    force: args.flag("force"),
    // A name ending in .gz asks for what it says (import and gunzip read it so).
    compress: args.flag("compress") || /\.gz$/i.test(dest),
    full: args.flag("full"),
    lockTimeoutMs: lockTimeoutMs(ctx.io),
    onProgress: (stage, done, total) => {
      if (!terminal) return;
      const percent = total > 0 ? ` ${Math.floor((done / total) * 100)}%` : "";
      const line = `${stage[0].toUpperCase()}${stage.slice(1)}${percent}…`;
      if (line === shown) return;
      shown = line;
      ctx.io.stderr(`\r\x1b[K${line}`);
    },
  }).catch((error) => {
    throw error instanceof BackupError ? new CommandError(error.message, { cause: error }) : error;
  }).finally(() => {
    stopListening?.();
    if (shown !== "") ctx.io.stderr("\r\x1b[K");
  });
  // The copy holds every commit SQLite reads, but not those it cannot: said, and exit 1.
  const leftOut = result.walCommitsLeftOut;
  if (ctx.json) {
    printJson(ctx.io, snakeKeys(result));
    return leftOut === null ? 0 : 1;
  }
  const what = result.compressed ? "compressed copy" : "copy";
  ctx.io.stdout(
    `Backed up ${ctx.dbPath} to ${result.dest}: ${formatCount(result.sessions)} sessions, ` +
      `${formatCount(result.messages)} messages, ${formatBytes(result.bytes)} (${what}, verified${
        result.searchIndexesChecked ? " with its search indexes" : ""
      }).\n`,
  );
  for (const warning of result.ftsWarnings) {
    ctx.io.stdout(`${ctx.style.yellow("note:")} ${warning} (hermes-state doctor explains it)\n`);
  }
  if (leftOut === null) return 0;
  ctx.io.stderr(
    `hermes-state backup: the copy lacks ${groupedCount(leftOut.commits, "commit", "commits")} ` +
      `of the -wal: its frame ${groupedInteger(leftOut.frame)} fails its checksum, and SQLite ` +
      `reads nothing after it; ${recoverCommand(ctx.dbPath)} salvages them (keep a copy of the ` +
      `-wal until then)\n`,
  );
  return 1;
}

/** The `backup` command. */
export const backupCommand: Command = {
  name: "backup",
  summary: "Copy the database online, consistent and verified",
  usage: USAGE,
  options: { compress: { type: "boolean" }, force: { type: "boolean" }, full: { type: "boolean" } },
  minPositionals: 1,
  maxPositionals: 1,
  positionalNames: "DEST",
  run,
};
