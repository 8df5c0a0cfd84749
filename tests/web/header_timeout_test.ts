// A client that sends half a request's headers and then nothing (slowloris) must not hold
// its connection: the server closes it once `headersTimeoutMs` has passed, and meanwhile
// keeps answering real requests. Deno's server held such a connection for good, Node's for
// 60–90 s. Bun's server applies its own fixed limit of about 10 s (checked every 4 s), so
// there the bound is 14 s.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { listen, type Listening } from "../../lib/web/listen.ts";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";

const LIMIT_MS = 1_000;
/** The longest a half-sent request's connection may stay open. */
const BOUND_MS = runtimeName() === "bun" ? 14_000 : LIMIT_MS + 2_000;
/** How long the slow response is quiet: past the limit, and past Bun's 4 s check. */
const QUIET_MS = runtimeName() === "bun" ? 6_000 : 2 * LIMIT_MS;
const HALF = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";

/** Answers "ok", or on /slow a body whose second part comes after `QUIET_MS`. */
function handle(request: Request): Promise<Response> {
  if (new URL(request.url).pathname !== "/slow") return Promise.resolve(new Response("ok"));
  const bytes = new TextEncoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes.encode("first "));
      timer = setTimeout(() => {
        controller.enqueue(bytes.encode("second"));
        controller.close();
      }, QUIET_MS);
    },
    cancel: () => clearTimeout(timer),
  });
  return Promise.resolve(new Response(body));
}

/** A socket to `server` that has sent `text`, and the milliseconds until the server closed it. */
function halfOpen(server: Listening, text: string): { socket: Socket; closed: Promise<number> } {
  const start = Date.now();
  const socket = connect(server.port, "127.0.0.1", () => socket.write(text));
  socket.on("error", () => {});
  socket.resume();
  const closed = new Promise<number>((resolve) =>
    socket.on("close", () => resolve(Date.now() - start))
  );
  return { socket, closed };
}

/** `closed`, or a failure naming how long the connection stayed open. */
async function closedWithinBound(closed: Promise<number>, socket: Socket): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`a half-sent request's connection was still open after ${BOUND_MS} ms`));
    }, BOUND_MS);
  });
  try {
    return await Promise.race([closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Half-sent requests are cut within the bound while a real request is answered meanwhile. */
async function halfSentRequests(): Promise<void> {
  const server = await listen(handle, { host: "127.0.0.1", port: 0, headersTimeoutMs: LIMIT_MS });
  try {
    const halves = Array.from({ length: 50 }, () => halfOpen(server, HALF));
    const response = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), "ok");
    const times = await Promise.all(halves.map((h) => closedWithinBound(h.closed, h.socket)));
    assert.ok(Math.max(...times) <= BOUND_MS, `closed after ${Math.max(...times)} ms`);
  } finally {
    await server.close();
  }
}

/** A kept-alive connection answered once, then sent half a request, is cut within the bound. */
async function keptAliveThenHalf(): Promise<void> {
  const server = await listen(handle, { host: "127.0.0.1", port: 0, headersTimeoutMs: LIMIT_MS });
  try {
    const { socket, closed } = halfOpen(server, `${HALF}\r\n`);
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      if (text.endsWith("ok")) socket.write(HALF);
    });
    await closedWithinBound(closed, socket);
    assert.match(text, /^HTTP\/1\.1 200/);
  } finally {
    await server.close();
  }
}

/** A response quiet for longer than the limit comes whole. */
async function streamsPastTheLimit(): Promise<void> {
  const server = await listen(handle, { host: "127.0.0.1", port: 0, headersTimeoutMs: LIMIT_MS });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/slow`);
    assert.equal(await response.text(), "first second");
  } finally {
    await server.close();
  }
}

describe("listen() closes connections whose request headers do not arrive", () => {
  // Each case mostly waits (for a server's limit, Bun's own 10 s on a first request, or a quiet
  // response): the three, each on its own server, start together and each test awaits its own.
  let cases: Record<"halves" | "keptAlive" | "streaming", Promise<void>>;
  before(() => {
    cases = {
      halves: halfSentRequests(),
      keptAlive: keptAliveThenHalf(),
      streaming: streamsPastTheLimit(),
    };
    // A failure is reported by the test that awaits it, not as an unhandled rejection before.
    for (const started of Object.values(cases)) started.catch(() => {});
  });

  test("half-sent requests are cut within the limit; real requests are answered meanwhile", async () => {
    await cases.halves;
  });

  test("a kept-alive connection that then sends half a request is cut too", async () => {
    await cases.keptAlive;
  });

  test("a response that streams for longer than the limit is not cut", async () => {
    await cases.streaming;
  });
});
