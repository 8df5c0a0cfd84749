/**
 * The web server as one function from `Request` to `Response`, over any
 * {@linkcode SessionStore}: the `Host` check, the access token, the page and
 * its assets, and the JSON API. Sockets live in the adapter
 * (`listen.ts`); tests call the handler directly.
 *
 * @module
 */
import { UnexportableIdError } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";
import type { SearchOptions } from "../core/search/options.ts";
import type { SessionStore } from "../core/session_store.ts";
import type { SearchHit } from "../core/types.ts";
import { AnswerCache } from "./answer_cache.ts";
import { handleApi, MAX_TRANSCRIPT_PAGE, methodsOf } from "./api.ts";
import { ASSETS, INDEX_HTML } from "./assets/assets.ts";
import { HttpError, jsonError, withSecurityHeaders } from "./respond.ts";
import {
  allowedHost,
  cookieValue,
  hostName,
  isLoopbackHost,
  newToken,
  sameSecret,
  startedElsewhere,
  tokenCookieName,
} from "./security.ts";
import { tokenPage } from "./token_page.ts";
import { LiveStreamLimit } from "./live.ts";
import { failureLine } from "./failure_line.ts";
import { StorageError } from "../core/storage_error.ts";
import { quotedValue } from "../core/shown_value.ts";

/** Options of {@linkcode createHandler}. */
export interface HandlerOptions {
  /**
   * The address the server is bound to; any other than loopback requires `token`.
   * @default {"127.0.0.1"}
   */
  readonly host?: string;
  /** The access token; required when `host` is not loopback. */
  readonly token?: string | null;
  /** The URL the server is reached at through a proxy or a name (`--public-url`); its host is accepted. */
  readonly publicUrl?: string | null;
  /**
   * Allow rename and delete.
   * @default {false}
   */
  readonly allowWrites?: boolean;
  /**
   * How often live pages poll for changes, in milliseconds.
   * @default {1000}
   */
  readonly pollMs?: number;
  /**
   * The longest a request may take before a 503, in milliseconds.
   * @default {10000}
   */
  readonly timeoutMs?: number;
  /**
   * The most live event streams open at once; one more is a 503.
   * @default {64}
   */
  readonly maxLiveStreams?: number;
  /**
   * How many messages a transcript answer holds when the page does not say: the newest, with
   * a button for the earlier ones.
   * @default {5000}
   */
  readonly transcriptPage?: number;
  /** The clock, Unix seconds. */
  readonly now?: () => number;
  /**
   * Runs a search (a {@linkcode SearchPool}'s, off the server's thread); the
   * store's `searchMessages` by default.
   */
  readonly search?: (
    query: string,
    options: SearchOptions,
    signal?: AbortSignal,
  ) => Promise<SearchHit[]>;
  /**
   * Told one line (no newline) for each request that failed unexpectedly
   * (a 500: the database gone, a bug), passwords masked; nothing by default.
   */
  readonly logError?: (line: string) => void;
}

/**
 * The header of a read answer that names the store's change marker
 * (`dataVersion`) read before the answer was: the answer holds every write
 * up to it. The page compares it with the live stream's `hello` and `change`
 * events, and draws the view again when they differ.
 */
export const DATA_VERSION_HEADER = "x-hermes-data-version";

/** The read routes whose answers depend only on the URL and the store's data. */
const CACHED = /^\/api\/(sessions(\/[^/]+)?|session|search|resolve|sources|origins|usage)$/;

/** A request handler. */
export type Handler = (request: Request) => Promise<Response>;

function unauthorized(): Response {
  return jsonError(
    401,
    "Unauthorized: open the URL with ?token=… that `hermes-state serve` printed",
  );
}

/** A cookie's value as the token page encoded it; `undefined` for none or bad encoding. */
function decodedCookie(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** A Host header of a name or an address, and a port (1 to 65535) or none. */
function validHost(header: string): boolean {
  const match = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(header.trim());
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/**
 * Runs `work` with a signal that aborts when the client goes away or after
 * `ms` (then the answer is a 503): work given up on stops costing anything
 * it can stop (a queued or running search).
 */
async function withTimeout<T>(
  request: Request,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const gone = () => controller.abort(new HttpError(503, "The client went away"));
  if (request.signal.aborted) gone();
  else request.signal.addEventListener("abort", gone, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new HttpError(503, `The request took longer than ${ms} ms`);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener("abort", gone);
  }
}

/**
 * The response to a failure: its status and message for an expected one;
 * for any other, a bare 500 (no detail leaves the server) and one line to
 * `log`, so the operator sees why.
 */
function toErrorResponse(
  error: unknown,
  request: Request,
  log: (line: string) => void,
  engine: SessionStore["engine"],
): Response {
  if (error instanceof HttpError) return jsonError(error.status, error.message);
  if (error instanceof Error && error.name === "WriteBusyError") {
    return jsonError(503, "The database is locked by another process; try again");
  }
  if (error instanceof StorageError && error.kind === "busy") {
    // PostgreSQL gave up on it (its statement_timeout or lock_timeout, a conflict retried
    // in vain): the next try may pass. Why stays in the log.
    log(failureLine(request, error));
    return jsonError(503, "The database is busy; try again");
  }
  if (error instanceof UnexportableIdError) {
    // The store refuses the whole export (a session id no export can carry): said before any byte.
    return jsonError(409, error.message);
  }
  if (error instanceof Error && error.name === "ReadonlyError") {
    return jsonError(403, "The database is open read-only");
  }
  log(failureLine(request, error));
  if (error instanceof Error && (error.name === "OpenError" || error.name === "NotStateDbError")) {
    // The file was moved away, emptied or replaced by another while the server runs: the
    // next request opens it again. Its path stays in the log.
    return jsonError(503, unreachable(engine));
  }
  if (error instanceof StorageError && error.kind === "io") {
    // The database server stopped or restarts, its connection cut: the next request connects
    // again. Its address stays in the log.
    return jsonError(503, unreachable(engine));
  }
  return jsonError(500, "Internal error");
}

/** What a request is told while the store cannot be read for now. */
function unreachable(engine: SessionStore["engine"]): string {
  return engine === "postgres"
    ? "The PostgreSQL server cannot be reached now; try again"
    : "The database file cannot be read now; try again";
}

/**
 * `response` to a HEAD request: its status and headers, no body. A JSON
 * body says its length; a stream (live events, an export) is cancelled
 * unread, so it costs nothing and holds no place.
 */
async function headAnswer(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  if (response.body !== null) {
    if (headers.get("content-type")?.startsWith("application/json")) {
      headers.set("content-length", String((await response.arrayBuffer()).byteLength));
    } else await response.body.cancel();
  }
  return new Response(null, { status: response.status, headers });
}

/**
 * Whether an `If-None-Match` header names `etag`: `*`, or a list of tags
 * compared weakly (`W/"x"` matches `"x"`), as RFC 9110 (13.1.2) asks; a proxy
 * or a browser may send either.
 */
function etagMatches(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => opaque(tag) === opaque(etag));
}

/**
 * The answer to a request whose method no `Request` can carry (`fetch`
 * refuses TRACE and TRACK), so that the handler never sees it: a 405 naming
 * the methods the path takes in `Allow` (RFC 9110, 15.5.6), as the handler's
 * own 405s do, or a 404 where there is no such page.
 *
 * @param method The request's method.
 * @param target The request target, as sent (`/api/search?q=x`).
 * @returns The JSON error, with the security headers.
 */
export function unsupportedMethodAnswer(method: string, target: string): Response {
  const path = URL.canParse(target, "http://localhost")
    ? new URL(target, "http://localhost").pathname
    : target;
  const isPage = path === "/" || ASSETS.has(path);
  const allowed = isPage ? ["GET", "HEAD"] : methodsOf(path);
  if (allowed === undefined) return jsonError(404, `Not found: ${path}`);
  const refused = jsonError(405, `Method ${method} is not allowed on ${path}`);
  refused.headers.set("allow", allowed.join(", "));
  return refused;
}

function staticResponse(request: Request, path: string): Response | undefined {
  const asset = path === "/" ? INDEX_HTML : ASSETS.get(path);
  if (asset === undefined) return undefined;
  if (request.method !== "GET" && request.method !== "HEAD") {
    // A 405 names the methods the path takes (RFC 9110, 15.5.6), as the API's do.
    const refused = jsonError(405, `Method ${request.method} is not allowed on ${path}`);
    refused.headers.set("allow", "GET, HEAD");
    return refused;
  }
  const headers = withSecurityHeaders({
    "content-type": asset.type,
    etag: asset.etag,
    // Revalidated on every load (the ETag makes that a 304): a new version is seen at once.
    "cache-control": "no-cache",
  });
  if (etagMatches(request.headers.get("if-none-match"), asset.etag)) {
    return new Response(null, { status: 304, headers });
  }
  // Said outright: a HEAD answer has no body, and Deno and Bun would then say 0.
  headers.set("content-length", String(asset.body.byteLength));
  return new Response(request.method === "HEAD" ? null : asset.body, { headers });
}

/**
 * Creates the handler of `hermes-state serve`.
 *
 * @param store The store to show; the handler never closes it.
 * @param options The bind address, token, writes and timing.
 * @returns The handler.
 * @throws {TypeError} When `host` is not loopback and no `token` is given.
 *
 * @example Asking the API without a socket
 * ```ts
 * import { openStore } from "../open_store.ts";
 * import { createHandler } from "./handler.ts";
 * const dir = await Deno.makeTempDir();
 * await using store = await openStore(`${dir}/state.db`);
 * await store.createSession("s1", "cli");
 * const handle = createHandler(store);
 * const response = await handle(new Request("http://127.0.0.1:8787/api/sessions"));
 * console.assert((await response.json()).sessions[0].id === "s1");
 * ```
 */
export function createHandler(store: SessionStore, options: HandlerOptions = {}): Handler {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? null;
  if (!isLoopbackHost(host) && (token === null || token === "")) {
    throw new TypeError(
      `Cannot serve on ${host} without a token: a non-loopback address needs one`,
    );
  }
  const page = options.transcriptPage;
  if (page !== undefined && !(Number.isInteger(page) && page >= 1 && page <= MAX_TRANSCRIPT_PAGE)) {
    throw new TypeError(
      `transcriptPage must be a whole number from 1 to ${MAX_TRANSCRIPT_PAGE}: current value is ${page}`,
    );
  }
  const extraNames: string[] = [];
  const publicUrl = options.publicUrl ? new URL(options.publicUrl) : null;
  if (publicUrl !== null) extraNames.push(hostName(publicUrl.host));
  // Behind an HTTPS proxy the server itself speaks HTTP: the public URL says what the browser sees.
  const publicHttps = publicUrl?.protocol === "https:";
  const policy = { bind: host, extraNames };
  const csrf = newToken();
  const now = options.now ?? (() => Date.now() / 1000);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const pollMs = options.pollMs ?? 1000;
  const allowWrites = options.allowWrites ?? false;
  const cache = new AnswerCache();
  const liveStreams = new LiveStreamLimit(options.maxLiveStreams);
  const logError = options.logError ?? (() => {});

  const answer = async (request: Request): Promise<Response> => {
    try {
      let url: URL | undefined;
      try {
        url = new URL(request.url);
      } catch {
        // Node builds the URL from the Host header: a bad one is named below, not the path.
      }
      const hostHeader = request.headers.get("host") ?? url?.host ?? "";
      if (!validHost(hostHeader)) {
        return jsonError(
          400,
          `Bad request: the Host header is not a host and port: current value is ${
            quotedValue(hostHeader)
          }`,
        );
      }
      if (url === undefined) {
        return jsonError(400, `Bad request: the URL is not valid: current value is ${request.url}`);
      }
      // The refused host is named: the Host header's, or that of a URL in absolute form.
      const refusedHost = [hostHeader, url.host].find((one) => !allowedHost(one, policy));
      if (refusedHost !== undefined) {
        return jsonError(
          403,
          `Forbidden: this server does not answer for host ${quotedValue(refusedHost)}`,
        );
      }
      if (
        url.pathname.startsWith("/api/") && startedElsewhere(request.headers.get("sec-fetch-site"))
      ) {
        return jsonError(
          403,
          `Forbidden: the API answers this server's own page only: current Sec-Fetch-Site is ${
            quotedValue(request.headers.get("sec-fetch-site"))
          }`,
        );
      }
      if (token !== null && token !== "") {
        const offered = url.searchParams.get("token");
        if (offered !== null) {
          if (!sameSecret(offered, token)) return unauthorized();
          url.searchParams.delete("token");
          return await tokenPage(`${url.pathname}${url.search}`, token, {
            secure: url.protocol === "https:" || publicHttps,
            cookie: tokenCookieName(url),
          });
        }
        const cookie = decodedCookie(
          cookieValue(request.headers.get("cookie"), tokenCookieName(url)),
        );
        // The scheme's name in any case (RFC 9110); either the cookie or the header may hold
        // the token (a stale cookie of an earlier run does not hide a right header).
        const bearer = /^Bearer (.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
        const given = [cookie, bearer].filter((one) => one !== undefined);
        if (!given.some((one) => sameSecret(one, token))) return unauthorized();
      }
      const path = url.pathname;
      if (path.startsWith("/api/")) {
        const api = (signal: AbortSignal) =>
          handleApi({
            store,
            request,
            url,
            now: now(),
            allowWrites: allowWrites && !store.readonly,
            csrf,
            liveStreams,
            publicOrigin: publicUrl?.origin ?? null,
            version: VERSION,
            pollMs,
            timeoutMs,
            transcriptPage: options.transcriptPage,
            signal,
            search: options.search ?? ((query, o) => store.searchMessages(query, o)),
            logError,
          });
        // HEAD too: it says the headers GET says, the change marker included.
        if ((request.method === "GET" || request.method === "HEAD") && CACHED.test(path)) {
          // A relative period ("30d") moves with the clock: then the minute is part of the key.
          // Read as the routes read it: a name sent percent-encoded (`%73ince`) is `since` too.
          const relative = ["since", "from", "to"].some((name) => url.searchParams.has(name));
          const key = `${path}${url.search}${relative ? `#${Math.floor(now() / 60)}` : ""}`;
          // The change marker is read within the time limit too: a database server that stops
          // answering (hung, or its network gone) gets the request its 503, not no answer.
          return await withTimeout(request, timeoutMs, async (signal) => {
            // Read before the answer: a write in between makes the page draw again, never miss it.
            const version = await store.dataVersion();
            const response = await cache.answer(version, key, api, signal);
            response.headers.set(DATA_VERSION_HEADER, version);
            return response;
          });
        }
        return await withTimeout(request, timeoutMs, api);
      }
      if (path === "/favicon.ico") {
        return new Response(null, { status: 204, headers: withSecurityHeaders() });
      }
      return staticResponse(request, path) ?? jsonError(404, `Not found: ${path}`);
    } catch (error) {
      return toErrorResponse(error, request, logError, store.engine);
    }
  };
  // A HEAD answer is GET's without the body, a refusal's or a failure's too: a live stream or
  // an export is not run (over `node:http` a HEAD of the live stream sent nothing and held one
  // of its places).
  return async (request: Request): Promise<Response> => {
    const response = await answer(request);
    return request.method === "HEAD" ? await headAnswer(response) : response;
  };
}
