/**
 * The `state_meta` key/value table.
 *
 * @module
 */
import type { Store } from "./store.ts";

/** Implements `SessionDB.getMeta`: one `state_meta` value, or `undefined`. */
export function getMeta(store: Store, key: string): string | undefined {
  const row = store.statement("SELECT value FROM state_meta WHERE key = ?").get(key);
  return row === undefined ? undefined : row.value as string;
}

/** Implements `SessionDB.setMeta`: an upsert into `state_meta`. */
export function setMeta(store: Store, key: string, value: string): void {
  store.write(() => {
    store.statement(
      "INSERT INTO state_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(key, value);
  });
}
