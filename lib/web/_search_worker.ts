/**
 * A search worker of {@linkcode SearchPool}: opens the state.db file
 * read-only on its own thread and answers `searchMessages` requests, so a
 * long search never holds up the server's other requests.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import { openStore } from "../open_store.ts";
import type { SearchOptions } from "../core/search/options.ts";
import type { SessionStore } from "../core/session_store.ts";

/** A request from the pool. */
interface Ask {
  readonly id: number;
  readonly query: string;
  readonly options: SearchOptions;
}

// A file that cannot be opened is told to the pool, which rejects with the reason: thrown
// here, it would also surface as an uncaught error of the worker.
let opened: SessionStore | undefined;
try {
  opened = await openStore(String(workerData.path), { readonly: true });
} catch (error) {
  const e = error as Error;
  parentPort!.postMessage({ failed: { name: e.name, message: e.message } });
}
if (opened !== undefined) serve(opened);

/** Answers the pool's requests on the open store. */
function serve(store: SessionStore): void {
  parentPort!.on("message", async (ask: Ask | "close") => {
    if (ask === "close") {
      await store.close();
      parentPort!.postMessage({ closed: true });
      return;
    }
    try {
      const hits = await store.searchMessages(ask.query, ask.options);
      parentPort!.postMessage({ id: ask.id, hits });
    } catch (error) {
      const e = error as Error;
      parentPort!.postMessage({ id: ask.id, error: { name: e.name, message: e.message } });
    }
  });
  parentPort!.postMessage({ ready: true });
}
