/**
 * `hermes-state copy SRC DEST`: every session of one store into another —
 * file to PostgreSQL, PostgreSQL to file, file to file — one session at a
 * time into a file, three side by side into PostgreSQL (4,640 → 10,300
 * messages/s for 200,000 messages; memory stays bounded), each written
 * whole or not at all. A session already in DEST is skipped, so a second
 * run copies nothing and a run that was interrupted resumes where it
 * stopped. Ids, columns, titles, timestamps, message ids (when free) and
 * lineage are kept; between two PostgreSQL stores, the records of `sync`
 * (origins) too.
 *
 * @module
 */
import type { ExportOptions, ParentLink } from "../../core/transfer_options.ts";
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import type { SessionStore } from "../../core/session_store.ts";
import type { SessionExport } from "../../core/types.ts";
import type { SessionModelUsage } from "../../core/session_model_usage.ts";
import { WriteLanes } from "../../core/write_lanes.ts";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { Progress } from "../progress.ts";
import { isDatabaseFile } from "../../files/same_file.ts";
import { CommandError, InterruptedError, UsageError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { StorageError } from "../../core/errors.ts";
import { type RestoredSyncState, syncedStore, unconfirmedRecord } from "../../core/synced_store.ts";
import { formatCount, plural } from "../../render/format.ts";
import { LockPacer } from "../../sqlite/batches.ts";
import { renamedNote } from "../renamed_note.ts";
import { isMissing, noDatabaseError } from "../missing_store.ts";
import { diskFullReason, isDiskFull } from "../../sqlite/disk_space.ts";
import { delay } from "../../core/delay.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import { SESSION_META_PREFIXES } from "../../core/session_meta.ts";
import { originOption } from "../origin.ts";
import { asInFile } from "../origin_restore.ts";
import { lockedReason, type LockGivenUp, lockGivenUp } from "../locked_file.ts";
import { replaceAgain } from "../replace_again.ts";

const USAGE = `Usage: hermes-state copy [options] SRC DEST

Copy every session with its messages from the store SRC to the store DEST.
Each is a state.db path or a postgres:// URL (postgres://user:pass@host:5432/db,
?schema=NAME picks the schema, "hermes" by default). SRC is only read;
DEST is created when missing. Sessions keep their ids, columns, titles,
timestamps, lineage and (when free) message ids. A session already in DEST
is skipped, so a second run copies nothing, and a run that was interrupted
picks up where it stopped. Each session is written whole or not at all.
Between two PostgreSQL stores, what SRC records of "hermes-state sync" (its
origins) goes too, so hosts go on syncing into DEST where they left off; a
session skipped because DEST had it is shipped whole again by its host's
next pass (or deleted from DEST, when its file no longer holds it).

From a PostgreSQL store that "hermes-state sync" fills, every origin's
sessions come under their ids there, ORIGIN/ID. To restore one host's
state.db, give --origin NAME: only that origin's sessions are copied, under
the ids (and parents and titles) their file gave them.

Options:
  --source SOURCE   Only sessions of this source
  --origin NAME     Only the sessions synced from this origin (as "hermes-state
                    origins" names it), under their ids in its file; SRC is a
                    PostgreSQL store
  --replace         Rewrite sessions already in DEST instead of skipping them
  --json            Report the result as JSON
  -h, --help        Show this help

Examples:
  hermes-state copy ~/.hermes/state.db postgres://hermes@db:5432/hermes
  hermes-state copy postgres://hermes@db:5432/hermes backup.db
  hermes-state copy old.db new.db --source telegram
  hermes-state copy postgres://hermes@db:5432/hermes state.db --origin web-1
`;

/**
 * Whether `error` is the target's, not the session's: it takes no writes
 * (read-only) or cannot be reached (a lost server, an I/O error).
 */
function targetRefuses(error: unknown): boolean {
  return error instanceof StorageError && (error.kind === "readonly" || error.kind === "io");
}

/** Sessions imported at once into a PostgreSQL target (its pool holds four connections). */
const POSTGRES_LANES = 3;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Opens SRC without changing it: read-only (no schema step, nothing created). */
async function openSource(ctx: Context, src: string): Promise<SessionStore> {
  if (!isPostgresTarget(src) && isMissing(sqlitePath(src))) {
    throw noDatabaseError(sqlitePath(src), { argument: true });
  }
  // As every read command opens its store: a file another process holds whole is waited for
  // as HERMES_STATE_LOCK_TIMEOUT says.
  return await ctx.openStore({ path: src, access: "read" });
}

/**
 * Carries what SRC records of `sync` (its origins, and where each synced
 * session came from) to DEST, once the sessions are there: each host's next
 * pass then goes on into DEST incrementally, instead of shipping its file
 * again under a new origin beside the copied sessions. A file records no
 * origins: copied into one, they are named as lost.
 *
 * A session's record says what the server holds of its file: the sessions
 * this run wrote into DEST get theirs as SRC has it. One skipped because DEST
 * had it (an earlier, interrupted run wrote it, and its host may have written
 * on since) gets an unconfirmed one ({@linkcode unconfirmedRecord}), unless
 * DEST has its own: the host's next pass into DEST ships it whole again,
 * replacing DEST's copy, rather than going on from SRC's record and never
 * shipping what DEST lacks; and deletes it from DEST once the file no longer
 * holds it (without a record, no pass would).
 *
 * @returns What was added to DEST, or `undefined` when SRC records no origin.
 */
async function carrySyncState(
  ctx: Context,
  source: SessionStore,
  target: SessionStore,
  dest: string,
  held: readonly string[],
  written: ReadonlySet<string>,
): Promise<RestoredSyncState | undefined> {
  const from = syncedStore(source);
  if (from === undefined) return undefined;
  const to = syncedStore(target);
  if (to === undefined) {
    // A file keeps none of the records: only how many origins stay behind is read.
    const origins = (await from.syncOrigins()).length;
    if (origins > 0) {
      ctx.io.stderr(
        `hermes-state: copy: ${dest} is a file, which records no origins: the ` +
          `${plural(origins, "origin")} of the synced sessions stay behind (a sync ` +
          "into a store made from this file ships their files again, under new origins)\n",
      );
    }
    if (origins > 1) {
      // Restoring one host's lost file is what a copy into a file is most often for.
      ctx.io.stderr(
        `hermes-state: copy: the sessions of all ${formatCount(origins)} origins were copied, ` +
          "as ORIGIN/ID; to restore one host's file, with the ids its sessions had there, " +
          "copy with --origin NAME (hermes-state origins names them)\n",
      );
    }
    return undefined;
  }
  const all = await from.syncState();
  if (all.origins.length === 0) return undefined;
  // Only the origins held while the sessions were copied: their records match the copies. One
  // registered meanwhile is shipped again by its next pass into DEST (which replaces, never
  // doubles, what it finds there).
  const kept = new Set(held);
  const state = {
    origins: all.origins.filter((o) => kept.has(o.origin)),
    sessions: all.sessions.filter((s) => kept.has(s.origin)).map((s) =>
      written.has(s.sessionId) ? s : unconfirmedRecord(s)
    ),
  };
  const restored = await to.restoreSyncState(state);
  for (const origin of restored.conflicting) {
    ctx.io.stderr(
      `hermes-state: copy: ${dest} has an origin '${origin}' of another host or file: the ` +
        "sync records of its sessions were not kept (its file's next pass ships them again)\n",
    );
  }
  return restored;
}

/** The `state_meta` keys of one session in `source` (its goal): each prefix and value. */
async function sessionMeta(
  source: SessionStore,
  sourceId: string,
): Promise<[string, string | null][]> {
  const found: [string, string | null][] = [];
  for (const prefix of SESSION_META_PREFIXES) {
    const value = await source.getMeta(prefix + sourceId);
    if (value !== undefined) found.push([prefix, value]);
  }
  return found;
}

/**
 * Writes the `state_meta` keys of one session (its goal, read by
 * {@linkcode sessionMeta}) into `target`, after the session: those of a
 * session written, and those `target` lacks of one it already had (a run
 * cut off between the session and its keys is completed by the next).
 *
 * @returns How many keys were written.
 */
async function carrySessionMeta(
  keys: readonly [string, string | null][],
  target: SessionStore,
  result: { readonly id: string; readonly outcome: string },
): Promise<number> {
  let written = 0;
  for (const [prefix, value] of keys) {
    const to = prefix + result.id;
    if (result.outcome === "skipped" && await target.getMeta(to) !== undefined) continue;
    await target.setMeta(to, value);
    written++;
  }
  return written;
}

/** What a copy has counted, as `--json` prints it. */
type Counts = Record<
  "copied" | "replaced" | "skipped" | "messages" | "failed" | "linked" | "meta_keys",
  number
>;

/**
 * Where a lock given up on stopped a copy, and on which file: `open`, SRC or
 * DEST before any session; `read`, SRC, reading the next session or a goal;
 * `session`, DEST refused session `id`; `goal`, DEST took session `id` but
 * not yet its goal; `links`, every session in, the parent links of those
 * copied before their parent not made.
 */
interface LockStop {
  readonly error: LockGivenUp;
  /** The file that stayed locked (SRC or DEST). */
  readonly file: string;
  readonly at: "open" | "read" | "session" | "goal" | "links";
  /** The session of `session` and `goal`. */
  readonly id?: string;
  /** For `links`: how many sessions wait for their parent's link. */
  readonly unlinked?: number;
}

/**
 * The error of a copy a lock stopped: what is in, why it stopped, and what
 * to run once the lock is free (with `--replace`, the same copy writes again
 * every session this run wrote, before it goes on).
 */
function lockStopError(stop: LockStop, counts: Counts, replace: boolean): CommandError {
  const why = lockedReason(stop.error, stop.file);
  const written = counts.copied + counts.replaced;
  const again = replace && written > 0
    ? replaceAgain("copy", written)
    : "run the copy again to go on";
  const tally = `${plural(written, "session")} written, ${
    formatCount(counts.skipped)
  } skipped already present, each whole`;
  const unlinked = stop.unlinked ?? 0;
  const text = stop.at === "open" || (stop.at === "read" && written + counts.skipped === 0)
    ? `nothing was copied: ${why} (once it is free, run the same copy again)`
    : stop.at === "session"
    ? `Cannot copy ${stop.id}: ${why} (every session before it is in, each whole; ${again})`
    : stop.at === "goal"
    ? `${stop.id} is in, not yet its goal: ${why} (every session up to it is in, each whole; ` +
      `${again}, carrying the goal)`
    : stop.at === "read"
    ? `copied part of the sessions (${tally}), then stopped reading: ${why} (${again})`
    : `every session is in (${tally}), but ${plural(unlinked, "session")} copied before ` +
      `${unlinked === 1 ? "its parent is" : "their parents are"} not linked: ${why}; once it ` +
      `is free, the same copy again${
        replace ? " without --replace (which would write every session again)" : ""
      } links them`;
  return new CommandError(text, { cause: stop.error });
}

/**
 * How many sessions of SRC a copy a lock stopped did not go through
 * (`--json`'s `not_copied`): those SRC holds now, of `--source` when given,
 * less those the run copied, skipped or failed. `null` when SRC cannot be
 * counted: it is the file that stayed locked, or `--origin` picks them.
 */
async function notCopied(
  source: SessionStore,
  only: string | undefined,
  stop: LockStop,
  counts: Counts,
): Promise<number | null> {
  if (stop.at === "links") return 0;
  if (stop.at === "read") return null;
  try {
    const held = await source.sessionCount({ source: only || null });
    const through = counts.copied + counts.replaced + counts.skipped + counts.failed;
    return Math.max(0, held - through);
  } catch (error) {
    if (lockGivenUp(error)) return null;
    throw error;
  }
}

/**
 * Refuses to copy a file that `sync` ships from this host into `target`:
 * its sessions are there already, under their origin's ids (`web-1/ID`), and
 * a copy would store each a second time under its bare id, which no later
 * pass removes.
 *
 * @throws {CommandError} Naming the origin, and what to do instead.
 */
async function refuseSyncedFile(src: string, target: SessionStore): Promise<void> {
  const synced = syncedStore(target);
  if (synced === undefined) return;
  let real: string;
  try {
    real = realpathSync(sqlitePath(src));
  } catch {
    return;
  }
  const host = hostname();
  const origin = (await synced.syncOrigins()).find((one) => one.path === real && one.host === host);
  if (origin === undefined) return;
  throw new CommandError(
    `Cannot copy ${src} into ${target.target}: it is the file of origin ${
      quotedValue(origin.origin)
    } there, whose sessions it holds already as ${origin.origin}/ID; a copy would store each ` +
      `again under its bare id. "hermes-state sync ${
        sqlitePath(src)
      } --to ${target.target}" ships its ` +
      `changes; to copy it anyway, remove the origin first ` +
      `(hermes-state origins --remove ${origin.origin})`,
  );
}

/**
 * The schema two `postgres://` URLs both name when they are one store: the
 * same server URL and schema once the store's own parameters are read
 * (`?schema=hermes` is the default spelled out). `undefined` when they are
 * two stores, or either is no such URL, or does not parse (opening it
 * then names what is wrong).
 */
async function sameServerSchema(src: string, dest: string): Promise<string | undefined> {
  if (!isPostgresTarget(src) || !isPostgresTarget(dest)) return undefined;
  // Loaded only here: the CLI's static import graph holds no PostgreSQL module.
  const { parsePostgresUrl } = await import("../../postgres/store_url.ts");
  try {
    const [from, to] = [parsePostgresUrl(src), parsePostgresUrl(dest)];
    return from.url === to.url && from.schema === to.schema ? from.schema : undefined;
  } catch {
    return undefined;
  }
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const [src, dest] = args.positionals;
  checkFileArgument(src, { command: "copy", name: "SRC", role: "input" });
  checkFileArgument(dest, { command: "copy", name: "DEST", role: "output" });
  if (!isPostgresTarget(src) && !isPostgresTarget(dest)) {
    if (isDatabaseFile(sqlitePath(dest), sqlitePath(src))) {
      throw new CommandError(`Cannot copy ${src} onto itself`);
    }
  } else {
    const schema = await sameServerSchema(src, dest);
    // Not the URL itself: it may hold a password.
    if (schema !== undefined) {
      throw new CommandError(
        `Cannot copy a store onto itself: SRC and DEST are schema ${
          quotedValue(schema)
        } of the same server`,
      );
    }
  }
  if (args.string("origin") === "") {
    throw new UsageError("--origin needs an origin name", { command: "copy" });
  }
  // A lock given up on names the file it was for (`main` would name --db, which copy does not use).
  const [srcFile, destFile] = [src, dest].map((t) => isPostgresTarget(t) ? t : sqlitePath(t));
  const replace = args.flag("replace");
  const only = args.string("source");
  const counts: Counts = {
    copied: 0,
    replaced: 0,
    skipped: 0,
    messages: 0,
    failed: 0,
    linked: 0,
    meta_keys: 0,
  };
  let source: SessionStore;
  try {
    source = await openSource(ctx, src);
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    // SRC held whole: nothing was copied, and how many sessions it has cannot be read.
    if (ctx.json) {
      printJson(ctx.io, {
        ...counts,
        dropped_columns: [],
        renamed: [],
        failures: [],
        not_copied: null,
      });
    }
    throw lockStopError({ error, file: srcFile, at: "open" }, counts, replace);
  }
  let origin: string | undefined;
  try {
    origin = await originOption(args, source);
  } catch (error) {
    await source.close();
    throw error;
  }
  const failures: { id: string; error: string }[] = [];
  /** Sessions written under another title, the one they had being taken in DEST. */
  const renamed: { id: string; title: string }[] = [];
  const dropped = new Set<string>();
  /** The sessions this run wrote into DEST (imported or replaced; not those skipped). */
  const written = new Set<string>();
  let carried: RestoredSyncState | undefined;
  // A lock given up on stops the run (every later write would wait as long): what is in stays.
  let stop: LockStop | undefined;
  let leftOut: number | null = null;
  // Ctrl-C or SIGTERM stops between two sessions (each is written whole), and says how far.
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  const stopListening = ctx.io.onInterrupt?.((signal) => interrupted = signal);
  /** Copies every session into `target`; a lock given up on sets `stop` and ends the run. */
  const copyInto = async (target: SessionStore) => {
    if (!isPostgresTarget(src)) await refuseSyncedFile(src, target);
    const links: ParentLink[] = [];
    const progress = new Progress(ctx.io, "Copied");
    const lanes = isPostgresTarget(dest) ? POSTGRES_LANES : 1;
    // Into another store that sync fills: no pass into SRC changes a synced session while it is
    // copied, so that the records carried after match the copies (a pass meanwhile waits).
    // With --origin, no records go: the sessions are no longer the origin's synced ones.
    const hold = syncedStore(target) === undefined || origin !== undefined
      ? undefined
      : await syncedStore(source)?.holdSyncPasses();
    const pacer = lanes === 1 ? new LockPacer() : undefined;
    const copyOne = async (stored: SessionExport) => {
      // After a lock stop, a session submitted meanwhile would wait as long: none starts.
      if (stop !== undefined) return;
      // With --origin, as its file held it.
      const session = origin === undefined ? stored : await asInFile(source, stored, origin);
      // A newer Hermes's per-model usage rows go with the session, in its transaction.
      let usage: SessionModelUsage[];
      try {
        usage = await source.getModelUsage(stored.id);
      } catch (error) {
        if (!lockGivenUp(error)) throw error;
        stop ??= { error, file: srcFile, at: "read" };
        return;
      }
      let writtenWhole = false;
      try {
        const result = await target.importSession(session, {
          replace,
          ...(usage.length > 0 || replace ? { modelUsage: usage } : {}),
        });
        writtenWhole = true;
        if (result.outcome === "imported") counts.copied++;
        else if (result.outcome === "replaced") counts.replaced++;
        else counts.skipped++;
        if (result.outcome !== "skipped") written.add(result.id);
        counts.messages += result.messages;
        for (const column of result.droppedColumns) dropped.add(column);
        if (result.renamedTo !== null) {
          renamed.push({ id: result.id, title: result.renamedTo });
          if (!ctx.json) ctx.io.stderr(`hermes-state: copy: ${renamedNote(result)}\n`);
        }
        if (result.deferredParent !== null) {
          links.push({ id: result.id, parentId: result.deferredParent });
        }
        let keys: [string, string | null][];
        try {
          keys = await sessionMeta(source, stored.id);
        } catch (error) {
          // SRC stayed locked: every later session would wait as long.
          if (!lockGivenUp(error)) throw error;
          stop ??= { error, file: srcFile, at: "read" };
          return;
        }
        counts.meta_keys += await carrySessionMeta(keys, target, result);
        // Leave a file's write lock free now and then, so that other writers get in (a server
        // has no such lock).
        const pause = pacer?.due() ?? 0;
        if (pause > 0) await delay(pause);
      } catch (error) {
        if (lockGivenUp(error)) {
          // DEST stayed locked: every later session would wait as long and fail alike.
          stop ??= {
            error,
            file: target.target,
            at: writtenWhole ? "goal" : "session",
            id: session.id,
          };
          return;
        }
        if (isDiskFull(error, target.target)) {
          // Every session after this one would fail the same way: one line, and stop.
          throw new CommandError(
            `Cannot copy ${session.id}: ${diskFullReason(target.target)} (nothing of it was ` +
              `written; ${formatCount(counts.copied + counts.replaced)} sessions before it were)`,
            { cause: error },
          );
        }
        if (targetRefuses(error)) {
          // Every session after this one would fail the same way: one line, and stop (a copy
          // run again goes on from there).
          throw new CommandError(
            `Cannot copy ${session.id}: ${reason(error)} (nothing of it was written; ` +
              `${formatCount(counts.copied + counts.replaced)} sessions before it were; ` +
              "run the copy again to go on)",
            { cause: error },
          );
        }
        counts.failed++;
        failures.push({ id: session.id, error: reason(error) });
        if (!ctx.json) ctx.io.stderr(`hermes-state: copy: ${session.id}: ${reason(error)}\n`);
      }
      progress.update(counts.copied + counts.replaced + counts.skipped);
    };
    // A file takes one writer at a time; a server takes sessions side by side, each in its own
    // transaction (a parent still in flight is linked at the end, as one copied later is). What
    // stops the run (a full disk) is thrown once the sessions in flight have ended.
    const writes = new WriteLanes(lanes);
    try {
      try {
        const filter: ExportOptions & { readonly origin?: string } = {
          ...(only ? { source: only } : {}),
          ...(origin === undefined ? {} : { origin }),
        };
        try {
          for await (const session of source.iterateExport(filter)) {
            if (interrupted !== undefined || stop !== undefined) break;
            await writes.submit(() => copyOne(session));
          }
          await writes.drain();
        } catch (error) {
          // A lock met by copyOne stops the run there; one left over here is SRC's, being read.
          if (!lockGivenUp(error)) throw error;
          stop ??= { error, file: srcFile, at: "read" };
        }
      } finally {
        await writes.drain().catch(() => {});
        progress.done();
      }
      // After a lock stop the links stay unmade (their write would wait as long): the same
      // copy again makes them, as it skips the sessions that are in.
      if (stop !== undefined) return;
      try {
        counts.linked = await target.restoreParentLinks(links);
      } catch (error) {
        if (!lockGivenUp(error)) throw error;
        stop = { error, file: target.target, at: "links", unlinked: links.length };
        return;
      }
      if (origin === undefined) {
        carried = await carrySyncState(ctx, source, target, dest, hold?.origins ?? [], written);
      }
    } finally {
      await hold?.release();
    }
  };
  try {
    let target: SessionStore | undefined;
    try {
      target = await ctx.openStore({ path: dest, create: true });
    } catch (error) {
      if (!lockGivenUp(error)) throw error;
      stop = { error, file: destFile, at: "open" };
    }
    if (target !== undefined) await copyInto(target);
    // Counted while SRC is open: how many of its sessions the stopped run did not go through.
    if (stop !== undefined && ctx.json && origin === undefined) {
      leftOut = await notCopied(source, only, stop, counts);
    }
  } finally {
    stopListening?.();
    await source.close();
  }
  const droppedColumns = [...dropped];
  if (droppedColumns.length > 0 && !ctx.json) {
    ctx.io.stderr(
      `hermes-state: copy: ${dest} has no column for ${droppedColumns.join(", ")}: ` +
        "those values were not kept\n",
    );
  }
  if (ctx.json) {
    printJson(ctx.io, {
      ...(origin === undefined ? {} : { origin }),
      ...counts,
      dropped_columns: droppedColumns,
      renamed,
      failures,
      ...(carried === undefined ? {} : { sync: carried }),
      // Only when a lock stopped the run: the sessions of SRC not gone through (null: unknown).
      ...(stop === undefined ? {} : { not_copied: stop.at === "links" ? 0 : leftOut }),
    });
  } else if (stop === undefined) {
    const of = origin === undefined ? "" : ` of origin ${origin} (under their ids in its file)`;
    const parts = [`Copied ${plural(counts.copied, "session")}${of}`];
    if (counts.replaced > 0) parts.push(`replaced ${formatCount(counts.replaced)}`);
    parts.push(`skipped ${formatCount(counts.skipped)} already present`);
    let text = `${parts.join(", ")} (${plural(counts.messages, "message")} written)`;
    if (counts.failed > 0) {
      text += `; ${plural(counts.failed, "session")} failed`;
    }
    if (carried !== undefined) {
      text += `; sync records: ${plural(carried.origins, "origin")} and ` +
        `${plural(carried.sessions, "synced session")} added`;
    }
    ctx.io.stdout(`${text}.\n`);
  }
  if (stop !== undefined) throw lockStopError(stop, counts, replace);
  if (interrupted !== undefined) {
    const done = counts.copied + counts.replaced;
    throw new InterruptedError(
      interrupted,
      `stopped after ${plural(done + counts.skipped, "session")}, each written whole or not ` +
        `at all; ${
          replace && done > 0
            ? replaceAgain("copy", done)
            : "the same copy again goes on (what is there is skipped)"
        }`,
    );
  }
  return counts.failed > 0 ? 1 : 0;
}

/** The `copy` command. */
export const copyCommand: Command = {
  name: "copy",
  summary: "Copy sessions from one store to another (file or PostgreSQL)",
  usage: USAGE,
  options: { source: { type: "string" }, origin: { type: "string" }, replace: { type: "boolean" } },
  minPositionals: 2,
  maxPositionals: 2,
  positionalNames: "SRC and DEST",
  run,
};
