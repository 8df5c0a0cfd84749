/**
 * `hermes-state sync FILE… --to URL`: ships each host's state.db to one
 * central PostgreSQL store, incrementally (see `lib/postgres/sync.ts`),
 * once or, with `--follow`, every few seconds until interrupted.
 *
 * @module
 */
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import type { Command, Context } from "../command.ts";
import { type ParsedArgs, positiveSeconds } from "../parse.ts";
import { pauseUnless } from "../pause.ts";
import { jsonLine } from "../../render/json_line.ts";
import { snakeKeys } from "../json.ts";
import { formatCount, plural } from "../../render/format.ts";
import { Progress } from "../progress.ts";
import { InterruptedError, UsageError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { lockTimeoutMs } from "../context.ts";
import { isMissing, noDatabaseError } from "../missing_store.ts";
import { isOriginName, ORIGIN_NAME_FORM } from "../../core/origin_name.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { fileIdentity } from "../../files/same_file.ts";
import { visibleInline } from "../../render/transcript.ts";
import type { NotShipped } from "../../postgres/sync.ts";

const USAGE = `Usage: hermes-state sync [options] FILE... --to URL [--follow[=SECONDS]]

Ship each state.db FILE (a path or sqlite:PATH, as copy takes it; Python
Hermes may be writing it) to the PostgreSQL store at URL, where every
host's sessions are searchable together. A pass costs what changed since
the last one: new and changed sessions and messages, ends, titles, token
counts, goals, deletions, prunes and rewritten transcripts all reach the
server; a FILE is only read.

Each FILE is an origin on the server, named after the host (or --origin),
and its sessions are stored as ORIGIN/ID (their goals as goal:ORIGIN/ID), so
two hosts' sessions with the same id never overwrite each other. A title
another origin already uses gets " [ORIGIN]" appended. A FILE that holds
none of the sessions its origin has on the server is refused (another
machine's file under the same host name and path, or a new file in the old
one's place), unless --force; with --follow it is named once and looked
at again at each pass (shipped once the origin's file is back in place).

In a container, whose host name changes when it is re-created, give the
origin a name: --origin NAME follows the FILE to its new host.

Two machines cloned from one disk image ship their files as one origin (the
same host name and path), and each pass deletes the sessions the other
shipped. Once that is seen (a pass would bring back a session a pass
deleted, or delete one again, while deleting others), the pass is refused:
sync one machine's file with --host NAME.

Options:
  --to URL          The PostgreSQL store
                    (postgres://user:pass@host/db?schema=NAME)
  --origin NAME     The FILE's origin, new or synced before from another host
                    or path (one FILE only; 1 to 64 letters, digits, ".", "_"
                    or "-", taken as given; default: the host name)
  --host NAME       The host name the FILEs are recorded under (default: this
                    machine's); a machine cloned from another's disk gives
                    its own, and its FILE ships as a new origin
  --force           Ship a FILE that holds none of its origin's sessions on the
                    server, deleting those from the server, or one refused as
                    a second file of its origin (a backup restored over it)
  --follow[=SECONDS]
                    Keep syncing until interrupted, a pass every SECONDS
                    (default 5; Ctrl-C ends after the pass under way); after a
                    FILE's first pass, one that changes nothing prints nothing,
                    and an error is named once until it changes; a FILE
                    missing or refused is looked at again at each pass; exit 0
                    unless a FILE is refused or failing when stopped
  --every SECONDS   The same pause, for --follow without a value (an older
                    spelling)
  --json            Report each pass as JSON, one object a line
  -h, --help        Show this help

Examples:
  hermes-state sync ~/.hermes/state.db --to postgres://hermes@db:5432/hermes
  hermes-state sync /srv/a/state.db /srv/b/state.db --to "$URL" --follow=10
`;

/** `, N goals` for a pass that wrote or removed goals; nothing for one that did not. */
function goalsWritten(result: { readonly goals: number }): string {
  return result.goals === 0 ? "" : `, ${result.goals} goal${result.goals === 1 ? "" : "s"}`;
}

/** Seconds between passes: `--follow=SECONDS`, else `--every SECONDS`, else 5. */
function followSeconds(args: ParsedArgs): number {
  const inline = args.string("follow");
  const every = args.string("every");
  if (inline !== undefined && every !== undefined) {
    throw new UsageError("give the pause once: --follow=SECONDS or --every SECONDS", {
      command: "sync",
    });
  }
  const [name, text] = inline !== undefined ? ["--follow", inline] : ["--every", every ?? "5"];
  return positiveSeconds(name, text, "sync");
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const url = args.string("to");
  if (url === undefined) {
    throw new UsageError("sync needs --to URL (a postgres:// store)", { command: "sync" });
  }
  if (!isPostgresTarget(url)) {
    throw new UsageError(`--to must be a postgres:// URL, got ${quotedValue(url)}`, {
      command: "sync",
    });
  }
  for (const file of args.positionals) {
    checkFileArgument(file, { command: "sync", name: "FILE", role: "input" });
  }
  // `sqlite:PATH` names the file PATH, as copy's SRC does.
  const files = args.positionals.map(sqlitePath);
  refuseOneFileTwice(files);
  const origin = args.string("origin");
  if (origin !== undefined && files.length > 1) {
    throw new UsageError("--origin names one FILE's origin: give one FILE", { command: "sync" });
  }
  if (origin !== undefined && !isOriginName(origin)) {
    // Taken as given: a name rewritten to fit could be another file's origin, and a pass of
    // this file would then delete that one's sessions.
    throw new UsageError(
      `--origin must be ${ORIGIN_NAME_FORM}, got ${quotedValue(origin)}`,
      { command: "sync" },
    );
  }
  const host = args.string("host");
  if (host !== undefined && host.trim() === "") {
    throw new UsageError("--host needs a host name", { command: "sync" });
  }
  const follow = args.has("follow");
  if (!follow && args.string("every") !== undefined) {
    throw new UsageError("--every is the pause of --follow: give --follow too", {
      command: "sync",
    });
  }
  const every = followSeconds(args);
  // A file another process holds whole is waited for as long as any command waits for a lock.
  const fileWaitMs = lockTimeoutMs(ctx.io);
  for (const file of files) {
    if (!isMissing(file)) continue;
    // `--follow 10` reads 10 as a FILE: say how the seconds are given.
    const seconds = follow && args.string("follow") === undefined && /^\d+(?:\.\d+)?$/.test(file);
    // With --follow, a FILE not there (yet, or for now) is named at its pass, and looked for
    // again at each, as one that goes away later.
    if (follow && !seconds) continue;
    const missing = noDatabaseError(file, { argument: true });
    if (seconds) missing.message += `; for a pause of ${file} s, write --follow=${file}`;
    throw missing;
  }
  const sync = await import("../../postgres/sync.ts");
  const { connectSyncTarget, syncFile, syncLockName, SyncRefusedError, wroteAnything } = sync;
  if (!follow) {
    // No FILE that a pass could read (not a database, not Hermes's): said without connecting,
    // which makes the store first (the new schema of a mistyped URL, left empty).
    const errors = await Promise.all(files.map(sync.fileOpenError));
    if (errors.every((error) => error !== undefined)) {
      for (const [i, error] of errors.entries()) {
        ctx.io.stderr(`hermes-state: sync: ${visibleInline(files[i])}: ${error!.message}\n`);
      }
      return 1;
    }
  }
  const client = await connectSyncTarget(url);
  // A pass of the same origin under way elsewhere (another host's follower, a one-shot
  // sync): this one waits for it, and says so once.
  const lockPrefix = syncLockName("");
  const waitedFor = new Set<string>();
  client.onLockWait = (name) => {
    if (!name.startsWith(lockPrefix) || waitedFor.has(name)) return;
    waitedFor.add(name);
    const origin = name.slice(lockPrefix.length);
    ctx.io.stderr(
      `hermes-state: sync: waiting for the pass of origin ${origin} running elsewhere…\n`,
    );
  };
  let failed = false;
  // With --follow, Ctrl-C or SIGTERM ends the run after the pass under way (each batch of
  // sessions is one transaction, so stopping mid-pass would lose nothing either); said at
  // once when a pass is under way. Without it, the pass under way stops after the sessions
  // it has begun to write, and the run says how far it came (a second signal ends it at once).
  let stopping = false;
  let passing = false;
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  const stop = new AbortController();
  const unlisten = ctx.io.onInterrupt?.((signal) => {
    if (passing && !stopping) {
      ctx.io.stderr(
        follow
          ? "hermes-state: sync: stopping after the pass under way…\n"
          : "hermes-state: sync: stopping after the sessions under way… (again to stop at once)\n",
      );
    }
    stopping = true;
    interrupted ??= signal;
    // A pass under way goes on with --follow (the signal is not its `signal` then); a pass
    // still waiting for a file another process holds whole stops waiting, either way.
    stop.abort();
  });
  /** One-shot: the files whose pass was cut short, or never began, by a signal. */
  const unfinished: string[] = [];
  // The files refused (another file than their origin's), by their last pass. With --follow, a
  // refused FILE is looked at again at each pass, named once while refused the same way: the
  // origin's file put back (a backup restored after Hermes re-created an empty one) ships.
  const refused = new Set<string>();
  // With --follow, the files whose last pass was reported: a pass that changes nothing then
  // says nothing (a line every few seconds for ever would bury the passes that did).
  const reported = new Set<string>();
  // With --follow, each failing file's last error: the same error pass after pass is named once.
  const failing = new Map<string, string>();
  // With --follow, the files shipped once: --force makes a FILE its origin's file, once. A later
  // file in its place (a Hermes reinstalled, its new file empty) is refused as without it, not
  // left to delete every session of the origin from the server.
  const shipped = new Set<string>();
  try {
    for (;;) {
      passing = true;
      for (const file of files) {
        if (stopping) {
          if (!follow) unfinished.push(file);
          continue;
        }
        // A path typed with a line break or another control character: shown as marks, as
        // `origins` shows one, so that it cannot break (or rewrite) the line.
        const shown = visibleInline(file);
        const progress = new Progress(ctx.io, `Synced ${shown}:`);
        try {
          const result = await syncFile(client, file, {
            origin,
            host,
            force: args.flag("force") && !shipped.has(file),
            signal: follow ? undefined : stop.signal,
            fileWaitSignal: stop.signal,
            fileWaitMs,
            onProgress: (r) => progress.update(r.messages, "messages"),
          });
          progress.done();
          shipped.add(file);
          refused.delete(file);
          if (result.stopped) unfinished.push(file);
          const named = failing.get(file);
          failing.delete(file);
          const left = notShippedLine(shown, result.notShipped);
          if (left !== undefined) {
            // Named once while it stays the same, as a failing file is; the exit says so too.
            if (named !== left) ctx.io.stderr(left);
            if (follow) failing.set(file, left);
            else failed = true;
          }
          if (ctx.json) {
            // One object a line, every pass (JSON Lines): a stream read line by line.
            ctx.io.stdout(jsonLine(snakeKeys({ file, ...result })));
          } else if (!follow || !reported.has(file) || wroteAnything(result)) {
            reported.add(file);
            ctx.io.stdout(
              `${shown} → ${result.origin}: ${formatCount(result.created)} new, ` +
                `${formatCount(result.updated)} updated, ` +
                `${formatCount(result.deleted)} deleted session${
                  result.deleted === 1 ? "" : "s"
                }; ` +
                // A transcript taken back or rewritten in the file is shipped whole again.
                (result.rewritten > 0
                  ? `${plural(result.rewritten, "transcript")} rewritten; `
                  : "") +
                `${plural(result.messages, "message")}${goalsWritten(result)} ` +
                "written.\n",
            );
          }
        } catch (error) {
          progress.done();
          if (stop.signal.aborted && error === stop.signal.reason) {
            // Stopped before its pass began (the file was held whole by another process): the
            // run ends as one stopped while shipping does (with --follow, as a stop between passes).
            if (!follow) unfinished.push(file);
            continue;
          }
          failed = true;
          // Its next pass that works is reported, changes or not: the file is shipped again.
          reported.delete(file);
          const isRefused = error instanceof SyncRefusedError;
          if (isRefused) refused.add(file);
          else refused.delete(file);
          const after = isRefused && follow ? " (looked at again at each pass)" : "";
          // A FILE gone since (--follow looks for it again at each pass): the words of the others.
          const what = !isRefused && isMissing(file)
            ? `${noDatabaseError(file, { argument: true }).message}${
              follow ? " (looked for again at each pass)" : ""
            }`
            : `${shown}: ${(error as Error).message}`;
          const message = `hermes-state: sync: ${what}${after}\n`;
          if (failing.get(file) !== message) ctx.io.stderr(message);
          if (follow) failing.set(file, message);
        }
      }
      passing = false;
      if (!follow || stopping) break;
      await pauseUnless(every, () => stopping);
      if (stopping) break;
    }
  } finally {
    unlisten?.();
    await client.close();
  }
  // Followed until stopped: what counts is how the files stood then, not an error long gone.
  if (follow && stopping) return failing.size > 0 || refused.size > 0 ? 1 : 0;
  if (interrupted !== undefined && unfinished.length > 0) {
    throw new InterruptedError(
      interrupted,
      `not every session was shipped from ${
        unfinished.map((file) => visibleInline(file)).join(", ")
      } (what was written is ` +
        "whole, each session in one transaction); the same sync again ships the rest",
    );
  }
  return failed ? 1 : 0;
}

/** How many sessions of a file named at most in the line that says they were left out. */
const NAMED_AT_MOST = 5;

/**
 * The line that names the sessions a pass left out (the server cannot hold
 * them as the file has them), or `undefined` when it left none out.
 */
function notShippedLine(file: string, left: readonly NotShipped[]): string | undefined {
  if (left.length === 0) return undefined;
  const named = left.slice(0, NAMED_AT_MOST).map((s) => `${visibleInline(s.id)} (${s.reason})`);
  const more = left.length > NAMED_AT_MOST
    ? `; and ${formatCount(left.length - NAMED_AT_MOST)} more`
    : "";
  return `hermes-state: sync: ${file}: ${plural(left.length, "session")} not shipped, tried ` +
    `again at each pass: ${named.join("; ")}${more}\n`;
}

/**
 * Refuses a file given twice, under two names (a hard link, a symlink, a
 * bind mount): a hard link's other path made a second origin, and every
 * session of the file was stored twice.
 */
function refuseOneFileTwice(files: readonly string[]): void {
  const seen = new Map<string, string>();
  for (const file of files) {
    const identity = fileIdentity(file);
    if (identity === undefined) continue;
    const first = seen.get(identity);
    if (first !== undefined) {
      throw new UsageError(
        `${quotedValue(first)} and ${quotedValue(file)} are one file (a link to it): give it once`,
        { command: "sync" },
      );
    }
    seen.set(identity, file);
  }
}

/** The `sync` command. */
export const syncCommand: Command = {
  name: "sync",
  summary: "Ship state.db files to a central PostgreSQL store, incrementally",
  usage: USAGE,
  options: {
    to: { type: "string" },
    origin: { type: "string" },
    host: { type: "string" },
    force: { type: "boolean" },
    follow: { type: "boolean", inlineValue: true },
    every: { type: "string" },
  },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "FILE",
  run,
};
