/**
 * Live updates: a Server-Sent Events stream that polls the store's change
 * marker and sends `change` when the file moved (a running gateway's new
 * messages, another process's rename), with a comment line as heartbeat.
 *
 * @module
 */
import { maskSecrets } from "./failure_line.ts";
import type { SessionStore } from "../core/session_store.ts";

/** Options of {@linkcode liveEvents}. */
export interface LiveOptions {
  /**
   * How often the change marker is read, in milliseconds.
   * @default {1000}
   */
  readonly pollMs?: number;
  /**
   * How often a heartbeat comment is sent, in milliseconds.
   * @default {15000}
   */
  readonly heartbeatMs?: number;
  /**
   * The longest a read of the change marker may take before the stream says failure (a
   * database server that stopped answering), in milliseconds; it keeps trying after.
   * @default {10000}
   */
  readonly answerMs?: number;
  /** Ends the stream (the request's signal). */
  readonly signal?: AbortSignal;
  /** Told once when the stream ends (closed, or its client gone). */
  readonly onEnd?: () => void;
}

/** The most events a live stream holds for a client that does not read them. */
const QUEUED = 4;

/** The most live streams one server keeps open at once (each polls the store). */
export const MAX_LIVE_STREAMS = 64;

/**
 * Counts a server's open live streams against a limit: every stream polls
 * the store each `pollMs`, and a client that opens thousands would make the
 * server do nothing else. The page opens one per browser (its tabs share it).
 */
export class LiveStreamLimit {
  #open = 0;
  /** The most streams open at once. */
  readonly max: number;

  /** @param max The most streams open at once. */
  constructor(max = MAX_LIVE_STREAMS) {
    this.max = max;
  }

  /** How many are open now. */
  get count(): number {
    return this.#open;
  }

  /**
   * Takes a place for one stream.
   *
   * @returns The function that gives it back (once), or `undefined` when all are taken.
   */
  enter(): (() => void) | undefined {
    if (this.#open >= this.max) return undefined;
    this.#open++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#open--;
    };
  }
}

/** `promise`, or a rejection after `ms` saying the store did not answer. */
async function answerWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The store did not answer within ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The event stream of one open page.
 *
 * @param store The open store.
 * @param options Timing and the signal that ends it.
 * @returns `text/event-stream` bytes: `event: hello` with the marker, then `event: change` on each
 *   change, `event: failure` each time the store cannot be read, and `event: recovered` when it
 *   can again.
 */
export function liveEvents(
  store: SessionStore,
  options: LiveOptions = {},
): ReadableStream<Uint8Array> {
  const pollMs = options.pollMs ?? 1000;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const answerMs = options.answerMs ?? 10_000;
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let last = "";
  let quiet = 0;
  let failing = false;
  const stop = () => {
    if (!closed) options.onEnd?.();
    closed = true;
    if (timer !== undefined) clearTimeout(timer);
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      // Sent only while the client reads: one that stalls (never reads, its socket full) finds
      // at most QUEUED events waiting, not one more each poll for as long as it stays open. What
      // was not sent is sent on a later poll (a change, a recovery): the page misses none.
      const send = (text: string): boolean => {
        if (closed || (controller.desiredSize ?? 0) <= 0) return false;
        controller.enqueue(encoder.encode(text));
        return true;
      };
      const finish = () => {
        if (closed) return;
        stop();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      options.signal?.addEventListener("abort", finish, { once: true });
      const tick = async () => {
        if (closed) return;
        try {
          const version = await answerWithin(store.dataVersion(), answerMs);
          // The store answers again: pages showing the failure go back to live.
          if (failing && send(`event: recovered\ndata: ${JSON.stringify({ version })}\n\n`)) {
            failing = false;
          }
          if (version !== last) {
            if (send(`event: change\ndata: ${JSON.stringify({ version })}\n\n`)) {
              last = version;
              quiet = 0;
            }
          } else if ((quiet += pollMs) >= heartbeatMs && send(": heartbeat\n\n")) {
            quiet = 0;
          }
        } catch (error) {
          failing = true;
          const message = maskSecrets(String((error as Error)?.message ?? error));
          send(`event: failure\ndata: ${JSON.stringify({ message })}\n\n`);
        }
        if (!closed) timer = setTimeout(tick, pollMs);
      };
      try {
        last = await store.dataVersion();
      } catch (error) {
        stop();
        throw error;
      }
      // `retry`: how long an EventSource of another client waits to connect again after a
      // dropped stream. The page asks again itself, soon at first (see `connectLive` in app_js).
      send(`retry: 3000\nevent: hello\ndata: ${JSON.stringify({ version: last })}\n\n`);
      timer = setTimeout(tick, pollMs);
    },
    cancel() {
      stop();
    },
  }, { highWaterMark: QUEUED });
}
