import { SqliteError } from "./sqlite_error.ts";

/** Codes inferred from SQLite's own messages, for runtimes that report none (Deno). */
const MESSAGE_CODES: ReadonlyArray<readonly [RegExp, number, number]> = [
  [/FOREIGN KEY constraint failed/, 19, 787],
  [/UNIQUE constraint failed/, 19, 2067],
  [/NOT NULL constraint failed/, 19, 1299],
  [/CHECK constraint failed/, 19, 275],
  [/PRIMARY KEY must be unique|constraint failed/, 19, 19],
  [/database table is locked/, 6, 6],
  [/database is locked|database is busy/, 5, 5],
  [/attempt to write a readonly database/, 8, 8],
  [/file is not a database/, 26, 26],
  [/database disk image is malformed/, 11, 11],
  [/unable to open database file/, 14, 14],
  [/disk I\/O error/, 10, 10],
  [/database or disk is full/, 13, 13],
  [/interrupted/, 9, 9],
];

function codeFromMessage(message: string): [number, number] {
  for (const [pattern, code, extended] of MESSAGE_CODES) {
    if (pattern.test(message)) return [code, extended];
  }
  return [1, 1];
}

/**
 * Turns whatever a runtime threw into a {@linkcode SqliteError}.
 * node:sqlite (Node) sets `errcode`; bun:sqlite sets `errno`; Deno sets neither.
 * A `TypeError` or `RangeError` (a value the runtime cannot bind) is misuse,
 * not a database failure, and is rethrown as it is.
 */
export function toSqliteError(error: unknown): SqliteError {
  if (error instanceof SqliteError) return error;
  // Bun says a closed connection its own ways (a RangeError on a read): one error on every runtime.
  if (
    error instanceof Error && /Cannot use a closed database|Database has closed/.test(error.message)
  ) {
    return new SqliteError("database is not open", 21, { extendedCode: 21, cause: error });
  }
  if (error instanceof TypeError || error instanceof RangeError) throw error;
  if (!(error instanceof Error)) {
    return new SqliteError(String(error), 1, { cause: error });
  }
  const fields = error as Error & { errcode?: unknown; errno?: unknown };
  const reported = typeof fields.errcode === "number"
    ? fields.errcode
    : typeof fields.errno === "number"
    ? fields.errno
    : undefined;
  if (reported !== undefined) {
    return new SqliteError(error.message, reported & 0xff, {
      extendedCode: reported,
      cause: error,
    });
  }
  const [code, extendedCode] = codeFromMessage(error.message);
  return new SqliteError(error.message, code, { extendedCode, cause: error });
}

/** Runs `fn`, rethrowing any runtime error as a {@linkcode SqliteError}. */
export function translated<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw toSqliteError(error);
  }
}
