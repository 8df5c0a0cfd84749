import type { SqlRow } from "./types.ts";
import { translated } from "./_to_sqlite_error.ts";

/**
 * The rows of a runtime statement's iterator, each turned into a plain row
 * by `toRow`, with runtime errors rethrown as `SqliteError`. Nothing runs
 * until the first row is asked for. When the caller stops early, the
 * runtime iterator is returned, which resets the native statement so it
 * releases its read snapshot.
 *
 * @param start Starts the runtime iterator (`stmt.iterate(...params)`).
 * @param toRow Turns one runtime row into a plain row.
 * @returns The rows.
 */
export function* iterateRows<T>(
  start: () => Iterator<T>,
  toRow: (row: T) => SqlRow,
): IterableIterator<SqlRow> {
  const iterator = translated(start);
  let done = false;
  try {
    while (true) {
      const next = translated(() => iterator.next());
      if (next.done) {
        done = true;
        return;
      }
      yield toRow(next.value);
    }
  } finally {
    if (!done) iterator.return?.();
  }
}
