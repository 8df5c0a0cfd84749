/**
 * The timers of the PostgreSQL pool: one that never holds the process
 * open, and a deadline on an answer.
 *
 * @module
 */

/** Lets the process end with `timer` pending (Deno's numeric timers and node:timers' objects). */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === "number") {
    (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer);
  } else (timer as { unref?: () => void } | undefined)?.unref?.();
}

/**
 * `answer`, or a rejection once `seconds` have passed without it (0: no
 * deadline, as libpq reads `connect_timeout=0`). The client's own connect
 * timeout rejects nothing when each connection is closed before it fires
 * (a proxy or balancer with no server behind it, a port of another
 * service): it connects again for ever, and the first query waits with it.
 */
export async function withinSeconds<T>(answer: Promise<T>, seconds: number): Promise<T> {
  if (seconds === 0) return await answer;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`no answer within ${seconds} s; ?connect_timeout=SECONDS waits longer`)),
      seconds * 1000,
    );
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}
