/**
 * `hermes-state delete`: deletes one session and its messages, after asking.
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { confirm } from "../prompt.ts";
import { resolveSession } from "../resolve.ts";
import { sessionsDirFor } from "../sessions_dir.ts";
import { CommandError } from "../usage_error.ts";

const USAGE = `Usage: hermes-state delete [options] ID|PREFIX|TITLE

Delete a session and all its messages, after asking (end of input counts as
no). Its child sessions are kept and become top-level sessions. Transcript
files of the session in the "sessions" folder beside the database are
removed too. Exits 1 when the answer is no.

Options:
  -y, --yes     Do not ask
  --json        Report the result as JSON
  --db PATH     The database file
  -h, --help    Show this help

Examples:
  hermes-state delete 20260425_090019_d38f1d
  hermes-state delete "old experiment" --yes
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const store = await ctx.openStore();
  const id = await resolveSession(store, args.positionals.join(" "));
  const session = await store.getSession(id);
  if (session === undefined) throw new CommandError(`Session '${id}' not found`);
  if (!args.flag("yes")) {
    const title = session.title ? ` ("${session.title}")` : "";
    const children = (await store.getDescendants(id)).filter((s) =>
      s.parent_session_id === id
    ).length;
    const kept = children > 0
      ? `; its ${children} child session${children === 1 ? "" : "s"} will be kept`
      : "";
    const n = session.message_count ?? 0;
    const question = `Delete session '${id}'${title} and its ${n} message${
      n === 1 ? "" : "s"
    }${kept}? [y/N] `;
    if (!(await confirm(ctx.io, question))) {
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  const deleted = await store.deleteSession(id, {
    sessionsDir: sessionsDirFor(store.target) ?? null,
  });
  if (!deleted) throw new CommandError(`Session '${id}' not found`);
  if (ctx.json) printJson(ctx.io, { deleted: id });
  else ctx.io.stdout(`Deleted session '${id}'.\n`);
  return 0;
}

/** The `delete` command. */
export const deleteCommand: Command = {
  name: "delete",
  summary: "Delete a session and its messages",
  usage: USAGE,
  options: { yes: { type: "boolean", short: "y" } },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "ID|PREFIX|TITLE",
  run,
};
