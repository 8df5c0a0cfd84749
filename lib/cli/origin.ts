/**
 * Origins on the CLI: `--origin NAME` of `list` and `search` (only sessions
 * that `sync` shipped from that origin, which only a PostgreSQL store
 * records), and the note `delete`, `prune` and `rename` give before they
 * change synced sessions, whose files stay their source.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import { syncedStore } from "../core/synced_store.ts";
import { formatCount } from "../render/format.ts";
import type { Context } from "./command.ts";
import type { ParsedArgs } from "./parse.ts";
import { CommandError } from "./usage_error.ts";
import { quotedValue } from "../core/shown_value.ts";

/** Known origins an error names at most. */
const ORIGINS_NAMED = 20;

/**
 * The `--origin` value, checked against the store: its engine, and the
 * origins it records (a name that is none, a typo, would otherwise answer
 * as an origin without sessions does).
 *
 * @param args The parsed arguments.
 * @param store The open store.
 * @returns The origin, or `undefined` when not given.
 * @throws {CommandError} When given for a store that is not PostgreSQL, or
 *   naming no origin of the store (the error lists those it records).
 *
 * @example
 * ```ts ignore
 * const origin = await originOption(args, store); // "web-1" for --origin web-1
 * ```
 */
export async function originOption(
  args: ParsedArgs,
  store: SessionStore,
): Promise<string | undefined> {
  const origin = args.string("origin");
  if (origin === undefined || origin === "") return undefined;
  requireOrigins(store, "--origin");
  const known = (await syncedStore(store)?.syncOrigins())?.map((o) => o.origin);
  if (known === undefined || known.includes(origin)) return origin;
  const named = known.length === 0
    ? "it records none (no file was synced into it)"
    : `known origins are ${known.slice(0, ORIGINS_NAMED).join(", ")}${
      known.length > ORIGINS_NAMED ? `… (${formatCount(known.length)} in all)` : ""
    }`;
  throw new CommandError(
    `No origin ${quotedValue(origin)} in ${store.target}: ${named} (hermes-state origins)`,
  );
}

/**
 * Refuses an option that reads origins on a store that records none.
 *
 * @param store The open store.
 * @param option The option as the user gave it (`--origin`, `--by origin`).
 * @throws {CommandError} When the store is not PostgreSQL, naming the option and the store.
 */
export function requireOrigins(store: SessionStore, option: string): void {
  if (store.engine === "postgres") return;
  throw new CommandError(
    `${option} needs a PostgreSQL store (origins are recorded by "hermes-state sync"): ${store.target}`,
  );
}

/** What an operator does on the server to sessions `sync` ships. */
export type SyncedChange = "delete" | "prune" | "rename";

/**
 * What to tell an operator about to change sessions that `sync` shipped:
 * their files stay their source. A file's next pass ships back what it
 * still holds (deleted or pruned here), and a session's next change on its
 * host brings back the title its file has (renamed here); done on the host
 * instead, the change reaches the store with the next pass.
 *
 * @param store The open store.
 * @param ids The sessions about to change.
 * @param change What is done to them here.
 * @returns The note (one paragraph), or `undefined` when none of `ids` was synced.
 *
 * @example
 * ```ts ignore
 * const note = await syncedNote(store, ["web-1/20260425_090019_d38f1d"], "delete");
 * // "Note: web-1/20260425_090019_d38f1d came from a synced file (origin web-1): while the
 * // file holds it, each sync pass ships it back. Delete it on its host (…) and …"
 * ```
 */
export async function syncedNote(
  store: SessionStore,
  ids: readonly string[],
  change: SyncedChange,
): Promise<string | undefined> {
  const synced = ids.length === 0 ? undefined : syncedStore(store);
  const origins = await synced?.syncedFrom(ids);
  if (origins === undefined || origins.size === 0) return undefined;
  const names = [...new Set(origins.values())].sort();
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")}…` : names.join(", ");
  const from = names.length === 1
    ? `a synced file (origin ${shown})`
    : `synced files (origins ${shown})`;
  const what = ids.length === 1 ? ids[0] : `${formatCount(origins.size)} of these sessions`;
  const them = origins.size === 1 ? "it" : "them";
  const where = names.length === 1 ? "its host" : "their hosts";
  const consequence = change === "rename"
    ? `its next change on ${where} brings back the title its file has`
    : `while ${names.length === 1 ? "the file holds" : "their files hold"} ${them}, each sync ` +
      `pass ships ${them} back`;
  const instead = `${change[0].toUpperCase()}${change.slice(1)} ${them} on ${where} ` +
    `(hermes-state ${change} there) and the next pass ${
      change === "rename" ? "brings the title" : `removes ${them}`
    } here too.`;
  return `Note: ${what} came from ${from}: ${consequence}. ${instead}`;
}

/**
 * Prints the note of {@linkcode syncedNote} on standard error, when there is one.
 *
 * @param ctx The command's context.
 * @param note The note, or `undefined`.
 */
export function sayNote(ctx: Pick<Context, "io">, note: string | undefined): void {
  if (note !== undefined) ctx.io.stderr(`${note}\n`);
}
