/**
 * The repairs of `doctor --fix`, each in short write transactions so a
 * gateway writing at the same time loses nothing and fails no write. None
 * deletes a message.
 *
 * @module
 */
import { chmodSync, chownSync } from "node:fs";
import process from "node:process";
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { migrate } from "../sqlite/schema/migrate.ts";
import { TOOL_CALLS_ADDED_SQL } from "./counter_check.ts";
import { counterMismatches } from "./counter_check.ts";
import { databaseFiles } from "./file_stats.ts";
import { lineageFaults } from "./lineage_check.ts";
import { REBUILD_LEFTOVER } from "./schema_check.ts";
import { renameSharedTitles, type TitleRename } from "./title_check.ts";
import type { CheckpointResult } from "./storage_check.ts";
import type { TimedWriter } from "./transaction.ts";

/** The shadow tables FTS5 keeps beside a full-text table. */
const SHADOW = /_(data|idx|content|docsize|config)$/;

/** Sessions recounted per transaction. */
const RECOUNT_BATCH = 200;

/**
 * Recreates the sessions that messages point at but that do not exist
 * (source `unknown`, started at their first message), so no message is
 * unreachable.
 *
 * @returns Sessions created.
 */
export async function restoreMissingSessions(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<number> {
  return (await writer.runAsync(() =>
    db.prepare(
      `INSERT OR IGNORE INTO sessions (id, source, started_at)
       SELECT session_id, 'unknown', min(timestamp) FROM messages
       WHERE session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id`,
    ).run().changes
  )).value;
}

/**
 * Sets each session's `message_count` and `tool_call_count` to what its
 * rows say, a few hundred sessions per transaction (each recount is exact
 * at its commit: writers' own increments are serialised with it).
 *
 * @returns Sessions recounted.
 */
export async function recountCounters(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<number> {
  const ids = counterMismatches(db).map((m) => m.id);
  const update = db.prepare(
    `UPDATE sessions SET
       message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),
       tool_call_count = (SELECT COALESCE(sum(${TOOL_CALLS_ADDED_SQL}), 0)
         FROM messages m WHERE m.session_id = sessions.id)
     WHERE id = ?`,
  );
  for (let i = 0; i < ids.length; i += RECOUNT_BATCH) {
    await writer.runAsync(() => {
      for (const id of ids.slice(i, i + RECOUNT_BATCH)) update.run(id);
    });
  }
  return ids.length;
}

/**
 * Clears parent links that point at no session, and one link of each
 * cycle (as delete does for the children of a deleted session).
 *
 * @returns Links cleared.
 */
export async function clearBrokenParents(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<number> {
  const { missingParents, cycleBreaks } = lineageFaults(db);
  return (await writer.runAsync(() => {
    let cleared = 0;
    const missing = db.prepare(
      `UPDATE sessions SET parent_session_id = NULL WHERE id = ?
       AND parent_session_id NOT IN (SELECT id FROM sessions)`,
    );
    for (const [id] of missingParents) cleared += missing.run(id).changes;
    const cycle = db.prepare("UPDATE sessions SET parent_session_id = NULL WHERE id = ?");
    for (const id of cycleBreaks) cleared += cycle.run(id).changes;
    return cleared;
  })).value;
}

function hasTitleIndex(db: SqliteConnection): boolean {
  return db.prepare(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'index' AND name = 'idx_sessions_title_unique'",
  ).get() !== undefined;
}

/**
 * Drops what an interrupted rebuild left (`messages_fts*_rebuild` and its
 * triggers), gives the later sessions of a shared title the next title of
 * its lineage, then runs the schema step, which on a v11 file only creates
 * missing indexes and columns (full-text tables exist by then): all in one
 * transaction, so the titles change only with the unique index created.
 *
 * @returns Objects dropped and sessions renamed.
 */
export async function repairSchema(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<{ dropped: number; renames: TitleRename[] }> {
  return (await writer.runAsync(() => {
    const leftovers = db.prepare(
      "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'table') ORDER BY type DESC",
    ).all().filter((row) => REBUILD_LEFTOVER.test(String(row.name)));
    for (const row of leftovers) {
      if (row.type === "trigger") db.exec(`DROP TRIGGER IF EXISTS "${row.name}"`);
    }
    // Dropping the FTS table drops its shadow tables with it.
    const tables = leftovers.filter((row) =>
      row.type === "table" && !SHADOW.test(String(row.name))
    );
    for (const row of tables) db.exec(`DROP TABLE IF EXISTS "${row.name}"`);
    const renames = hasTitleIndex(db) ? [] : renameSharedTitles(db);
    migrate(db);
    return {
      dropped: tables.length + leftovers.filter((row) => row.type === "trigger").length,
      renames,
    };
  })).value;
}

/**
 * `PRAGMA wal_checkpoint(TRUNCATE)`, waiting at most `waitMs` for writers
 * (new writers wait while it is pending, so the wait is kept short).
 *
 * @returns SQLite's answer, and the frames the WAL held before it.
 */
export function checkpointTruncate(db: SqliteConnection, waitMs = 300): CheckpointResult {
  // A TRUNCATE checkpoint that finishes answers 0 frames in the WAL and 0 copied (it counts
  // after emptying the WAL): what the WAL held is asked first, by one that waits for no one.
  const held = db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() ?? {};
  db.exec(`PRAGMA busy_timeout = ${waitMs}`);
  try {
    const row = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get() ?? {};
    return {
      busy: Number(row.busy ?? 0),
      log: Number(row.log ?? 0),
      checkpointed: Number(row.checkpointed ?? 0),
      walFrames: Number(held.log ?? 0),
    };
  } finally {
    db.exec("PRAGMA busy_timeout = 1000");
  }
}

/**
 * Sets mode 0600 on `state.db`, `-wal` and `-shm`, and (as root) gives the
 * companions the owner of `state.db`. `chmod`/`chown` open no descriptor.
 *
 * @param path The database file.
 * @param existedBefore The companions there before the doctor opened the
 *   file: the others are its own connection's, gone when it closes, and are
 *   set but not counted.
 * @returns Files changed (of those that stay).
 */
export function tightenFiles(path: string, existedBefore?: ReadonlySet<string>): number {
  const files = databaseFiles(path);
  const main = files[0];
  let changed = 0;
  for (const file of files) {
    const counted = file === main || existedBefore === undefined || existedBefore.has(file.path);
    if (file.mode !== 0o600) {
      chmodSync(file.path, 0o600);
      if (counted) changed++;
    }
    if (main !== undefined && file.uid !== main.uid && process.getuid?.() === 0) {
      chownSync(file.path, main.uid, main.gid);
      changed++;
    }
  }
  return changed;
}
