/**
 * The `state_meta` key/value table.
 *
 * @module
 */
import type { Store } from "./store.ts";

/**
 * Reads a `state_meta` value.
 *
 * @param store The open store.
 * @param key The key.
 * @returns The value, or `undefined` when the key is absent.
 */
export function getMeta(store: Store, key: string): string | undefined {
  const row = store.statement("SELECT value FROM state_meta WHERE key = ?").get(key);
  return row === undefined ? undefined : row.value as string;
}

/**
 * Writes (or replaces) a `state_meta` value.
 *
 * @param store The open store.
 * @param key The key.
 * @param value The value.
 */
export function setMeta(store: Store, key: string, value: string): void {
  store.write(() => {
    store.statement(
      "INSERT INTO state_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(key, value);
  });
}
