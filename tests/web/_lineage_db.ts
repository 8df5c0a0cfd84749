/**
 * A database of pathological lineages: a compression chain 3,000 deep
 * (`ch00000` → … → `ch02999`) and a session with 2,000 children
 * (`wide` → `w00000` … `w01999`).
 */
import { openStore } from "../../lib/open_store.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";

/** The chain's length. */
export const CHAIN = 3000;
/** The wide session's children. */
export const WIDE = 2000;

/** The id of the chain's session `i`. */
export function chainId(i: number): string {
  return `ch${String(i).padStart(5, "0")}`;
}

/** The id of the wide session's child `i`. */
export function wideId(i: number): string {
  return `w${String(i).padStart(5, "0")}`;
}

/**
 * Creates the database.
 *
 * @returns Its path.
 */
export async function lineageDb(): Promise<string> {
  const path = tempDbPath();
  {
    await using store = await openStore(path);
    await store.createSession("wide", "cli");
  }
  using raw = await rawOpen(path);
  const insert = raw.prepare(
    "INSERT INTO sessions (id, source, parent_session_id, started_at, ended_at, end_reason, " +
      "message_count) VALUES (?, 'cli', ?, ?, ?, ?, 0)",
  );
  raw.exec("BEGIN");
  const start = 1_770_000_000;
  for (let i = 0; i < CHAIN; i++) {
    const last = i === CHAIN - 1;
    insert.run(
      chainId(i),
      i === 0 ? null : chainId(i - 1),
      start + i * 10,
      last ? null : start + i * 10 + 5,
      last ? null : "compression",
    );
  }
  for (let i = 0; i < WIDE; i++) insert.run(wideId(i), "wide", start + i, null, null);
  raw.exec("COMMIT");
  return path;
}
