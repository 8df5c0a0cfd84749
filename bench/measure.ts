/**
 * Timing helpers: run contenders interleaved (so a noisy neighbour on the
 * shared machine slows both alike) and summarize samples as percentiles.
 *
 * @module
 */

/** Percentiles of a sample set, in milliseconds. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
}

/**
 * Summarizes samples (nearest-rank percentiles).
 *
 * @param samples Durations in milliseconds.
 * @returns The summary.
 */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  return {
    n: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    min: sorted[0],
  };
}

/**
 * Times one call.
 *
 * @param fn The work.
 * @returns Milliseconds, and what `fn` returned.
 */
export function timed<T>(fn: () => T): [number, T] {
  const start = performance.now();
  const value = fn();
  return [performance.now() - start, value];
}

/** A named function to time. */
export type Contenders = Record<string, () => unknown>;

/**
 * Runs every contender `iterations` times, interleaved, after `warmup` rounds.
 *
 * @param contenders Named functions.
 * @param options Rounds.
 * @returns The samples of each contender, in milliseconds.
 */
export function race(
  contenders: Contenders,
  options: { iterations: number; warmup?: number },
): Record<string, number[]> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = -(options.warmup ?? 1); round < options.iterations; round++) {
    // Alternate who goes first, so caches warmed by one favour neither.
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const [ms] = timed(contenders[name]);
      if (round >= 0) samples[name].push(ms);
    }
  }
  return samples;
}
