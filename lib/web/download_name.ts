/**
 * The file name a download of a session is offered under.
 *
 * @module
 */

/** The longest name offered, in characters (before the format's extension). */
export const MAX_DOWNLOAD_NAME = 100;

/**
 * The name of the file a browser saves session `id` as: the id's letters,
 * digits, `_`, `-` and `.`, any other character as `_`, without leading dots
 * (a browser refuses `..html` or hides `.x.md`) and at most
 * {@linkcode MAX_DOWNLOAD_NAME} characters; `session` when nothing of the id
 * is left (`.`, `..`).
 *
 * @param id The session id.
 * @returns The name, without extension.
 *
 * @example
 * ```ts
 * import { downloadName } from "./download_name.ts";
 * console.assert(downloadName("odd/slash") === "odd_slash");
 * console.assert(downloadName("..") === "session");
 * ```
 */
export function downloadName(id: string): string {
  const name = id.replace(/[^\w.-]/g, "_").replace(/^\.+/, "").slice(0, MAX_DOWNLOAD_NAME);
  return /[A-Za-z0-9]/.test(name) ? name : "session";
}
