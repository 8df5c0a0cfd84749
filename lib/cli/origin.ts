/**
 * `--origin NAME` of `list` and `search`: only sessions that `sync` shipped
 * from that origin, which only a PostgreSQL store records.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { ParsedArgs } from "./parse.ts";
import { CommandError } from "./usage_error.ts";

/**
 * The `--origin` value, checked against the store's engine.
 *
 * @param args The parsed arguments.
 * @param store The open store.
 * @returns The origin, or `undefined` when not given.
 * @throws {CommandError} When given for a store that is not PostgreSQL.
 *
 * @example
 * ```ts ignore
 * const origin = originOption(args, store); // "web-1" for --origin web-1
 * ```
 */
export function originOption(args: ParsedArgs, store: SessionStore): string | undefined {
  const origin = args.string("origin");
  if (origin === undefined || origin === "") return undefined;
  if (store.engine !== "postgres") {
    throw new CommandError(
      `--origin needs a PostgreSQL store (origins are recorded by "hermes-state sync"): ${store.target}`,
    );
  }
  return origin;
}
