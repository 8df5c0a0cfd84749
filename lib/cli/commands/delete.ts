/**
 * `hermes-state delete`: deletes sessions and their messages, after asking.
 *
 * @module
 */
import type { SessionStore } from "../../core/session_store.ts";
import type { Command, Context } from "../command.ts";
import { findingAccess } from "../context.ts";
import { formatCount, oneLine, plural } from "../../render/format.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { confirm } from "../prompt.ts";
import { sayNote, syncedNote } from "../origin.ts";
import { openStoreNaming, resolveSession } from "../resolve.ts";
import { sessionsDirFor } from "../sessions_dir.ts";
import { AmbiguousSessionError, CommandError, SessionNotFoundError } from "../usage_error.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { printableArgument } from "../shown_argument.ts";
import { lockedReason, type LockGivenUp, lockGivenUp } from "../locked_file.ts";
import { shellWord } from "../../core/shell_word.ts";

const USAGE = `Usage: hermes-state delete [options] ID|PREFIX|TITLE...

Delete sessions and all their messages, after asking (end of input counts as
no). Each argument names one session (quote a title that has spaces); every
one must be found before anything is deleted. Their child sessions are kept
and become top-level sessions. Transcript files of the sessions in the
"sessions" folder beside the database are removed too. Exits 1 when the
answer is no, or when an argument names no session or is an id prefix several
sessions share (then nothing is deleted). With --json, whatever happened:
{"deleted": [IDS], "not_found": [ARGUMENTS], "ambiguous": [{"argument",
"count", "ids"}]} (an ambiguous argument with how many sessions it matches
and the first ten of them).

Options:
  -y, --yes     Do not ask
  --json        Report the result as JSON
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state delete 20260425_090019_d38f1d
  hermes-state delete 20260425_0900 20260424_1200 20260423_0815
  hermes-state delete "old experiment" --yes
`;

/**
 * What the arguments name: the sessions found (each once), the arguments
 * that name none, and those that are an id prefix several sessions share.
 */
interface Targets {
  ids: string[];
  notFound: SessionNotFoundError[];
  ambiguous: AmbiguousSessionError[];
}

/**
 * The sessions the arguments name, each once. Several words that name no
 * session one by one may still be one title typed without quotes. Any other
 * error is thrown.
 */
/** A delete names a session exactly: never a title's newest continuation. */
const EXACT = { continuations: false } as const;

async function targets(store: SessionStore, words: readonly string[]): Promise<Targets> {
  const ids: string[] = [];
  const notFound: SessionNotFoundError[] = [];
  const ambiguous: AmbiguousSessionError[] = [];
  for (const word of words) {
    try {
      ids.push(await resolveSession(store, word, "delete", EXACT));
    } catch (error) {
      if (error instanceof SessionNotFoundError) notFound.push(error);
      else if (error instanceof AmbiguousSessionError) ambiguous.push(error);
      else throw error;
    }
  }
  if (notFound.length + ambiguous.length > 0 && words.length > 1) {
    try {
      const id = await resolveSession(store, words.join(" "), "delete", EXACT);
      return { ids: [id], notFound: [], ambiguous: [] };
    } catch {
      // Not one title either: the words that named nothing, or too much, are reported.
    }
  }
  return { ids: [...new Set(ids)], notFound, ambiguous };
}

/** The error for the arguments that named no session, or several. */
function unresolvedError(
  notFound: readonly SessionNotFoundError[],
  ambiguous: readonly AmbiguousSessionError[],
): CommandError {
  if (ambiguous.length === 0 && notFound.length === 1) return notFound[0];
  if (notFound.length === 0 && ambiguous.length === 1) return ambiguous[0];
  const quoted = (words: readonly string[]) =>
    words.map((word) => printableArgument(word, "'")).join(", ");
  const parts = [];
  if (notFound.length > 0) {
    parts.push(`Sessions not found: ${quoted(notFound.map((error) => error.typed))}`);
  }
  if (ambiguous.length > 0) {
    const what = quoted(ambiguous.map((error) => error.typed));
    parts.push(`${parts.length === 0 ? "A" : "a"}mbiguous (several sessions match): ${what}`);
  }
  return new CommandError(
    `${parts.join("; ")} (give an id, a unique id prefix or a title; nothing was deleted)`,
  );
}

/**
 * The `--json` answer, one shape whatever happened: the ids deleted, the
 * arguments (or ids, gone meanwhile) that named no session, and the
 * arguments that named several.
 */
function printResult(
  ctx: Context,
  deleted: readonly string[],
  notFound: readonly string[],
  ambiguous: readonly AmbiguousSessionError[] = [],
  notDeleted?: readonly string[],
): void {
  if (!ctx.json) return;
  printJson(ctx.io, {
    deleted,
    not_found: notFound,
    ambiguous: ambiguous.map((error) => ({
      argument: error.typed,
      count: error.count,
      ids: error.ids,
    })),
    // Only when a lock stopped the run: the sessions still there to delete.
    ...(notDeleted === undefined ? {} : { not_deleted: notDeleted }),
  });
}

/** What the deletes did: the ids deleted, those gone meanwhile, and those a lock kept. */
interface Deletes {
  deleted: string[];
  gone: string[];
  /** The ids not tried because another process kept the file locked, in order. */
  notDeleted: string[];
  /** The lock given up on, when one stopped the run. */
  locked?: LockGivenUp;
}

/**
 * Deletes `ids` one by one, each its own write. A lock given up on stops
 * the run there (every later delete would wait as long): what was deleted
 * before it stays deleted, and the rest is returned as not deleted.
 */
async function deleteInTurn(ctx: Context, ids: readonly string[]): Promise<Deletes> {
  const done: Deletes = { deleted: [], gone: [], notDeleted: [...ids] };
  try {
    const store = await ctx.openStore();
    const sessionsDir = sessionsDirFor(store.target) ?? null;
    // A session another process deleted since the question is gone all the same: the others go on.
    for (const id of ids) {
      if (await store.deleteSession(id, { sessionsDir })) done.deleted.push(id);
      else done.gone.push(id);
      done.notDeleted.shift();
    }
  } catch (error) {
    if (!lockGivenUp(error)) throw error;
    done.locked = error;
  }
  return done;
}

/**
 * The line for a run a lock stopped: what was deleted, why it stopped, and
 * the command that deletes the rest once the lock is free.
 */
function lockedError(ctx: Context, done: Deletes, locked: LockGivenUp): CommandError {
  const why = lockedReason(locked, ctx.dbPath);
  const shown = (ids: readonly string[]) => ids.map((id) => `'${visibleInline(id)}'`).join(", ");
  if (done.deleted.length === 0 && done.gone.length === 0) {
    return new CommandError(
      `nothing was deleted: ${why} (once it is free, run the same delete again)`,
      { cause: locked },
    );
  }
  const rest = ["hermes-state", "--db", ctx.dbPath, "delete", ...done.notDeleted]
    .map(shellWord).join(" ");
  const before = done.deleted.length === 0
    ? "nothing was deleted"
    : `deleted ${shown(done.deleted)}`;
  const gone = done.gone.length === 0
    ? ""
    : ` (no longer there, another process deleted it meanwhile: ${shown(done.gone)})`;
  return new CommandError(
    `${before}${gone}, then stopped: ${why}; not deleted: ${
      shown(done.notDeleted)
    } (once it is free: ${rest})`,
    { cause: locked },
  );
}

async function question(store: SessionStore, id: string): Promise<string> {
  const session = await store.getSession(id);
  if (session === undefined) throw new SessionNotFoundError(id);
  // The question must read as it is: stored text cannot move the cursor or rewrite it.
  const title = session.title ? ` ("${visibleControls(oneLine(session.title))}")` : "";
  const children = (await store.getDescendants(id)).filter((s) => s.parent_session_id === id)
    .length;
  const kept = children > 0
    ? ` (its ${plural(children, "child session")} ${children === 1 ? "is" : "are"} kept)`
    : "";
  return `session '${visibleInline(id)}'${title} and its ${
    plural(session.message_count ?? 0, "message")
  }${kept}`;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  // Found and asked about by a read: a cancelled delete leaves an older file un-upgraded.
  const reader = await openStoreNaming(ctx, args.positionals, "delete", {
    access: findingAccess(ctx),
  });
  const { ids, notFound, ambiguous } = await targets(reader, args.positionals);
  if (notFound.length > 0 || ambiguous.length > 0) {
    printResult(ctx, [], notFound.map((error) => error.typed), ambiguous);
    throw unresolvedError(notFound, ambiguous);
  }
  // Said before the question: a synced session deleted here comes back from its file.
  sayNote(ctx, await syncedNote(reader, ids, "delete"));
  if (!args.flag("yes")) {
    const what = ids.length === 1
      ? await question(reader, ids[0])
      : `${formatCount(ids.length)} sessions:\n${
        (await Promise.all(ids.map((id) => question(reader, id)))).map((q) => `  ${q}`).join("\n")
      }\n`;
    if (!(await confirm(ctx.io, `Delete ${what}? [y/N] `))) {
      printResult(ctx, [], []);
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  const done = await deleteInTurn(ctx, ids);
  const { deleted, gone, locked } = done;
  printResult(ctx, deleted, gone, [], locked === undefined ? undefined : done.notDeleted);
  // Ids as the question showed them: stored text cannot drive the terminal.
  const shown = (ids: readonly string[]) => ids.map(visibleInline).join(", ");
  if (!ctx.json && deleted.length === 1) ctx.io.stdout(`Deleted session '${shown(deleted)}'.\n`);
  else if (!ctx.json && deleted.length > 1) {
    ctx.io.stdout(`Deleted ${formatCount(deleted.length)} sessions: ${shown(deleted)}.\n`);
  }
  if (locked !== undefined) throw lockedError(ctx, done, locked);
  if (gone.length > 0) {
    throw new CommandError(
      `no longer there to delete (another process deleted it meanwhile): ${shown(gone)}`,
    );
  }
  return 0;
}

/** The `delete` command. */
export const deleteCommand: Command = {
  name: "delete",
  summary: "Delete sessions and their messages",
  usage: USAGE,
  options: { yes: { type: "boolean", short: "y" } },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "ID|PREFIX|TITLE",
  run,
};
