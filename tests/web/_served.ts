/**
 * Web test helpers: a copy of the v11 fixture with a session of hostile
 * content added, served in-process on a free port.
 */
import { copyFixture } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type HandlerOptions } from "../../lib/web/handler.ts";
import { listen } from "../../lib/web/listen.ts";

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
 * Serves `path` in this process.
 *
 * @param path The database.
 * @param options Handler options (the host defaults to 127.0.0.1).
 * @returns The running server.
 */
export async function serve(path: string, options: HandlerOptions = {}): Promise<Served> {
  const store = await openStore(path);
  const host = options.host ?? "127.0.0.1";
  const server = await listen(createHandler(store, { pollMs: 200, ...options, host }), {
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
