/**
 * The `state_meta` key/value table.
 *
 * @module
 */
import { SqliteError } from "./driver/sqlite_error.ts";
import type { Store } from "./store.ts";
import { UPSERT_META_SQL } from "./schema/schema_sql.ts";
import { checkKeyText } from "../core/session_options.ts";
import { textValue } from "../core/message_values.ts";

/**
 * Implements `SessionDB.getMeta`: one `state_meta` value, or `undefined`
 * (also when an older file read as it is has no `state_meta` yet).
 */
export function getMeta(store: Store, key: string): string | null | undefined {
  checkKeyText("read meta", "key", key);
  let row;
  try {
    row = store.statement("SELECT value FROM state_meta WHERE key = ?").get(key);
  } catch (error) {
    // A v1–v6 file opened read-only has no state_meta (the upgrade creates it): no key is set.
    if (error instanceof SqliteError && /no such table: state_meta/.test(error.message)) {
      return undefined;
    }
    throw error;
  }
  return row === undefined ? undefined : row.value as string | null;
}

/** Implements `SessionDB.setMeta`: an upsert into `state_meta`. */
export function setMeta(store: Store, key: string, value: string | null): void {
  checkKeyText("set meta", "key", key);
  const text = textValue(value, "value", "set meta");
  store.write(() => {
    store.statement(UPSERT_META_SQL).run(key, text);
  });
}
