/**
 * `last_active`, which `searchSessions`, `exportAll` and `iterateExport`
 * give with every session (the declared types `SessionRowWithActivity` and
 * `SessionExportWithActivity`): the newest `timestamp` among the session's
 * message rows, the rewound and compacted ones of a newer Hermes too, else
 * `started_at`; and the order of those lists. On copies of the Python
 * fixtures, through the SQLite store and the PostgreSQL one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../lib/core/session_store.ts";
import type { SessionExport, SessionExportWithActivity, SessionRowWithActivity } from "../mod.ts";
import { openStore } from "../mod.ts";
import { copyFixture } from "./_helpers.ts";
import { openPgStore, PG_SKIP } from "./store/_pg.ts";

/** The v21 session whose last row was rewound (`active = 0`) after the last active one. */
const REWOUND = "20260501_110000_rew01";
const REWOUND_LAST_ROW = 1777000016.25;

/** What `last_active` means: the newest time of any message row, else the start. */
function expectedLastActive(session: SessionExport): number {
  const times = session.messages.map((message) => message.timestamp);
  return times.length > 0 ? Math.max(...times) : session.started_at;
}

/** Newest activity first, then newest start (ids break ties, engine by engine). */
function assertActivityOrder(rows: readonly SessionRowWithActivity[]): void {
  for (let at = 1; at < rows.length; at++) {
    const [before, after] = [rows[at - 1], rows[at]];
    assert.ok(
      before.last_active > after.last_active ||
        (before.last_active === after.last_active && before.started_at >= after.started_at),
      `${before.id} (${before.last_active}) listed before ${after.id} (${after.last_active})`,
    );
  }
}

async function checkStore(store: SessionStore): Promise<void> {
  const exported: SessionExportWithActivity[] = await store.exportAll();
  assert.ok(exported.length > 0);
  const byId = new Map<string, number>();
  for (const session of exported) {
    // Typed as a number: a compile error before the field was declared.
    const lastActive: number = session.last_active;
    assert.equal(typeof lastActive, "number", session.id);
    assert.equal(lastActive, expectedLastActive(session), session.id);
    byId.set(session.id, lastActive);
  }
  assertActivityOrder(exported);
  const listed: SessionRowWithActivity[] = await store.searchSessions({ limit: 1000 });
  assert.deepEqual(listed.map((row) => [row.id, row.last_active]), [...byId]);
  const iterated: [string, number][] = [];
  for await (const session of store.iterateExport()) {
    iterated.push([session.id, session.last_active]);
  }
  assert.deepEqual(iterated, [...byId]);
  // exportSession gives the row as it is stored, without it (SessionExport).
  const one = await store.exportSession(exported[0].id);
  assert.equal(one !== undefined && "last_active" in one, false);
}

test("SQLite: searchSessions, exportAll and iterateExport give last_active (v11 fixture)", async () => {
  const store = await openStore(copyFixture("hermes-v11.db"));
  try {
    await checkStore(store);
    // A session without messages is active since its start.
    const empty = (await store.exportAll()).filter((session) => session.messages.length === 0);
    assert.ok(empty.length > 0);
    for (const session of empty) assert.equal(session.last_active, session.started_at);
  } finally {
    await store.close();
  }
});

test("SQLite: last_active counts a rewound message row of a newer Hermes (v21 fixture)", async () => {
  const store = await openStore(copyFixture("hermes-v21.db"));
  try {
    await checkStore(store);
    const [row] = (await store.searchSessions({ limit: 1000 })).filter((s) => s.id === REWOUND);
    assert.equal(row.last_active, REWOUND_LAST_ROW);
    const active = await store.getMessages(REWOUND);
    assert.ok(active.every((message) => message.timestamp < REWOUND_LAST_ROW));
  } finally {
    await store.close();
  }
});

test("PostgreSQL: the same last_active, on the fixtures imported", { skip: PG_SKIP }, async () => {
  const store = await openPgStore();
  try {
    for (const fixture of ["hermes-v11.db", "hermes-v21.db"]) {
      const source = await openStore(copyFixture(fixture));
      try {
        for await (const session of source.iterateExport()) await store.importSession(session);
      } finally {
        await source.close();
      }
    }
    await checkStore(store);
    const [row] = (await store.searchSessions({ limit: 1000 })).filter((s) => s.id === REWOUND);
    assert.equal(row.last_active, REWOUND_LAST_ROW);
  } finally {
    await store.close();
  }
});
