/**
 * The one seeded generator of the tests and the benchmark (mulberry32): the
 * same seed gives the same numbers in [0, 1) on every runtime, so a failing
 * run can be replayed.
 */

/** A seeded source of numbers in [0, 1). */
export type Random = () => number;

/**
 * A small, fast, seeded generator (mulberry32).
 *
 * @param seed Any 32-bit integer.
 * @returns The generator.
 */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
