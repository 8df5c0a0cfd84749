/**
 * One session of texts written into a store, and what each of a list of
 * queries finds there by text: the same on SQLite and PostgreSQL when the
 * engines agree, whatever ids each gave.
 *
 * @module
 */
import type { SessionStore } from "../../lib/core/session_store.ts";

/** Writes session `s` holding one user message for each of `texts`. */
export async function fillSession(store: SessionStore, texts: readonly string[]): Promise<void> {
  await store.createSession("s", "cli");
  await store.appendMessages("s", texts.map((content) => ({ role: "user", content })));
}

/** The texts each of `queries` finds in session `s`, sorted, by query. */
export async function answersOf(
  store: SessionStore,
  queries: readonly string[],
): Promise<Record<string, string[]>> {
  const texts = new Map((await store.getMessages("s")).map((m) => [m.id, String(m.content)]));
  const found: Record<string, string[]> = {};
  for (const query of queries) {
    const hits = await store.searchMessages(query, { limit: 50 });
    found[query] = hits.map((hit) => texts.get(hit.id) ?? `#${hit.id}`).sort();
  }
  return found;
}
