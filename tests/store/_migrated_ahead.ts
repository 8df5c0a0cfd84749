/**
 * Fresh schemas migrated ahead of the tests that take them: while a test
 * runs, the server migrates the next tests' schemas, instead of each test
 * waiting for its own migration at its start. A store opened on one finds
 * it up to date, as it finds a schema it migrated itself (`migratePg` does
 * nothing more), so the tests see the same store.
 *
 * @module
 */
import { after } from "node:test";
import { adminSql, olderSchema } from "./_pg.ts";

/**
 * A source of migrated schemas that keeps `ahead` migrations under way.
 * Each call takes the oldest and tops the others up to `ahead`. The
 * schemas are fresh ones of `freshSchema()`, dropped when the test file
 * ends, those left untaken among them.
 *
 * @param ahead How many schemas are migrated ahead. @default {2}
 * @returns A function that resolves with the name of a schema of its own,
 *   migrated through the last step.
 */
export function migratedAhead(ahead = 2): () => Promise<string> {
  const queue: Promise<string>[] = [];
  // Those still under way when the file ends are dropped once done (the file's own cleanup may
  // have run before they created their schema).
  after(async () => {
    const left = (await Promise.allSettled(queue.splice(0)))
      .flatMap((result) => result.status === "fulfilled" ? [`"${result.value}"`] : []);
    if (left.length > 0) await adminSql(`DROP SCHEMA IF EXISTS ${left.join(", ")} CASCADE`);
  });
  return () => {
    while (queue.length < ahead + 1) {
      const migrated = olderSchema(Infinity);
      // Awaited by the call that takes it; not an unhandled rejection before then.
      migrated.catch(() => {});
      queue.push(migrated);
    }
    return queue.shift()!;
  };
}
