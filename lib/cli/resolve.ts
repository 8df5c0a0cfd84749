/**
 * Finds the session a user means, in this order:
 *
 * 1. an exact id;
 * 2. an id prefix that exactly one session has (`\`, `%` and `_` are
 *    literal); a prefix several sessions share is an error that lists them;
 * 3. an exact title (case-sensitive);
 * 4. the newest-started session titled `"<title> #N"` (the numbered
 *    continuations of a lineage; `<title>` compared ASCII
 *    case-insensitively, anything after `#`);
 * 5. on a store `sync` fills (PostgreSQL, where sessions are `ORIGIN/ID`),
 *    the id a host's own file has, or a prefix of it, when exactly one
 *    session matches in all origins; several are an error that lists them.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { Context } from "./command.ts";
import type { PrefixMatches } from "../core/listing_options.ts";
import { syncedStore } from "../core/synced_store.ts";
import { formatCount } from "../render/format.ts";
import { AmbiguousSessionError, SessionNotFoundError, UsageError } from "./usage_error.ts";
import { visibleInline } from "../render/transcript.ts";
import { printableArgument } from "./shown_argument.ts";
import { quotedValue } from "../core/shown_value.ts";

/** How many sessions an ambiguous prefix error lists. */
const LISTED = 10;

function ambiguous(text: string, matches: PrefixMatches, hint: string): AmbiguousSessionError {
  const more = matches.count > matches.ids.length
    ? `\n  … and ${formatCount(matches.count - matches.ids.length) + " more"}`
    : "";
  return new AmbiguousSessionError(
    text,
    matches.ids,
    matches.count,
    `Session ${printableArgument(text, "'")} is ambiguous: matches ${
      formatCount(matches.count)
    } sessions ` +
      `(${hint}):\n  ${matches.ids.map(visibleInline).join("\n  ")}${more}`,
  );
}

/** The usage error for a session argument that is empty or blank. */
function emptyArgumentError(text: string, command: string | undefined): UsageError {
  return new UsageError(
    `the session argument is empty (${
      quotedValue(text)
    }): give an id, a unique id prefix or a title`,
    { command },
  );
}

/**
 * Opens the store of a command that names sessions. When the store cannot
 * be opened (no database, not a state.db…), an empty or blank session
 * argument is reported first, as the usage error it is: `show ""` says
 * what is wrong with the command line before what is wrong with the file.
 * (A store that opens is asked first: a session may have a blank id.)
 *
 * @param ctx The command's context.
 * @param texts What the user typed for the sessions.
 * @param command The command, for the hint of the usage error.
 * @param options How to open the store, as {@linkcode Context.openStore}.
 * @returns The open store.
 * @throws {UsageError} When the store cannot be opened and a text is blank.
 */
export async function openStoreNaming(
  ctx: Context,
  texts: readonly string[],
  command: string,
  options?: Parameters<Context["openStore"]>[0],
): Promise<SessionStore> {
  try {
    return await ctx.openStore(options);
  } catch (error) {
    const blank = texts.find((text) => text.trim() === "");
    if (blank !== undefined) throw emptyArgumentError(blank, command);
    throw error;
  }
}

/**
 * Resolves what the user typed to a session id.
 *
 * @param store The open store.
 * @param text An id, a unique id prefix, or a title.
 * @param command The command that asks, for the hint of a usage error.
 * @returns The session id.
 * @throws {UsageError} When the text is empty or blank and no session has
 *   that id.
 * @throws {SessionNotFoundError} When nothing matches ("not found").
 * @throws {AmbiguousSessionError} When the text is an id prefix of several sessions,
 *   or a synced id of several origins ("ambiguous", with up to ten of them).
 *
 * @example
 * ```ts ignore
 * const id = await resolveSession(store, "2026042");
 * ```
 */
export async function resolveSession(
  store: SessionStore,
  text: string,
  command?: string,
  options: ResolveOptions = {},
): Promise<string> {
  const continuations = options.continuations ?? true;
  // Every id starts with nothing: an empty argument (`show "$ID"` with ID unset) would pick the
  // only session as a prefix, or list them all as "ambiguous".
  if (text.trim() === "" && await store.getSession(text) === undefined) {
    throw emptyArgumentError(text, command);
  }
  const id = await store.resolveSessionId(text) ?? (await store.getSessionByTitle(text))?.id ??
    (continuations ? await store.resolveSessionByTitle(text) : undefined);
  if (id !== undefined) return id;
  const matches = await store.sessionIdsWithPrefix(text, { limit: LISTED });
  if (matches.count > 1) throw ambiguous(text, matches, "give more of the id");
  // A host's own id within the origin the command is narrowed to (`search --origin`).
  const within = matches.count === 0 && options.origin !== undefined
    ? await store.resolveSessionId(`${options.origin}/${text}`)
    : undefined;
  if (within !== undefined) return within;
  const synced = matches.count === 0
    ? await syncedStore(store)?.syncedSessionIds(text, { limit: LISTED })
    : undefined;
  if (synced?.count === 1) return synced.ids[0];
  if (synced !== undefined && synced.count > 1) {
    throw ambiguous(text, synced, "give ORIGIN/ID, or more of the id");
  }
  const continuation = continuations ? undefined : await store.resolveSessionByTitle(text);
  if (continuation !== undefined) {
    const title = (await store.getSession(continuation))?.title ?? continuation;
    throw new SessionNotFoundError(
      text,
      `${command ?? "this command"} takes an id, a unique id prefix or an exact title; ` +
        `${printableArgument(title, "'")} continues it: name that one`,
    );
  }
  throw new SessionNotFoundError(text);
}

/** Options of {@linkcode resolveSession}. */
export interface ResolveOptions {
  /**
   * Whether a title may name its newest numbered continuation (step 4):
   * not for a command that deletes, where `delete "my project" --yes`
   * would take another continuation each time it is run.
   * @default {true}
   */
  readonly continuations?: boolean;
  /** The origin the command is narrowed to: a host's own id names its session there first. */
  readonly origin?: string;
}
