/**
 * The answer to the `?token=` URL: the cookie, and a tiny page of this
 * origin that goes on to the page asked for. A redirect would do, but the
 * link is often followed from another site (a chat, a mail), and a
 * `SameSite=Strict` cookie is not sent on a navigation that another site
 * started, redirect included: the next request would be a 401. A navigation
 * this page starts is same-site, so the cookie goes with it.
 *
 * @module
 */
import { escapeHtml } from "./escape_html.ts";
import { withSecurityHeaders } from "./respond.ts";

/** The page's one script: on to the link's target, keeping the URL's fragment (a deep link). */
const SCRIPT =
  'var go=document.getElementById("go");location.replace(go.getAttribute("href")+location.hash);';

let scriptHash: Promise<string> | undefined;

/** The CSP source of {@linkcode SCRIPT}, computed once. */
function scriptSource(): Promise<string> {
  scriptHash ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(SCRIPT)).then(
    (digest) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`,
  );
  return scriptHash;
}

/**
 * The response to a URL carrying the right token: it sets the cookie and
 * goes on to `target` (with the URL's fragment), by script, or by a meta
 * refresh without one.
 *
 * @param target The path and query to go on to (the token removed).
 * @param token The access token, for the cookie.
 * @param options `secure` sets the cookie's `Secure` (served over HTTPS); `cookie` is its
 *   name (`tokenCookieName`).
 * @returns The page.
 *
 * @example
 * ```ts
 * import { tokenPage } from "./token_page.ts";
 * const response = await tokenPage("/", "s3cret", { secure: false, cookie: "t_80" });
 * console.assert(response.headers.get("set-cookie")!.includes("SameSite=Strict"));
 * ```
 */
export async function tokenPage(
  target: string,
  token: string,
  options: { secure: boolean; cookie: string },
): Promise<Response> {
  // One leading slash: "//host/" would be another server's address.
  const href = escapeHtml(target.replace(/^\/+/, "/"));
  const csp = [
    "default-src 'none'",
    `script-src ${await scriptSource()}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<noscript><meta http-equiv="refresh" content="0; url=${href}"></noscript>` +
    `<title>hermes-state</title></head><body>` +
    `<p><a id="go" href="${href}">Open the session browser</a></p>` +
    `<script>${SCRIPT}</script></body></html>`;
  return new Response(body, {
    status: 200,
    headers: withSecurityHeaders({
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      // Encoded: a `--token` holding `;`, a space or a letter beyond Latin-1 stays one value.
      "set-cookie": `${options.cookie}=${
        encodeURIComponent(token)
      }; HttpOnly; SameSite=Strict; Path=/${options.secure ? "; Secure" : ""}`,
    }),
  });
}
