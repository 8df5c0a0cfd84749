/**
 * `hermes-state origins`: the files `sync` ships to a PostgreSQL store, and
 * `--remove NAME` to delete one with its sessions.
 *
 * @module
 */
import { syncedStore, type SyncOrigin } from "../../core/synced_store.ts";
import type { Command, Context } from "../command.ts";
import { alignColumns, formatCount, formatWhen, plural } from "../../render/format.ts";
import { printJson } from "../json.ts";
import { originRecord } from "../../render/origin_record.ts";
import type { ParsedArgs } from "../parse.ts";
import { confirm } from "../prompt.ts";
import { CommandError } from "../usage_error.ts";
import { isPostgresTarget } from "../../open_store.ts";
import { quotedArgument } from "../shown_argument.ts";
import { visibleInline } from "../../render/transcript.ts";

const USAGE = `Usage: hermes-state origins [options]
       hermes-state origins --remove NAME [--yes]

List the origins of a PostgreSQL store that "hermes-state sync" fills: each
synced state.db, the host and path it was last synced from, how many of its
sessions the store holds, and when its last pass ended.

With --remove NAME, delete that origin and every session synced from it,
with their messages, after asking (end of input counts as no): a host taken
out of service, or the old file of a host that now syncs under another name.
A file still synced as NAME is shipped again, whole, by its next pass, under
a new origin. Exits 1 when the answer is no.

Options:
  --remove NAME  Delete the origin NAME and its sessions
  -y, --yes      Do not ask
  --json         Print the origins (or what was removed) as JSON
  --db URL       The postgres:// store
  -h, --help     Show this help

Examples:
  hermes-state --db "$URL" origins
  hermes-state --db "$URL" origins --remove web-old --yes
`;

function table(origins: readonly SyncOrigin[], now: number): string {
  if (origins.length === 0) return "No origins: nothing has been synced to this store.\n";
  const rows = [
    ["Origin", "Host", "File", "Sessions", "Last pass"],
    ...origins.map((o) => [
      o.origin,
      // Recorded by another host's sync: a line break there cannot break a row.
      visibleInline(o.host),
      visibleInline(o.path),
      formatCount(o.sessions),
      o.lastPassAt === null ? "—" : formatWhen(o.lastPassAt, now, { minutes: true }),
    ]),
  ];
  return alignColumns(rows, { right: [3] }).join("\n") + "\n";
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const remove = args.string("remove");
  if (remove === "") throw new CommandError("--remove needs an origin name");
  // A file has no origins: opened to write, an older one would be upgraded only to be refused.
  const writes = remove !== undefined && isPostgresTarget(ctx.dbPath);
  const store = await ctx.openStore(writes ? { access: "write" } : {});
  const synced = syncedStore(store);
  if (synced === undefined) {
    throw new CommandError(
      `origins needs a PostgreSQL store (origins are recorded by "hermes-state sync"): ${store.target}`,
    );
  }
  if (remove === undefined) {
    const origins = await synced.syncOrigins();
    if (ctx.json) {
      printJson(ctx.io, origins.map(originRecord));
    } else ctx.io.stdout(table(origins, ctx.io.now()));
    return 0;
  }
  const noSuchOrigin = () =>
    new CommandError(`No origin ${quotedArgument(remove, "'")} in ${store.target}`);
  const origin = (await synced.syncOrigins()).find((o) => o.origin === remove);
  if (origin === undefined) throw noSuchOrigin();
  if (!args.flag("yes")) {
    const place = `${visibleInline(origin.path)} on ${visibleInline(origin.host)}`;
    const question = `Remove origin '${origin.origin}' (${place}) and ` +
      `its ${plural(origin.sessions, "session")}? [y/N] `;
    if (!(await confirm(ctx.io, question))) {
      ctx.io.stderr("Cancelled.\n");
      return 1;
    }
  }
  const deleted = await synced.removeSyncOrigin(origin.origin);
  // Removed meanwhile by another process.
  if (deleted === undefined) throw noSuchOrigin();
  if (ctx.json) printJson(ctx.io, { removed: origin.origin, sessions: deleted });
  else {
    ctx.io.stdout(`Removed origin '${origin.origin}' and ${plural(deleted, "session")}.\n`);
  }
  return 0;
}

/** The `origins` command. */
export const originsCommand: Command = {
  name: "origins",
  summary: "List the files synced to a PostgreSQL store, or remove one",
  usage: USAGE,
  options: {
    remove: { type: "string", names: "origins" },
    yes: { type: "boolean", short: "y" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
