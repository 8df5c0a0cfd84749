/**
 * `copy --origin NAME`: a session `sync` shipped from one origin, given back
 * as its file held it, to restore that host's state.db from the central
 * store. On the server it is `NAME/ID` (its parent `NAME/PARENT`), and its
 * title may carry the suffix ` [NAME]` that `sync` gives a title another
 * origin's session already held.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { SessionExport } from "../core/types.ts";
import { withStoredTextOf } from "../core/stored_text.ts";

/**
 * The id a session of `origin` has in its file: `id` without the origin's
 * prefix (`web-1/20260425_090019_d38f1d` → `20260425_090019_d38f1d`); an
 * id without it is left as it is.
 *
 * @param id A session id on the server.
 * @param origin The origin's name.
 * @returns The id in the origin's file.
 *
 * @example
 * ```ts
 * import { idInFile } from "./origin_restore.ts";
 * console.assert(idInFile("web-1/s1", "web-1") === "s1");
 * ```
 */
export function idInFile(id: string, origin: string): string {
  const prefix = `${origin}/`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}

/**
 * The title a session of `origin` has in its file. `sync` gives a title
 * another origin's session holds the suffix ` [ORIGIN]`, and gives the
 * bare title back once no session holds it: a suffixed title is taken for
 * the file's own unless another session holds the bare one.
 *
 * @param source The store the session is read from.
 * @param id The session's id there.
 * @param title Its title there.
 * @param origin The origin's name.
 * @returns The title in the file.
 */
async function titleInFile(
  source: SessionStore,
  id: string,
  title: string | null,
  origin: string,
): Promise<string | null> {
  const suffix = ` [${origin}]`;
  if (typeof title !== "string" || !title.endsWith(suffix) || title === suffix) return title;
  const bare = title.slice(0, -suffix.length);
  const holder = await source.getSessionByTitle(bare);
  return holder !== undefined && holder.id !== id ? bare : title;
}

/**
 * A session of `origin` as its file held it: its id and its parent's
 * without the origin's prefix, its messages under that id, and its
 * title without the suffix `sync` gave it.
 *
 * @param source The store the session was read from (a title is looked up there).
 * @param session The session as the store holds it.
 * @param origin The origin it was synced from.
 * @returns The record to import.
 *
 * @example
 * ```ts ignore
 * const record = await asInFile(source, session, "web-1"); // record.id: "s1" for "web-1/s1"
 * ```
 */
export async function asInFile<T extends SessionExport>(
  source: SessionStore,
  session: T,
  origin: string,
): Promise<T> {
  const id = idInFile(session.id, origin);
  const parent = session.parent_session_id;
  return {
    ...session,
    id,
    parent_session_id: typeof parent === "string" ? idInFile(parent, origin) : parent,
    title: await titleInFile(source, session.id, session.title, origin),
    // The text each parsed column stored goes along: the copy writes the same bytes.
    messages: session.messages.map((message) =>
      withStoredTextOf(message, { ...message, session_id: id })
    ),
  };
}
