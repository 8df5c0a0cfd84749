/**
 * One line telling the operator why a request failed unexpectedly: the
 * request, the error's name and message, with any password masked (a
 * PostgreSQL URL's, or a `password=` setting) and no stack.
 *
 * @module
 */

/** The most characters of an error message told. */
const MAX_MESSAGE = 500;

/**
 * `text` with the passwords it may hold as `***`: in a URL's authority
 * (`postgres://user:secret@host`) and in `password=secret` settings.
 *
 * @param text Any text.
 * @returns The text, fit to log.
 *
 * @example
 * ```ts
 * import { maskSecrets } from "./failure_line.ts";
 * console.assert(maskSecrets("postgres://u:pw@h/db?password=x") === "postgres://u:***@h/db?password=***");
 * ```
 */
export function maskSecrets(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s:/@?#]*:)[^\s/@?#]*@/gi, "$1***@")
    .replace(/(password\s*=\s*)('[^']*'|"[^"]*"|[^\s&#;]*)/gi, "$1***");
}

/**
 * The line logged for a request that failed with `error`.
 *
 * @param request The request.
 * @param error What it failed with.
 * @returns One line, without a newline.
 *
 * @example
 * ```ts
 * import { failureLine } from "./failure_line.ts";
 * const line = failureLine(new Request("http://127.0.0.1/api/sessions"), new Error("gone"));
 * console.assert(line === "hermes-state serve: GET /api/sessions failed: Error: gone");
 * ```
 */
export function failureLine(request: Request, error: unknown): string {
  let path = request.url;
  try {
    path = new URL(request.url).pathname;
  } catch {
    // not a URL: told as it is
  }
  const { name, message } = error instanceof Error
    ? error
    : { name: typeof error, message: String(error) };
  let said = String(message).replace(/\s+/g, " ").trim();
  if (said.length > MAX_MESSAGE) said = `${said.slice(0, MAX_MESSAGE)}…`;
  return maskSecrets(`hermes-state serve: ${request.method} ${path} failed: ${name}: ${said}`);
}
