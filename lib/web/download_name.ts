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
  const name = keptName(id, /[^\w.-]/g);
  return /[A-Za-z0-9]/.test(name) ? name : "session";
}

/**
 * `id` with each character `other` matches as `_`, without leading dots, at most
 * {@linkcode MAX_DOWNLOAD_NAME} characters (whole code points).
 */
function keptName(id: string, other: RegExp): string {
  return Array.from(id.replace(other, "_").replace(/^\.+/, "")).slice(0, MAX_DOWNLOAD_NAME)
    .join("");
}

/**
 * The `Content-Disposition` of a download of session `id` as `extension`:
 * `attachment; filename="…"` with {@linkcode downloadName}, and, when the id
 * holds letters or digits beyond ASCII (`日本`, `é`), also a `filename*` in
 * UTF-8 (RFC 6266, RFC 8187) that keeps them, which browsers prefer to the
 * ASCII name (for `日本` that is `session`).
 *
 * @param id The session id.
 * @param extension The format's extension, without the dot.
 * @returns The header's value.
 *
 * @example
 * ```ts
 * import { downloadDisposition } from "./download_name.ts";
 * console.assert(downloadDisposition("a b", "md") === 'attachment; filename="a_b.md"');
 * console.assert(downloadDisposition("日本", "md").endsWith("filename*=UTF-8''%E6%97%A5%E6%9C%AC.md"));
 * ```
 */
export function downloadDisposition(id: string, extension: string): string {
  const ascii = `attachment; filename="${downloadName(id)}.${extension}"`;
  const kept = keptName(id, /[^\p{L}\p{M}\p{N}_.-]/gu);
  // Only letters, marks, digits, `_`, `.` and `-` are left: all ASCII, the ASCII name says it all.
  if (/^[\w.-]*$/.test(kept)) return ascii;
  return `${ascii}; filename*=UTF-8''${encodeURIComponent(kept)}.${extension}`;
}
