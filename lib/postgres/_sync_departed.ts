/**
 * Two files shipping as one origin: a cloned machine or disk image keeps
 * the host name (`ubuntu`) and the path of the file it was cloned with,
 * and the sessions from before the clone, so `sync` takes both files for
 * one origin. Each pass then makes the server's copy of the origin equal to
 * its own file: it deletes from the server the sessions the other machine
 * shipped since the clone, whose next pass brings them back and deletes
 * this one's. Nothing is lost on the hosts, but sessions vanish from the
 * server and come back, pass after pass.
 *
 * A pass recognises that by what the origin's passes deleted before
 * (`sync_origins.departed`: the file ids of the sessions a pass deleted
 * because its file no longer held them, newest first, the last
 * {@linkcode DEPARTED_KEPT}). One file does not bring back a session it
 * lost while it loses others, nor lose the same session twice; two files
 * taking turns do both. So a pass that would delete sessions and either
 * bring back (create again) one an earlier pass deleted, or delete again
 * one an earlier pass deleted, is refused before it writes anything.
 *
 * The first flip cannot be told from a session deleted on the host while
 * another is created: it happens, and leaves the evidence the next one is
 * refused by. A backup restored over the file that brings back a session a
 * pass deleted while it lacks others the server holds (their only copy
 * now, perhaps), or a session brought back and deleted again, is refused
 * the same way: `--force` ships such a file once as it is, and forgets
 * what it brings back.
 *
 * The column is no migration step (an older hermes-state would refuse to
 * write to the server): `connectSyncTarget` adds it when missing, and an
 * older `sync` into the same server leaves it as it is, neither recording
 * nor checking what its passes delete. So two files shipping as one
 * origin are recognised once every machine syncing into it runs a version
 * with this check.
 *
 * @module
 */
import type { PgClient, PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { SyncRefusedError } from "./sync_origin.ts";

/** How many deleted sessions' ids an origin keeps as evidence. */
export const DEPARTED_KEPT = 10_000;

/** What a pass would do to the origin's sessions on the server, by their ids in the file. */
export interface PassChanges {
  /** Sessions it would create (the file has them, the server's records do not). */
  readonly created: readonly string[];
  /** Sessions it would delete (the server's records have them, the file does not). */
  readonly gone: readonly string[];
}

/** Of `ids`, those an earlier pass of `origin` deleted. */
async function departedAmong(
  client: PgClient,
  origin: string,
  ids: readonly string[],
): Promise<ReadonlySet<string>> {
  const rows = await client.query(
    `SELECT d.id FROM sync_origins o, unnest(o.departed) AS d(id)
     WHERE o.origin = $1 AND d.id IN (SELECT json_array_elements_text($2::text::json))`,
    [origin, jsonParam(ids)],
  );
  return new Set(rows.map((row) => String(row.id)));
}

/** `N session` or `N sessions`. */
function sessions(n: number): string {
  return `${n} session${n === 1 ? "" : "s"}`;
}

/**
 * Refuses a pass that would undo what another file's pass did to the
 * origin (see the module's words). Reads nothing when the pass deletes
 * nothing.
 *
 * @param client The server.
 * @param origin The origin.
 * @param changes What the pass would create and delete.
 * @throws {SyncRefusedError} When the pass would delete sessions and bring
 *   back, or delete again, sessions an earlier pass deleted.
 */
export async function checkOneFile(
  client: PgClient,
  origin: string,
  changes: PassChanges,
): Promise<void> {
  const { created, gone } = changes;
  if (gone.length === 0) return;
  const departed = await departedAmong(client, origin, [...created, ...gone]);
  if (departed.size === 0) return;
  const back = created.filter((id) => departed.has(id)).length;
  const again = gone.filter((id) => departed.has(id)).length;
  if (back === 0 && again === 0) return;
  const undone = [
    back > 0 ? `bring back ${sessions(back)} a pass deleted` : "",
    again > 0 ? `delete again ${sessions(again)} a pass deleted before` : "",
  ].filter((part) => part !== "").join(" and ");
  throw new SyncRefusedError(
    `origin "${origin}" is shipped by two files (a cloned machine or disk: the same host name ` +
      `and path), whose passes delete each other's sessions from the server: this one would ` +
      `${undone}, and delete ${sessions(gone.length)} in all, so nothing was written. Sync ` +
      `this machine's file under a host name of its own (--host NAME, or rename the machine), ` +
      `which ships it as a new origin; if it is "${origin}"'s only file (a backup restored ` +
      `over it), pass --force once to ship it as it is.`,
  );
}

/**
 * Records, in the pass's transaction, the sessions it deleted (first, the
 * oldest records dropped beyond {@linkcode DEPARTED_KEPT}), and forgets
 * those `forgotten` names (what a forced pass brings back).
 *
 * @param query Runs a statement in the pass's transaction.
 * @param origin The origin.
 * @param changes The sessions deleted (`gone`) and forgotten (`forgotten`), by their ids in the file.
 */
export async function recordDeparted(
  query: PgQuery,
  origin: string,
  changes: { readonly gone: readonly string[]; readonly forgotten: readonly string[] },
): Promise<void> {
  const { gone, forgotten } = changes;
  if (gone.length === 0 && forgotten.length === 0) return;
  await query(
    `UPDATE sync_origins SET departed = (
       ARRAY(SELECT json_array_elements_text($2::text::json)) ||
       ARRAY(SELECT d.id FROM unnest(departed) WITH ORDINALITY AS d(id, n)
             WHERE d.id NOT IN (SELECT json_array_elements_text($2::text::json))
               AND d.id NOT IN (SELECT json_array_elements_text($3::text::json))
             ORDER BY d.n)
     )[1:${DEPARTED_KEPT}]
     WHERE origin = $1`,
    [origin, jsonParam(gone), jsonParam(forgotten)],
  );
}
