/**
 * A database file built once per test file, of which each test gets its own
 * copy: for fixtures that take seconds to build (a large session, a long
 * tool result) and that several tests of one file start from.
 *
 * @module
 */
import { copyFileSync, existsSync } from "node:fs";
import { tempDbPath } from "./_helpers.ts";

/**
 * Builds the file with `build` the first time the returned function is
 * called, and returns a fresh copy of it at each call. The file is copied
 * alone: `build` must leave every connection closed (no `-wal` beside it).
 *
 * @param build Writes the database at the path it is given.
 * @returns A function that resolves with the path of a new copy.
 */
export function copiesOf(build: (path: string) => Promise<unknown>): () => Promise<string> {
  let template: Promise<string> | undefined;
  return async () => {
    template ??= (async () => {
      const path = tempDbPath();
      await build(path);
      for (const suffix of ["-wal", "-journal"]) {
        if (existsSync(path + suffix)) {
          throw new Error(`Cannot copy ${path}: its ${suffix} is still there`);
        }
      }
      return path;
    })();
    const copy = tempDbPath();
    copyFileSync(await template, copy);
    return copy;
  };
}
