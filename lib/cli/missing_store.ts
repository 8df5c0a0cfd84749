/**
 * One wording for a database file that is not there, whichever command
 * looks for it: the store (`--db`, `HERMES_STATE_DB`, the default) names
 * where the CLI looks and how to point it elsewhere; a file named as an
 * argument (`copy SRC`, `recover SRC`, `sync FILE`) is named alone.
 *
 * @module
 */
import { statSync } from "node:fs";
import { OpenError } from "../core/errors.ts";
import { isPostgresTarget, notAStoreReason, sqlitePath } from "../open_store.ts";
import { CommandError } from "./usage_error.ts";

/**
 * Whether nothing is at `path` (a link to nothing included). A path that
 * cannot be looked at (a folder this user may not enter) is not "missing":
 * opening it says why.
 *
 * @param path The file.
 * @returns True when there is no such file.
 *
 * @example
 * ```ts
 * import { isMissing } from "./missing_store.ts";
 * console.assert(isMissing("/no/such/folder/state.db"));
 * ```
 */
export function isMissing(path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === "ENOENT" || code === "ENOTDIR";
  }
}

/**
 * The error for a database file that is not there.
 *
 * @param path The file looked for.
 * @param options `argument`: the file was named as an argument of the
 * command (SRC, FILE), not as the store the command works on.
 * @returns The error (exit 1); for a path that is a URL of another kind
 *   (`file:x.db`), the reason {@linkcode notAStoreReason} gives.
 *
 * @example
 * ```ts
 * import { noDatabaseError } from "./missing_store.ts";
 * console.assert(noDatabaseError("/tmp/x.db", { argument: true }).message === "No database at /tmp/x.db");
 * ```
 */
export function noDatabaseError(
  path: string,
  options: { argument?: boolean } = {},
): CommandError {
  // `copy file:x.db …` means x.db: said so, not that there is no "file:x.db".
  const notStore = notAStoreReason(path);
  if (notStore !== undefined) {
    return new CommandError(`Cannot open database "${path}": ${notStore}`);
  }
  return new CommandError(
    options.argument
      ? `No database at ${path}`
      : `No database at ${path} (give --db PATH, or set HERMES_STATE_DB or HERMES_HOME)`,
  );
}

/**
 * Refuses a store (`--db`) that cannot be there: a URL of another kind, or
 * a file that does not exist. A `postgres://` URL passes (the server says).
 *
 * @param target The store, as given.
 * @throws {OpenError} For a URL this version does not open.
 * @throws {CommandError} From {@linkcode noDatabaseError} for a missing file.
 *
 * @example
 * ```ts
 * import { assertStoreExists } from "./missing_store.ts";
 * assertStoreExists("postgres://db/hermes");
 * ```
 */
export function assertStoreExists(target: string): void {
  if (isPostgresTarget(target)) return;
  // Said before "No database at mysql://…": no file of that name is meant.
  const notStore = notAStoreReason(target);
  if (notStore !== undefined) throw new OpenError(target, notStore);
  const path = sqlitePath(target);
  if (isMissing(path)) throw noDatabaseError(path);
}
