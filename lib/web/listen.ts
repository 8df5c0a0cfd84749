/**
 * The thin socket adapter under the handler: `Deno.serve` on Deno,
 * `Bun.serve` on Bun, `node:http` on Node. The handler stays a pure
 * `(Request) => Promise<Response>`; only this file touches a runtime server.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Handler } from "./handler.ts";

/** Options of {@linkcode listen}. */
export interface ListenOptions {
  /** The address to bind. */
  readonly host: string;
  /** The port; `0` picks a free one. */
  readonly port: number;
}

/** A listening server. */
export interface Listening {
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

/** The largest request body the Node adapter reads. */
const MAX_BODY = 1 << 20;

interface DenoLike {
  serve(
    options: {
      hostname: string;
      port: number;
      onListen?: (addr: unknown) => void;
      onError?: (error: unknown) => Response;
    },
    handler: Handler,
  ): { addr: { port: number }; shutdown(): Promise<void> };
}

interface BunLike {
  serve(options: {
    hostname: string;
    port: number;
    idleTimeout?: number;
    fetch: Handler;
  }): { port: number; stop(force?: boolean): void | Promise<void> };
}

function listenDeno(deno: DenoLike, handler: Handler, options: ListenOptions): Promise<Listening> {
  // Deno binds synchronously (a busy port throws here); onListen only silences its log line.
  // The handler answers every error itself; what reaches onError is a response body that
  // failed after its headers went out (already logged by the handler, in one line): Deno
  // would print its stack, and cuts the connection either way.
  const open = new Set<() => void>();
  const server = deno.serve({
    hostname: options.host,
    port: options.port,
    onListen: () => {},
    onError: () => new Response(null, { status: 500 }),
  }, async (request) => endable(await handler(request), open));
  return Promise.resolve({
    port: server.addr.port,
    // Deno's shutdown waits for every response to end: an open page's event stream never
    // does, and Ctrl-C left the server running. Open bodies are ended first, as Node and Bun
    // cut their connections.
    close: () => {
      for (const end of open) end();
      return server.shutdown();
    },
  });
}

/**
 * `response` with a body that the function it puts in `open` ends (while it
 * is being sent; it leaves `open` when done).
 */
function endable(response: Response, open: Set<() => void>): Response {
  const body = response.body;
  if (body === null) return response;
  const reader = body.getReader();
  let end = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      end = () => {
        open.delete(end);
        void reader.cancel().catch(() => {});
        try {
          controller.close();
        } catch {
          // already closed or cancelled
        }
      };
      open.add(end);
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          open.delete(end);
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        open.delete(end);
        controller.error(error);
      }
    },
    cancel(reason) {
      open.delete(end);
      return reader.cancel(reason);
    },
  });
  return new Response(stream, { status: response.status, headers: response.headers });
}

/**
 * `response` with a body whose failure reaches the runtime without its error:
 * Bun prints a failed body's error with its stack, and the handler has logged
 * it already. The connection is cut all the same.
 */
function withQuietBody(response: Response): Response {
  const body = response.body;
  if (body === null) return response;
  const reader = body.getReader();
  const quiet = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch {
        controller.error(undefined);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(quiet, { status: response.status, headers: response.headers });
}

function listenBun(bun: BunLike, handler: Handler, options: ListenOptions): Promise<Listening> {
  // idleTimeout 0: an open event stream must not be cut after 10 s of quiet.
  const server = bun.serve({
    hostname: options.host,
    port: options.port,
    idleTimeout: 0,
    fetch: async (request) => withQuietBody(await handler(request)),
  });
  return Promise.resolve({
    port: server.port,
    close: async () => {
      await server.stop(true);
    },
  });
}

async function listenNode(handler: Handler, options: ListenOptions): Promise<Listening> {
  const http = await import("node:http");
  const server = http.createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const chunks: Uint8Array[] = [];
    let size = 0;
    req.on("data", (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(chunk);
    });
    req.on("end", async () => {
      let request: Request;
      try {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
        }
        const method = req.method ?? "GET";
        const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
        const init = { method, headers, body, signal: controller.signal };
        const path = req.url ?? "/";
        try {
          request = new Request(`http://${req.headers.host ?? options.host}${path}`, init);
        } catch {
          // A Host header that makes no URL: the handler names it (its header is kept).
          request = new Request(`http://0.0.0.0${path}`, init);
        }
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"status":400,"message":"Bad request"}}');
        return;
      }
      const response = await handler(request);
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
  const runtime = globalThis as { Deno?: DenoLike; Bun?: BunLike };
  if (runtime.Bun !== undefined) return await listenBun(runtime.Bun, handler, options);
  if (runtime.Deno !== undefined) return await listenDeno(runtime.Deno, handler, options);
  return await listenNode(handler, options);
}
