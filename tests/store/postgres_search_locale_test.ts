/**
 * A substring search on PostgreSQL (a query with CJK text, read as FTS5's
 * trigram table reads it) folds case as FTS5 does, whatever the database's
 * locale: ILIKE folded as the locale does, only ASCII letters under "C"
 * (`Привет 日本語` found one message of two) and İ to i under glibc's
 * C.UTF-8 (`istanbul 日本語` found `İstanbul` too).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { answersOf, fillSession } from "./_search_answers.ts";
import { adminSql, freshSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

const TEXTS = [
  "привет ひらがな",
  "Привет ひらがな",
  "café ひらがな",
  "CAFÉ ひらがな",
  "istanbul ひらがな",
  "İstanbul ひらがな",
  "ΟΔΟΣ ひらがな",
  "a.b*c ひらがな",
  "ſtraße ひらがな",
  "µsec ひらがな",
  "ϑeta ひらがな",
  "ırmak ひらがな",
];
const QUERIES = [
  "Привет ひらがな",
  "привет ひらがな",
  "CAFÉ ひらがな",
  "café ひらがな",
  "istanbul ひらがな",
  "İstanbul ひらがな",
  "οδος ひらがな",
  "a.b*c ひらがな",
  "A.B ひらがな",
  // Letters whose folds another letter shares (ſ → s, µ → μ, ϑ → θ), and one FTS5 does not fold
  // (ı): their upper and lower cases alone missed the others.
  "straße ひらがな",
  "μsec ひらがな",
  "θeta ひらがな",
  "irmak ひらがな",
];

/** Session `s` of the texts above. */
const filled = (store: SessionStore) => fillSession(store, TEXTS);
/** What each query above finds. */
const answers = (store: SessionStore) => answersOf(store, QUERIES);

describe("PostgreSQL substring search and the database's locale", { skip: SKIP }, () => {
  test("finds what SQLite finds, in a database of locale C and in the server's own", {
    timeout: 60_000,
  }, async () => {
    await using file = await openStore(tempDbPath());
    await filled(file);
    const expected = await answers(file);
    assert.deepEqual(expected["Привет ひらがな"], ["Привет ひらがな", "привет ひらがな"].sort());
    const database = `t_c_${process.pid}_${crypto.randomUUID().slice(0, 8)}`;
    await adminSql(
      `CREATE DATABASE "${database}" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`,
    );
    try {
      const server = new URL(PG_URL!);
      server.pathname = `/${database}`;
      const inC = `${server.href}${server.search ? "&" : "?"}schema=${freshSchema()}`;
      for (const url of [inC, schemaUrl(freshSchema())]) {
        await using store = await openStore(url);
        await filled(store);
        assert.deepEqual(await answers(store), expected, url.includes(database) ? "C" : "server");
      }
    } finally {
      await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });
});
