/**
 * `hermes-state delete`: deletes sessions and their messages, after asking.
 *
 * @module
 */
import type { SessionStore } from "../../core/session_store.ts";
import type { Command, Context } from "../command.ts";
import { oneLine, plural } from "../../render/format.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { confirm } from "../prompt.ts";
import { sayNote, syncedNote } from "../origin.ts";
import { resolveSession } from "../resolve.ts";
import { sessionsDirFor } from "../sessions_dir.ts";
import { CommandError, SessionNotFoundError } from "../usage_error.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";

const USAGE = `Usage: hermes-state delete [options] ID|PREFIX|TITLE...

Delete sessions and all their messages, after asking (end of input counts as
no). Each argument names one session (quote a title that has spaces); every
one must be found before anything is deleted. Their child sessions are kept
and become top-level sessions. Transcript files of the sessions in the
"sessions" folder beside the database are removed too. Exits 1 when the
answer is no, or when an argument names no session (then nothing is deleted).
With --json: {"deleted": [IDS], "not_found": [ARGUMENTS]}, whatever happened.

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

/** What the arguments name: the sessions found (each once), and the arguments that name none. */
interface Targets {
  ids: string[];
  notFound: string[];
}

/**
 * The sessions the arguments name, each once. Several words that name no
 * session one by one may still be one title typed without quotes. An
 * ambiguous prefix (or any other error) is thrown.
 */
async function targets(store: SessionStore, words: readonly string[]): Promise<Targets> {
  const ids: string[] = [];
  const notFound: string[] = [];
  for (const word of words) {
    try {
      ids.push(await resolveSession(store, word, "delete"));
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
      notFound.push(word);
    }
  }
  if (notFound.length > 0 && words.length > 1) {
    try {
      return { ids: [await resolveSession(store, words.join(" "), "delete")], notFound: [] };
    } catch {
      // Not one title either: the words that named nothing are reported.
    }
  }
  return { ids: [...new Set(ids)], notFound };
}

/** The one error line for the arguments that named no session. */
function notFoundError(notFound: readonly string[]): CommandError {
  if (notFound.length === 1) return new SessionNotFoundError(notFound[0]);
  return new CommandError(
    `Sessions not found: ${notFound.map((word) => `'${visibleInline(word)}'`).join(", ")} ` +
      "(give an id, a unique id prefix or a title; nothing was deleted)",
  );
}

/**
 * The `--json` answer, one shape whatever happened: the ids deleted and the
 * arguments (or ids, gone meanwhile) that named no session.
 */
function printResult(ctx: Context, deleted: readonly string[], notFound: readonly string[]): void {
  if (ctx.json) printJson(ctx.io, { deleted, not_found: notFound });
}

async function question(store: SessionStore, id: string): Promise<string> {
  const session = await store.getSession(id);
  if (session === undefined) throw new SessionNotFoundError(id);
  // The question must read as it is: stored text cannot move the cursor or rewrite it.
  const title = session.title ? ` ("${visibleControls(oneLine(session.title))}")` : "";
  const children = (await store.getDescendants(id)).filter((s) => s.parent_session_id === id)
    .length;
  const kept = children > 0 ? `; its ${plural(children, "child session")} will be kept` : "";
  return `session '${visibleInline(id)}'${title} and its ${
    plural(session.message_count ?? 0, "message")
  }${kept}`;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  // Found and asked about by a read: a cancelled delete leaves an older file un-upgraded.
  const reader = await ctx.openStore({ access: "read" });
  const { ids, notFound } = await targets(reader, args.positionals);
  if (notFound.length > 0) {
    printResult(ctx, [], notFound);
    throw notFoundError(notFound);
  }
  // Said before the question: a synced session deleted here comes back from its file.
  sayNote(ctx, await syncedNote(reader, ids, "delete"));
  if (!args.flag("yes")) {
    const what = ids.length === 1
      ? await question(reader, ids[0])
      : `${ids.length} sessions:\n${
        (await Promise.all(ids.map((id) => question(reader, id)))).map((q) => `  ${q}`).join("\n")
      }\n`;
    if (!(await confirm(ctx.io, `Delete ${what}? [y/N] `))) {
      printResult(ctx, [], []);
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  const store = await ctx.openStore();
  const sessionsDir = sessionsDirFor(store.target) ?? null;
  const deleted: string[] = [];
  // A session another process deleted since the question is gone all the same: the others go on.
  const gone: string[] = [];
  for (const id of ids) {
    if (await store.deleteSession(id, { sessionsDir })) deleted.push(id);
    else gone.push(id);
  }
  printResult(ctx, deleted, gone);
  if (!ctx.json && deleted.length === 1) ctx.io.stdout(`Deleted session '${deleted[0]}'.\n`);
  else if (!ctx.json && deleted.length > 1) {
    ctx.io.stdout(`Deleted ${deleted.length} sessions: ${deleted.join(", ")}.\n`);
  }
  if (gone.length > 0) {
    throw new CommandError(
      `no longer there to delete (another process deleted it meanwhile): ${gone.join(", ")}`,
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
