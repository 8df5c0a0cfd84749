/**
 * Responses of the web server: JSON bodies, errors as `{ error: { status,
 * message } }` (never a stack trace), and the security headers on all of them.
 *
 * @module
 */
import { SECURITY_HEADERS } from "./security.ts";

/** A failure with the HTTP status it answers; its message is shown to the client. */
export class HttpError extends Error {
  /** The HTTP status. */
  readonly status: number;

  /**
   * @param status The HTTP status.
   * @param message What went wrong, for the client.
   */
  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

/**
 * Adds the security headers (and `cache-control: no-store` unless set).
 *
 * @param headers The response's own headers.
 * @returns All headers.
 */
export function withSecurityHeaders(headers: HeadersInit = {}): Headers {
  const out = new Headers(headers);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    if (!out.has(name)) out.set(name, value);
  }
  if (!out.has("cache-control")) out.set("cache-control", "no-store");
  return out;
}

/**
 * A JSON response.
 *
 * @param value The body.
 * @param status The status.
 * @param headers More headers.
 * @returns The response.
 */
export function json(value: unknown, status = 200, headers: HeadersInit = {}): Response {
  const all = withSecurityHeaders(headers);
  all.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(value), { status, headers: all });
}

/**
 * A JSON error response.
 *
 * @param status The status.
 * @param message What went wrong.
 * @returns The response.
 */
export function jsonError(status: number, message: string): Response {
  return json({ error: { status, message } }, status);
}
