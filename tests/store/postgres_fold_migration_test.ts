/**
 * PostgreSQL's words are folded as SQLite's FTS5 folds them (Unicode 6.1's
 * simple case folding, measured from SQLite: `_unicode61_data.ts`), so a
 * word search finds the messages the file finds: `ΚΩΔΙΚΟΣ` is `κωδικοσ`
 * there, where JavaScript's lower case made it `κωδικος`, and `µ` (the micro
 * sign) is `μ`. Migration 11 writes again the words an older version folded
 * otherwise.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { LAST_STEP } from "../../lib/postgres/schema.ts";
import { tempDbPath } from "../_helpers.ts";
import { answersOf, fillSession } from "./_search_answers.ts";
import { adminSql, freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

const TEXTS = [
  "ΚΩΔΙΚΟΣ 4711 ενεργός",
  "ο κωδικος είναι λάθος",
  "Ο ΚΩΔΙΚΌΣ ΣΑΣ",
  "latency 350µs at p99",
  "latency 350μs at p50",
  "ΟΔΟΣ ΑΘΗΝΑΣ 12",
  "η οδος κλειστή",
  "café au lait",
];
const QUERIES = ["ΚΩΔΙΚΟΣ*", "κωδικοσ", "κωδικος", "350μs", "350µs", "οδος*", "ΟΔΟΣ"];

/** Session `s` of the texts above. */
const filled = (store: SessionStore) => fillSession(store, TEXTS);
/** What each query above finds. */
const answers = (store: SessionStore) => answersOf(store, QUERIES);

describe("PostgreSQL word search folds as FTS5", { skip: SKIP }, () => {
  test("searchMessages() finds Greek and micro-sign words where SQLite does", {
    timeout: 60_000,
  }, async () => {
    await using file = await openStore(tempDbPath());
    await filled(file);
    const expected = await answers(file);
    // `ΚΩΔΙΚΌΣ` keeps its tonos (`remove_diacritics 1` removes Latin diacritics only).
    assert.deepEqual(expected["κωδικοσ"], ["ΚΩΔΙΚΟΣ 4711 ενεργός", "ο κωδικος είναι λάθος"]);
    assert.deepEqual(expected["350μs"], ["latency 350µs at p99", "latency 350μs at p50"]);
    await using store = await openStore(schemaUrl(freshSchema()));
    await filled(store);
    assert.deepEqual(await answers(store), expected);
  });

  test("migration 11 writes again the words an older version folded otherwise", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const words = `"${schema}".message_words`;
    const ids = new Map<string, number>();
    {
      await using store = await openStore(url);
      await filled(store);
      for (const m of await store.getMessages("s")) ids.set(String(m.content), m.id);
    }
    // As an older version wrote them: JavaScript's lower case, the micro sign kept.
    const greek = ids.get("ΚΩΔΙΚΟΣ 4711 ενεργός")!;
    const micro = ids.get("latency 350µs at p99")!;
    await adminSql(
      `UPDATE ${words} SET search_words = '''κωδικος'':1 ''4711'':2 ''ενεργός'':3' WHERE id = ${greek}`,
    );
    await adminSql(
      `UPDATE ${words} SET search_words = '''latency'':1 ''350µs'':2 ''at'':3 ''p99'':4' WHERE id = ${micro}`,
    );
    await adminSql(`DELETE FROM "${schema}".hermes_migrations WHERE step > 10`);
    const version = `SELECT id, xmin::text AS version FROM ${words} ORDER BY id`;
    const before = new Map((await adminSql(version)).map((r) => [Number(r.id), r.version]));

    await using store = await openStore(url);
    const found = await answers(store);
    assert.ok(found["κωδικοσ"].includes("ΚΩΔΙΚΟΣ 4711 ενεργός"), JSON.stringify(found));
    assert.ok(found["350μs"].includes("latency 350µs at p99"), JSON.stringify(found));
    const [step] = await adminSql(`SELECT max(step) AS step FROM "${schema}".hermes_migrations`);
    assert.equal(Number(step.step), LAST_STEP);
    // Only the two rows whose words changed were written.
    const after = new Map((await adminSql(version)).map((r) => [Number(r.id), r.version]));
    const written = [...after].filter(([id, v]) => before.get(id) !== v).map(([id]) => id);
    assert.deepEqual(written.sort((a, b) => a - b), [greek, micro].sort((a, b) => a - b));
  });

  test("migrations 7 and 11 page past message ids beyond 2^53", { timeout: 60_000 }, async () => {
    // The last id of a page was read as a number, which rounded 2^53 + 1 down: the same page came
    // back forever, inside the migration's transaction, and every other writer waited on it.
    const schema = freshSchema();
    const url = schemaUrl(schema);
    {
      await using store = await openStore(url);
      await store.createSession("s", "cli");
    }
    await adminSql(`SELECT setval('"${schema}".messages_id_seq', 9007199254740992)`);
    {
      await using store = await openStore(url);
      await store.appendMessage("s", { role: "user", content: "ΚΩΔΙΚΟΣ ไทย 350µs" });
    }
    const word = `"${schema}".message_words`;
    await adminSql(`UPDATE ${word} SET search_words = '''κωδικος'':1'`);
    await adminSql(`UPDATE "${schema}".messages SET search_grams = ''`);
    await adminSql(`DELETE FROM "${schema}".hermes_migrations WHERE step IN (7, 11)`);
    await using store = await openStore(url);
    const hits = await store.searchMessages("κωδικοσ");
    assert.equal(hits.length, 1);
    assert.equal((await store.searchMessages("ไทย")).length, 1);
    const steps = await adminSql(`SELECT step FROM "${schema}".hermes_migrations ORDER BY step`);
    assert.deepEqual(steps.map((row) => Number(row.step)).filter((n) => n === 7 || n === 11), [
      7,
      11,
    ]);
  });
});
