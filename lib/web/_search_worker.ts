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

/**
 * A word no message is likely to hold: searched once as the worker starts, it walks the whole
 * file the way a search that finds little does ({@linkcode warmUp}).
 */
const WARM_UP_QUERY = "hermesstatewarmupzq";

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
  parentPort!.postMessage({ failed: posted(error) });
}
if (opened !== undefined) serve(opened);

/** An error as it crosses to the pool: its name and message. */
function posted(error: unknown): { name: string; message: string } {
  const e = error as Error;
  return { name: e.name, message: e.message };
}

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
      parentPort!.postMessage({ id: ask.id, error: posted(error) });
    }
  });
  parentPort!.postMessage({ ready: true });
  void warmUp(store);
}

/**
 * Does once, before the first request, what a connection does once for all its searches, which
 * the first such search typed into the page then paid: a word found nowhere is searched again by
 * substring over the trigram index, which is counted against the messages, the whole file's
 * range (~0.1 s at a million messages). Not the read of every message for the rows an older
 * SQLite indexed only up to a U+0000 (`search/trigram_gaps.ts`, ~0.5 s there), which only a
 * search of one or two CJK characters that finds few hits needs: warmed up with such a search, a
 * worker replacing one took 0.23-0.43 s instead of 0.08-0.11 s to answer on a file whose trigram
 * index lacks a 28 MB text (SQLite's LIKE reads a text character by character for a pattern that
 * does not begin with ASCII), and over 3 s once in CI. A
 * request that comes meanwhile waits for it, as it would have done that work itself; a failure
 * is left to the searches that follow, which meet it again.
 */
async function warmUp(store: SessionStore): Promise<void> {
  try {
    await store.searchMessages(WARM_UP_QUERY, { limit: 1 });
  } catch {
    // The same failure reaches the first request, which reports it.
  }
}
