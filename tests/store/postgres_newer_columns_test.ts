/**
 * A newer Hermes's file on PostgreSQL: the columns v11 lacks (`sessions.archived`,
 * `messages.active`, `compacted`, `display_kind`, …) reach the server by `copy`
 * (importSession) and by `sync`, come back in every row and export, and the
 * server hides what that Hermes hides, as the SQLite engine does on the file:
 * archived sessions in listings, rewound and compacted rows in transcripts,
 * rewound and hidden rows in search (each back with its `include…` option).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { PROMPT, promptsFile, TOOLS } from "../_newer_prompts.ts";
import { freshSchema, openPgStore, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

const LIVE = "20260501_090000_live01";
const ARCHIVED = "20260501_100000_arch01";
const REWOUND = "20260501_110000_rew01";
const COMPACTED = "20260501_120000_comp01";

/** A copy of the schema-21 fixture, changed first by `sql` (raw, no schema step). */
async function v21File(sql = ""): Promise<string> {
  const path = copyFixture("hermes-v21.db");
  if (sql !== "") {
    using raw = await rawOpen(path);
    raw.exec(sql);
  }
  return path;
}

/** The same questions asked of both engines, answers side by side. */
async function answers(
  store: SessionStore | SessionDB,
  idOf: (id: string) => string = (id) => id,
): Promise<Record<string, unknown>> {
  const shown = (rows: { id: string }[]) => rows.map((row) => row.id).sort();
  const messages = async (options?: { includeInactive?: boolean }) => {
    const out: Record<string, unknown> = {};
    for (const id of [LIVE, ARCHIVED, REWOUND, COMPACTED]) {
      out[id] = (await store.getMessages(idOf(id), options)).map((m) => [m.role, m.content]);
    }
    return out;
  };
  const searched = async (query: string, includeInactive = false) =>
    (await store.searchMessages(query, { includeInactive }))
      .map((hit) => `${hit.session_id} ${hit.role} ${hit.timestamp}`).sort();
  return {
    listed: shown(await store.listSessionsRich()),
    listedWithArchived: shown(await store.listSessionsRich({ includeArchived: true })),
    listedCount: await store.listedSessionCount(),
    previews: (await store.listSessionsRich({ includeArchived: true }))
      .map((row) => `${row.id} ${row.preview}`).sort(),
    messages: await messages(),
    messagesWithInactive: await messages({ includeInactive: true }),
    replay: await store.getMessagesAsConversation(idOf(REWOUND)),
    rewound: await searched("ZEBRAFISH42"),
    rewoundWithInactive: await searched("ZEBRAFISH42", true),
    compacted: await searched("vacuum"),
    docker: await searched("docker"),
    dockerWithInactive: await searched("docker", true),
    cjk: await searched("数据库"),
  };
}

/** The server's ids as the file's (sync prefixes them with the origin). */
function withoutOrigin(value: unknown, origin: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll(`"${origin}/`, '"'));
}

describe("a newer Hermes's columns on PostgreSQL", { skip: SKIP }, () => {
  const stores: SessionStore[] = [];
  const clients: PgClient[] = [];
  let sync: typeof import("../../lib/postgres/sync.ts");
  before(async () => {
    sync = await import("../../lib/postgres/sync.ts");
  });
  after(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const c of clients.splice(0)) await c.close();
  });
  async function store(schema = freshSchema()): Promise<SessionStore> {
    const opened = await openPgStore({}, schema);
    stores.push(opened);
    return opened;
  }
  async function copied(path: string): Promise<SessionStore> {
    const target = await store();
    using db = await SessionDB.open({ path, readonly: true });
    for (const record of db.exportAll()) {
      const result = await target.importSession(record);
      assert.deepEqual(result.droppedColumns, [], `${record.id}: nothing dropped`);
    }
    return target;
  }

  test("copy keeps every column: the server's export is the file's", async () => {
    // A NUL and a lone surrogate in a newer column, which a jsonb string cannot hold as such.
    const path = await v21File(
      "UPDATE messages SET effect_disposition = 'a' || char(0) || 'b' || char(57344) WHERE id = 1;" +
        // …and the six characters of a JSON escape, which must stay six characters.
        "UPDATE sessions SET handoff_state = 'x' || char(0) || '\\u0000' WHERE id = '" + LIVE +
        "';",
    );
    const target = await copied(path);
    using db = await SessionDB.open({ path, readonly: true });
    const byId = (list: { id: string }[]) => [...list].sort((a, b) => a.id < b.id ? -1 : 1);
    assert.deepEqual(byId(await target.exportAll()), byId(db.exportAll()));
    const session = await target.getSession(ARCHIVED);
    assert.equal(session?.archived, 1, "a newer session column is in the row");
    const [first] = await target.getMessages(LIVE);
    assert.equal(first.effect_disposition, "a\u0000b\uE000");
    assert.equal(first.active, 1);
    assert.equal((await target.getSession(LIVE))?.handoff_state, "x\u0000\\u0000");
  });

  test("the server hides what that Hermes hides, as the file does", async () => {
    const path = await v21File();
    const target = await copied(path);
    using db = await SessionDB.open({ path, readonly: true });
    const want = await answers(db);
    assert.deepEqual(await answers(target), want);
    // What the comparison stands on (so an engine that hid nothing would fail it).
    assert.ok(!(want.listed as string[]).includes(ARCHIVED));
    assert.deepEqual(want.rewound, []);
    assert.equal((want.rewoundWithInactive as string[]).length, 2);
    assert.equal((want.compacted as string[]).length > 0, true);
    assert.equal((want.messages as Record<string, unknown[]>)[COMPACTED].length, 2);
  });

  test("rows marked display_kind = 'hidden' are left out of search unless includeInactive", async () => {
    const path = await v21File(
      "ALTER TABLE messages ADD COLUMN display_kind TEXT;" +
        "UPDATE messages SET display_kind = 'hidden' WHERE id IN (1, 2);" +
        "UPDATE messages SET display_kind = 'visible' WHERE id = 3;",
    );
    const target = await copied(path);
    using db = await SessionDB.open({ path, readonly: true });
    const want = await answers(db);
    const docker = want.docker as string[];
    assert.equal(docker.length, (want.dockerWithInactive as string[]).length - 2);
    assert.ok(!docker.some((hit) => hit.includes(" assistant 1777000003.75")), "message 2 hidden");
    assert.ok(
      (want.previews as string[]).includes(`${LIVE} Also check the 数据库 migration status`),
      "the preview skips a hidden first user message",
    );
    assert.deepEqual(await answers(target), want);
  });

  test("a session's prompt kept by hash in system_prompts reaches the server as its text", async () => {
    // A newer Hermes (its schema 25 on) keeps each prompt once and names it by hash: copied or
    // synced, the server's row has the prompt itself, not a hash of a table it lacks.
    const path = await promptsFile();
    const copiedTo = await copied(path);
    assert.equal((await copiedTo.getSession(LIVE))?.system_prompt, PROMPT);
    assert.equal((await copiedTo.getSession(LIVE))?.tool_names, TOOLS);
    const schema = freshSchema();
    const client = await sync.connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    const synced = await store(schema);
    await sync.syncFile(client, path, { host: "web-1" });
    assert.equal((await synced.getSession(`web-1/${ARCHIVED}`))?.system_prompt, PROMPT);
    assert.equal((await synced.getSession(`web-1/${LIVE}`))?.system_prompt_hash, "h-prompt");
    // Replaced on the server, the prompt drops its hash there too, as on the file.
    await copiedTo.updateSystemPrompt(LIVE, "replaced");
    const replaced = await copiedTo.getSession(LIVE);
    assert.equal(replaced?.system_prompt, "replaced");
    assert.equal(replaced?.system_prompt_hash ?? null, null);
  });

  test("sync ships the newer columns, then rewinds and compactions as that Hermes writes them", {
    timeout: 60_000,
  }, async () => {
    const path = await v21File();
    const schema = freshSchema();
    const client = await sync.connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    const target = await store(schema);
    const idOf = (id: string) => `web-1/${id}`;
    const same = async (what: string) => {
      using db = await SessionDB.open({ path, readonly: true });
      assert.deepEqual(
        withoutOrigin(await answers(target, idOf), "web-1"),
        await answers(db),
        what,
      );
    };
    await sync.syncFile(client, path, { host: "web-1" });
    await same("first pass");
    assert.equal((await target.getSession(idOf(ARCHIVED)))?.archived, 1);

    // A rewind: rows turned inactive in place, and the session's row changed with it.
    {
      using raw = await rawOpen(path);
      raw.exec(`UPDATE messages SET active = 0 WHERE id = 4;
        UPDATE sessions SET rewind_count = rewind_count + 1, message_count = 3 WHERE id = '${LIVE}'`);
    }
    const rewind = await sync.syncFile(client, path, { host: "web-1" });
    assert.equal(rewind.rewritten, 1);
    await same("after a rewind");

    // A compaction: older rows folded in place, a summary appended.
    {
      using raw = await rawOpen(path);
      raw.exec(`UPDATE messages SET active = 0, compacted = 1 WHERE id IN (7, 8);
        INSERT INTO messages (session_id, role, content, timestamp)
        VALUES ('${REWOUND}', 'user', '[CONTEXT COMPACTION] websocket summary', 1777640000)`);
    }
    const compaction = await sync.syncFile(client, path, { host: "web-1" });
    assert.equal(compaction.rewritten, 1);
    await same("after a compaction");

    // Appending alone appends; an unchanged pass writes nothing.
    {
      using raw = await rawOpen(path);
      raw.exec(`INSERT INTO messages (session_id, role, content, timestamp)
        VALUES ('${COMPACTED}', 'user', 'one more about docker', 1777650000)`);
    }
    const appended = await sync.syncFile(client, path, { host: "web-1" });
    assert.deepEqual([appended.appended, appended.rewritten], [1, 0]);
    await same("after an append");
    const unchanged = await sync.syncFile(client, path, { host: "web-1" });
    assert.deepEqual([unchanged.updated, unchanged.messages], [0, 0]);
  });
});
