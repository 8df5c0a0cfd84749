/**
 * Tests that wait out deadlines (timers, not work), run side by side: the
 * first of them to run starts every one's body, and each test awaits its
 * own body's run and fails as it does. Side by side they take the time of
 * the longest instead of their sum. For bodies that share nothing (each its
 * own proxy, store and schema). Under `--filter` the others run too, unseen.
 */
import { test } from "node:test";

/** Options of each test registered by a {@linkcode SideBySide}. */
export interface SideBySideOptions {
  /** Why the tests are skipped, or `false` when they run. */
  readonly skip: string | false;
  /** Milliseconds each test may take. @default {60_000} */
  readonly timeout?: number;
}

/** Registers a test whose body runs side by side with the others of its group. */
export type SideBySide = (name: string, body: () => Promise<void>) => void;

/**
 * A group of tests run side by side: one per test file (its state is the
 * file's own, also where one process runs several files).
 *
 * @param options The skip and timeout of every test of the group.
 * @returns The function that registers a test of the group.
 */
export function sideBySideTests(options: SideBySideOptions): SideBySide {
  const bodies = new Map<string, () => Promise<void>>();
  let runs: Map<string, Promise<void>> | undefined;
  return (name, body) => {
    bodies.set(name, body);
    test(name, { skip: options.skip, timeout: options.timeout ?? 60_000 }, () => {
      runs ??= new Map(
        [...bodies].map(([other, run]) => {
          const started = run();
          // Awaited by its own test; not an unhandled rejection while another test runs.
          started.catch(() => {});
          return [other, started];
        }),
      );
      return runs.get(name)!;
    });
  };
}
