/**
 * `hermes-state doctor [--fix]`: checks the database file (integrity,
 * foreign keys, both FTS tables and their coverage, counters, lineage,
 * schema, WAL, free pages, file modes), or a PostgreSQL store
 * (`postgres/doctor/`, loaded when a URL is given), and repairs what it can.
 *
 * @module
 */
import { shellWord } from "../../core/shell_word.ts";
import { existsSync } from "node:fs";
import { doctor } from "../../health/doctor.ts";
import type { CheckStatus, HealthCheck } from "../../core/health_report.ts";
import { isPostgresTarget } from "../../open_store.ts";
import type { Command, Context } from "../command.ts";
import { alignColumns, formatCount, plural } from "../../render/format.ts";
import { shownFileSize } from "../files.ts";
import { printJson, snakeKeys } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { Progress, statusLine } from "../progress.ts";
import { printableArgument } from "../shown_argument.ts";
import type { Style } from "../../render/style.ts";
import { CommandError, InterruptedError, UsageError } from "../usage_error.ts";
import { DoctorFixError } from "../../health/doctor_fix_error.ts";
import { StorageError } from "../../core/storage_error.ts";
import { lockTimeoutMs } from "../context.ts";
import { assertStoreExists } from "../missing_store.ts";
import { readOnlyPart, unwritableReason } from "../writable.ts";
import type { Repair } from "../../core/health_report.ts";

const USAGE = `Usage: hermes-state doctor [options]

Check the database file and say, for each check, ok, warning or problem,
with one line of explanation and the fix: SQLite's integrity check and
foreign keys; each search table's own check (telling the known SQLite 3.40
trigram condition apart from damage) and its coverage of every message;
the sessions' counters; the message id sequence; parent links; the schema
against version 11; the WAL and free pages; the mode and owner of
state.db, -wal and -shm.
Without --fix the file is opened read-only and nothing is written.

--fix repairs what it can and never deletes a message: rebuilds damaged or
stale search tables (in batches, safe while a gateway writes), recounts
counters, raises a message id sequence left behind the largest id, clears
broken parent links, creates missing indexes, runs wal_checkpoint(TRUNCATE)
and sets mode 0600. An index out of step with its table (the only damage
found: the table data is whole) is rebuilt with REINDEX, in one
transaction, and checked again. Any other damage (integrity problem) is
left alone: use \`hermes-state recover\`.

On a PostgreSQL store (--db postgres://…) the checks are the store's own,
read in one snapshot: every migration run, indexes missing or left invalid
by an interrupted concurrent build, the message id sequence, one search row
per message and search vectors that match each message's text (the newest
200,000 unless --full), the counters, cycles of parent links, and synced
files without a pass for a week. --fix migrates, builds indexes without
blocking writes, and writes what is missing or differs in short
transactions; --vacuum runs VACUUM (ANALYZE), which does not block writers.

Exits 0 when healthy (warnings allowed), 1 when a problem remains.

Options:
  --fix         Repair what can be repaired
  --full        Full integrity_check, and search coverage of every message
                (sampled above 200,000 messages otherwise; on PostgreSQL,
                the search vectors of every message)
  --vacuum      With --fix: also VACUUM (holds the write lock while it
                rewrites the file: stop the gateway first; on PostgreSQL,
                VACUUM (ANALYZE), which does not)
  --json        Print the findings and repairs as one JSON document
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state doctor
  hermes-state doctor --fix
  hermes-state --db /srv/hermes/state.db doctor --full --json
  hermes-state --db "$URL" doctor --fix
`;

/** `, 3.0 GiB: every page and both search indexes` (the size when the file can be measured). */
function sizeNote(path: string): string {
  const size = shownFileSize(path);
  return size === undefined ? "" : `, ${size}: every page and both search indexes`;
}

function label(status: CheckStatus, style: Style): string {
  if (status === "ok") return style.green("ok");
  if (status === "warning") return style.yellow("warning");
  return style.red("problem");
}

function render(checks: readonly HealthCheck[], style: Style): string {
  const lines: string[] = [];
  const rows = checks.map((check) => [label(check.status, style), check.name, check.summary]);
  alignColumns(rows).forEach((line, i) => {
    lines.push(line);
    const fix = checks[i].fix;
    if (fix !== undefined) lines.push(`${" ".repeat(10)}${style.dim("fix:")} ${fix}`);
  });
  return lines.join("\n") + "\n";
}

function renderRepairs(repairs: readonly Repair[], style: Style, unit: string): string {
  let out = "";
  for (const repair of repairs) {
    const lock = repair.longestLockMs > 0
      ? style.dim(` (longest ${unit} ${Math.ceil(repair.longestLockMs)} ms)`)
      : "";
    out += `  ${repair.name}: ${repair.summary}${lock}\n`;
  }
  return out;
}

/**
 * A `--fix` that stopped after its checks: the findings and the repairs
 * committed are printed, then why it stopped, in the words of the other
 * write commands (a read-only file or folder, a lock held, an interruption).
 */
function stopped(
  ctx: Context,
  error: DoctorFixError,
  run: {
    signal: "SIGINT" | "SIGTERM" | undefined;
    current: { stage: string; done: number; total: number } | undefined;
  },
): number {
  const { style } = ctx;
  if (!ctx.json) {
    let out = `${style.bold(error.path)}\n${render(error.checks, style)}`;
    out += `\n${style.bold("Repairs")}\n`;
    out += error.repairs.length > 0 ? renderRepairs(error.repairs, style, "lock") : "  none\n";
    ctx.io.stdout(out);
  }
  if (error.interrupted) {
    const { current } = run;
    const during = current === undefined
      ? ""
      : ` while ${current.stage} (${formatCount(current.done)} of ${
        formatCount(current.total)
      } messages done; ` +
        "the search tables answer meanwhile and every new message is indexed)";
    ctx.io.stderr(
      `hermes-state doctor: interrupted by ${run.signal ?? "a signal"}${during}: ` +
        `${plural(error.repairs.length, "repair")} finished, the rest left; ` +
        `what is written is consistent: run "hermes-state --db ${
          shellWord(error.path)
        } doctor --fix" ` +
        "again to finish\n",
    );
    return run.signal === "SIGTERM" ? 143 : 130;
  }
  const cause = error.cause;
  const refused = cause instanceof StorageError && cause.kind === "readonly";
  const part = readOnlyPart(error.path, { evenAsRoot: refused });
  if (part !== undefined) {
    throw new CommandError(`Cannot write ${error.path}: ${unwritableReason(part)}`, { cause });
  }
  throw cause;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const fix = args.flag("fix");
  if (args.flag("vacuum") && !fix) {
    throw new UsageError("--vacuum needs --fix", { command: "doctor" });
  }
  assertStoreExists(ctx.dbPath);
  const postgres = isPostgresTarget(ctx.dbPath);
  // A file or folder this user may not write gets the checks only, then the words of the other
  // write commands: opened to write, SQLite would fall back to reading, leaving a -wal and
  // -shm of this user's that the owner's Hermes could not write.
  const unwritable = fix && !postgres && existsSync(ctx.dbPath)
    ? readOnlyPart(ctx.dbPath)
    : undefined;
  const fixing = fix && unwritable === undefined;
  // The checks read every page and both search indexes (about 40 s for a million messages),
  // and say nothing until the end: a line on the terminal says what is going on meanwhile.
  const erase = statusLine(
    ctx.io,
    `Checking ${
      postgres ? "the store" : `${printableArgument(ctx.dbPath)}${sizeNote(ctx.dbPath)}`
    }…`,
  );
  const progress = new Map<string, Progress>();
  const check = postgres
    ? (await import("../../postgres/doctor/doctor.ts")).doctorPostgresStore
    : doctor;
  // Ctrl-C stops the repairs between two transactions, and the report says what was done.
  const stop = new AbortController();
  let signal: "SIGINT" | "SIGTERM" | undefined;
  const stopListening = fixing && !postgres
    ? ctx.io.onInterrupt?.((received) => {
      signal = received;
      // Its words are said only when it stops the checks' wait: nothing was written then.
      stop.abort(new InterruptedError(received, "nothing was repaired"));
    })
    : undefined;
  let current: { stage: string; done: number; total: number } | undefined;
  let report;
  try {
    report = await check(ctx.dbPath, {
      fix: fixing,
      full: args.flag("full"),
      vacuum: args.flag("vacuum"),
      // The server's doctor reads the time (SQLite's takes no clock: its options are checked).
      ...(postgres ? { clock: () => ctx.io.now() } : {}),
      lockTimeoutMs: lockTimeoutMs(ctx.io),
      signal: stop.signal,
      onProgress: (stage, done, total) => {
        current = { stage, done, total };
        let line = progress.get(stage);
        if (line === undefined) progress.set(stage, line = new Progress(ctx.io, stage));
        line.update(done, "messages");
      },
    }).finally(() => {
      stopListening?.();
      for (const line of progress.values()) line.done();
      erase();
    });
  } catch (error) {
    if (!(error instanceof DoctorFixError)) throw error;
    return stopped(ctx, error, { signal, current });
  }
  const code = report.healthy ? 0 : 1;
  const refusal = unwritable === undefined
    ? undefined
    : new CommandError(`Cannot write ${ctx.dbPath}: ${unwritableReason(unwritable)}`);
  if (ctx.json) {
    printJson(ctx.io, snakeKeys(report));
    if (refusal !== undefined) throw refusal;
    return code;
  }
  const { style } = ctx;
  const engine = postgres ? report.sqliteVersion : `SQLite ${report.sqliteVersion}`;
  let out = `${style.bold(report.path)} ${style.dim(`(${engine})`)}\n`;
  out += render(report.checks, style);
  if (fixing) {
    const integrity = report.checks.find((check) => check.name === "integrity");
    const wal = report.checks.find((check) => check.name === "wal");
    if (integrity?.status === "problem" && !integrity.fixable) {
      out += `\n${style.red("Nothing repaired:")} the file is damaged; recover it first.\n`;
    } else if (!postgres && wal?.status === "problem") {
      out += `\n${style.red("Nothing repaired:")} the -wal holds commits SQLite ignores; ` +
        `copy it aside first.\n`;
    } else {
      out += `\n${style.bold("Repairs")}\n`;
      out += renderRepairs(report.repairs, style, postgres ? "transaction" : "lock");
      out += `\n${style.bold("After")}\n${render(report.after ?? [], style)}`;
    }
  }
  const verdict = report.healthy ? style.green("healthy") : style.red("problems found");
  out += `\n${verdict}\n`;
  ctx.io.stdout(out);
  if (refusal !== undefined) throw refusal;
  return code;
}

/** The `doctor` command. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the file and repair what can be repaired (--fix)",
  usage: USAGE,
  options: {
    fix: { type: "boolean" },
    full: { type: "boolean" },
    vacuum: { type: "boolean" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
