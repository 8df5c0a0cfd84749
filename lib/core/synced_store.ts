/**
 * What a store that `hermes-state sync` fills adds to the
 * {@linkcode SessionStore} seam: where its sessions came from. Only the
 * PostgreSQL engine records that (each synced file is an origin, its
 * sessions stored as `ORIGIN/ID`); a SQLite file records none.
 *
 * @module
 */
import type { SessionStore } from "./session_store.ts";
import type { PrefixMatches } from "./listing_options.ts";

/** One file `hermes-state sync` ships to the store. */
export interface SyncOrigin {
  /** Its name, the prefix of its sessions' ids (`web-1`). */
  readonly origin: string;
  /** The host it was synced from. */
  readonly host: string;
  /** The file's path on that host. */
  readonly path: string;
  /** When its last pass ended, in seconds since the epoch; `null` before the first. */
  readonly lastPassAt: number | null;
  /** How many of its sessions the store holds. */
  readonly sessions: number;
}

/** The methods of a store whose sessions `hermes-state sync` shipped from files. */
export interface SyncedStore {
  /**
   * Every origin, by name.
   *
   * @returns The origins, each with its host, file, last pass and session count.
   */
  syncOrigins(): Promise<SyncOrigin[]>;
  /**
   * The sessions shipped under a file's own id: those whose id in their file
   * is `id`, in any origin, or else those whose id there starts with it
   * (ASCII case ignored; `%`, `_` and `\` literal). Lets an operator name a
   * session by the id a host's Hermes shows.
   *
   * @param id An id, or an id prefix, as the host's file has it.
   * @param options `limit`: how many ids to return (10 by default).
   * @returns How many sessions match, and up to `limit` of their ids in the
   *   store (`ORIGIN/ID`), newest-started first.
   */
  syncedSessionIds(id: string, options?: { limit?: number }): Promise<PrefixMatches>;
  /**
   * Which of `ids` `hermes-state sync` shipped, and from which origin. Their
   * file stays their source: deleted or pruned in the store, such a session
   * comes back with its file's next pass while the file holds it; renamed in
   * the store, it takes its file's title back with its next change there.
   *
   * @param ids Session ids of the store.
   * @returns The origin of each of `ids` that was synced; the others are absent.
   */
  syncedFrom(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Deletes an origin and every session synced from it, with their messages,
   * in one transaction, once no pass of that origin is running (a pass holds
   * its origin's lock; one that starts meanwhile waits). For a host taken out
   * of service, or the old file of a host that now syncs under another name.
   * A file still synced as that origin is shipped again, whole, by its next
   * pass, under a new origin.
   *
   * @param origin The origin's name.
   * @returns How many sessions were deleted, or `undefined` when the store
   *   has no such origin.
   * @throws {ReadonlyError} On a store opened read-only.
   */
  removeSyncOrigin(origin: string): Promise<number | undefined>;
}

/**
 * The store's origins and synced ids, or `undefined` for an engine that
 * records none (a SQLite file).
 *
 * @param store An open store.
 * @returns The same store seen as a {@linkcode SyncedStore}, or `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openStore } from "../open_store.ts";
 * import { syncedStore } from "./synced_store.ts";
 * const dir = await Deno.makeTempDir();
 * await using store = await openStore(`${dir}/state.db`);
 * assert.equal(syncedStore(store), undefined);
 * ```
 */
export function syncedStore(store: SessionStore): (SessionStore & SyncedStore) | undefined {
  const candidate = store as SessionStore & Partial<SyncedStore>;
  return typeof candidate.syncOrigins === "function" &&
      typeof candidate.syncedSessionIds === "function" &&
      typeof candidate.syncedFrom === "function" &&
      typeof candidate.removeSyncOrigin === "function"
    ? candidate as SessionStore & SyncedStore
    : undefined;
}
