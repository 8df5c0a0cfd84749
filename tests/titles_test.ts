import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { sanitizeTitle } from "../lib/core/titles.ts";
import { ReadonlyError, TitleError } from "../lib/core/errors.ts";
import { copyFixture } from "./_helpers.ts";
import { entriesOf, label, replay, wanted } from "./_expected_calls.ts";
import { dbWith, rawAll } from "./_raw_rows.ts";

const TITLE_CALLS = [
  "resolveSessionByTitle",
  "getNextTitleInLineage",
  "getSessionTitle",
  "getSessionByTitle",
  "resolveSessionId",
];

for (const entry of await entriesOf("titles.json", TITLE_CALLS)) {
  test(`${label(entry)} returns what Python returns on hermes-v11.db`, async () => {
    const db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
    try {
      assert.deepEqual(replay(db, entry), wanted(entry));
    } finally {
      db.close();
    }
  });
}

for (const entry of await entriesOf("functions.json", ["sanitizeTitle"])) {
  test(`${label(entry)} matches Python's sanitize_title`, () => {
    const run = () => sanitizeTitle(entry.ts_args[0] as string | null);
    if (entry.error) {
      assert.throws(run, (err: unknown) => {
        assert.ok(err instanceof TitleError);
        assert.equal(err.message, entry.error!.message);
        return true;
      });
    } else {
      assert.equal(run(), entry.result);
    }
  });
}

test("sanitizeTitle() treats Python whitespace (U+0085, U+3000) as spaces and keeps U+180E", () => {
  assert.equal(sanitizeTitle("a\u0085b\u3000\u3000c"), "a b c");
  assert.equal(sanitizeTitle("a\u180eb"), "a\u180eb");
});

test("sanitizeTitle() counts code points: 100 emoji of two UTF-16 units each pass", () => {
  const title = "👍".repeat(100);
  assert.equal(sanitizeTitle(title), title);
  assert.throws(() => sanitizeTitle(title + "!"), {
    name: "TitleError",
    message: "Title too long (101 chars, max 100)",
  });
});

test("sanitizeTitle() returns null for undefined and for invisible-only input", () => {
  assert.equal(sanitizeTitle(undefined), null);
  assert.equal(sanitizeTitle("\u0000\u200b\ufeff"), null);
});

const TWO_SESSIONS = [
  { id: "s1", started_at: 100, title: "alpha" },
  { id: "s2", started_at: 200 },
];

test("setSessionTitle() stores the sanitized title and reports whether the session exists", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.equal(db.setSessionTitle("s2", "  beta\t\u200b release  "), true);
  assert.equal(db.getSessionTitle("s2"), "beta release");
  assert.equal(db.setSessionTitle("missing", "gamma"), false);
  assert.equal(db.getSessionByTitle("gamma"), undefined);
});

test("setSessionTitle() clears the title when it cleans to nothing", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.equal(db.setSessionTitle("s1", " \u200b\n "), true);
  assert.equal(db.getSessionTitle("s1"), null);
  assert.equal(db.setSessionTitle("s2", null), true);
  assert.equal(db.getSessionTitle("s2"), null);
});

test("setSessionTitle() rejects a title another session uses, naming it, and writes nothing", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.throws(() => db.setSessionTitle("s2", " alpha "), {
    name: "TitleError",
    message: "Title 'alpha' is already in use by session s1",
  });
  assert.equal(db.getSessionTitle("s2"), null);
});

test("setSessionTitle() lets a session keep its own title, and titles are case-sensitive", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.equal(db.setSessionTitle("s1", "alpha"), true);
  assert.equal(db.setSessionTitle("s2", "Alpha"), true);
  assert.equal(db.getSessionByTitle("Alpha")?.id, "s2");
  assert.equal(db.getSessionByTitle("alpha")?.id, "s1");
});

test("setSessionTitle() throws TitleError for a too-long title before touching the file", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.throws(() => db.setSessionTitle("s1", "x".repeat(101)), {
    name: "TitleError",
    message: "Title too long (101 chars, max 100)",
  });
  assert.equal(db.getSessionTitle("s1"), "alpha");
});

test("setSessionTitle() throws ReadonlyError on a read-only database", async () => {
  const path = copyFixture("hermes-v11.db");
  (await SessionDB.open({ path })).close();
  using db = await SessionDB.open({ path, readonly: true });
  assert.throws(() => db.setSessionTitle("20260429_090322_3762ca", "x"), ReadonlyError);
});

test("getSessionTitle() is undefined for an unknown session and null for an untitled one", async () => {
  using db = await dbWith(TWO_SESSIONS);
  assert.equal(db.getSessionTitle("nope"), undefined);
  assert.equal(db.getSessionTitle("s2"), null);
});

test("getSessionByTitle() returns the full row with every column", async () => {
  using db = await dbWith(TWO_SESSIONS);
  const row = db.getSessionByTitle("alpha");
  const [raw] = await rawAll(db.path, "SELECT * FROM sessions WHERE id = 's1'");
  assert.deepEqual(row, raw);
});

test("resolveSessionByTitle() prefers the newest-started numbered variant over the exact title", async () => {
  using db = await dbWith([
    { id: "a", started_at: 100, title: "plan" },
    { id: "b", started_at: 300, title: "plan #2" },
    { id: "c", started_at: 200, title: "plan #3" },
    { id: "d", started_at: 400, title: "planner" },
  ]);
  assert.equal(db.resolveSessionByTitle("plan"), "b");
  assert.equal(db.resolveSessionByTitle("plan #3"), "c");
  assert.equal(db.resolveSessionByTitle("planner"), "d");
});

test("resolveSessionByTitle() takes %, _ and \\ in the title literally", async () => {
  using db = await dbWith([
    { id: "a", started_at: 100, title: "a_b" },
    { id: "b", started_at: 200, title: "axb #2" },
    { id: "c", started_at: 300, title: "100% #2" },
    { id: "d", started_at: 400, title: "1000 #2" },
    { id: "e", started_at: 500, title: "x\\y" },
    { id: "f", started_at: 600, title: "x\\\\y #2" },
  ]);
  assert.equal(db.resolveSessionByTitle("a_b"), "a");
  assert.equal(db.resolveSessionByTitle("100%"), "c");
  assert.equal(db.resolveSessionByTitle("x\\y"), "e");
});

test("getNextTitleInLineage() numbers past the highest variant, the original counting as #1", async () => {
  using db = await dbWith([
    { id: "a", started_at: 1, title: "deploy" },
    { id: "b", started_at: 2, title: "deploy #7" },
    { id: "c", started_at: 3, title: "deploy #abc" },
    { id: "d", started_at: 4, title: "solo" },
    { id: "e", started_at: 5, title: "big #99999999999999999999" },
  ]);
  assert.equal(db.getNextTitleInLineage("deploy"), "deploy #8");
  assert.equal(db.getNextTitleInLineage("deploy #2"), "deploy #8");
  assert.equal(db.getNextTitleInLineage("solo"), "solo #2");
  assert.equal(db.getNextTitleInLineage("fresh #4"), "fresh");
  assert.equal(db.getNextTitleInLineage("big"), "big #100000000000000000000");
});

test("getNextTitleInLineage() reads non-ASCII decimal digits as Python's int() does", async () => {
  using db = await dbWith([
    { id: "a", started_at: 1, title: "report" },
    { id: "b", started_at: 2, title: "report #\u0663" }, // ARABIC-INDIC DIGIT THREE
    { id: "c", started_at: 3, title: "memo #\u{1D7D7}" }, // MATHEMATICAL BOLD DIGIT NINE
  ]);
  assert.equal(db.getNextTitleInLineage("report"), "report #4");
  assert.equal(db.getNextTitleInLineage("memo"), "memo #10");
});

test("resolveSessionId() escapes _, % and \\ and answers only a unique prefix", async () => {
  using db = await dbWith([
    { id: "a_b1", started_at: 1 },
    { id: "axb2", started_at: 2 },
    { id: "p%q", started_at: 3 },
    { id: "pzq", started_at: 4 },
    { id: "x\\1", started_at: 5 },
    { id: "xy9", started_at: 6 },
  ]);
  assert.equal(db.resolveSessionId("a_"), "a_b1");
  assert.equal(db.resolveSessionId("p%"), "p%q");
  assert.equal(db.resolveSessionId("a"), undefined);
  assert.equal(db.resolveSessionId("pzq"), "pzq");
  assert.equal(db.resolveSessionId("q"), undefined);
  assert.equal(db.resolveSessionId("x\\"), "x\\1");
  assert.equal(db.resolveSessionId("X"), undefined); // ASCII case-insensitive: both match
});

test("sessionIdsWithPrefix() counts every match and names the newest, literally", async () => {
  using db = await dbWith([
    { id: "a_b1", started_at: 1 },
    { id: "axb2", started_at: 2 },
    { id: "a_c3", started_at: 3 },
    { id: "zz", started_at: 4 },
  ]);
  assert.deepEqual(db.sessionIdsWithPrefix("a"), { count: 3, ids: ["a_c3", "axb2", "a_b1"] });
  assert.deepEqual(db.sessionIdsWithPrefix("a_", { limit: 1 }), { count: 2, ids: ["a_c3"] });
  assert.deepEqual(db.sessionIdsWithPrefix("q"), { count: 0, ids: [] });
});
