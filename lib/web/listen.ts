/**
 * The thin socket adapter under the handler: `Bun.serve` on Bun, `node:http`
 * on Node and on Deno. The handler stays a pure `(Request) => Promise<Response>`;
 * only this file touches a runtime server.
 *
 * Deno goes through `node:http`, not `Deno.serve`: `Deno.serve` (2.9) has no
 * limit on how long a request's headers may take and gives no handle on the
 * connection, so a client that sent half a request held its socket for good.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { type Handler, unsupportedMethodAnswer } from "./handler.ts";
import { jsonError } from "./respond.ts";

/** Options of {@linkcode listen}. */
export interface ListenOptions {
  /** The address to bind. */
  readonly host: string;
  /** The port; `0` picks a free one. */
  readonly port: number;
  /**
   * Milliseconds a connection may take to send a request's headers whole (from
   * when it opens, or its last response ended) before it is closed: a client
   * that sends half a request and then nothing cannot hold a socket. Default
   * 10 s. On Bun, whole seconds, checked every 4 s or so; and the first request
   * of a connection has Bun's own fixed limit of about 10 s.
   */
  readonly headersTimeoutMs?: number;
}

/** A listening server. */
export interface Listening {
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

/** The default of {@linkcode ListenOptions.headersTimeoutMs}, Bun's own fixed limit. */
const HEADERS_TIMEOUT_MS = 10_000;

interface BunServer {
  readonly port: number;
  /** Sets the idle limit (seconds, `0` none) of the connection that sent `request`. */
  timeout(request: Request, seconds: number): void;
  stop(force?: boolean): void | Promise<void>;
}

interface BunLike {
  serve(options: {
    hostname: string;
    port: number;
    idleTimeout?: number;
    fetch: (request: Request, server: BunServer) => Promise<Response>;
  }): BunServer;
}

/**
 * `response` with a body that calls `ended` once it is sent, fails or is
 * cancelled (at once when there is no body). A failure reaches the runtime
 * without its error: Bun prints a failed body's error with its stack, and the
 * handler has logged it already. The connection is cut all the same.
 */
function watchedBody(response: Response, ended: () => void): Response {
  const body = response.body;
  if (body === null) {
    ended();
    return response;
  }
  const reader = body.getReader();
  const quiet = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        ended();
        controller.close();
      } catch {
        ended();
        controller.error(undefined);
      }
    },
    cancel: (reason) => {
      ended();
      return reader.cancel(reason);
    },
  });
  return new Response(quiet, { status: response.status, headers: response.headers });
}

function listenBun(bun: BunLike, handler: Handler, options: ListenOptions): Promise<Listening> {
  // Bun closes a new connection whose first request's headers take over 10 s by itself; its
  // idle limit covers the next requests of a kept-alive one. That limit is lifted while a
  // request is answered (an open event stream must not be cut after a quiet spell) and set
  // again when its response ends. Bun checks it every 4 s or so.
  const limitMs = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const seconds = Math.min(255, Math.max(1, Math.ceil(limitMs / 1000)));
  const server = bun.serve({
    hostname: options.host,
    port: options.port,
    idleTimeout: seconds,
    fetch: async (request, bunServer) => {
      bunServer.timeout(request, 0);
      const response = await handler(request);
      return watchedBody(response, () => bunServer.timeout(request, seconds));
    },
  });
  return Promise.resolve({
    port: server.port,
    close: async () => {
      await server.stop(true);
    },
  });
}

/**
 * Closes a connection that is waiting for a request's headers longer than
 * `limitMs`: the wait starts when it opens and when its last response ends.
 * (Node's own `headersTimeout` is checked every 30 s only, and Deno's
 * `node:http` ignores it.)
 */
function headerDeadlines(limitMs: number) {
  const waiting = new Map<Socket, { timer?: ReturnType<typeof setTimeout>; busy: number }>();
  const wait = (socket: Socket) => {
    const state = waiting.get(socket);
    if (state === undefined || state.busy > 0 || socket.destroyed) return;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => socket.destroy(), limitMs);
  };
  return {
    opened(socket: Socket) {
      waiting.set(socket, { busy: 0 });
      socket.once("close", () => {
        clearTimeout(waiting.get(socket)?.timer);
        waiting.delete(socket);
      });
      wait(socket);
    },
    requested(socket: Socket, response: ServerResponse) {
      const state = waiting.get(socket);
      if (state === undefined) return;
      clearTimeout(state.timer);
      state.busy++;
      response.once("close", () => {
        state.busy--;
        wait(socket);
      });
    },
  };
}

/**
 * The body of `req` as a stream the handler reads as far as it needs, as
 * on Bun: a write reads at most its limit and answers 413 at once, and a
 * body that trickles is given up on with its request (a 503 after the
 * time limit), not waited for. What the handler left unread when `res`
 * ends is read and dropped: the connection is kept, and a body that never
 * ends is cut with it by the header deadline.
 */
function bodyOf(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let open = true;
  const drop = () => {
    open = false;
    req.resume();
  };
  res.once("finish", drop);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once("end", () => {
        if (open) controller.close();
        open = false;
      });
      req.once("close", () => {
        if (open) controller.error(new Error("The client went away"));
        open = false;
      });
    },
    pull() {
      req.resume();
    },
    cancel: drop,
  }, new ByteLengthQueuingStrategy({ highWaterMark: 1 << 16 }));
}

/** How many `Host` header lines a `node:http` request came with. */
function hostHeaders(req: IncomingMessage): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === "host") count++;
  }
  return count;
}

/** The `Request` of a `node:http` request; throws for a method `fetch` refuses (TRACE, TRACK). */
function requestOf(
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  bindHost: string,
): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : bodyOf(req, res);
  const init = { method, headers, body, signal, duplex: "half" } as RequestInit;
  const path = req.url ?? "/";
  // A target in absolute form (`GET http://host/path`, RFC 9112 3.2.2, as a client sends through
  // a proxy) is the URL itself: its host is checked by the handler as the Host header is.
  if (/^https?:\/\//i.test(path) && URL.canParse(path)) return new Request(path, init);
  // The asterisk form (`OPTIONS *`, RFC 9112 3.2.4) names no path: it is asked of `/*`, which
  // is no page (it was read as part of the host, and refused as host "0.0.0.0*").
  const target = path.startsWith("/") ? path : `/${path}`;
  const url = `http://${req.headers.host ?? bindHost}${target}`;
  // A Host header that makes no URL: the handler names it (its header is kept).
  return new Request(URL.canParse(url) ? url : `http://0.0.0.0${target}`, init);
}

/**
 * A raw HTTP/1.1 answer the handler did not make (a request `node:http`
 * cannot read), unless the connection is gone or midway through another
 * answer: then it is only cut.
 */
function rawAnswer(socket: Duplex, status: number, reason: string, message: string): void {
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  const response = jsonError(status, message);
  const body = JSON.stringify({ error: { status, message } });
  const lines = [`HTTP/1.1 ${status} ${reason}`];
  response.headers.forEach((value, name) => lines.push(`${name}: ${value}`));
  lines.push(`content-length: ${new TextEncoder().encode(body).byteLength}`, "connection: close");
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

/** Why `node:http` could not read a request, as the answer's status and words. */
function clientErrorAnswer(
  error: { code?: string },
  maxHeaderSize: number,
): [number, string, string] {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return [408, "Request Timeout", "The request took too long to arrive"];
  }
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return [
      431,
      "Request Header Fields Too Large",
      `The request's URL and headers are too large (at most ${maxHeaderSize} bytes)`,
    ];
  }
  return [400, "Bad Request", "Bad request: this is not an HTTP/1.1 request the server can read"];
}

async function listenNode(handler: Handler, options: ListenOptions): Promise<Listening> {
  const http = await import("node:http");
  const deadlines = headerDeadlines(options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS);
  const server = http.createServer(async (req, res) => {
    deadlines.requested(req.socket, res);
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    let response: Response;
    try {
      response = hostHeaders(req) > 1
        // `node:http` keeps the first; Bun refuses them, as RFC 9112 (3.2) asks.
        ? jsonError(400, "Bad request: more than one Host header")
        : await handler(requestOf(req, res, controller.signal, options.host));
    } catch {
      // `fetch` refuses TRACE and TRACK: no page of this server takes them either.
      response = /^(TRACE|TRACK)$/i.test(req.method ?? "")
        ? unsupportedMethodAnswer(req.method!, req.url ?? "/")
        : jsonError(400, "Bad request: the request cannot be read");
    }
    const head: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      if (name !== "set-cookie") head[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) head["set-cookie"] = cookies;
    res.writeHead(response.status, head);
    if (response.body === null) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    // The client may have gone while the handler worked: an abort listened for after it fired
    // never ran, and a live stream so answered polled on for good.
    if (controller.signal.aborted) {
      void reader.cancel().catch(() => {});
      res.destroy();
      return;
    }
    controller.signal.addEventListener("abort", () => void reader.cancel().catch(() => {}));
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((ok) => res.once("drain", ok));
      }
      res.end();
    } catch {
      // The client went away, or the body failed midway (logged by the handler): cut the
      // connection, so that the client cannot take what it got for the whole.
      res.destroy();
    }
  });
  server.on("connection", deadlines.opened);
  // A request `node:http` cannot read (a URL or headers over its limit, not HTTP) is answered
  // as the handler answers: JSON, with the security headers.
  server.on("clientError", (error: { code?: string }, socket: Duplex) => {
    rawAnswer(socket, ...clientErrorAnswer(error, http.maxHeaderSize ?? 16_384));
  });
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    rawAnswer(socket, 405, "Method Not Allowed", "Method CONNECT is not allowed");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Serves `handler` on the running runtime's HTTP server.
 *
 * @param handler The request handler.
 * @param options Address and port.
 * @returns The listening server (with the port actually bound).
 * @throws {Error} When the address cannot be bound (in use, not permitted).
 *
 * @example
 * ```ts ignore
 * const server = await listen(createHandler(store), { host: "127.0.0.1", port: 0 });
 * console.log(`http://127.0.0.1:${server.port}/`);
 * await server.close();
 * ```
 */
export async function listen(handler: Handler, options: ListenOptions): Promise<Listening> {
  const runtime = globalThis as { Bun?: BunLike };
  if (runtime.Bun !== undefined) return await listenBun(runtime.Bun, handler, options);
  return await listenNode(handler, options);
}
