/**
 * Answers of the read API kept until the store changes: each request first
 * reads the store's change marker (`dataVersion`, a few microseconds on
 * SQLite); while it is the same, an answer already computed for the same
 * URL is sent again, and identical requests arriving together share one
 * computation. Many clients typing the same words, or one going back and
 * forth, then cost the database nothing.
 *
 * @module
 */

/** One kept answer. */
interface Kept {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: Uint8Array<ArrayBuffer>;
}

/** Options of {@linkcode AnswerCache}. */
export interface AnswerCacheOptions {
  /**
   * Answers kept at most (the least recently used goes first).
   * @default {500}
   */
  readonly maxEntries?: number;
  /**
   * The largest answer kept, in bytes (a transcript with a huge message is not).
   * @default {1048576}
   */
  readonly maxBytes?: number;
  /**
   * The most bytes kept in all (the least recently used go first).
   * @default {33554432}
   */
  readonly maxTotalBytes?: number;
}

/** An answer being computed, and how many requests wait for it. */
interface Pending {
  readonly kept: Promise<Kept>;
  /** Aborts the computation, once no request waits for it any more. */
  readonly controller: AbortController;
  waiters: number;
  settled: boolean;
}

/** Successful answers by URL, for one version of the store. */
export class AnswerCache {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #maxTotalBytes: number;
  #totalBytes = 0;
  readonly #kept = new Map<string, Kept>();
  readonly #pending = new Map<string, Pending>();
  #version: string | undefined;

  /** @param options Size limits. */
  constructor(options: AnswerCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 500;
    this.#maxBytes = options.maxBytes ?? 1 << 20;
    this.#maxTotalBytes = options.maxTotalBytes ?? 32 << 20;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.#kept.size;
  }

  /**
   * The answer for `key` at store version `version`: the kept one, the one
   * being computed, or a new one from `compute` (kept when it is a 200 of at
   * most `maxBytes`).
   *
   * @param version The store's change marker now.
   * @param key The request (path and query).
   * @param compute Makes the answer; its signal aborts when every request
   *   waiting for it has been abandoned.
   * @param signal Aborts when this request is abandoned (timed out, its
   *   client gone): it stops waiting, with the signal's reason.
   * @returns A fresh `Response` with the answer.
   */
  async answer(
    version: string,
    key: string,
    compute: (signal: AbortSignal) => Promise<Response>,
    signal?: AbortSignal,
  ): Promise<Response> {
    if (version !== this.#version) {
      this.#kept.clear();
      this.#totalBytes = 0;
      this.#pending.clear();
      this.#version = version;
    }
    const kept = this.#kept.get(key);
    if (kept !== undefined) {
      this.#kept.delete(key); // most recently used goes last
      this.#kept.set(key, kept);
      return toResponse(kept, "hit");
    }
    signal?.throwIfAborted();
    const pending = this.#pending.get(key) ?? this.#compute(key, compute);
    pending.waiters++;
    try {
      return toResponse(await untilAborted(pending.kept, signal), "miss");
    } finally {
      if (--pending.waiters === 0 && !pending.settled) {
        // Nobody waits any more: the work stops, and the next request starts it again.
        pending.controller.abort(signal?.reason);
        if (this.#pending.get(key) === pending) this.#pending.delete(key);
      }
    }
  }

  /** Starts computing the answer for `key`, kept when it is a small enough 200. */
  #compute(key: string, compute: (signal: AbortSignal) => Promise<Response>): Pending {
    const controller = new AbortController();
    const pending: Pending = {
      kept: compute(controller.signal).then(async (response) => ({
        status: response.status,
        headers: [...response.headers],
        body: new Uint8Array(await response.arrayBuffer()),
      })),
      controller,
      waiters: 0,
      settled: false,
    };
    this.#pending.set(key, pending);
    pending.kept.then((answer) => {
      pending.settled = true;
      if (this.#pending.get(key) !== pending) return; // the store changed meanwhile
      this.#pending.delete(key);
      if (answer.status !== 200 || answer.body.byteLength > this.#maxBytes) return;
      this.#kept.set(key, answer);
      this.#totalBytes += answer.body.byteLength;
      while (this.#kept.size > this.#maxEntries || this.#totalBytes > this.#maxTotalBytes) {
        const [oldest, kept] = this.#kept.entries().next().value!;
        this.#kept.delete(oldest);
        this.#totalBytes -= kept.body.byteLength;
      }
    }, () => {
      pending.settled = true;
      if (this.#pending.get(key) === pending) this.#pending.delete(key);
    });
    return pending;
  }
}

/** `promise`, or its rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

function toResponse(kept: Kept, state: "hit" | "miss"): Response {
  const headers = new Headers(kept.headers);
  headers.set("x-hermes-cache", state);
  return new Response(kept.body.slice(), { status: kept.status, headers });
}
