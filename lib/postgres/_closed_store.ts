/**
 * What every method of a closed PostgreSQL store rejects with, as a closed
 * SQLite store does.
 *
 * @module
 */
import { StorageError } from "../core/errors.ts";

/**
 * What every method of a closed store rejects with: the message of a closed
 * SQLite store (`database is not open`), not the client's `CONNECTION_ENDED`.
 */
export function notOpenError(): StorageError {
  return new StorageError("database is not open", "other");
}
