/**
 * Two machines cloned from one disk image (the same host name, the same
 * path, the same sessions from before the clone) ship their files as one
 * origin: each pass would delete from the server the sessions the other
 * shipped since the clone. The first such flip cannot be told from ordinary
 * use and happens; a pass after it that would bring back a session a pass
 * deleted, or delete one again, while deleting others, is refused before it
 * writes, and says to give the machine a host name of its own. One file
 * whose sessions come and go still syncs; a backup restored over it that
 * brings back a deleted session while it lacks newer ones is refused the
 * same way, and `--force` ships it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { addSessions } from "../_helpers.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { deleteSessionRows } from "../../lib/postgres/_delete.ts";
import { runCli } from "../_cli_io.ts";
import { onFreshSyncTarget, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A new folder of its own. */
function folder(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), "hermes-clones-")));
}

/** Deletes the sessions `ids` from the file at `path`. */
async function deleteSessions(path: string, ...ids: string[]): Promise<void> {
  const db = await SessionDB.open({ path });
  for (const id of ids) assert.ok(db.deleteSession(id), id);
  db.close();
}

/** Puts a copy of `file` at `place` (a machine's file at the path both machines use). */
function putAt(file: string, place: string): string {
  for (const suffix of ["-wal", "-shm"]) rmSync(`${place}${suffix}`, { force: true });
  copyFileSync(file, place);
  return place;
}

/** What the server holds: its session ids, message count, and the origins' passes and records. */
async function serverState(client: PgClient): Promise<unknown> {
  return {
    sessions: (await client.query("SELECT id FROM sessions ORDER BY id")).map((row) => row.id),
    messages: (await client.query("SELECT count(*)::int AS n FROM messages"))[0].n,
    origins: await client.query(
      "SELECT origin, host, path, pass_token, departed::text FROM sync_origins ORDER BY origin",
    ),
    records: await client.query("SELECT session_id FROM sync_sessions ORDER BY session_id"),
  };
}

/** The sessions of `origin` on the server, by their ids in the file. */
async function originSessions(client: PgClient, origin: string): Promise<string[]> {
  const rows = await client.query(
    "SELECT source_id FROM sync_sessions WHERE origin = $1 ORDER BY source_id",
    [origin],
  );
  return rows.map((row) => String(row.source_id));
}

/** What a pass created and deleted. */
function createdDeleted(result: { created: number; deleted: number }): [number, number] {
  return [result.created, result.deleted];
}

const CLONE_REFUSAL =
  /origin "ubuntu" is shipped by two files \(a cloned machine or disk: the same host name and path\).*nothing was written\. Sync this machine's file under a host name of its own \(--host NAME, or rename the machine\).*pass --force once/;

describe("sync of two cloned machines' files", { skip: SKIP }, () => {
  test(
    "the second flip is refused and changes nothing; --host NAME ships the clone as its own origin",
    {
      timeout: 120_000,
    },
    async () => {
      await onFreshSyncTarget(async ({ client, url, syncFile }) => {
        const { SyncRefusedError } = await import("../../lib/postgres/sync.ts");
        const place = join(folder(), "state.db");
        await addSessions(place, "s1", "s2");
        const ubuntu = { host: "ubuntu" };
        assert.equal((await syncFile(client, place, ubuntu)).origin, "ubuntu");
        // The image is cloned: each machine writes on from the same sessions.
        const a = putAt(place, join(folder(), "a.db"));
        const b = putAt(place, join(folder(), "b.db"));
        await addSessions(a, "a1");
        await addSessions(b, "b1");
        assert.deepEqual(createdDeleted(await syncFile(client, putAt(a, place), ubuntu)), [1, 0]);
        // The first flip: b1 created, a1 deleted, as one file whose a1 was deleted would do.
        assert.deepEqual(createdDeleted(await syncFile(client, putAt(b, place), ubuntu)), [1, 1]);
        assert.deepEqual(await originSessions(client, "ubuntu"), ["b1", "s1", "s2"]);
        // The second: machine a would bring a1 back and delete b1. Refused, nothing written.
        await addSessions(a, "a2");
        const before = await serverState(client);
        await assert.rejects(
          syncFile(client, putAt(a, place), ubuntu),
          (error: Error) => {
            assert.ok(error instanceof SyncRefusedError, String(error));
            assert.match(error.message, CLONE_REFUSAL);
            assert.match(error.message, /bring back 1 session a pass deleted/);
            assert.doesNotMatch(error.message, /\n/);
            return true;
          },
        );
        assert.deepEqual(await serverState(client), before, "nothing on the server changed");
        // Machine b goes on shipping; machine a is refused again at each pass.
        await addSessions(b, "b2");
        assert.deepEqual(createdDeleted(await syncFile(client, putAt(b, place), ubuntu)), [1, 0]);
        const onceMore = await serverState(client);
        await assert.rejects(syncFile(client, putAt(a, place), ubuntu), CLONE_REFUSAL);
        assert.deepEqual(await serverState(client), onceMore);
        // The CLI says the same, on one line, and exits 1.
        putAt(a, place);
        const refused = await runCli(["sync", place, "--to", url, "--host", "ubuntu"]);
        assert.equal(refused.code, 1, refused.err);
        assert.match(
          refused.err,
          /^hermes-state: sync: .*state\.db: origin "ubuntu" is shipped by two files/,
        );
        assert.equal(refused.err.split("\n").length, 2, refused.err);
        assert.deepEqual(await serverState(client), onceMore);
        // The fix the message names: machine a's file under a host name of its own.
        const own = await runCli(["sync", place, "--to", url, "--host", "vm-a"]);
        assert.equal(own.code, 0, own.err);
        assert.match(own.out, /→ vm-a: 4 new, 0 updated, 0 deleted sessions/);
        assert.deepEqual(await originSessions(client, "vm-a"), ["a1", "a2", "s1", "s2"]);
        assert.deepEqual(await originSessions(client, "ubuntu"), ["b1", "b2", "s1", "s2"]);
        // Both go on, each as its own origin.
        await addSessions(a, "a3");
        await addSessions(b, "b3");
        assert.deepEqual(
          createdDeleted(await syncFile(client, putAt(a, place), { host: "vm-a" })),
          [1, 0],
        );
        assert.deepEqual(createdDeleted(await syncFile(client, putAt(b, place), ubuntu)), [1, 0]);
      });
    },
  );

  test("a clone that writes nothing of its own is refused once it would delete a session again", {
    timeout: 60_000,
  }, async () => {
    await onFreshSyncTarget(async ({ client, syncFile }) => {
      const place = join(folder(), "state.db");
      await addSessions(place, "s1");
      const ubuntu = { host: "ubuntu" };
      await syncFile(client, place, ubuntu);
      const idle = putAt(place, join(folder(), "idle.db"));
      const busy = putAt(place, join(folder(), "busy.db"));
      await addSessions(busy, "b1");
      assert.deepEqual(createdDeleted(await syncFile(client, putAt(busy, place), ubuntu)), [1, 0]);
      // The first flip (b1 deleted), and what undoes it (b1 back, nothing deleted): both pass.
      assert.deepEqual(createdDeleted(await syncFile(client, putAt(idle, place), ubuntu)), [0, 1]);
      assert.deepEqual(createdDeleted(await syncFile(client, putAt(busy, place), ubuntu)), [1, 0]);
      const before = await serverState(client);
      await assert.rejects(
        syncFile(client, putAt(idle, place), ubuntu),
        (error: Error) => {
          assert.match(error.message, CLONE_REFUSAL);
          assert.match(error.message, /delete again 1 session a pass deleted before/);
          return true;
        },
      );
      assert.deepEqual(await serverState(client), before);
    });
  });

  test("one file whose sessions are deleted while others are created syncs pass after pass", {
    timeout: 60_000,
  }, async () => {
    await onFreshSyncTarget(async ({ client, syncFile }) => {
      const file = await addSessions(join(folder(), "state.db"), "s1", "s2");
      assert.deepEqual(createdDeleted(await syncFile(client, file, { host: "h" })), [2, 0]);
      for (const [gone, added] of [["s1", "s3"], ["s2", "s4"], ["s3", "s5"], ["s5", "s6"]]) {
        await deleteSessions(file, gone);
        await addSessions(file, added);
        assert.deepEqual(createdDeleted(await syncFile(client, file, { host: "h" })), [1, 1]);
      }
      assert.deepEqual(await originSessions(client, "h"), ["s4", "s6"]);
      const [{ departed }] = await client.query(
        "SELECT array_to_string(departed, ',') AS departed FROM sync_origins",
      );
      assert.equal(departed, "s5,s3,s2,s1", "the sessions passes deleted, newest first");
      // Deleted on the server, a session is shipped whole again, deletes on the host or not.
      await addSessions(file, "s7");
      assert.deepEqual(createdDeleted(await syncFile(client, file, { host: "h" })), [1, 0]);
      await client.transaction((query) => deleteSessionRows(query, ["h/s4"]));
      await deleteSessions(file, "s6");
      assert.deepEqual(createdDeleted(await syncFile(client, file, { host: "h" })), [1, 1]);
      assert.deepEqual(await originSessions(client, "h"), ["s4", "s7"]);
    });
  });

  test(
    "a backup restored over the file: shipped when it only lacks newer sessions; refused when it also brings back a deleted one, until --force",
    {
      timeout: 60_000,
    },
    async () => {
      await onFreshSyncTarget(async ({ client, syncFile }) => {
        const { SyncRefusedError } = await import("../../lib/postgres/sync.ts");
        const host = { host: "h" };
        const file = await addSessions(join(folder(), "state.db"), "s1", "s2", "s3");
        await syncFile(client, file, host);
        const backup = putAt(file, join(folder(), "backup.db"));
        // Nothing deleted since the backup: it ships as it did before (the newer session deleted).
        await addSessions(file, "s4");
        await syncFile(client, file, host);
        assert.deepEqual(createdDeleted(await syncFile(client, putAt(backup, file), host)), [0, 1]);
        assert.deepEqual(await originSessions(client, "h"), ["s1", "s2", "s3"]);
        // A session deleted since the backup, and one created: the restored file would bring the
        // first back and delete the second (perhaps its only copy now). Refused, as a clone is.
        await deleteSessions(file, "s2");
        await addSessions(file, "s5");
        assert.deepEqual(createdDeleted(await syncFile(client, file, host)), [1, 1]);
        const before = await serverState(client);
        await assert.rejects(syncFile(client, putAt(backup, file), host), SyncRefusedError);
        assert.deepEqual(await serverState(client), before);
        // --force ships it as it is, and forgets what it brought back: the next passes go on.
        const forced = await syncFile(client, file, { ...host, force: true });
        assert.deepEqual(createdDeleted(forced), [1, 1]);
        assert.deepEqual(await originSessions(client, "h"), ["s1", "s2", "s3"]);
        assert.deepEqual(createdDeleted(await syncFile(client, file, host)), [0, 0]);
        await deleteSessions(file, "s2");
        await addSessions(file, "s6");
        assert.deepEqual(createdDeleted(await syncFile(client, file, host)), [1, 1]);
        assert.deepEqual(await originSessions(client, "h"), ["s1", "s3", "s6"]);
      });
    },
  );
});
