/**
 * A process-level guard against one known fault of the PostgreSQL client
 * (postgres 3.4.9, porsager/postgres#1066, #1154, #1208): a write it queued
 * with `setImmediate` runs after the connection's socket was dropped, and
 * its `TypeError` (`socket.write` of `null`) escapes every `try`/`catch`,
 * ending the process. The connection is gone by then, and what waited on it
 * was told so (`CONNECTION_CLOSED`): the guard swallows exactly that error
 * and tells each pool that asked, so that it leaves its connections (the
 * client may keep that one's write queue jammed) for new ones. Any other
 * uncaught error ends the process as it would have without the guard.
 *
 * @module
 */
import process from "node:process";

/** The client's own message for `socket.write` on `null`: V8's (Deno, Node), then JavaScriptCore's (Bun). */
const NULL_WRITE =
  /^Cannot read properties of null \(reading 'write'\)$|^null is not an object \(evaluating '[\w.]*write'\)$/;

/** The client's deferred write (by name: `bun build --compile` keeps names, not paths). */
const NEXT_WRITE_FRAME = /^\s+at (?:\S+\.)?nextWrite \(/;

/**
 * The first frame of `error`'s stack (`    at …`): the code that threw it.
 *
 * @param error What was thrown.
 * @returns The frame's line; `undefined` without a stack.
 */
export function firstStackFrame(error: Error): string | undefined {
  return (error.stack ?? "").split("\n").find((line) => /^\s+at /.test(line));
}

/**
 * Whether `error` is the client writing to a socket it dropped: a
 * `TypeError` reading `write` of `null`, thrown by the client's
 * `nextWrite` itself (its first stack frame).
 *
 * @param error An uncaught error.
 * @returns True for that fault alone.
 */
export function isLostSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError) || !NULL_WRITE.test(error.message)) return false;
  const frame = firstStackFrame(error);
  return frame !== undefined && NEXT_WRITE_FRAME.test(frame);
}

/** The pools told of each fault caught, while the guard is installed. */
const listeners = new Set<() => void>();

function onUncaught(error: unknown): void {
  if (isLostSocketWrite(error)) {
    for (const listener of [...listeners]) listener();
    return;
  }
  // Another listener of the process decides what becomes of any other error.
  if (process.listenerCount("uncaughtException") > 1) return;
  // None: the process ends as it would have, the error shown (exit 1), not caught here.
  process.off("uncaughtException", onUncaught);
  process.nextTick(() => {
    throw error;
  });
}

/**
 * Installs the guard (once for the process, while a pool uses it) and tells
 * `listener` of each fault it swallows.
 *
 * @param listener Called when the client wrote to a socket it had dropped.
 * @returns The function that stops telling `listener` (the guard goes with
 *   the last one).
 *
 * @example
 * ```ts
 * import { guardLostSocketWrites } from "./_lost_socket_guard.ts";
 * const stop = guardLostSocketWrites(() => console.log("a connection was lost"));
 * stop();
 * ```
 */
export function guardLostSocketWrites(listener: () => void): () => void {
  if (listeners.size === 0) process.on("uncaughtException", onUncaught);
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) process.off("uncaughtException", onUncaught);
  };
}
