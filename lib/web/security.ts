/**
 * The server's guards: which `Host` names it answers (against DNS
 * rebinding), the access token exchanged for a cookie when it listens
 * beyond loopback, and the headers every response carries.
 *
 * @module
 */

/**
 * The name of the cookie that carries the access token of the server
 * `url` reached: one a port (`hermes_state_token_8787`). Browsers keep a
 * host's cookies for all its ports, so under one name a second server's
 * token replaced the first's, whose page then got 401 on every request.
 *
 * @param url The request's URL.
 * @returns The cookie's name.
 *
 * @example
 * ```ts
 * import { tokenCookieName } from "./security.ts";
 * console.assert(tokenCookieName(new URL("http://box.lan:8787/")) === "hermes_state_token_8787");
 * console.assert(tokenCookieName(new URL("https://box.lan/")) === "hermes_state_token_443");
 * ```
 */
export function tokenCookieName(url: URL): string {
  return `hermes_state_token_${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

/** The header a write must carry with the page's CSRF token. */
export const CSRF_HEADER = "x-hermes-csrf";

/** The policy of every page: scripts and styles of this origin only, no `eval`, no outside request. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers set on every response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/**
 * True when `host` is a loopback name or address (`127.0.0.0/8`, `::1`, `localhost`).
 *
 * @param host A host name or address, with or without brackets.
 * @returns Whether only this machine can reach it.
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./security.ts";
 * console.assert(isLoopbackHost("127.0.0.1") && !isLoopbackHost("0.0.0.0"));
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]" || host === "";
}

function isIpLiteral(name: string): boolean {
  return /^(\d{1,3}\.){3}\d{1,3}$/.test(name) || /^\[[0-9a-f:.]+\]$/i.test(name);
}

/**
 * The host name of a `Host` header value (`name:port`, `[v6]:port`), lower-cased.
 *
 * @param header The header value.
 * @returns The name without the port (IPv6 keeps its brackets).
 *
 * @example
 * ```ts
 * import { hostName } from "./security.ts";
 * console.assert(hostName("Box.LAN:8787") === "box.lan" && hostName("[::1]:80") === "[::1]");
 * ```
 */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end < 0 ? value : value.slice(0, end + 1);
  }
  const colon = value.lastIndexOf(":");
  return colon < 0 ? value : value.slice(0, colon);
}

/** What {@linkcode allowedHost} compares against. */
export interface HostPolicy {
  /** The address the server is bound to. */
  readonly bind: string;
  /** Extra names, from `--public-url`. */
  readonly extraNames: readonly string[];
}

/**
 * True when a request's `Host` names this server: a loopback name, the bound
 * address, a `--public-url` name, or (bound to every interface) an IP
 * address. A DNS-rebinding page arrives with its own domain name and is refused.
 *
 * @param header The `Host` header.
 * @param policy The bound address and extra names.
 * @returns Whether to answer.
 *
 * @example
 * ```ts
 * import { allowedHost } from "./security.ts";
 * const policy = { bind: "127.0.0.1", extraNames: [] };
 * console.assert(allowedHost("localhost:8787", policy) && !allowedHost("evil.test:8787", policy));
 * ```
 */
export function allowedHost(header: string | null, policy: HostPolicy): boolean {
  if (header === null || header.trim() === "") return false;
  const name = hostName(header);
  const bind = policy.bind.toLowerCase();
  if (LOOPBACK_NAMES.has(name) || isLoopbackHost(name.replace(/^\[|\]$/g, ""))) return true;
  if (name === bind || name === `[${bind}]`) return true;
  if (policy.extraNames.some((extra) => extra.toLowerCase() === name)) return true;
  return isWildcard(bind) && isIpLiteral(name);
}

/**
 * Compares two secrets in time that does not depend on where they differ.
 *
 * @param a One text.
 * @param b The other.
 * @returns Whether they are equal.
 */
export function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * A new random secret (URL-safe, 128 bits).
 *
 * @returns The token.
 */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The value of one cookie of a `Cookie` header.
 *
 * @param header The header, or `null`.
 * @param name The cookie name.
 * @returns Its value, or `undefined`.
 */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * True when a browser says (`Sec-Fetch-Site`) that another site or another
 * origin of this site (another port of `localhost`) started the request.
 * Such a page cannot read the answer, but it can still make the server
 * search, export or stream for it and time the answer (a cross-site search
 * leak): the API refuses it. The page's own requests say `same-origin`, an
 * address typed in or a bookmark `none`; a client that is no browser sends
 * no such header.
 *
 * @param header The `Sec-Fetch-Site` header, or `null`.
 * @returns Whether to refuse the request.
 *
 * @example
 * ```ts
 * import { startedElsewhere } from "./security.ts";
 * console.assert(startedElsewhere("cross-site") && !startedElsewhere("same-origin"));
 * ```
 */
export function startedElsewhere(header: string | null): boolean {
  if (header === null) return false;
  const site = header.trim().toLowerCase();
  return site !== "same-origin" && site !== "none";
}
