/**
 * Which origin on the server a synced file is, and the check that it is
 * that origin's file.
 *
 * An origin is registered under the host and the real path of the file it
 * was first synced from (`sync_origins`), and later passes find it there.
 * Two things break that pairing in the field, and each could make a pass
 * delete a whole origin's sessions from the server:
 *
 * - the same host name and path on two machines (cloud images named
 *   `ubuntu`, a state.db replaced by another): the server holds one file's
 *   sessions and the pass reads another's;
 * - a container re-created under a new host name, its state.db on a volume
 *   that outlives it: the same file under a new host.
 *
 * And one would double them: a state.db moved on its host (`mv`), synced
 * from its new path without `--origin`. A new place whose file holds
 * sessions of an origin of the same host whose file is no longer at its path
 * is that origin's file moved: the origin follows it.
 *
 * So `--origin NAME` names the file's origin whether NAME is new or taken (a
 * taken one is the same file come back from a new host or path, and moves
 * there), and a pass refuses a file that holds none of the sessions its
 * origin has on the server (unless forced): the sessions of a file that is
 * the origin's are still in it, and a file synced before holds at least one
 * of them until every one is pruned. Two files that both hold them (a
 * machine cloned from another's disk) pass that check; a pass recognises
 * them by what it would undo of the other's passes (`_sync_departed.ts`).
 *
 * @module
 */
import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { PgClient, PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { isOriginName, ORIGIN_NAME_FORM } from "../core/origin_name.ts";
import { quotedValue } from "../core/shown_value.ts";

/**
 * The advisory lock a pass of `origin` holds: a second pass of the same
 * file waits, as does removing the origin.
 */
export function syncLockName(origin: string): string {
  return `hermes-state sync ${origin}`;
}

/** A pass refused: the file is not the origin's it would be written to. */
export class SyncRefusedError extends Error {
  override name = "SyncRefusedError";
}

/**
 * A pass stopped before a write because another pass of its origin wrote
 * since it read the server's records: one of the two lost its advisory lock
 * with the connection that held it (a network blip, a terminated backend)
 * while the other held it. Neither writes anything twice; the next pass
 * ships what they did not.
 */
export class SyncSupersededError extends Error {
  override name = "SyncSupersededError";
  /** The origin of the pass. */
  readonly origin: string;

  /**
   * Creates the error.
   *
   * @param origin The origin of the pass.
   */
  constructor(origin: string) {
    super(
      `Cannot go on with the pass of origin "${origin}": another pass of it wrote meanwhile (a ` +
        `pass's lock was lost with its connection); nothing was written twice, and the next ` +
        `pass ships the rest`,
    );
    this.origin = origin;
  }
}

/** Where an origin's file was synced from. */
export interface OriginPlace {
  readonly host: string;
  readonly path: string;
}

/** The origin of a pass. */
export interface ResolvedOrigin {
  /** Its name: the prefix of its sessions' ids on the server. */
  readonly name: string;
  /** Where the origin's file was synced from before, when the file now comes from elsewhere. */
  readonly movedFrom?: OriginPlace;
  /**
   * The origin whose place (this host and path) the file takes, once its
   * pass has checked it ({@linkcode takePlace}): a new file in the old one's
   * place, synced under a name of its own. The origin named is then not
   * registered yet, unless {@linkcode movedFrom} says where it was.
   */
  readonly replaces?: string;
  /**
   * Where the origin's file was before it moved on this host (found without
   * `--origin`: the file at the old path is gone, and the new one holds the
   * origin's sessions). The origin is registered at the new path already.
   */
  readonly followed?: OriginPlace;
}

/**
 * `wanted` as it is, or the host name as an origin name (other characters
 * become `-`, cut to 56 to leave room for a `-2` suffix).
 *
 * @throws {TypeError} When `wanted` is given and is no origin name: rewritten, two names
 *   could become one origin, and one file's pass would delete the other's sessions.
 */
function originName(wanted: string | undefined, host: string): string {
  if (wanted !== undefined) {
    if (!isOriginName(wanted)) {
      throw new TypeError(
        `Cannot sync: origin must be ${ORIGIN_NAME_FORM}: current value is ${quotedValue(wanted)}`,
      );
    }
    return wanted;
  }
  return host.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 56) || "host";
}

/**
 * What an origin's path gets when a new file in its file's place is synced
 * under another name (then that name, ` at ` and the time, and `)`): the
 * origin keeps its sessions, and `origins` shows where they came from and
 * what replaced it.
 */
const DETACHED = " (replaced by origin ";

/**
 * Finds or registers the origin of the file at `path` on `host`.
 *
 * - Without `wanted`: the origin registered for this host and path; else
 *   the origin of this host whose file is gone from its path and most of
 *   whose sessions the file holds (the file moved: the origin is moved
 *   here); else
 *   a new one named after the host (`-2`, `-3`… when taken).
 * - With `wanted`: that origin, registered now when new; when it was
 *   registered for another host or path, {@linkcode ResolvedOrigin.movedFrom}
 *   says where (the caller checks the file, then calls {@linkcode moveOrigin}).
 *   When this host and path are another origin's, whose sessions the file
 *   holds none of (a new file in the old one's place), {@linkcode ResolvedOrigin.replaces}
 *   names it: the caller checks the file, then calls {@linkcode takePlace}.
 *
 * @param fileIds The session ids the file holds, read when the place is
 *   another origin's, or new while an origin's file of this host is gone.
 * @param gone Whether the file once at a path of this host is gone from it (tests give their own).
 * @throws {SyncRefusedError} When `wanted` is given and this host and path
 *   are registered under another origin, some of whose sessions the file
 *   holds (or the file holds none at all).
 * @throws {TypeError} When `wanted` is no origin name.
 */
export async function resolveOrigin(
  client: PgClient,
  host: string,
  path: string,
  wanted: string | undefined,
  fileIds: () => Promise<ReadonlySet<string>>,
  gone: (path: string) => boolean = fileGone,
): Promise<ResolvedOrigin> {
  const base = originName(wanted, host);
  return await client.transaction(async (query) => {
    await query("LOCK TABLE sync_origins IN SHARE ROW EXCLUSIVE MODE");
    const here = await query("SELECT origin FROM sync_origins WHERE host = $1 AND path = $2", [
      host,
      path,
    ]);
    const registered = here.length > 0 ? String(here[0].origin) : undefined;
    if (wanted === undefined && registered !== undefined) return { name: registered };
    if (wanted === undefined) {
      const moved = await movedOrigin(query, host, fileIds, gone);
      if (moved !== undefined) {
        // Moved now, under the table's lock: a second new place holding the same sessions
        // (a copy beside the moved file) then finds the origin's file there, and is new.
        await query("UPDATE sync_origins SET path = $1 WHERE origin = $2", [path, moved.origin]);
        return { name: moved.origin, followed: { host, path: moved.path } };
      }
    }
    if (wanted !== undefined) {
      if (registered === base) return { name: base };
      if (registered !== undefined) {
        const held = await query("SELECT source_id FROM sync_sessions WHERE origin = $1", [
          registered,
        ]);
        const ids = await fileIds();
        // The same file under a second name would be shipped twice; a file without sessions
        // proves nothing (the old file put back would then be shipped again under the new name).
        if (ids.size === 0 || held.some((row) => ids.has(String(row.source_id)))) {
          throw new SyncRefusedError(
            `the file (${path} on ${host}) is synced as origin "${registered}" already: pass --origin ${registered}, or leave --origin out`,
          );
        }
        // Another file now: it takes the place once its pass has checked it (`takePlace`).
        const named = await query("SELECT host, path FROM sync_origins WHERE origin = $1", [base]);
        return named.length === 0 ? { name: base, replaces: registered } : {
          name: base,
          replaces: registered,
          movedFrom: { host: String(named[0].host), path: String(named[0].path) },
        };
      }
      const named = await query("SELECT host, path FROM sync_origins WHERE origin = $1", [base]);
      if (named.length > 0) {
        return {
          name: base,
          movedFrom: { host: String(named[0].host), path: String(named[0].path) },
        };
      }
    }
    for (let n = 1;; n++) {
      const name = n === 1 ? base : `${base}-${n}`;
      const taken = await query("SELECT 1 FROM sync_origins WHERE origin = $1", [name]);
      if (taken.length > 0) continue;
      await query("INSERT INTO sync_origins (origin, host, path) VALUES ($1, $2, $3)", [
        name,
        host,
        path,
      ]);
      return { name };
    }
  });
}

/**
 * Whether the file once at `path` is gone from it: nothing there (not a
 * path this user may not search, which `existsSync` also calls missing),
 * in a folder that is there (not a volume that is not mounted).
 */
function fileGone(path: string): boolean {
  try {
    lstatSync(path);
    return false;
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") return false;
  }
  try {
    return statSync(dirname(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The share of an origin's sessions a file must hold to be that origin's file moved. */
const MOVED_SHARE = 0.9;

/**
 * The origin of `host` whose file is gone from its path ({@linkcode fileGone})
 * and most of whose sessions on the server ({@linkcode MOVED_SHARE}) the file
 * at the new place holds (the one it holds the most of, when several do), or
 * `undefined`. One shared session proves little (a `copy`, an `import`, a
 * backup restored elsewhere), and a pass deletes from the server what its
 * file lacks. A path `takePlace` marked as replaced is no file's.
 */
async function movedOrigin(
  query: PgQuery,
  host: string,
  fileIds: () => Promise<ReadonlySet<string>>,
  gone: (path: string) => boolean,
): Promise<{ origin: string; path: string } | undefined> {
  const candidates = (await query("SELECT origin, path FROM sync_origins WHERE host = $1", [host]))
    .map((row) => ({ origin: String(row.origin), path: String(row.path) }))
    .filter((o) => !o.path.includes(DETACHED) && gone(o.path));
  if (candidates.length === 0) return undefined;
  const ids = await fileIds();
  if (ids.size === 0) return undefined;
  const counts = await query(
    `SELECT origin, count(*) AS held,
       count(*) FILTER (WHERE source_id IN (SELECT json_array_elements_text($2::text::json)))
         AS shared
     FROM sync_sessions
     WHERE origin IN (SELECT json_array_elements_text($1::text::json))
     GROUP BY origin ORDER BY shared DESC, origin`,
    [jsonParam(candidates.map((o) => o.origin)), jsonParam([...ids])],
  );
  const best = counts.find((row) => Number(row.shared) >= MOVED_SHARE * Number(row.held));
  if (best === undefined || Number(best.shared) === 0) return undefined;
  return candidates.find((o) => o.origin === String(best.origin));
}

/**
 * Refuses a file that holds none of the sessions its origin has on the
 * server: another machine's file under the same host name and path, another
 * file given a taken `--origin`, or a new file in the old one's place. The
 * server's copy is left as it is.
 *
 * @param origin The origin, where its file was synced from, and how many sessions the server holds.
 * @param shared How many of those sessions the file holds.
 * @throws {SyncRefusedError} When the origin holds sessions and the file none of them.
 */
export function checkSameFile(
  origin: { readonly name: string; readonly place: OriginPlace; readonly held: number },
  shared: number,
): void {
  if (origin.held === 0 || shared > 0) return;
  const { name, place, held } = origin;
  throw new SyncRefusedError(
    `the file holds none of the ${held} session${held === 1 ? "" : "s"} origin "${name}" has on ` +
      `the server (synced from ${place.path} on ${place.host}): it looks like another file. ` +
      `On another machine of that host name (a cloned one), sync it with --host NAME; on this ` +
      `one (a new file in the old one's place), under a name of its own with --origin NAME ` +
      `("${name}" keeps its sessions on the server); or pass --force to make it "${name}"'s ` +
      `file, which deletes those ${held} ` +
      `session${held === 1 ? "" : "s"} from the server (as it should when this file's sessions ` +
      `were all deleted or pruned on the host).`,
  );
}

/** Whether the origin `name` is registered (`origins --remove` may have deleted it). */
export async function originExists(client: PgClient, name: string): Promise<boolean> {
  return (await client.query("SELECT 1 FROM sync_origins WHERE origin = $1", [name])).length > 0;
}

/**
 * Takes a new pass token of the origin `name`, before a pass's first
 * write: each of the pass's writing transactions checks it
 * ({@linkcode checkPass}). The update waits for the transactions of an
 * earlier pass still in flight (each holds the row `FOR SHARE`); those that
 * start after it fail, so a pass that lost its advisory lock stops writing.
 *
 * @param client The server.
 * @param name The origin.
 * @returns The pass's token, or `undefined` when the origin is not registered.
 */
export async function startPass(client: PgClient, name: string): Promise<bigint | undefined> {
  const rows = await client.query(
    "UPDATE sync_origins SET pass_token = pass_token + 1 WHERE origin = $1 RETURNING pass_token",
    [name],
  );
  return rows.length === 0 ? undefined : BigInt(String(rows[0].pass_token));
}

/**
 * Checks, first thing in a transaction of a pass, that no other pass of the
 * origin started since this one did, and holds the origin's row `FOR SHARE`
 * until the transaction ends (a pass starting meanwhile waits for it).
 *
 * @param query Runs a statement in the pass's transaction.
 * @param name The origin.
 * @param token The pass's token ({@linkcode startPass}).
 * @throws {SyncSupersededError} When another pass started since, or the origin was removed.
 */
export async function checkPass(query: PgQuery, name: string, token: bigint): Promise<void> {
  const rows = await query(
    "SELECT pass_token FROM sync_origins WHERE origin = $1 FOR SHARE",
    [name],
  );
  if (rows.length === 0 || BigInt(String(rows[0].pass_token)) !== token) {
    throw new SyncSupersededError(name);
  }
}

/**
 * Gives `name` the place of the origin `replaced` (after the pass checked
 * the file, {@linkcode checkSameFile}): `replaced` keeps its sessions, its
 * path marked as replaced ({@linkcode DETACHED}, with the time, so that
 * several origins replaced at one place stay apart), and `name` is
 * registered there, or moved there when it was registered elsewhere.
 *
 * @param client The server.
 * @param name The origin of the file now at the place.
 * @param replaced The origin that held the place.
 * @param place The host and file.
 * @param at When, as the marked path says it.
 */
export async function takePlace(
  client: PgClient,
  name: string,
  replaced: string,
  place: OriginPlace,
  at: Date,
): Promise<void> {
  await client.transaction(async (query) => {
    await query("LOCK TABLE sync_origins IN SHARE ROW EXCLUSIVE MODE");
    await query(
      "UPDATE sync_origins SET path = path || $2 WHERE origin = $1 AND host = $3 AND path = $4",
      [replaced, `${DETACHED}${name} at ${at.toISOString()})`, place.host, place.path],
    );
    const moved = await query(
      "UPDATE sync_origins SET host = $1, path = $2 WHERE origin = $3 RETURNING origin",
      [place.host, place.path, name],
    );
    if (moved.length === 0) {
      await query("INSERT INTO sync_origins (origin, host, path) VALUES ($1, $2, $3)", [
        name,
        place.host,
        place.path,
      ]);
    }
  });
}

/** Records that the origin's file is now at `place` (after {@linkcode checkSameFile}). */
export async function moveOrigin(
  client: PgClient,
  name: string,
  place: OriginPlace,
): Promise<void> {
  await client.query("UPDATE sync_origins SET host = $1, path = $2 WHERE origin = $3", [
    place.host,
    place.path,
    name,
  ]);
}
