/**
 * The checks of the PostgreSQL reliability tests: what `_pg_writer.ts`
 * workers acknowledged, and the store holding each of it exactly once.
 */
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { Worker } from "./_runtimes.ts";

/** One acknowledged append of a `_pg_writer.ts` worker. */
export interface Ack {
  token: string;
  id: number;
  session: string;
}

/** The appends `worker` acknowledged. */
export function acks(worker: Worker): Ack[] {
  return worker.lines.filter((l) => l.startsWith("ack ")).map((line) => {
    const [, token, id, session] = line.split(" ");
    return { token, id: Number(id), session };
  });
}

/**
 * Checks `sessions` on the store at `url`: each session's counters equal its
 * rows, ids are unique, no token is stored twice, every acknowledged one is there.
 */
export async function verify(url: string, acked: Ack[], sessions: string[]): Promise<void> {
  await using store = await openStore(url);
  const seen = new Map<string, number>();
  const ids = new Set<number>();
  for (const session of sessions) {
    const rows = await store.getMessages(session);
    const row = await store.getSession(session);
    assert.equal(row?.message_count, rows.length, `message_count of ${session}`);
    const calls = rows.reduce(
      (n, m) => n + (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0),
      0,
    );
    assert.equal(row?.tool_call_count, calls, `tool_call_count of ${session}`);
    for (const message of rows) {
      assert.ok(!ids.has(message.id), `id ${message.id} twice`);
      ids.add(message.id);
      const token = String(message.content).split(" ")[1];
      seen.set(token, (seen.get(token) ?? 0) + 1);
    }
  }
  for (const [token, n] of seen) assert.equal(n, 1, `${token} stored ${n} times`);
  for (const ack of acked) {
    assert.equal(seen.get(ack.token), 1, `acknowledged ${ack.token} is missing`);
  }
}
