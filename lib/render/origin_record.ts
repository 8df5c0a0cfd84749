/**
 * One origin of a store that `hermes-state sync` fills, as JSON shows it:
 * snake case, as every other record of the CLI and the web API.
 *
 * @module
 */
import type { SyncOrigin } from "../core/synced_store.ts";

/** One origin as `origins --json` and `GET /api/origins` write it. */
export interface OriginRecord {
  /** Its name, the prefix of its sessions' ids. */
  origin: string;
  /** The host it was synced from. */
  host: string;
  /** The file's path on that host. */
  path: string;
  /** How many of its sessions the store holds. */
  sessions: number;
  /** When its last pass ended, in seconds since the epoch; `null` before the first. */
  last_pass_at: number | null;
}

/**
 * The JSON record of one origin.
 *
 * @param origin The origin, as the store reads it.
 * @returns Its record, keys in snake case.
 *
 * @example
 * ```ts
 * import { originRecord } from "./origin_record.ts";
 * const record = originRecord({ origin: "web-1", host: "a", path: "/s.db", sessions: 2, lastPassAt: null });
 * console.assert(record.last_pass_at === null);
 * ```
 */
export function originRecord(origin: SyncOrigin): OriginRecord {
  return {
    origin: origin.origin,
    host: origin.host,
    path: origin.path,
    sessions: origin.sessions,
    last_pass_at: origin.lastPassAt,
  };
}
