/**
 * What a store target names: a PostgreSQL server (`postgres://…`), a
 * state.db file (a path, or `sqlite:PATH`), or something no engine opens (a
 * URL of another kind), told before anything is created.
 *
 * @module
 */

/**
 * True when `target` names a PostgreSQL server rather than a file.
 *
 * @param target A path, `sqlite:PATH`, or a URL.
 * @returns Whether it is a `postgres://` / `postgresql://` URL.
 */
export function isPostgresTarget(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * The file path a SQLite target names: `target` without its `sqlite:` prefix.
 *
 * @param target A path or `sqlite:PATH` (not a URL).
 * @returns The path.
 */
export function sqlitePath(target: string): string {
  return target.startsWith("sqlite:") ? target.slice("sqlite:".length) : target;
}

/**
 * Why a target that looks like a URL names no store this version opens: any
 * `scheme://` but PostgreSQL's (`sqlite://x.db` would open `/x.db` at the
 * root, `mysql://…` a file of that name), `postgres:` without its `//`
 * (a typo that would create a folder tree of that name), and SQLite's
 * `file:` URIs (read as a file of that name). A `file:` URI and a
 * `sqlite://` one are told what to type instead. `undefined` when it is a
 * path.
 *
 * @param target What `--db`, `openStore` or `SessionDB.open` was given.
 * @returns The reason, or `undefined`.
 */
export function notAStoreReason(target: string): string | undefined {
  const fileUri = /^file:(?:\/\/(?:localhost)?(?=\/))?([^?#]*)/i.exec(target);
  if (fileUri !== null) {
    const path = fileUri[1];
    return "SQLite URIs (file:) are not taken: give the file's path" +
      (path === "" ? "" : ` instead (${path})`);
  }
  const sqliteUrl = /^sqlite:\/\/(.*)$/is.exec(target);
  if (sqliteUrl !== null) {
    return `not a store this version opens: write sqlite:PATH without the slashes (sqlite:${
      sqliteUrl[1]
    }), or the path itself`;
  }
  if (/^postgres(ql)?:/i.test(target) || /^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    return "not a store this version opens: give a file path, sqlite:PATH or a postgres:// URL";
  }
  return undefined;
}
