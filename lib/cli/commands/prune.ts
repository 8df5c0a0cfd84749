/**
 * `hermes-state prune`: deletes ended sessions older than N days, after
 * asking; `--dry-run` lists them instead.
 *
 * @module
 */
import type { PruneCandidate } from "../../core/prune_options.ts";
import type { Command, Context } from "../command.ts";
import { findingAccess } from "../context.ts";
import { alignColumns, formatCount, formatDate, oneLine, plural } from "../../render/format.ts";
import { printJson } from "../json.ts";
import { integerOption, type ParsedArgs } from "../parse.ts";
import { sayNote, syncedNote } from "../origin.ts";
import { confirm } from "../prompt.ts";
import { sessionsDirFor } from "../sessions_dir.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { CommandError, InterruptedError, UsageError } from "../usage_error.ts";
import { pruneInSteps } from "../prune_steps.ts";
import { redrawsLines } from "../progress.ts";
import { truncate } from "../../render/width.ts";
import { lockedReason, type LockGivenUp, lockGivenUp } from "../locked_file.ts";
import type { SessionStore } from "../../core/session_store.ts";
import type { PruneCandidatesOptions } from "../../core/prune_options.ts";

const USAGE = `Usage: hermes-state prune [options]
       hermes-state prune --ghosts [--dry-run] [--yes]

Delete every ended session that started more than DAYS days ago, with its
messages, after asking (end of input counts as no). Open sessions are never
pruned. Children of a pruned session are kept as top-level sessions.
Transcript files in the "sessions" folder beside the database go too.
Exits 1 when the answer is no. Ctrl-C stops it between two steps, says how
many sessions were pruned (each whole) and exits 130; running it again
finishes.

With --ghosts, delete the empty sessions the terminal UI leaves behind
instead: "tui" sessions that ended with no message and no title, started
more than a day ago (what Hermes itself prunes once).

Options:
  --older-than DAYS   Age in days (default 90)
  --source SOURCE     Only sessions of this source
  --dry-run           List what would be deleted; delete nothing
  --ghosts            Delete empty, untitled, ended "tui" sessions instead
  -y, --yes           Do not ask
  --json              Report the result as JSON
  --db PATH           The database file, or a postgres:// URL
  -h, --help          Show this help

Examples:
  hermes-state prune --older-than 30 --dry-run
  hermes-state prune --older-than 180 --source telegram --yes
  hermes-state prune --ghosts --yes
`;

/** Sessions above which a "Pruning…" line is shown on a terminal. */
const ANNOUNCE_ABOVE = 500;

function listing(candidates: readonly PruneCandidate[]): string {
  const rows = candidates.map((c) => [
    visibleInline(c.id),
    visibleInline(c.source),
    formatDate(c.started_at),
    visibleInline(c.end_reason ?? ""),
    plural(c.message_count, "message"),
    truncate(visibleControls(oneLine(c.title ?? "")), 40),
  ]);
  return alignColumns(rows).join("\n") + "\n";
}

function sessions(n: number): string {
  return plural(n, "session");
}

/**
 * A dry run's answer: the sessions that would go (or JSON), or that there
 * are none in `scope`; then the note on synced sessions, if any.
 */
function printDryRun(
  ctx: Context,
  candidates: readonly PruneCandidate[],
  options: { scope: string; note: string | undefined },
): number {
  const { scope, note } = options;
  if (ctx.json) {
    printJson(ctx.io, { dry_run: true, would_prune: candidates.length, sessions: candidates });
  } else if (candidates.length === 0) {
    ctx.io.stdout(`No ${scope}.\n`);
  } else {
    ctx.io.stdout(listing(candidates));
    ctx.io.stdout(`${sessions(candidates.length)} would be deleted (dry run: nothing was).\n`);
  }
  sayNote(ctx, note);
  return 0;
}

/** Nothing in `scope`: said without a question, and the file is not opened for writing. */
function nothingToPrune(ctx: Context, scope: string): number {
  if (ctx.json) printJson(ctx.io, { pruned: 0 });
  else ctx.io.stdout(`No ${scope}.\n`);
  return 0;
}

/** How many of the listed sessions a prune a lock stopped had pruned. */
interface PrunedSoFar {
  /** Sessions pruned. */
  readonly pruned: number;
  /** False when the file could not be read either: `pruned` is what the steps done counted. */
  readonly exact: boolean;
}

/**
 * How many of `candidates` are gone, after a lock was given up on (maybe
 * in the middle of a step, whose count was lost with it): those that
 * `query` lists no more. When the file cannot be read either (another
 * process holds it whole), `known`, the count of the steps done.
 */
async function prunedBeforeLock(
  reader: SessionStore,
  candidates: readonly PruneCandidate[],
  query: PruneCandidatesOptions,
  known: number,
): Promise<PrunedSoFar> {
  try {
    const left = new Set((await reader.pruneCandidates(query)).map((c) => c.id));
    return { pruned: candidates.filter((c) => !left.has(c.id)).length, exact: true };
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    return { pruned: known, exact: false };
  }
}

/**
 * The answer of a prune a lock stopped: `--json` prints `{pruned,
 * not_pruned}` (`not_pruned` null when unknown), and the error says how
 * many sessions went, why it stopped, and that the same prune finishes.
 */
function stoppedByLock(
  ctx: Context,
  stop: PrunedSoFar & { readonly of: number; readonly locked: LockGivenUp },
): CommandError {
  const { pruned, exact, of, locked } = stop;
  if (ctx.json) printJson(ctx.io, { pruned, not_pruned: exact ? of - pruned : null });
  const why = lockedReason(locked, ctx.dbPath);
  if (pruned === 0 && exact) {
    return new CommandError(
      `nothing was pruned: ${why} (once it is free, run the same prune again)`,
      { cause: locked },
    );
  }
  const done = exact || pruned > 0
    ? `pruned ${exact ? "" : "at least "}${formatCount(pruned)} of ${sessions(of)}`
    : `pruned some of ${sessions(of)} (the file cannot be read to count them)`;
  return new CommandError(
    `${done}, each whole ` +
      `with its messages, then stopped: ${why}; once it is free, the same prune again finishes`,
    { cause: locked },
  );
}

/** What `prune --ghosts` deletes, as a dry run names it. */
const GHOSTS = 'empty, untitled, ended "tui" sessions started more than a day ago';

/** `prune --ghosts`: Hermes's own clean-up of empty terminal sessions. */
async function pruneGhosts(args: ParsedArgs, ctx: Context): Promise<number> {
  for (const other of ["older-than", "source"]) {
    if (args.has(other)) {
      throw new UsageError(`--ghosts cannot be combined with --${other}`, { command: "prune" });
    }
  }
  const dryRun = args.flag("dry-run");
  // Found and asked about by a read, as `list` reads: a dry run or a cancelled
  // prune never upgrades an older file (a server's older schema, only a dry run).
  const reader = await ctx.openStore({ access: dryRun ? "read" : findingAccess(ctx) });
  const candidates = await reader.pruneCandidates({ ghosts: true });
  const note = await syncedNote(reader, candidates.map((c) => c.id), "prune");
  if (dryRun) return printDryRun(ctx, candidates, { scope: GHOSTS, note });
  sayNote(ctx, note);
  if (candidates.length === 0) return nothingToPrune(ctx, GHOSTS);
  if (!args.flag("yes")) {
    const question = 'Delete every ended "tui" session with no message and no title, ' +
      "started more than a day ago? [y/N] ";
    if (!(await confirm(ctx.io, question))) {
      if (ctx.json) printJson(ctx.io, { pruned: 0 });
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  let pruned: number;
  try {
    const store = await ctx.openStore();
    pruned = await store.pruneEmptyGhostSessions({
      sessionsDir: sessionsDirFor(store.target) ?? null,
    });
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    const left = await prunedBeforeLock(reader, candidates, { ghosts: true }, 0);
    throw stoppedByLock(ctx, { ...left, of: candidates.length, locked: error });
  }
  if (ctx.json) printJson(ctx.io, { pruned });
  else ctx.io.stdout(`Pruned ${sessions(pruned)} (empty, untitled tui sessions).\n`);
  return 0;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  if (args.flag("ghosts")) return await pruneGhosts(args, ctx);
  const days = integerOption(args, "older-than", { fallback: 90, command: "prune" });
  const source = args.string("source") || null;
  const dryRun = args.flag("dry-run");
  const reader = await ctx.openStore({ access: dryRun ? "read" : findingAccess(ctx) });
  // The cutoff is fixed now: a session that ages past it while the question waits is not counted.
  const listedAt = ctx.io.now();
  const candidates = await reader.pruneCandidates({ olderThanDays: days, source });
  const scope = `ended sessions older than ${plural(days, "day")}${
    source ? ` from '${source}'` : ""
  }`;
  // A synced session pruned here comes back from its file: said before the question.
  const note = await syncedNote(reader, candidates.map((c) => c.id), "prune");
  if (dryRun) return printDryRun(ctx, candidates, { scope, note });
  sayNote(ctx, note);
  if (candidates.length === 0) return nothingToPrune(ctx, scope);
  if (!args.flag("yes")) {
    const messages = candidates.reduce((sum, c) => sum + c.message_count, 0);
    const question = `Delete ${sessions(candidates.length)} (${
      plural(messages, "message")
    }): all ${scope}? [y/N] `;
    if (!(await confirm(ctx.io, question))) {
      if (ctx.json) printJson(ctx.io, { pruned: 0 });
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  const announce = redrawsLines(ctx.io) && candidates.length > ANNOUNCE_ABOVE;
  // Ctrl-C or SIGTERM stops between two steps (each whole, in its own transactions) and says how far.
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  const stopListening = ctx.io.onInterrupt?.((signal) => interrupted = signal);
  let run = { pruned: 0, finished: false };
  // Sessions pruned by the steps done, for a lock given up on in the middle of one.
  let stepsDone = 0;
  let shown = announce;
  if (announce) ctx.io.stderr(`Pruning ${sessions(candidates.length)}…`);
  try {
    const store = await ctx.openStore();
    run = await pruneInSteps(store, candidates, {
      days,
      listedAt,
      source,
      sessionsDir: sessionsDirFor(store.target) ?? null,
      now: () => ctx.io.now(),
      stopped: () => interrupted !== undefined,
      onStep: (done) => {
        stepsDone = done;
        if (announce) {
          ctx.io.stderr(
            `\r\x1b[KPruning ${sessions(candidates.length)}… ${formatCount(done)} done`,
          );
        }
      },
    });
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    if (shown) ctx.io.stderr("\r\x1b[K");
    shown = false;
    // The listing's cutoff: the sessions listed that are still there were not pruned.
    const since = Math.max(0, ctx.io.now() - listedAt) / 86400;
    const query = { olderThanDays: days + since, source };
    const left = await prunedBeforeLock(reader, candidates, query, stepsDone);
    throw stoppedByLock(ctx, { ...left, of: candidates.length, locked: error });
  } finally {
    stopListening?.();
    if (shown) ctx.io.stderr("\r\x1b[K");
  }
  const { pruned } = run;
  if (ctx.json) printJson(ctx.io, { pruned });
  if (interrupted !== undefined && !run.finished) {
    throw new InterruptedError(
      interrupted,
      `stopped after pruning ${formatCount(pruned)} of ${
        sessions(candidates.length)
      }, each whole with its ` +
        "messages; the same prune again finishes",
    );
  }
  if (!ctx.json) ctx.io.stdout(`Pruned ${sessions(pruned)}.\n`);
  return 0;
}

/** The `prune` command. */
export const pruneCommand: Command = {
  name: "prune",
  summary: "Delete ended sessions older than N days",
  usage: USAGE,
  options: {
    "older-than": { type: "string" },
    source: { type: "string", names: "sources" },
    "dry-run": { type: "boolean" },
    ghosts: { type: "boolean" },
    yes: { type: "boolean", short: "y" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
