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
  /**
   * When its last pass ended, in seconds since the epoch; `null` before the
   * first. A pass that writes nothing records its time only when the one
   * recorded is a minute old: within a minute of the last pass, then.
   */
  readonly lastPassAt: number | null;
  /** How many of its sessions the store holds. */
  readonly sessions: number;
}

/**
 * What a store records of `hermes-state sync`, as {@linkcode
 * SyncedStore.syncState} reads it: its origins and, for each synced session,
 * where it came from and what of its file the store holds. Given to another
 * store's {@linkcode SyncedStore.restoreSyncState} after its sessions were
 * copied there, it lets each host's next pass go on incrementally into that
 * store. Its records are the engine's own; they are not meant to be edited.
 */
export interface SyncState {
  /** Every origin: its name, host, file and last pass (seconds since the epoch, or `null`). */
  readonly origins: readonly {
    readonly origin: string;
    readonly host: string;
    readonly path: string;
    readonly lastPassAt: number | null;
  }[];
  /**
   * Every synced session: its id in the store, its origin, its id and parent
   * in its file, and digests and counts of what the store holds of it.
   */
  readonly sessions: readonly {
    readonly sessionId: string;
    readonly origin: string;
    readonly sourceId: string;
    readonly sourceParent: string | null;
    readonly rowDigest: string;
    readonly messageCount: number;
    readonly maxMessageId: number;
    /** A digest of its messages' ids and times (`null`: recorded before it was kept). */
    readonly messageDigest?: number | null;
    readonly extraDigest: string | null;
    /**
     * A digest of its goal as the store holds it (`null`: none; absent: a
     * record of a release before goals were synced, read as none).
     */
    readonly metaDigest?: string | null;
  }[];
}

/** The record of one synced session in a {@linkcode SyncState}. */
export type SyncedSessionRecord = SyncState["sessions"][number];

/**
 * The record of a session whose copy in the store may differ from what its
 * file held when `record` was taken (`hermes-state copy` skipped it: an
 * earlier, interrupted run wrote it, and its host may have written on
 * since). Its counts match no file: the origin's next pass ships the session
 * whole, replacing the store's copy, or deletes it from the store when the
 * file no longer holds it.
 *
 * @param record A record of another store's {@linkcode SyncedStore.syncState}.
 * @returns The same record, its digests and counts set to match nothing.
 */
export function unconfirmedRecord(record: SyncedSessionRecord): SyncedSessionRecord {
  return {
    ...record,
    rowDigest: "",
    messageCount: -1,
    maxMessageId: -1,
    messageDigest: null,
    extraDigest: null,
    // Matches no goal, nor the lack of one: the next pass writes the file's (or removes the store's).
    metaDigest: "",
  };
}

/** What {@linkcode SyncedStore.restoreSyncState} restored. */
export interface RestoredSyncState {
  /** Origins added. */
  readonly origins: number;
  /** Synced sessions whose records were added. */
  readonly sessions: number;
  /**
   * Origins left out because the store has an origin of that name for
   * another host or file (their sessions' records are left out too).
   */
  readonly conflicting: readonly string[];
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
  /**
   * Holds every origin's pass lock until released: a `sync` pass into this
   * store waits meanwhile (one under way is waited for first), so its synced
   * sessions and their records stay as they are. `hermes-state copy` holds
   * them while it copies, so that the records it carries match the sessions
   * it copied. An origin registered after the hold is not held.
   *
   * @returns The origins held, and the function that releases them.
   */
  holdSyncPasses(): Promise<{ origins: string[]; release(): Promise<void> }>;
  /**
   * Everything the store records of `sync` (`hermes-state copy` carries it
   * to another such store with the sessions).
   *
   * @returns The origins and the records of the synced sessions.
   */
  syncState(): Promise<SyncState>;
  /**
   * Adds another store's record of `sync` (its {@linkcode syncState}), once
   * its sessions were copied here, in one transaction: each origin the store
   * lacks, and the record of each session the store holds and has none for.
   * An origin of the same name for another host or file is left out, with
   * its sessions' records. What the store records already is kept.
   *
   * @param state Another store's `syncState()`.
   * @returns What was added, and the origins left out.
   * @throws {ReadonlyError} On a store opened read-only.
   */
  restoreSyncState(state: SyncState): Promise<RestoredSyncState>;
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
      typeof candidate.syncState === "function" &&
      typeof candidate.holdSyncPasses === "function" &&
      typeof candidate.restoreSyncState === "function" &&
      typeof candidate.removeSyncOrigin === "function"
    ? candidate as SessionStore & SyncedStore
    : undefined;
}
