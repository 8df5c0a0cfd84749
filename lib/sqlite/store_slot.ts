/**
 * The store a `SessionDB` reads through, kept current. A read-only store
 * opened `"immutable"` (a file this user may not write, or in a folder this
 * user may not write: see `read_access.ts`) never looks at the file again
 * by itself, so before each read the slot compares the file's state
 * (`file_state.ts`) with the one taken before it was opened, and opens the
 * file again when it moved: the new connection sees the file as it is now
 * (through its `-wal`, read-only, once the owner's Hermes has one). Every
 * other store is returned as it is.
 *
 * An iteration that reads across calls pins the store it started on
 * ({@linkcode StoreSlot.pinned}): a store replaced meanwhile is closed only
 * when its last pin is gone, or with the slot.
 *
 * @module
 */
import type { Store } from "./store.ts";

/** A newly opened store, and the file state to watch it by (`undefined`: nothing to watch). */
export interface Opened {
  /** The store. */
  readonly store: Store;
  /** `fileState` taken before it was opened, for an `"immutable"` store. */
  readonly watched: string | undefined;
}

/** Keeps the store of one `SessionDB` current (see the module's description). */
export class StoreSlot {
  #opened: Opened;
  readonly #reopen: () => Opened;
  readonly #state: (path: string) => string;
  readonly #pins = new Map<Store, number>();
  readonly #retired = new Set<Store>();
  #reopens = 0;
  #closed = false;

  /**
   * @param opened The store as first opened.
   * @param reopen Opens the file again (it may throw: the read then fails,
   *   and the next one tries again).
   * @param state The file's state now (`fileState`).
   */
  constructor(opened: Opened, reopen: () => Opened, state: (path: string) => string) {
    this.#opened = opened;
    this.#reopen = reopen;
    this.#state = state;
  }

  /** The store to read through now: opened again first when its file moved. */
  current(): Store {
    const { store, watched } = this.#opened;
    if (watched === undefined || this.#closed) return store;
    if (this.#state(store.path) === watched) return store;
    const next = this.#reopen();
    this.#opened = next;
    this.#reopens++;
    if (this.#pins.has(store)) this.#retired.add(store);
    else store.db.close();
    return next.store;
  }

  /** The store as it is, without looking at the file (for its path and mode). */
  get held(): Store {
    return this.#opened.store;
  }

  /** How many times the file was opened again (a live page's marker must move with it). */
  get reopens(): number {
    return this.#reopens;
  }

  /**
   * Runs an iteration on the current store, keeping that store open until the
   * iteration ends (is finished, fails or is returned).
   *
   * @param iterate Makes the iteration on a store.
   * @returns The same values, in order.
   */
  *pinned<T>(iterate: (store: Store) => Iterable<T>): Generator<T> {
    const store = this.current();
    this.#pins.set(store, (this.#pins.get(store) ?? 0) + 1);
    try {
      yield* iterate(store);
    } finally {
      const left = this.#pins.get(store)! - 1;
      if (left > 0) this.#pins.set(store, left);
      else {
        this.#pins.delete(store);
        if (this.#retired.delete(store)) store.db.close();
      }
    }
  }

  /**
   * Checkpoints (a writable store) and closes the store, and those replaced
   * while an iteration still held them; the file is not opened again after.
   * A second call does nothing.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const store of this.#retired) store.db.close();
    this.#retired.clear();
    const { store } = this.#opened;
    store.checkpoint("truncate");
    store.db.close();
  }
}
