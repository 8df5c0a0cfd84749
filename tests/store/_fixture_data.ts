/**
 * The v11 fixture's data as import records: every session row and every
 * message with its original id and the stored bytes of its JSON columns
 * (`tool_calls` through the stored text the read keeps on each message), so
 * a store filled with `importSession` holds exactly what the file holds.
 */
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { storeOf } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { copyFixture } from "../_helpers.ts";

/**
 * Raw JSON columns, read as stored. `tool_calls`, which getMessages parses,
 * keeps its stored text on the message, which `importSession` writes again.
 */
const RAW_COLUMNS = [
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
];

/** Reads the records of a fixture (a copy of it), in export order, with the file's meta keys. */
export async function fixtureRecords(
  name = "hermes-v11.db",
): Promise<{ records: Record<string, unknown>[]; meta: [string, string][] }> {
  const db = await SessionDB.open({ path: copyFixture(name) });
  try {
    const store = storeOf(db);
    const raw = new Map<number, Record<string, unknown>>();
    for (const row of store.statement(`SELECT id, ${RAW_COLUMNS.join(", ")} FROM messages`).all()) {
      raw.set(Number(row.id), row);
    }
    const records = db.exportAll().map((session) => {
      const record: Record<string, unknown> = { ...session };
      delete record.last_active;
      // In place, not copied: a copy would not carry the stored text of `tool_calls`.
      record.messages = session.messages.map((message) => {
        const fields = message as Record<string, unknown>;
        for (const column of RAW_COLUMNS) fields[column] = raw.get(message.id)?.[column] ?? null;
        return message;
      });
      return record;
    });
    const meta: [string, string][] = store.statement("SELECT key, value FROM state_meta").all()
      .map((row) => [String(row.key), String(row.value)]);
    return { records, meta };
  } finally {
    db.close();
  }
}

/**
 * Fills an empty store with the fixture's data through `importSession`,
 * `restoreParentLinks` and `setMeta`.
 */
export async function loadFixture(store: SessionStore, name = "hermes-v11.db"): Promise<void> {
  const { records, meta } = await fixtureRecords(name);
  const links = [];
  for (const record of records) {
    const result = await store.importSession(record);
    if (result.deferredParent !== null) {
      links.push({ id: result.id, parentId: result.deferredParent });
    }
  }
  await store.restoreParentLinks(links);
  for (const [key, value] of meta) await store.setMeta(key, value);
}
