/**
 * Searches of a state.db file on worker threads, each with its own
 * read-only connection: SQLite's work is synchronous, so a search run on
 * the server's thread would hold every other request (a listing page, the
 * next keystroke) until it ends. Each worker runs one search at a time and
 * the rest wait in the pool's queue; a search whose request is abandoned
 * (timed out, or its client gone) leaves the queue, or, already running,
 * costs its worker, which is retired and replaced at once. A retired worker
 * is never stopped mid-search: SQLite cannot be interrupted from outside its
 * thread (a stopped thread's SQLite call runs on to its end anyway, its read
 * holding the owner's checkpoints back), and on Deno a thread stopped
 * mid-search left its connection open for good, a descriptor more per
 * abandoned search until the server ran out of them. It ends its search,
 * closes its connection, and only then is stopped; closing the pool waits
 * so for every search still running. At most twice as many
 * workers as the pool's retire at once; past that, an abandoned search keeps
 * its worker busy until it ends.
 * A pool that cannot start (a runtime or a compiled executable without the
 * worker module) reports it, and the server searches on its own thread
 * instead.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import type { SearchOptions } from "../core/search/options.ts";
import type { SearchHit } from "../core/types.ts";

/** One search asked of the pool: queued, then run by one worker. */
interface Job {
  readonly id: number;
  readonly query: string;
  readonly options: SearchOptions;
  readonly resolve: (hits: SearchHit[]) => void;
  readonly reject: (error: unknown) => void;
  /** Stops listening to the request's signal. */
  readonly forget: () => void;
}

/** A worker and the search it runs, if any. */
interface Slot {
  readonly worker: Worker;
  /** The search it runs; `ABANDONED` for one no caller waits for any more. */
  job: Job | undefined;
}

/** The job of a worker still running a search that was abandoned (kept, not retired). */
const ABANDONED: Job = {
  id: -1,
  query: "",
  options: {},
  resolve: () => {},
  reject: () => {},
  forget: () => {},
};

/** What a worker posts. */
interface Posted {
  readonly ready?: true;
  readonly failed?: { name: string; message: string };
  readonly id?: number;
  readonly hits?: SearchHit[];
  readonly error?: { name: string; message: string };
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
  /**
   * Searches like `SessionStore.searchMessages`, on the first free worker.
   * When `signal` aborts (the request timed out or its client went away),
   * a queued search is dropped, and a running one's worker is replaced at
   * once (it ends that search, closes its connection and stops; past twice
   * the pool's size retiring at once, it ends the search in its place). The
   * promise then rejects with the signal's reason.
   */
  search(query: string, options?: SearchOptions, signal?: AbortSignal): Promise<SearchHit[]>;
  /**
   * Stops the workers, each once it has closed its connection: a search
   * still running is waited for (however long it takes), since a worker
   * stopped mid-search could leave its connection open, and the `-wal` and
   * `-shm` of a read-only server beside the file. Queued searches reject.
   */
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
  const startMs = options.startMs ?? 30_000;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  const starting = new Set<Promise<void>>();
  let next = 0;
  let closed = false;
  let broken: Error | undefined;

  /** Hands queued searches to idle workers. */
  const pump = () => {
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (slot.job !== undefined) continue;
      const job = queue.shift()!;
      slot.job = job;
      // An idle worker does not keep the process alive; one with a search to answer does.
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, query: job.query, options: job.options });
    }
  };

  /** The search `slot` was running has ended (answered or abandoned): the slot is free. */
  const release = (slot: Slot): Job | undefined => {
    const job = slot.job;
    slot.job = undefined;
    job?.forget();
    slot.worker.unref();
    return job;
  };

  const onMessage = (slot: Slot, message: Posted) => {
    if (slot.job === ABANDONED && message.id !== undefined) {
      // The abandoned search ended: its worker is free again.
      release(slot);
      pump();
      return;
    }
    if (message.id === undefined || slot.job?.id !== message.id) return;
    const job = release(slot)!;
    if (message.error) job.reject(namedError(message.error));
    else job.resolve(message.hits!);
    pump();
  };

  /** Starts one worker; resolves once it has opened the file. */
  const spawn = (): Promise<Slot> => {
    const worker = new Worker(workerModule(), { workerData: { path } });
    const slot: Slot = { worker, job: undefined };
    return new Promise<Slot>((resolve, reject) => {
      const fail = (error: Error) => {
        clearTimeout(timer);
        void worker.terminate();
        reject(error);
      };
      const timer = setTimeout(
        () => fail(new Error("Cannot start a search worker: it did not open the file in time")),
        startMs,
      );
      worker.once("error", fail);
      worker.on("message", (message: Posted) => {
        if (message.ready) {
          clearTimeout(timer);
          worker.off("error", fail);
          worker.unref();
          // A worker that dies on its own fails its search and is replaced (its error is
          // told by the exit; without a listener it would be thrown on the server's thread).
          worker.on("error", () => {});
          worker.once("exit", () => {
            if (closed || !slots.includes(slot)) return;
            release(slot)?.reject(new Error("The search worker stopped unexpectedly"));
            replace(slot);
          });
          resolve(slot);
        } else if (message.failed) fail(namedError(message.failed));
        else onMessage(slot, message);
      });
    });
  };

  /** Workers retired, each with the promise that it closed its connection (or exited). */
  const retiring = new Map<Worker, Promise<void>>();

  /**
   * Asks `worker` to close its connection once its search ends, and stops
   * it then.
   *
   * @returns When it has closed its connection (it is stopped right after).
   */
  const retire = (worker: Worker): Promise<void> => {
    const already = retiring.get(worker);
    if (already !== undefined) return already;
    const closedIt = new Promise<void>((resolve) => {
      worker.on("message", (message: { closed?: true }) => {
        if (message.closed) resolve();
      });
      worker.once("exit", () => resolve());
    });
    worker.postMessage("close");
    retiring.set(worker, closedIt);
    void closedIt.then(() => worker.terminate()).finally(() => retiring.delete(worker));
    return closedIt;
  };

  /** Leaves `slot`'s worker (its search abandoned) to retire, and puts a fresh one in its place. */
  const replace = (slot: Slot) => {
    slots.splice(slots.indexOf(slot), 1);
    void retire(slot.worker);
    if (closed) return;
    const started = spawn().then(async (fresh) => {
      if (closed) {
        // Started as the pool closed: it has opened the file, so it closes it before it stops.
        await retire(fresh.worker);
        await fresh.worker.terminate();
        return;
      }
      slots.push(fresh);
      pump();
    }, (error: Error) => {
      if (slots.length > 0 || starting.size > 1) return;
      // No worker left and none coming: what waits, and what comes, fails with the reason.
      broken = error;
      for (const job of queue.splice(0)) job.reject(error);
    }).finally(() => starting.delete(started));
    starting.add(started);
  };

  try {
    for (let i = 0; i < count; i++) slots.push(await spawn());
  } catch (error) {
    for (const slot of slots) await slot.worker.terminate();
    throw error;
  }
  return {
    search(query, searchOptions = {}, signal) {
      if (closed) return Promise.reject(new Error("The search pool was closed"));
      if (broken !== undefined) return Promise.reject(broken);
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<SearchHit[]>((resolve, reject) => {
        const abandon = () => {
          const queued = queue.indexOf(job);
          if (queued >= 0) queue.splice(queued, 1);
          const running = slots.find((slot) => slot.job === job);
          if (running !== undefined) {
            release(running);
            if (retiring.size < 2 * count) replace(running);
            else {
              // Enough threads already finish searches no one waits for: this one ends on its
              // own worker, which takes the next search then.
              running.job = ABANDONED;
            }
          }
          reject(signal!.reason);
        };
        const job: Job = {
          id: next++,
          query,
          options: searchOptions,
          resolve,
          reject,
          forget: () => signal?.removeEventListener("abort", abandon),
        };
        signal?.addEventListener("abort", abandon, { once: true });
        queue.push(job);
        pump();
      });
    },
    async close() {
      closed = true;
      const error = new Error("The search pool was closed");
      for (const job of queue.splice(0)) job.reject(error);
      await Promise.all(starting);
      // Each worker closes its connection itself, once its search ends, however long that
      // takes: a thread stopped before would leave it open to the process's end (on Deno), and
      // so the -wal and -shm of a read-only server behind, which its own close cannot remove
      // while another connection of the process holds the file.
      const all = [...slots.map((slot) => slot.worker), ...retiring.keys()];
      await Promise.all(all.map(async (worker) => {
        worker.ref();
        await retire(worker);
        await worker.terminate();
      }));
      for (const slot of slots) {
        const job = release(slot);
        if (job !== ABANDONED) job?.reject(error);
      }
    },
  };
}
