/**
 * Locks another connection holds, for the tests of the kit's lock waits:
 * the whole file (as a connection recovering a crashed writer's WAL holds
 * it), or the write lock (as a gateway in the middle of a write holds it).
 */
import { rawOpen } from "../_helpers.ts";

/**
 * Holds the whole file as a connection recovering a crashed writer's WAL does (`locking_mode =
 * EXCLUSIVE`, a write begun): no other process can even read it.
 *
 * @returns What lets it go (a second call does nothing).
 */
export async function holdWholeFile(path: string): Promise<() => void> {
  const holder = await rawOpen(path);
  holder.exec("PRAGMA locking_mode = EXCLUSIVE");
  holder.exec("BEGIN EXCLUSIVE");
  holder.exec("UPDATE state_meta SET value = value WHERE key = 'last_auto_prune'");
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    holder.exec("ROLLBACK");
    holder.close();
  };
}

/**
 * Holds the write lock of a WAL file (`BEGIN IMMEDIATE`, a write begun):
 * others read it, and every writer waits.
 *
 * @returns What lets it go (a second call does nothing).
 */
export async function holdWriteLock(path: string): Promise<() => void> {
  const holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  holder.exec("UPDATE state_meta SET value = value WHERE key = 'last_auto_prune'");
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    holder.exec("ROLLBACK");
    holder.close();
  };
}
