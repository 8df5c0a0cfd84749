/**
 * Web test helpers: a copy of the v11 fixture with a session of hostile
 * content added, served in-process on a free port.
 *
 * A slow server, on demand: with `HERMES_TEST_SLOW_API_MS=N` in the environment, every `/api/`
 * answer of a server the browser tests start (through {@linkcode serve}, or a handler of their
 * own wrapped in {@linkcode slowed}) comes N milliseconds late: the request waits that long
 * before the handler sees it. A test that passes with 0 and fails with 150 or 600 reads or
 * clicks a view before the page has drawn it (waited for by `redrawn` in `_browser.ts`, or by
 * what the new view shows). `HERMES_TEST_SLOW_LIVE_MS=M` holds the live stream
 * (`/api/events`) M milliseconds more: a test that writes to see a live update must first wait
 * until the page is live (`#live.on`), or the write lands before the stream starts and is no
 * news to it. Run a browser test file so to check it waits for what it needs:
 *
 *     HERMES_TEST_SLOW_API_MS=600 bun test --timeout 60000 tests/web/browser_nav_test.ts
 *     HERMES_TEST_SLOW_API_MS=150 HERMES_TEST_SLOW_LIVE_MS=2000 node --test tests/web/browser_test.ts
 */
import process from "node:process";
import { copyFixture } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { NewMessage } from "../../lib/core/types.ts";
import { createHandler, type Handler, type HandlerOptions } from "../../lib/web/handler.ts";
import { listen } from "../../lib/web/listen.ts";

/**
 * The milliseconds the environment variable `name` says, 0 when unset or empty.
 *
 * @throws {Error} When it is set to anything but a whole number of milliseconds.
 */
export function testDelayMs(name: "HERMES_TEST_SLOW_API_MS" | "HERMES_TEST_SLOW_LIVE_MS"): number {
  const given = process.env[name] ?? "";
  if (given.trim() === "") return 0;
  if (!/^\s*\d+\s*$/.test(given)) {
    throw new Error(`${name}=${JSON.stringify(given)} is not a whole number of milliseconds`);
  }
  return Number(given);
}

/**
 * `handler`, with every `/api/` request held `HERMES_TEST_SLOW_API_MS` milliseconds before it
 * answers, the live stream `HERMES_TEST_SLOW_LIVE_MS` more (the page and its assets at once);
 * `handler` itself when both are 0.
 */
export function slowed(handler: Handler): Handler {
  const api = testDelayMs("HERMES_TEST_SLOW_API_MS");
  const live = testDelayMs("HERMES_TEST_SLOW_LIVE_MS");
  if (api === 0 && live === 0) return handler;
  return async (request) => {
    const path = new URL(request.url).pathname;
    const delay = !path.startsWith("/api/") ? 0 : path === "/api/events" ? api + live : api;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    // The client went away meanwhile (a page closed, a test over): not handed to the handler.
    if (request.signal.aborted) return new Response(null, { status: 499 });
    return await handler(request);
  };
}

/** The id of the session holding hostile content. */
export const HOSTILE_ID = "20260430_120000_hostile";

/** A 1×1 PNG as a data URL. */
export const PNG_DATA_URL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** Messages that would run script or break the layout if rendered as markup. */
export const HOSTILE_TEXTS = [
  "<script>window.__pwned = 'script'</script> plain words after the script tag",
  "<img src=x onerror=\"window.__pwned = 'img'\"> an image tag with onerror",
  "[click me](javascript:window.__pwned='link') and <a href=\"javascript:window.__pwned='a'\">a link</a>",
  "bidi \u202Egnp.exe\u202C override and \u2066isolate\u2069 end",
  "nul\u0000byte and escape\u001b[31m red",
  '<style>body{display:none}</style><iframe src="https://example.com"></iframe>',
  "x".repeat(5000),
];

/** Seconds of the hostile session's first message (after the fixture's window). */
const START = 1777550400;

/**
 * A writable copy of the v11 fixture plus the hostile session (and a 10 MB message when `huge`).
 *
 * @returns The database path.
 */
export async function hostileDb(options: { huge?: boolean } = {}): Promise<string> {
  const path = copyFixture("hermes-v11.db");
  let tick = START;
  await using store = await openStore(path, { clock: () => tick++ });
  await store.createSession(HOSTILE_ID, "cli", { model: "test/hostile" });
  await store.setSessionTitle(HOSTILE_ID, "<img src=x onerror=\"window.__pwned='title'\"> hostile");
  await store.appendMessages(HOSTILE_ID, [
    ...HOSTILE_TEXTS.map((content) => ({ role: "user", content })),
    {
      role: "user",
      content: [
        { type: "text", text: "look at these images" },
        { type: "image_url", image_url: { url: PNG_DATA_URL } },
        { type: "image_url", image_url: { url: "https://tracker.example/pixel.png" } },
        { type: "input_audio", input_audio: { data: "AAAA" } },
      ],
    },
    ...(options.huge
      ? [{ role: "tool", toolName: "cat", content: "y".repeat(10 * 1024 * 1024) }]
      : []),
  ]);
  return path;
}

/** A server over a store, on a free loopback port. */
export interface Served {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  /** The store. */
  readonly store: SessionStore;
  /** Stops the server and closes the store. */
  close(): Promise<void>;
}

/**
 * Serves `path` in this process, each `/api/` answer late when `HERMES_TEST_SLOW_API_MS` is set
 * (see {@linkcode slowed}).
 *
 * @param path The database.
 * @param options Handler options (the host defaults to 127.0.0.1).
 * @param around Wraps the store's handler (a test that holds some answers), before `slowed`.
 * @returns The running server.
 */
export async function serve(
  path: string,
  options: HandlerOptions = {},
  around: (handler: Handler) => Handler = (handler) => handler,
): Promise<Served> {
  const store = await openStore(path);
  const host = options.host ?? "127.0.0.1";
  const handler = around(createHandler(store, { pollMs: 200, ...options, host }));
  const server = await listen(slowed(handler), {
    host,
    port: 0,
  });
  return {
    origin: `http://127.0.0.1:${server.port}`,
    store,
    async close() {
      await server.close();
      await store.close();
    },
  };
}

/**
 * `count` messages of a long transcript, user and assistant by turns, the
 * i-th saying `message number i` (the store gives each its clock's time).
 */
export function numberedMessages(count: number): NewMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `message number ${i}`,
  }));
}
