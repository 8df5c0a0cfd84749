/**
 * The store a `SessionDB` reads through, kept current. A read-only store
 * that reads without the locks that hold a read still (`readsUnlocked` in
 * `read_access.ts`: opened `"immutable"`, or in SQLite's read-only mode
 * beside a `-shm` this user may not write) would answer from stale pages,
 * or from a mix it takes for damage, once another process writes; so
 * before each call the slot compares the file's state (`file_state.ts`)
 * with the one taken before it was opened, and opens the file again when
 * it moved, and a call's read that fails while the file moves under it is
 * run again ({@linkcode StoreSlot.read}). Any other read-only store sees
 * commits through SQLite's locks but would read on from a file taken away,
 * or from pages it cached of a file copied over its own, so it is watched
 * by the file's identity and the times of its own pages (`fileWritten`: a
 * file put in its place or over it is opened, and so is the file after
 * each checkpoint). A writable store is returned as it is.
 *
 * An iteration that reads across calls pins the store it started on
 * ({@linkcode StoreSlot.pinned}): a store replaced meanwhile is closed only
 * when its last pin is gone, or with the slot.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { OpenError } from "../core/errors.ts";
import { changedEachTimeReason, fileState, UNLOCKED_RETRY_PAUSES_MS } from "./file_state.ts";
import { sleepSync } from "./write.ts";

/** What tells that a store's file moved: a view of the file, and what it was at the open. */
export interface Watch {
  /** The view (`fileState`, `fileWritten`), of the store's path. */
  readonly by: (path: string) => string;
  /** What it gave just before the store was opened. */
  readonly was: string;
  /** Looks at most this often (a `stat` costs as much as a small read); every call when absent. */
  readonly everyMs?: number;
}

/** A newly opened store, and how to watch its file (`undefined`: not watched). */
export interface Opened {
  /** The store. */
  readonly store: Store;
  /** How to tell that it must be opened again. */
  readonly watched: Watch | undefined;
}

/** Whether `opened` reads without locks: it is watched by the file's state (`fileState`). */
function readWithoutLocks(opened: Opened): boolean {
  return opened.watched?.by === fileState;
}

/** Keeps the store of one `SessionDB` current (see the module's description). */
export class StoreSlot {
  #opened: Opened;
  readonly #reopen: () => Opened;
  readonly #pins = new Map<Store, number>();
  readonly #retired = new Set<Store>();
  #reopens = 0;
  #closed = false;
  /** When the file was last looked at (`performance.now()`). */
  #lookedAt = -Infinity;

  /**
   * @param opened The store as first opened.
   * @param reopen Opens the file again (it may throw: the read then fails,
   *   and the next one tries again).
   */
  constructor(opened: Opened, reopen: () => Opened) {
    this.#opened = opened;
    this.#reopen = reopen;
  }

  /** True when the file moved since the store was opened. */
  #moved({ store, watched }: Opened): boolean {
    if (watched === undefined) return false;
    if (watched.everyMs !== undefined) {
      const now = performance.now();
      if (now - this.#lookedAt < watched.everyMs) return false;
      this.#lookedAt = now;
    }
    return watched.by(store.path) !== watched.was;
  }

  /** The store to read through now: opened again first when its file moved. */
  current(): Store {
    const { store } = this.#opened;
    if (this.#closed || !this.#moved(this.#opened)) return store;
    let next: Opened;
    try {
      next = this.#reopen();
    } catch (error) {
      // The next call looks again: within the pause between two looks it would read on from
      // the file taken away, as if it were back.
      this.#lookedAt = -Infinity;
      throw error;
    }
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

  /**
   * Runs one call's read. On a store read without locks, a read that fails
   * while the file moved under it (the owner's checkpoint writing the pages
   * it was reading: SQLite reports the mix as a malformed file) is run again
   * as {@linkcode steady} runs it, on the file opened anew; an answer is
   * returned as it is (the next call sees a later move), and any other
   * failure is thrown.
   *
   * @param read The read.
   * @returns Its answer.
   * @throws {OpenError} When the file moved during every try.
   */
  read<T>(read: (store: Store) => T): T {
    const store = this.current();
    const opened = this.#opened;
    try {
      return read(store);
    } catch (error) {
      if (!readWithoutLocks(opened) || this.#closed || !this.#moved(opened)) throw error;
    }
    return this.steady(read);
  }

  /**
   * Runs a read long enough for the file's owner to write while it runs (the
   * whole-file check of `info`): on a store read without locks, whose
   * connection would take such a write for damage, it is run again on the
   * file opened anew, after a pause, when the file moved meanwhile.
   *
   * @param read The read.
   * @returns Its answer on a file that did not move while it ran.
   * @throws {OpenError} When the file moved during every try.
   */
  steady<T>(read: (store: Store) => T): T {
    for (let tries = 1;; tries++) {
      const store = this.current();
      const opened = this.#opened;
      if (!readWithoutLocks(opened) || this.#closed) return read(store);
      let answer: { value: T } | { error: unknown };
      try {
        answer = { value: read(store) };
      } catch (error) {
        answer = { error };
      }
      if (!this.#moved(opened)) {
        if ("error" in answer) throw answer.error;
        return answer.value;
      }
      const pause = UNLOCKED_RETRY_PAUSES_MS[tries - 1];
      if (pause === undefined) {
        throw new OpenError(store.path, changedEachTimeReason("reads"));
      }
      sleepSync(pause);
    }
  }

  /**
   * True when the store reads without locks (it is watched by the file's
   * state): nothing holds its pages still across calls, so an iteration
   * reads each step as a call of its own.
   */
  get readsUnlocked(): boolean {
    return readWithoutLocks(this.#opened);
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
    const store = this.pin();
    try {
      yield* iterate(store);
    } finally {
      this.unpin(store);
    }
  }

  /**
   * The current store, kept open (not closed when the file is opened
   * again) until {@linkcode StoreSlot.unpin}: for reads that must stay on
   * one connection across calls (a snapshot held open on it).
   *
   * @returns The store.
   */
  pin(): Store {
    const store = this.current();
    this.#pins.set(store, (this.#pins.get(store) ?? 0) + 1);
    return store;
  }

  /**
   * Lets a pin of {@linkcode StoreSlot.pin} go: a store replaced meanwhile
   * is closed with its last pin.
   *
   * @param store The pinned store.
   */
  unpin(store: Store): void {
    const left = (this.#pins.get(store) ?? 1) - 1;
    if (left > 0) this.#pins.set(store, left);
    else {
      this.#pins.delete(store);
      if (this.#retired.delete(store)) store.db.close();
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
