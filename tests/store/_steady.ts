/**
 * Waiting out other writers for a change-marker test. On PostgreSQL the
 * marker is the server's snapshot of transactions, which any commit on the
 * server moves: the test files running beside one (`--parallel`) and
 * autovacuum's ANALYZE too. A test that some action leaves the marker alone
 * tries it until one attempt saw no commit at all.
 */
import type { SessionStore } from "../../lib/core/session_store.ts";

/**
 * Runs `action` between two reads of the marker until they agree.
 *
 * @param store The store.
 * @param action What must not move the marker.
 * @param ms How long to keep trying.
 * @returns Whether an attempt left the marker as it was.
 */
export async function untilSteady(
  store: SessionStore,
  action: () => Promise<unknown>,
  ms = 20_000,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  do {
    const before = await store.dataVersion();
    await action();
    if (await store.dataVersion() === before) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  } while (Date.now() < deadline);
  return false;
}
