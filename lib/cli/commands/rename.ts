/**
 * `hermes-state rename`: sets or clears a session's title.
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { findingAccess } from "../context.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { sayNote, syncedNote } from "../origin.ts";
import { openStoreNaming, resolveSession } from "../resolve.ts";
import { CommandError, UsageError } from "../usage_error.ts";
import { sanitizeTitle } from "../../core/titles.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { visibleInline } from "../../render/transcript.ts";

const USAGE = `Usage: hermes-state rename [options] ID|PREFIX TITLE...
       hermes-state rename --clear ID|PREFIX

Set the title of a session (the words of TITLE are joined with single
spaces), or clear it. Titles are cleaned as Hermes does (control and
invisible characters removed, spaces collapsed), are at most 100
characters, and are unique: a title another session uses is refused.

Options:
  --clear       Remove the title
  --json        Report the result as JSON
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state rename 20260425_090019_d38f1d Deploy chat-send to staging
  hermes-state rename --clear 20260425
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const [target, ...words] = args.positionals;
  const clear = args.flag("clear");
  if (clear && words.length > 0) {
    throw new UsageError("give either TITLE or --clear, not both", { command: "rename" });
  }
  if (!clear && words.length === 0) {
    throw new UsageError("missing TITLE (or --clear)", { command: "rename" });
  }
  const title = words.join(" ");
  if (!clear && sanitizeTitle(title) === null) {
    throw new UsageError(
      `TITLE is empty once cleaned, got ${quotedValue(title)}: to remove a title, use --clear`,
      { command: "rename" },
    );
  }
  // Found by a read: a session that is not there leaves an older file un-upgraded.
  const reader = await openStoreNaming(ctx, [target], "rename", { access: findingAccess(ctx) });
  const id = await resolveSession(reader, target, "rename");
  sayNote(ctx, await syncedNote(reader, [id], "rename"));
  const store = await ctx.openStore();
  // The id as the other commands show it: stored text cannot drive the terminal.
  const shown = visibleInline(id);
  if (!await store.setSessionTitle(id, clear ? null : title)) {
    throw new CommandError(`Session '${shown}' not found`);
  }
  const stored = await store.getSessionTitle(id) ?? null;
  if (ctx.json) printJson(ctx.io, { id, title: stored });
  else if (stored === null) ctx.io.stdout(`Session '${shown}' has no title now.\n`);
  else ctx.io.stdout(`Session '${shown}' renamed to: ${visibleInline(stored)}\n`);
  return 0;
}

/** The `rename` command. */
export const renameCommand: Command = {
  name: "rename",
  summary: "Set or clear a session's title",
  usage: USAGE,
  options: { clear: { type: "boolean" } },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "ID and TITLE",
  dashWord: (word, before) =>
    before.length === 0 ? `to rename the session titled ${word}` : `to put ${word} in the title`,
  run,
};
