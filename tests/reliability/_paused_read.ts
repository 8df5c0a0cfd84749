/**
 * Worker process: backs a database up, checks it, describes it
 * (`SessionDB.inspect`, as `info`) or exports it (in pieces, as `export`; or
 * `SessionDB.iterateExport`, as `iterate`), as another user,
 * pausing once where the file has been read but the work not yet done until
 * a file `go` appears beside the database's folder, so that the test can
 * write the file at that moment.
 *
 * Argument: `{ tool: "backup" | "doctor" | "info" | "export" | "iterate" | "recover", path, dest? }`
 * as JSON (`recover` does not pause). Output, one line each: `paused`; then
 * `ok <sessions> <messages>` (backup, recover, export, iterate),
 * `ok <healthy> <checks not ok>` (doctor), `ok <integrity>` (info), or
 * `error <name> <message>`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { backupDatabase } from "../../lib/health/backup.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { readExportPieces } from "../../lib/core/export_pieces.ts";
import type { SqliteDriver } from "../../lib/sqlite/driver/types.ts";
import { SqliteError } from "../../lib/sqlite/driver/sqlite_error.ts";
import { say } from "./_runtimes.ts";

const { tool, path, dest } = JSON.parse(process.argv[2]) as {
  tool: "backup" | "doctor" | "info" | "export" | "iterate" | "recover";
  path: string;
  dest?: string;
};
const go = join(dirname(dirname(path)), "go");
const sleeper = new Int32Array(new SharedArrayBuffer(4));
let paused = false;

/**
 * `driver`, whose read-only connections without locks pause at the first
 * statement that `sql` matches and then fail it as SQLite fails a read that
 * finds the file's new pages under the old ones it cached: the owner
 * rewrites the file during the pause. (Seen in `permissions_test`'s live
 * readers, made for real in `store_slot_test`; a file this small is cached
 * whole, its stale pages read whole, so the failure is raised here as SQLite
 * raises it.)
 */
function tornAfterPause(driver: SqliteDriver, sql: RegExp): SqliteDriver {
  return (file, options) => {
    const db = driver(file, options);
    if (!options?.immutable) return db;
    const prepare = db.prepare.bind(db);
    db.prepare = (text: string) => {
      if (!paused && sql.test(text)) {
        pause();
        throw new SqliteError("database disk image is malformed", 11);
      }
      return prepare(text);
    };
    return db;
  };
}

/** Says `paused` and waits for `go`/** Says `paused` and waits for `go` (synchronously: the callers are). Once only. */
function pause(): void {
  if (paused) return;
  paused = true;
  say("paused");
  while (!existsSync(go)) Atomics.wait(sleeper, 0, 0, 10);
}

try {
  if (tool === "backup") {
    // The progress callback comes between the counts and the copy.
    const result = await backupDatabase(path, dest!, {
      onProgress: (phase) => phase === "copying" && pause(),
    });
    say(`ok ${result.sessions} ${result.messages}`);
  } else if (tool === "recover") {
    const result = await recoverDatabase(path, dest!);
    say(`ok ${result.sessions} ${result.messages}`);
  } else if (tool === "export") {
    // Paused in its first session's read, the session's row read, before its messages' ids.
    const openDriver = tornAfterPause(await loadDriver(), /AS hermes_id FROM messages/);
    await using store = await openStore(path, { readonly: true, openDriver });
    let sessions = 0;
    let messages = 0;
    for await (const piece of readExportPieces(store, { filter: {} })) {
      if ("session" in piece) sessions++;
      else messages += piece.messages.length;
    }
    say(`ok ${sessions} ${messages}`);
  } else if (tool === "iterate") {
    // Paused as its first session is read again with its messages.
    const openDriver = tornAfterPause(await loadDriver(), /AS last_active\s+FROM sessions s WHERE/);
    using db = await SessionDB.open({ path, readonly: true, openDriver });
    let sessions = 0;
    let messages = 0;
    for (const session of db.iterateExport()) {
      sessions++;
      messages += session.messages.length;
    }
    say(`ok ${sessions} ${messages}`);
  } else if (tool === "info") {
    const driver = await loadDriver();
    // The connection has read the file (its pages cached) when the check starts, and pauses.
    const openDriver: SqliteDriver = (file, options) => {
      const db = driver(file, options);
      if (!options?.immutable) return db;
      db.prepare("SELECT count(*) AS n FROM messages").get();
      const prepare = db.prepare.bind(db);
      db.prepare = (sql: string) => {
        if (/quick_check/.test(sql)) pause();
        return prepare(sql);
      };
      return db;
    };
    using db = await SessionDB.open({ path, readonly: true, openDriver });
    say(`ok ${db.inspect().integrity?.join(" | ")}`);
  } else {
    const driver = await loadDriver();
    // The checks' connection has read the file (its pages cached) when it pauses.
    const openDriver: SqliteDriver = (file, options) => {
      const db = driver(file, options);
      if (options?.immutable) {
        db.prepare("SELECT count(*) AS n FROM messages").get();
        pause();
      }
      return db;
    };
    const report = await doctor(path, { openDriver });
    const problems = report.checks.filter((check) => check.status !== "ok");
    say(`ok ${report.healthy} ${problems.map((check) => check.name).join(",")}`);
  }
} catch (error) {
  const { name, message } = error as Error;
  say(`error ${name} ${message}`);
}
