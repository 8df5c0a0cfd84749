/**
 * The SessionStore conformance suite on the SQLite engine (a file per store;
 * the fixture store is a copy of the v11 fixture itself).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { OpenError } from "../../lib/core/errors.ts";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture, tempDbPath } from "../_helpers.ts";
import { storeConformance } from "./_conformance.ts";

storeConformance("sqlite", {
  ranksAsSqlite: true,
  empty: (options) => openStore(tempDbPath(), options),
  fixture: (options) => openStore(copyFixture("hermes-v11.db"), options),
  reopenReadonly: (store) => openStore(join(store.target), { readonly: true }),
});

test("the SQLite store refuses the origin filter of the PostgreSQL store, naming it", async () => {
  await using store = await openStore(copyFixture("hermes-v11.db"));
  const byOrigin = { origin: "web-1" } as Record<string, unknown>;
  const refused = /Cannot filter by origin on a SQLite store.*current value is "web-1"/;
  await assert.rejects(store.listSessionsRich(byOrigin), refused);
  await assert.rejects(store.searchMessages("docker", byOrigin), refused);
  await assert.rejects(store.searchSessions(byOrigin), refused);
  await assert.rejects(store.sessionCount(byOrigin), refused);
  await assert.rejects(store.listedSessionCount(byOrigin), refused);
  await assert.rejects(store.exportAll(byOrigin), refused);
  await assert.rejects(store.iterateExport(byOrigin).next(), refused);
  await assert.rejects(store.usageReport(byOrigin), refused);
  await assert.rejects(store.usageReport({ by: "origin" }), /usage by origin on a SQLite store/);
  // No origin (or an empty one) is every session, as before.
  assert.equal(await store.sessionCount({ origin: "" } as Record<string, unknown>), 42);
  assert.equal((await store.listSessionsRich({ limit: 100 })).length > 0, true);
});

test("openStore() refuses a URL of another kind, and a postgres: typo, creating nothing", async () => {
  const name = `hermes-typo-${process.pid}`;
  for (
    const target of [
      `sqlite://${name}.db`,
      `mysql://h/${name}`,
      `postgres:/${name}/db`,
      `postgresql:${name}`,
    ]
  ) {
    const reason = target.startsWith("sqlite://")
      ? `write sqlite:PATH without the slashes (sqlite:${name}.db), or the path itself`
      : "give a file path, sqlite:PATH or a postgres:// URL";
    await assert.rejects(
      openStore(target),
      (error) =>
        error instanceof OpenError &&
        error.message ===
          `Cannot open database "${target}": not a store this version opens: ${reason}`,
      target,
    );
  }
  // Nothing made of them: not /NAME.db at the root, not a folder tree here.
  assert.equal(existsSync(`/${name}.db`), false);
  assert.equal(
    readdirSync(".").some((entry) => entry.includes(name) || entry.startsWith("postgres")),
    false,
  );
});

test("the async iterateExport() gives each session whole while another process writes", async () => {
  const path = tempDbPath();
  await using store = await openStore(path);
  for (const [i, id] of ["a", "b", "c"].entries()) {
    await store.createSession(id, "cli");
    await store.appendMessage(id, { role: "user", content: `message ${i}` });
  }
  const iterator = store.iterateExport();
  const first = (await iterator.next()).value!;
  const others = ["a", "b", "c"].filter((id) => id !== first.id);
  const other = await SessionDB.open({ path });
  other.appendMessage(others[0], { role: "user", content: "written meanwhile" });
  other.deleteSession(others[1]);
  other.close();
  const rest = [];
  for await (const session of iterator) rest.push(session);
  assert.deepEqual(rest.map((s) => [s.id, s.message_count, s.messages.length]), [[
    others[0],
    2,
    2,
  ]]);
});
