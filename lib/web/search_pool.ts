/**
 * Searches of a state.db file on worker threads, each with its own
 * read-only connection: SQLite's work is synchronous, so a search run on
 * the server's thread would hold every other request (a listing page, the
 * next keystroke) until it ends. A pool that cannot start (a runtime or a
 * compiled executable without the worker module) reports it, and the server
 * searches on its own thread instead.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import type { SearchOptions } from "../core/search/options.ts";
import type { SearchHit } from "../core/types.ts";

interface Waiting {
  resolve(hits: SearchHit[]): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  busy: number;
}

/**
 * Where the worker module is: beside this file, or, inside an executable
 * built with `bun build --compile cli.ts lib/web/_search_worker.ts`, at its
 * path in the executable's file system (relative to the repository root).
 */
function workerModule(): URL | string {
  if (import.meta.url.includes("/$bunfs/")) return "./lib/web/_search_worker.ts";
  return new URL("./_search_worker.ts", import.meta.url);
}

/** Options of {@linkcode startSearchPool}. */
export interface SearchPoolOptions {
  /**
   * Worker threads.
   * @default {2}
   */
  readonly workers?: number;
  /**
   * How long a worker may take to open the file, in milliseconds.
   * @default {30000}
   */
  readonly startMs?: number;
}

/** Worker threads answering `searchMessages` on one file. */
export interface SearchPool {
  /** Searches like `SessionStore.searchMessages`, on the least busy worker. */
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** Stops the workers. */
  close(): Promise<void>;
}

/** An error rebuilt from what a worker posted (its name and message). */
function namedError(posted: { name: string; message: string }): Error {
  const error = new Error(posted.message);
  error.name = posted.name;
  return error;
}

/**
 * Starts the workers, each opening `path` read-only.
 *
 * @param path The state.db file.
 * @param options How many workers.
 * @returns The pool, once every worker has opened the file.
 * @throws {Error} When a worker cannot start or open the file.
 */
export async function startSearchPool(
  path: string,
  options: SearchPoolOptions = {},
): Promise<SearchPool> {
  const count = Math.max(1, options.workers ?? 2);
  const waiting = new Map<number, Waiting>();
  let next = 0;
  const slots: Slot[] = [];
  const started = (worker: Worker) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("Cannot start a search worker: it did not open the file in time")),
        options.startMs ?? 30_000,
      );
      worker.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.on(
        "message",
        (
          message: {
            ready?: true;
            failed?: { name: string; message: string };
            id?: number;
            hits?: SearchHit[];
            error?: { name: string; message: string };
          },
        ) => {
          if (message.ready) {
            clearTimeout(timer);
            resolve();
            return;
          }
          if (message.failed) {
            clearTimeout(timer);
            reject(namedError(message.failed));
            return;
          }
          const wait = waiting.get(message.id!);
          if (wait === undefined) return;
          waiting.delete(message.id!);
          if (message.error) wait.reject(namedError(message.error));
          else wait.resolve(message.hits!);
        },
      );
    });
  try {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(workerModule(), { workerData: { path } });
      slots.push({ worker, busy: 0 });
      await started(worker);
      worker.unref();
    }
  } catch (error) {
    for (const slot of slots) await slot.worker.terminate();
    throw error;
  }
  return {
    search(query, searchOptions = {}) {
      const slot = slots.reduce((a, b) => (b.busy < a.busy ? b : a));
      const id = next++;
      // An idle worker does not keep the process alive; one with a search to answer does.
      if (slot.busy++ === 0) slot.worker.ref();
      return new Promise<SearchHit[]>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        slot.worker.postMessage({ id, query, options: searchOptions });
      }).finally(() => {
        if (--slot.busy === 0) slot.worker.unref();
      });
    },
    async close() {
      // Each worker closes its connection itself (a killed thread would leave it open, and
      // the -wal/-shm files of a read-only server behind); one that does not answer is killed.
      await Promise.all(slots.map(async ({ worker }) => {
        const closed = new Promise<void>((resolve) => {
          worker.on("message", (message: { closed?: true }) => {
            if (message.closed) resolve();
          });
          worker.once("exit", () => resolve());
        });
        worker.ref();
        worker.postMessage("close");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([closed, new Promise((resolve) => timer = setTimeout(resolve, 2000))]);
        clearTimeout(timer);
        await worker.terminate();
      }));
      for (const wait of waiting.values()) wait.reject(new Error("The search pool was closed"));
      waiting.clear();
    },
  };
}
