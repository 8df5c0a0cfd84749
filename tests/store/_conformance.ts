/**
 * The conformance suite of {@linkcode SessionStore}: one function that takes
 * a factory and holds the engine it opens to the contract — every method,
 * the fixtures' recorded Python answers that apply, and the error cases.
 * SQLite runs it from `sqlite_store_test.ts`, PostgreSQL from
 * `postgres_store_test.ts`. Search is compared with the SQLite engine on the
 * same data (matches and contexts; order and snippets too where the engine
 * ranks as SQLite does). The library contract's cases (bad arguments, read-only,
 * closed, null options) are in `_api_contract.ts`.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { MessagesOptions } from "../../lib/core/session_options.ts";
import type { UsageRow } from "../../lib/core/usage.ts";
import { ReadonlyError, StorageError, TitleError } from "../../lib/core/errors.ts";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyFixture, tempDir } from "../_helpers.ts";
import { entriesOf, type ExpectedEntry, label, wanted } from "../_expected_calls.ts";
import { fixtureRecords } from "./_fixture_data.ts";
import { untilSteady } from "./_steady.ts";
import { IMPROVED_QUERIES } from "../_search_cases.ts";
import { planSearch } from "../../lib/core/search/plan.ts";
import { apiContract } from "./_api_contract.ts";

/** Options a factory passes on to the store it opens. */
export interface FactoryOptions {
  /** Seconds since the epoch, as a float. */
  readonly clock?: () => number;
}

/** How the suite opens stores of the engine under test. */
export interface StoreFactory {
  /** A new, empty store of its own. */
  empty(options?: FactoryOptions): Promise<SessionStore>;
  /** A new store holding the v11 fixture's data (sessions, messages with their ids, meta). */
  fixture(options?: FactoryOptions): Promise<SessionStore>;
  /** The same data as `store`, opened again read-only. */
  reopenReadonly(store: SessionStore): Promise<SessionStore>;
  /** True when search ranks (and cuts snippets) exactly as SQLite's FTS5 does. */
  readonly ranksAsSqlite: boolean;
}

/** Recorded calls replayed on the fixture store. */
const REPLAYED: Array<[file: string, calls: string[]]> = [
  ["sessions.json", ["getSession", "getMessages", "getMessagesAsConversation"]],
  ["counts.json", ["sessionCount", "messageCount", "getMeta"]],
  ["export.json", ["exportSession", "exportAll"]],
  ["list.json", ["listSessionsRich", "searchSessions"]],
  ["lineage.json", ["getCompressionTip", "resolveResumeSessionId"]],
  [
    "titles.json",
    [
      "resolveSessionByTitle",
      "getNextTitleInLineage",
      "getSessionTitle",
      "getSessionByTitle",
      "resolveSessionId",
    ],
  ],
];

/**
 * `rows` with the cost sums in `fields` rounded to a billionth of a dollar: a sum of costs may
 * differ in its last bit with the order an engine adds them in (SQLite compensates its sums;
 * PostgreSQL adds them in the order it scans, which a plan or an update can change).
 */
function costsRounded<T extends object>(rows: readonly T[], fields: readonly (keyof T)[]): T[] {
  return rows.map((row) => {
    const copy = { ...row };
    for (const field of fields) {
      const value = copy[field];
      if (typeof value === "number") copy[field] = Math.round(value * 1e9) as T[keyof T];
    }
    return copy;
  });
}

/** Extra queries beyond the recorded ones: operators, prefixes, CJK of every length, hostile text. */
const MORE_QUERIES = [
  "docker compose",
  "Docker",
  "dock*",
  '"docker compose" OR kubernetes',
  "docker NOT compose",
  "docker AND NOT",
  "数",
  "据",
  "数据库",
  "迁移 计划",
  "记忆断裂 OR 通信",
  "テスト",
  "정리",
  "负荷 AND 测试",
  "((( ",
  '"unterminated',
  "NEAR(a b)",
  "\u0000",
  "a".repeat(3000),
  "-x",
  "*",
  "^start",
  "col:val",
  "docker 数据",
  "数据 AND docker",
  "记忆 OR docker",
  "数据 NOT docker",
  "记忆断裂 OR 数据 terminal",
  "记忆* 系统",
  '"记忆 系统"',
  "docker 🚀",
  "🚀 OR 数据",
];

async function call(store: SessionStore, entry: ExpectedEntry): Promise<unknown> {
  const method = (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
    entry.ts_call
  ];
  assert.equal(typeof method, "function", `SessionStore.${entry.ts_call} is missing`);
  return await method.apply(store, entry.ts_args);
}

/**
 * Runs the conformance suite against the engine `factory` opens.
 *
 * @param name The engine, for test names.
 * @param factory Opens its stores.
 */
export function storeConformance(name: string, factory: StoreFactory): void {
  const opened: SessionStore[] = [];
  // All at once: one after another, the PostgreSQL suite's 66 stores held its process longer.
  after(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  const empty = async (options?: FactoryOptions) => {
    const store = await factory.empty(options);
    opened.push(store);
    return store;
  };
  apiContract(name, {
    empty: () => empty(),
    async readonly(store) {
      const readonly = await factory.reopenReadonly(store);
      opened.push(readonly);
      return readonly;
    },
  });

  describe(`${name}: the v11 fixture's recorded answers`, () => {
    let store: SessionStore;
    before(async () => {
      store = await factory.fixture();
      opened.push(store);
    });

    for (const [file, calls] of REPLAYED) {
      test(`${file}: every recorded call answers as Python`, async () => {
        const entries = await entriesOf(file, calls);
        assert.ok(entries.length > 0, `${file} has entries`);
        for (const entry of entries) {
          const actual = await call(store, entry);
          assert.deepEqual(actual, wanted(entry), label(entry));
        }
      });
    }

    test("searchMessages() finds what the SQLite engine finds, for every recorded and extra query", async () => {
      const oracle = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
      try {
        const recorded = await entriesOf("search.json", ["searchMessages"]);
        const cases: Array<[string, Record<string, unknown> | undefined]> = [
          ...recorded.map((e) => [e.ts_args[0], e.ts_args[1]] as [string, Record<string, unknown>]),
          ...MORE_QUERIES.map((q) => [q, undefined] as [string, undefined]),
        ];
        for (const [query, options] of cases) {
          const wide = { ...options, limit: 1000, offset: 0 };
          const want = oracle.searchMessages(query, wide);
          const got = await store.searchMessages(query, wide);
          const what = `${JSON.stringify(query).slice(0, 60)} ${JSON.stringify(options ?? {})}`;
          assert.deepEqual(
            got.map((h) => h.id).sort(),
            want.map((h) => h.id).sort(),
            `ids of ${what}`,
          );
          const byId = new Map(want.map((h) => [h.id, h]));
          // A word or trigram search's snippet is FTS5's on either engine; a substring one's may differ.
          const sameSnippet = planSearch(query).kind === "ranked";
          for (const hit of got) {
            const { snippet: _s, ...rest } = hit;
            const { snippet: wantSnippet, ...expectedRest } = byId.get(hit.id)!;
            assert.deepEqual(rest, expectedRest, `hit ${hit.id} of ${what}`);
            assert.equal(typeof hit.snippet === "string" || hit.snippet === null, true);
            if (sameSnippet) {
              assert.equal(hit.snippet, wantSnippet, `snippet of ${hit.id} of ${what}`);
            }
          }
          if (factory.ranksAsSqlite) {
            assert.deepEqual(
              await store.searchMessages(query, options),
              oracle.searchMessages(query, options),
            );
          }
        }
      } finally {
        oracle.close();
      }
    });

    test("searchMessages() filters by session and time range as the SQLite engine does", async () => {
      const oracle = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
      try {
        const all = oracle.searchMessages("docker", { limit: 1000 });
        const sessionId = all[0].session_id;
        const middle = all.map((h) =>
          h.timestamp
        ).sort((a, b) => a - b)[Math.floor(all.length / 2)];
        for (
          const options of [{ sessionId }, { since: middle }, { until: middle }, {
            sessionId,
            until: middle,
          }]
        ) {
          const wide = { ...options, limit: 1000 };
          const want = oracle.searchMessages("docker", wide).map((h) => h.id).sort();
          assert.ok(want.length > 0 || "until" in options, JSON.stringify(options));
          assert.deepEqual(
            (await store.searchMessages("docker", wide)).map((h) => h.id).sort(),
            want,
            JSON.stringify(options),
          );
        }
      } finally {
        oracle.close();
      }
    });

    test("countSearchHits() counts what searchMessages() finds, for every recorded and extra query and filter", async () => {
      const recorded = await entriesOf("search.json", ["searchMessages"]);
      const queries = [
        ...new Set([...recorded.map((e) => e.ts_args[0] as string), ...MORE_QUERIES]),
      ];
      const [first, second] = await store.listSessionsRich({ includeChildren: true, limit: 2 });
      const middle = (first.started_at + second.started_at) / 2;
      const filters: Record<string, unknown>[] = [
        {},
        { sourceFilter: ["cli"] },
        { excludeSources: ["cli"] },
        { roleFilter: ["assistant"] },
        { sessionId: first.id },
        { since: middle, sourceFilter: ["telegram", "cli"], roleFilter: ["user", "tool"] },
        { until: middle, includeInactive: true },
      ];
      let found = 0;
      for (const query of queries) {
        for (const options of filters) {
          const hits = await store.searchMessages(query, { ...options, limit: 1000, offset: 0 });
          const what = `${JSON.stringify(query).slice(0, 60)} ${JSON.stringify(options)}`;
          assert.equal(await store.countSearchHits(query, options, 1000), hits.length, what);
          const one = await store.countSearchHits(query, { ...options, limit: 0, offset: 5 }, 1);
          assert.equal(one, Math.min(hits.length, 1), `${what}, up to 1`);
          assert.equal(await store.countSearchHits(query, options, 0), 0, `${what}, up to 0`);
          if (hits.length > 1) found++;
        }
      }
      // The comparison is not of empty answers.
      assert.ok(found >= 20, `${found} queries and filters with hits`);
    });

    test("listedSessionCount() counts what listSessionsRich() lists; a start range narrows both", async () => {
      const cut = 1776675600;
      for (
        const options of [{}, { excludeSources: ["tool"] }, { includeChildren: true }, {
          startedAfter: cut,
        }, { startedBefore: cut, excludeSources: ["tool"] }]
      ) {
        const rows = await store.listSessionsRich({ ...options, limit: 1000 });
        assert.equal(await store.listedSessionCount(options), rows.length, JSON.stringify(options));
        if ("startedAfter" in options) assert.ok(rows.every((r) => r.started_at >= cut));
        if ("startedBefore" in options) assert.ok(rows.every((r) => r.started_at < cut));
      }
    });

    test("searchMessages() pages as it ranks: limit and offset cut the same ordered list", async () => {
      const all = await store.searchMessages("docker", { limit: 1000 });
      const page = await store.searchMessages("docker", { limit: 3, offset: 2 });
      assert.deepEqual(page.map((h) => h.id), all.slice(2, 5).map((h) => h.id));
      const cjk = await store.searchMessages("数据", { limit: 1000 });
      const cjkPage = await store.searchMessages("数据", { limit: 2, offset: 1 });
      assert.deepEqual(cjkPage.map((h) => h.id), cjk.slice(1, 3).map((h) => h.id));
    });

    test("searchMessages() with sort newest|oldest lists the SQLite engine's hits in its time order", async () => {
      const oracle = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
      try {
        for (const query of ["docker", "the", "session*", "数据库", "数据", "terminal OR 数据"]) {
          for (const sort of ["newest", "oldest"] as const) {
            for (const page of [{ limit: 1000 }, { limit: 4, offset: 3 }]) {
              const options = { ...page, sort };
              const want = oracle.searchMessages(query, options);
              const got = await store.searchMessages(query, options);
              const what = `${query} ${JSON.stringify(options)}`;
              // Ranks differ between engines, so only ties in time may come in another order.
              assert.deepEqual(got.map((h) => h.timestamp), want.map((h) => h.timestamp), what);
              if (page.limit === 1000) {
                assert.deepEqual(got.map((h) => h.id).sort(), want.map((h) => h.id).sort(), what);
              }
            }
          }
        }
        await assert.rejects(store.searchMessages("docker", { sort: "latest" as "newest" }), {
          name: "RangeError",
        });
      } finally {
        oracle.close();
      }
    });

    test("searchMessages() marks word matches >>>like this<<< in snippets", async () => {
      const hits = await store.searchMessages("docker");
      assert.ok(hits.length > 0);
      for (const hit of hits) assert.match(hit.snippet ?? "", />>>docker<<</i);
    });

    /** A new store with one session per entry, named by its key, holding one user message. */
    async function storeOfTexts(texts: Record<string, string>): Promise<SessionStore> {
      const texted = await empty();
      for (const [session, content] of Object.entries(texts)) {
        await texted.createSession(session, "cli");
        await texted.appendMessage(session, { role: "user", content });
      }
      return texted;
    }

    test("searchMessages() marks each phrase instance as one span, as FTS5's snippet does", async () => {
      const marked = await storeOfTexts({
        phrases: "run the unit tests, then the unit test suite; unit, test. Unit Test again",
        overlaps: "x a b c y a b",
      });
      // What SQLite's FTS5 answers for these texts (short enough that the whole text shows).
      const expected: Array<[query: string, snippet: string]> = [
        [
          '"unit test"',
          "run the unit tests, then the >>>unit test<<< suite; >>>unit, test<<<. >>>Unit Test<<< again  ",
        ],
        [
          "unit test",
          "run the >>>unit<<< tests, then the >>>unit<<< >>>test<<< suite; >>>unit<<<, >>>test<<<. >>>Unit<<< >>>Test<<< again  ",
        ],
        [
          '"unit tes"*',
          "run the >>>unit tests<<<, then the >>>unit test<<< suite; >>>unit, test<<<. >>>Unit Test<<< again  ",
        ],
        [
          '"the unit" AND suite',
          "run >>>the unit<<< tests, then >>>the unit<<< test >>>suite<<<; unit, test. Unit Test again  ",
        ],
        ['"a b" OR "b c"', "x >>>a b c<<< y >>>a b<<<  "],
        ['"a b c" OR "b"', "x >>>a b c<<< y a >>>b<<<  "],
      ];
      for (const [query, snippet] of expected) {
        const hits = await marked.searchMessages(query);
        assert.deepEqual(hits.map((hit) => hit.snippet), [snippet], query);
      }
    });

    test("searchMessages() cuts a long text's snippet where FTS5 does", async () => {
      const words = (prefix: string, n: number) =>
        Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");
      const store = await storeOfTexts({
        long: `Opening words of a long message. ${words("w", 30)} then the docker compose file: ${
          words("v", 30)
        }. Later docker again ${words("u", 20)}`,
        sentence: `${words("a", 25)}. Sentence about docker and compose here ${words("b", 40)}`,
        nested: "alpha cache beta memory gamma",
        // Multimodal content starts with U+0000: FTS5 copies no text before the first match.
        multimodal: '\u0000json:[{"type": "text", "text": "see the docker logs"}]',
      });
      // What SQLite's FTS5 answers: the best window (a sentence's start wins a tie-break, the
      // window is centred on what it holds), marks only for the parts of the query that match.
      const expected: Array<[session: string, query: string, snippet: string]> = [
        [
          "long",
          "docker",
          "...w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 then the >>>docker<<< compose file: v0 v1 v2 v3 v4...",
        ],
        [
          "long",
          '"docker compose"',
          "...w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 then the >>>docker compose<<< file: v0 v1 v2 v3 v4...",
        ],
        [
          "long",
          "opening OR u19",
          "...Later docker again u0 u1 u2 u3 u4 u5 u6 u7 u8 u9 u10 u11 u12 u13 u14 u15 u16 u17 u18 >>>u19<<<  ",
        ],
        [
          "sentence",
          "compose OR b39",
          "...Sentence about docker and >>>compose<<< here b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 b10 b11 b12 b13 b14 b15 b16 b17 b18 b19 b20 b21 b22 b23 b24 b25 b26 b27 b28 b29 b30 b31 b32 b33...",
        ],
        ["nested", "cache AND redis OR memory", "alpha cache beta >>>memory<<< gamma  "],
        ["multimodal", "docker", '>>>docker<<< logs"}]  '],
      ];
      for (const [sessionId, query, snippet] of expected) {
        const hits = await store.searchMessages(query, { sessionId });
        assert.deepEqual(hits.map((hit) => hit.snippet), [snippet], `${sessionId}: ${query}`);
      }
    });

    test("searchMessages() shows a match whole where FTS5's snippet cuts it at the window's end", async () => {
      const words = (prefix: string, n: number) =>
        Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");
      // Each match starts near the 40th token of its sentence: FTS5 keeps the window from the
      // sentence's start and shows `w38 >>>unit<<<...`, `消息中间件>>>数据库连<<<...`.
      const store = await storeOfTexts({
        phrase: `${words("w", 39)} unit test ${words("v", 30)}`,
        cjk:
          "我们今天讨论了很多关于系统设计的问题，包括缓存和队列的使用方法以及消息中间件数据库连接池的配置和调优。",
      });
      const expected: Array<[session: string, query: string, snippet: string]> = [
        [
          "phrase",
          '"unit test"',
          `...${words("w", 39).slice(words("w", 20).length + 1)} >>>unit test<<< ${
            words("v", 19)
          }...`,
        ],
        [
          "cjk",
          "数据库连接池",
          "...系统设计的问题，包括缓存和队列的使用方法以及消息中间件>>>数据库连接池<<<的配置和调优。  ",
        ],
      ];
      for (const [sessionId, query, snippet] of expected) {
        const hits = await store.searchMessages(query, { sessionId });
        assert.deepEqual(hits.map((hit) => hit.snippet), [snippet], `${sessionId}: ${query}`);
      }
    });

    test("recorded Python searches that are not improvements find the same messages", async () => {
      const recorded = await entriesOf("search.json", ["searchMessages"]);
      for (const entry of recorded) {
        const [query, options] = entry.ts_args as [string, Record<string, unknown>?];
        if (IMPROVED_QUERIES.has(query)) continue;
        const result = entry.result as { id: number }[];
        const limit = (options?.limit as number | undefined) ?? 20;
        const got = await store.searchMessages(query, options);
        if (result.length < limit && !options?.offset) {
          assert.deepEqual(
            got.map((h) => h.id).sort(),
            result.map((h) => h.id).sort(),
            JSON.stringify(entry.ts_args),
          );
        } else {
          assert.equal(got.length, result.length, JSON.stringify(entry.ts_args));
        }
      }
    });

    test("iterateExport() yields exportAll()'s sessions in the same order, and filters by source", async () => {
      const all = await store.exportAll();
      const streamed = [];
      for await (const session of store.iterateExport()) streamed.push(session);
      assert.deepEqual(streamed, all);
      const telegram = [];
      for await (const session of store.iterateExport({ source: "telegram" })) {
        telegram.push(session);
      }
      assert.deepEqual(telegram, await store.exportAll({ source: "telegram" }));
      assert.ok(telegram.length > 0 && telegram.every((s) => s.source === "telegram"));
    });

    test("iterateExport() keeps the sessions started in a range, and refuses a bound that is no number", async () => {
      const all = await store.exportAll();
      const starts = [...new Set(all.map((s) => s.started_at))].sort((a, b) => a - b);
      const middle = starts[Math.floor(starts.length / 2)];
      const ids = async (options: { startedAfter?: number; startedBefore?: number }) => {
        const got = [];
        for await (const session of store.iterateExport(options)) got.push(session.id);
        assert.deepEqual((await store.exportAll(options)).map((s) => s.id), got);
        return got;
      };
      const after = all.filter((s) => s.started_at >= middle).map((s) => s.id);
      const before = all.filter((s) => s.started_at < middle).map((s) => s.id);
      assert.ok(after.length > 0 && before.length > 0);
      assert.deepEqual(await ids({ startedAfter: middle }), after);
      assert.deepEqual(await ids({ startedBefore: middle }), before);
      assert.deepEqual(await ids({ startedAfter: starts[1], startedBefore: middle }), [
        ...all.filter((s) => s.started_at >= starts[1] && s.started_at < middle).map((s) => s.id),
      ]);
      await assert.rejects(
        ids({ startedAfter: Number.NaN }),
        /^RangeError: Cannot export sessions: startedAfter must be a finite number of seconds: current value is NaN$/,
      );
    });

    test("statistics answer as the SQLite engine on the same data", async () => {
      const oracle = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
      try {
        assert.deepEqual(
          costsRounded(await store.usageByModel(), ["total_cost"]),
          costsRounded(oracle.usageByModel(), ["total_cost"]),
        );
        assert.deepEqual(await store.topSessionsByTokens(7), oracle.topSessionsByTokens(7));
        assert.deepEqual(
          costsRounded(await store.usageBySource(), ["estimated_cost", "actual_cost"]),
          costsRounded(oracle.usageBySource(), ["estimated_cost", "actual_cost"]),
        );
        assert.deepEqual(
          await store.getDescendants("20260420_090000_994beb"),
          oracle.getDescendants("20260420_090000_994beb"),
        );
        assert.deepEqual(
          await store.getAncestors("20260425_090019_d38f1d"),
          oracle.getAncestors("20260425_090019_d38f1d"),
        );
        const convo = await store.getMessagesAsConversation("20260425_090019_d38f1d", {
          includeAncestors: true,
        });
        assert.deepEqual(
          convo,
          oracle.getMessagesAsConversation("20260425_090019_d38f1d", { includeAncestors: true }),
        );
        const now = 1777700000;
        const later = await factory.fixture({ clock: () => now });
        opened.push(later);
        const laterOracle = await SessionDB.open({
          path: copyFixture("hermes-v11.db"),
          clock: () => now,
        });
        try {
          const candidates = await later.pruneCandidates({ olderThanDays: 90 });
          assert.ok(candidates.length > 0);
          assert.deepEqual(candidates, laterOracle.pruneCandidates({ olderThanDays: 90 }));
        } finally {
          laterOracle.close();
        }
      } finally {
        oracle.close();
      }
    });

    test("usageReport() and the listing's start-time and children filters answer as the SQLite engine", async () => {
      const oracle = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
      try {
        const rounded = (rows: UsageRow[]) =>
          costsRounded(rows, ["estimated_cost_usd", "actual_cost_usd"]);
        for (const by of ["day", "week", "month", "model", "source"] as const) {
          assert.deepEqual(
            rounded(await store.usageReport({ by })),
            rounded(oracle.usageReport({ by })),
            by,
          );
        }
        const since = Date.UTC(2026, 3, 24) / 1000;
        const period = { by: "day", since, until: since + 3 * 86400, source: "cli" } as const;
        assert.deepEqual(
          rounded(await store.usageReport(period)),
          rounded(oracle.usageReport(period)),
        );
        await assert.rejects(() => store.usageReport({ by: "hour" as never }), RangeError);
        const listing = {
          startedAfter: Date.UTC(2026, 3, 21) / 1000,
          startedBefore: Date.UTC(2026, 3, 26) / 1000,
          limit: 100,
        };
        assert.deepEqual(await store.listSessionsRich(listing), oracle.listSessionsRich(listing));
        const parents = { hasChildren: true, limit: 100, orderByLastActive: true };
        const withChildren = await store.listSessionsRich(parents);
        assert.ok(withChildren.length > 0);
        assert.deepEqual(withChildren, oracle.listSessionsRich(parents));
        await assert.rejects(
          () => store.listSessionsRich({ startedAfter: Number.NaN }),
          RangeError,
        );
      } finally {
        oracle.close();
      }
    });

    test("inspect() counts the sessions, messages and meta keys", async () => {
      const info = await store.inspect({ integrity: false });
      assert.equal(info.sessions, 42);
      assert.equal(info.messages, 197);
      assert.equal(info.schemaVersion, 11);
      assert.ok(info.metaKeys.includes("last_auto_prune"));
    });

    test("a read-only store reads the same data and rejects every write", async () => {
      const ro = await factory.reopenReadonly(store);
      opened.push(ro);
      assert.equal(ro.readonly, true);
      assert.equal(await ro.sessionCount(), 42);
      await assert.rejects(ro.createSession("new", "cli"), ReadonlyError);
      await assert.rejects(
        ro.appendMessage("20260420_090000_994beb", { role: "user", content: "x" }),
        ReadonlyError,
      );
      await assert.rejects(ro.appendMessages("20260420_090000_994beb", []), ReadonlyError);
      await assert.rejects(ro.setMeta("k", "v"), ReadonlyError);
      await assert.rejects(ro.deleteSession("20260420_090000_994beb"), ReadonlyError);
      await assert.rejects(ro.vacuum(), ReadonlyError);
      assert.equal(await store.messageCount("20260420_090000_994beb"), 13);
    });
  });

  describe(`${name}: arguments that would harm the store are refused before anything is written`, () => {
    // deno-lint-ignore no-explicit-any -- the wrong types are what is tested
    type Loose = any;
    test("updateTokenCounts() refuses NaN, infinities and strings, naming the field", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.updateTokenCounts("s", { inputTokens: 1000, apiCallCount: 3 });
      for (
        const [update, field] of [
          [{ inputTokens: NaN }, "inputTokens"],
          [{ outputTokens: Infinity }, "outputTokens"],
          [{ cacheReadTokens: "5" }, "cacheReadTokens"],
          [{ reasoningTokens: -Infinity }, "reasoningTokens"],
          [{ apiCallCount: NaN }, "apiCallCount"],
          [{ inputTokens: 1, estimatedCostUsd: NaN }, "estimatedCostUsd"],
          [{ inputTokens: 1, model: 5 }, "model"],
          [{ inputTokens: 2n ** 64n }, "inputTokens"],
        ] as const
      ) {
        await assert.rejects(
          store.updateTokenCounts("s", update as Loose),
          (error) =>
            error instanceof TypeError &&
            new RegExp(`^Cannot update token counts: ${field} must be`).test(error.message),
          field,
        );
        await assert.rejects(store.updateTokenCounts("s", { inputTokens: NaN, absolute: true }));
      }
      const row = await store.getSession("s");
      assert.equal(row?.input_tokens, 1000);
      assert.equal(row?.api_call_count, 3);
      assert.equal(row?.estimated_cost_usd, 0);
    });

    test("a session id, a source or a meta key that is not a string is refused", async () => {
      const store = await empty();
      for (const id of [null, undefined, 5, {}]) {
        await assert.rejects(
          store.createSession(id as Loose, "cli"),
          /create session: id must be a string/,
        );
        await assert.rejects(
          store.ensureSession(id as Loose),
          /create session: id must be a string/,
        );
        await assert.rejects(
          store.updateTokenCounts(id as Loose, {}),
          /token counts: id must be a string/,
        );
        await assert.rejects(store.setMeta(id as Loose, "v"), /set meta: key must be a string/);
      }
      await assert.rejects(store.createSession("s", null as Loose), /source must be a string/);
      assert.equal(await store.sessionCount(), 0);
    });

    test("an array's holes: null in a JSON column, refused as a message", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const call = { id: "c", type: "function", function: { name: "terminal", arguments: "{}" } };
      // deno-lint-ignore no-sparse-arrays -- the hole is what is tested
      const sparse = [call, , call];
      await store.appendMessage("s", {
        role: "assistant",
        content: null,
        toolCalls: sparse as Loose,
      });
      const [stored] = await store.getMessages("s");
      assert.deepEqual(stored.tool_calls, [call, null, call]);
      // deno-lint-ignore no-sparse-arrays -- the hole is what is tested
      const messages = [{ role: "user", content: "a" }, , { role: "user", content: "b" }];
      await assert.rejects(
        store.appendMessages("s", messages as Loose),
        /append messages: a message must be an object \({ role, content, … }\): current value is undefined/,
      );
      await assert.rejects(
        store.replaceMessages("s", messages as Loose),
        /replace messages: a message must be an object \({ role, content, … }\): current value is undefined/,
      );
      const row = await store.getSession("s");
      assert.equal(row?.message_count, 1);
      assert.equal((await store.getMessages("s")).length, 1);
    });

    test("a number in a text field is stored as Python binds it, the same on every runtime", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessage("s", { role: "tool", content: "x", toolName: 5 as Loose });
      await store.appendMessage("s", { role: "tool", content: "y", toolName: 1.5 as Loose });
      await store.appendMessage("s", { role: "tool", content: "v", toolName: 1e21 as Loose });
      await assert.rejects(
        store.appendMessage("s", { role: "tool", content: "z", toolName: NaN as Loose }),
        /toolName must be a string: current value is NaN/,
      );
      assert.deepEqual((await store.getMessages("s")).map((m) => m.tool_name), [
        "5",
        "1.5",
        "1000000000000000000000",
      ]);
      // Bun wrapped a bigint past 64 bits (2^64 + 5 stored as 5).
      await assert.rejects(
        store.appendMessage("s", {
          role: "user",
          content: "w",
          tokenCount: (2n ** 64n + 5n) as Loose,
        }),
        /tokenCount must be a number: current value is 18446744073709551621/,
      );
    });

    test("deleteSession() with options of null deletes and answers, and a bad prefix limit is refused", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      assert.equal(await store.deleteSession("s", null as Loose), true);
      assert.equal(await store.getSession("s"), undefined);
      for (const limit of [-1, 1.5, NaN, "1"]) {
        await assert.rejects(
          store.sessionIdsWithPrefix("s", { limit: limit as Loose }),
          /limit must be a non-negative integer/,
        );
      }
    });

    test("a session's options and token counts misspelt are refused by name, not dropped", async () => {
      const store = await empty();
      await assert.rejects(
        store.createSession("s1", "cli", { system_prompt: "be brief" } as Loose),
        {
          name: "TypeError",
          message:
            'Cannot create session: no option "system_prompt" (did you mean "systemPrompt"?); ' +
            "the options are model, modelConfig, systemPrompt, userId and parentSessionId",
        },
      );
      assert.equal(await store.getSession("s1"), undefined, "no session half made");
      await assert.rejects(store.ensureSession("s1", "cli", { modle: "m" } as Loose), {
        message:
          'Cannot ensure session: no option "modle" (did you mean "model"?); the options are model',
      });
      assert.equal(await store.getSession("s1"), undefined);
      await store.createSession("s1", "cli");
      await store.updateTokenCounts("s1", { inputTokens: 10 });
      await assert.rejects(store.updateTokenCounts("s1", { input_tokens: 5 } as Loose), {
        name: "TypeError",
        message:
          /^Cannot update token counts: no option "input_tokens" \(did you mean "inputTokens"\?\); the options are inputTokens, outputTokens, /,
      });
      // A misspelt `absolute` would add the cumulative total to what is there.
      await assert.rejects(
        store.updateTokenCounts("s1", { inputTokens: 10, absolut: true } as Loose),
        { message: /no option "absolut" \(did you mean "absolute"\?\)/ },
      );
      assert.equal((await store.getSession("s1"))?.input_tokens, 10);
      await store.updateTokenCounts("s1", { inputTokens: 10, absolute: true });
      assert.equal((await store.getSession("s1"))?.input_tokens, 10);
    });

    test("a search with a misspelt filter is refused by name, not widened to every session", async () => {
      const store = await empty();
      await store.createSession("mine", "cli");
      await store.createSession("theirs", "telegram");
      await store.appendMessage("mine", { role: "user", content: "docker here" });
      await store.appendMessage("theirs", { role: "user", content: "docker there" });
      await assert.rejects(store.searchMessages("docker", { session_id: "mine" } as Loose), {
        name: "TypeError",
        message:
          /^Cannot search messages: no option "session_id" \(did you mean "sessionId"\?\); the options are sourceFilter, excludeSources, roleFilter, sessionId, /,
      });
      await assert.rejects(store.searchMessages("docker", { source: ["cli"] } as Loose), {
        message: /no option "source"; the options are/,
      });
      await assert.rejects(
        store.countSearchHits("docker", { sourcefilter: ["cli"] } as Loose, 10),
        {
          message: /no option "sourcefilter" \(did you mean "sourceFilter"\?\)/,
        },
      );
      await assert.rejects(store.searchMessages("docker", "mine" as Loose), {
        message: "Cannot search messages: options must be an object: current value is mine",
      });
      const hits = await store.searchMessages("docker", { sessionId: "mine", limit: 5 });
      assert.deepEqual(hits.map((hit) => hit.session_id), ["mine"]);
    });

    test("every other call with options refuses one it does not take, naming it", async () => {
      const store = await empty();
      await store.createSession("s1", "cli");
      await store.appendMessage("s1", { role: "user", content: "docker" });
      const refused: [string, () => Promise<unknown>, RegExp][] = [
        [
          "getMessages",
          () => store.getMessages("s1", { lst: 3 } as Loose),
          /^Cannot read messages: no option "lst" \(did you mean "last"\?\)/,
        ],
        [
          "countMessages",
          () => store.countMessages("s1", { include_inactive: true } as Loose),
          /^Cannot count messages: no option "include_inactive" \(did you mean "includeInactive"\?\)/,
        ],
        [
          "getMessagesAsConversation",
          () => store.getMessagesAsConversation("s1", { include_ancestors: true } as Loose),
          /^Cannot read conversation: no option "include_ancestors" \(did you mean "includeAncestors"\?\); the options are includeAncestors$/,
        ],
        [
          "listSessionsRich",
          () => store.listSessionsRich({ sources: "cli" } as Loose),
          /^Cannot list sessions: no option "sources" \(did you mean "source"\?\)/,
        ],
        [
          "listedSessionCount",
          () => store.listedSessionCount({ exclude_sources: ["cli"] } as Loose),
          /^Cannot count sessions: no option "exclude_sources" \(did you mean "excludeSources"\?\)/,
        ],
        [
          "searchSessions",
          () => store.searchSessions({ limt: 1 } as Loose),
          /^Cannot list sessions: no option "limt" \(did you mean "limit"\?\)/,
        ],
        [
          "sessionCount",
          () => store.sessionCount({ src: "cli" } as Loose),
          /^Cannot count sessions: no option "src"/,
        ],
        [
          "sessionIdsWithPrefix",
          () => store.sessionIdsWithPrefix("s", { max: 3 } as Loose),
          /^Cannot look up ids: no option "max"; the options are limit$/,
        ],
        [
          "exportAll",
          () => store.exportAll({ source_filter: "cli" } as Loose),
          /^Cannot export sessions: no option "source_filter"/,
        ],
        [
          "iterateExport",
          () => store.iterateExport({ sorce: "cli" } as Loose).next(),
          /^Cannot export sessions: no option "sorce" \(did you mean "source"\?\)/,
        ],
        [
          "usageReport",
          () => store.usageReport({ group_by: "week" } as Loose),
          /^Cannot report usage: no option "group_by"/,
        ],
        [
          "inspect",
          () => store.inspect({ quick: true } as Loose),
          /^Cannot inspect database: no option "quick"/,
        ],
        [
          "importSession",
          () => store.importSession({}, { overwrite: true } as Loose),
          /^Cannot import session: no option "overwrite"; the options are replace and modelUsage$/,
        ],
      ];
      for (const [name, call, message] of refused) {
        await assert.rejects(call(), { name: "TypeError", message }, name);
      }
      // An option of null or undefined counts as not given, whatever its name; so does an
      // empty origin (the PostgreSQL store's filter: all origins).
      assert.equal((await store.listSessionsRich({ origin: "", other: null } as Loose)).length, 1);
      assert.equal(await store.sessionCount({ origin: null, unused: undefined } as Loose), 1);
      assert.equal((await store.searchMessages("docker", { origin: "" } as Loose)).length, 1);
    });

    test("the deleting calls refuse an option they do not take, naming it, and delete nothing", async () => {
      const day = 86400;
      let now = 1 * day;
      const store = await empty({ clock: () => now });
      for (const id of ["ended", "ghost"]) {
        await store.createSession(id, id === "ghost" ? "tui" : "cli");
        await store.endSession(id, "close");
      }
      now = 200 * day; // both are older than the 90 days a prune without olderThanDays would take
      const options = "the options are olderThanDays, source and sessionsDir";
      await assert.rejects(store.pruneSessions({ older_than_days: 365 } as Loose), {
        name: "TypeError",
        message:
          `Cannot prune sessions: no option "older_than_days" (did you mean "olderThanDays"?); ${options}`,
      });
      await assert.rejects(store.pruneSessions({ olderThanDay: 365 } as Loose), {
        message: /no option "olderThanDay" \(did you mean "olderThanDays"\?\)/,
      });
      await assert.rejects(store.pruneSessions({ sources: "tui" } as Loose), {
        message: /no option "sources" \(did you mean "source"\?\)/,
      });
      await assert.rejects(store.pruneSessions(365 as Loose), {
        name: "TypeError",
        message: "Cannot prune sessions: options must be an object: current value is 365",
      });
      await assert.rejects(store.pruneCandidates({ older_than_days: 365 } as Loose), {
        message: /^Cannot list prune candidates: no option "older_than_days"/,
      });
      await assert.rejects(store.pruneEmptyGhostSessions({ sessions_dir: "/tmp" } as Loose), {
        message:
          'Cannot prune ghost sessions: no option "sessions_dir" (did you mean "sessionsDir"?); the options are sessionsDir',
      });
      await assert.rejects(store.deleteSession("ended", { dir: "/tmp" } as Loose), {
        message: /^Cannot delete session: no option "dir"; the options are sessionsDir$/,
      });
      const auto = await store.maybeAutoPruneAndVacuum({ retention_days: 365 } as Loose);
      assert.equal(auto.pruned, 0);
      assert.ok(auto.cause instanceof TypeError);
      assert.match(
        auto.error ?? "",
        /^Cannot auto-prune sessions: no option "retention_days" \(did you mean "retentionDays"\?\)/,
      );
      assert.equal(await store.getMeta("last_auto_prune"), undefined, "the marker is not written");
      assert.ok(await store.getSession("ended"), "nothing was deleted");
      assert.ok(await store.getSession("ghost"), "nothing was deleted");
      // The options as documented still work, null counting as none.
      assert.equal(
        await store.pruneSessions({ olderThanDays: 90, source: "cli", sessionsDir: null }),
        1,
      );
      assert.equal(await store.pruneEmptyGhostSessions(null as Loose), 1);
    });
  });

  describe(`${name}: sessions`, () => {
    test("createSession() keeps the first write; a missing parent is a constraint StorageError naming it", async () => {
      const store = await empty({ clock: () => 1000.5 });
      assert.equal(
        await store.createSession("s1", "cli", { model: "m", modelConfig: { effort: "high" } }),
        "s1",
      );
      await store.createSession("s1", "telegram");
      const row = await store.getSession("s1");
      assert.equal(row?.source, "cli");
      assert.equal(row?.model_config, '{"effort": "high"}');
      assert.equal(row?.started_at, 1000.5);
      assert.equal(row?.message_count, 0);
      await assert.rejects(
        store.createSession("s2", "cli", { parentSessionId: "nope" }),
        (error) => {
          assert.ok(error instanceof StorageError);
          assert.equal(error.kind, "constraint");
          assert.equal(
            error.message,
            'FOREIGN KEY constraint failed: cannot create session "s2": no parent session "nope"',
          );
          return true;
        },
      );
      assert.equal(await store.getSession("s2"), undefined);
      await store.createSession("s3", "cli", { parentSessionId: "s1" });
      assert.equal((await store.getSession("s3"))?.parent_session_id, "s1");
    });

    test("ensureSession() creates an unknown-source row only when missing", async () => {
      const store = await empty();
      await store.ensureSession("e1");
      await store.ensureSession("e1", "cli", { model: "x" });
      const row = await store.getSession("e1");
      assert.equal(row?.source, "unknown");
      assert.equal(row?.model, null);
    });

    test("a listing's preview and a hit's context take messages that share a timestamp in id order", async () => {
      const store = await empty({ clock: () => 100 });
      await store.createSession("tie", "cli");
      for (
        const [role, content] of [
          ["user", "first of the tie"],
          ["user", "second of the tie"],
          ["assistant", "the reply with a needle"],
          ["user", "after it"],
        ]
      ) await store.appendMessage("tie", { role, content });
      const [row] = await store.listSessionsRich({ limit: 1 });
      assert.equal(row.preview, "first of the tie");
      const [hit] = await store.searchMessages("needle");
      assert.deepEqual(hit.context.map((c) => c.content), [
        "second of the tie",
        "the reply with a needle",
        "after it",
      ]);
    });

    test("usageReport() groups days, weeks and months of a time zone, across its change of offset", async () => {
      let now = 0;
      const store = await empty({ clock: () => now });
      // New York: summer time from 2026-03-08 07:00 UTC (EST −5 → EDT −4) to 2026-11-01 06:00 UTC.
      const starts: Array<[id: string, utc: number]> = [
        ["sunday-night-est", Date.UTC(2026, 2, 2, 4, 30)], // Sun 1 Mar 23:30 EST; Mon 2 Mar UTC
        ["before-change", Date.UTC(2026, 2, 8, 6, 59, 59)], // Sun 8 Mar 01:59:59 EST
        ["after-change", Date.UTC(2026, 2, 8, 7)], // Sun 8 Mar 03:00 EDT
        ["late-edt", Date.UTC(2026, 2, 9, 3, 30)], // Sun 8 Mar 23:30 EDT; Mon 9 Mar UTC
        ["month-end", Date.UTC(2026, 3, 1, 3)], // Tue 31 Mar 23:00 EDT; 1 Apr UTC
        ["back-to-est", Date.UTC(2026, 10, 1, 6)], // Sun 1 Nov 01:00 EST
      ];
      for (const [id, utc] of starts) {
        now = utc / 1000;
        await store.createSession(id, "cli");
        await store.updateTokenCounts(id, { inputTokens: 1 });
      }
      const keys = async (by: "day" | "week" | "month", timeZone?: string) =>
        (await store.usageReport({ by, timeZone })).map((row) => `${row.key} ${row.sessions}`);
      assert.deepEqual(await keys("day", "America/New_York"), [
        "2026-03-01 1",
        "2026-03-08 3",
        "2026-03-31 1",
        "2026-11-01 1",
      ]);
      assert.deepEqual(await keys("day"), [
        "2026-03-02 1",
        "2026-03-08 2",
        "2026-03-09 1",
        "2026-04-01 1",
        "2026-11-01 1",
      ]);
      assert.deepEqual(await keys("day", "UTC"), await keys("day"));
      assert.deepEqual(await keys("week", "America/New_York"), [
        "2026-02-23 1",
        "2026-03-02 3",
        "2026-03-30 1",
        "2026-10-26 1",
      ]);
      assert.deepEqual(await keys("month", "America/New_York"), ["2026-03 5", "2026-11 1"]);
      assert.deepEqual(await keys("month"), ["2026-03 4", "2026-04 1", "2026-11 1"]);
      // A quarter-hour zone: 2026-03-01 18:20 UTC is 00:05 on the 2nd in Kathmandu (+05:45).
      now = Date.UTC(2026, 2, 1, 18, 20) / 1000;
      await store.createSession("kathmandu-midnight", "cli");
      assert.deepEqual((await keys("day", "Asia/Kathmandu")).slice(0, 2), [
        "2026-03-02 2",
        "2026-03-08 2",
      ]);
      assert.deepEqual((await keys("day")).slice(0, 2), ["2026-03-01 1", "2026-03-02 1"]);
      // The period starts at the zone's midnight when the caller reads a date in it; the
      // offsets looked for are those between the first and the last session it keeps.
      const since = Date.UTC(2026, 2, 8, 5) / 1000; // 2026-03-08 00:00 EST
      const later = await store.usageReport({ by: "day", since, timeZone: "America/New_York" });
      assert.deepEqual(later.map((row) => row.key), ["2026-03-08", "2026-03-31", "2026-11-01"]);
      await assert.rejects(
        () => store.usageReport({ timeZone: "Mars/Olympus_Mons" }),
        /timeZone must be a time zone .*"Mars\/Olympus_Mons"/,
      );
      assert.deepEqual(
        await store.usageReport({ by: "day", timeZone: "Asia/Tokyo", since: 2e9 }),
        [],
      );
    });

    test("endSession() keeps the first reason; reopenSession() clears it; updateSystemPrompt() sets it", async () => {
      let now = 10;
      const store = await empty({ clock: () => now });
      await store.createSession("s", "cli");
      now = 20;
      await store.endSession("s", "compression");
      now = 30;
      await store.endSession("s", "cli_close");
      let row = await store.getSession("s");
      assert.equal(row?.end_reason, "compression");
      assert.equal(row?.ended_at, 20);
      await store.reopenSession("s");
      row = await store.getSession("s");
      assert.equal(row?.ended_at, null);
      assert.equal(row?.end_reason, null);
      await store.updateSystemPrompt("s", "You are Hermes.");
      assert.equal((await store.getSession("s"))?.system_prompt, "You are Hermes.");
      await store.endSession("missing", "x");
      assert.equal(await store.getSession("missing"), undefined);
    });

    test("updateTokenCounts() adds, sets with absolute, and creates a missing session", async () => {
      const store = await empty();
      await store.updateTokenCounts("t", {
        inputTokens: 10,
        outputTokens: 5,
        model: "gpt",
        billingProvider: "openrouter",
        estimatedCostUsd: 0.25,
        apiCallCount: 1,
        costStatus: "estimated",
      });
      await store.updateTokenCounts("t", {
        inputTokens: 1,
        model: "other",
        billingProvider: "second",
        actualCostUsd: 0.5,
        apiCallCount: 1,
      });
      let row = await store.getSession("t");
      assert.equal(row?.source, "unknown");
      assert.equal(row?.input_tokens, 11);
      assert.equal(row?.output_tokens, 5);
      assert.equal(row?.model, "gpt");
      assert.equal(row?.billing_provider, "openrouter");
      assert.equal(row?.estimated_cost_usd, 0.25);
      assert.equal(row?.actual_cost_usd, 0.5);
      assert.equal(row?.api_call_count, 2);
      assert.equal(row?.cost_status, "estimated");
      await store.updateTokenCounts("t", { inputTokens: 100, absolute: true });
      row = await store.getSession("t");
      assert.equal(row?.input_tokens, 100);
      assert.equal(row?.output_tokens, 0);
      assert.equal(row?.api_call_count, 0);
      assert.equal(row?.estimated_cost_usd, 0);
      assert.equal(row?.actual_cost_usd, 0.5);
    });
  });

  describe(`${name}: messages`, () => {
    test("appendMessage() stores every field, NUL bytes and multimodal parts, and counts tool calls", async () => {
      let now = 100;
      const store = await empty({ clock: () => now++ });
      await store.createSession("s", "cli");
      const first = await store.appendMessage("s", {
        role: "user",
        content: "hello\u0000world \uE000 x",
      });
      const second = await store.appendMessage("s", {
        role: "assistant",
        content: [{ type: "text", text: "look" }, {
          type: "image_url",
          image_url: { url: "data:x" },
        }],
        toolCalls: [{ id: "c1", function: { name: "terminal", arguments: "{}" } }, { id: "c2" }],
        finishReason: "tool_calls",
        reasoning: "because",
        reasoningContent: "",
        reasoningDetails: [{ type: "summary" }],
        codexReasoningItems: [{ id: "r" }],
        codexMessageItems: {},
        tokenCount: 42,
      });
      await store.appendMessage("s", {
        role: "tool",
        content: "ok",
        toolCallId: "c1",
        toolName: "terminal",
      });
      assert.ok(second > first);
      const messages = await store.getMessages("s");
      assert.equal(messages.length, 3);
      assert.equal(messages[0].content, "hello\u0000world \uE000 x");
      assert.deepEqual(messages[1].content, [{ type: "text", text: "look" }, {
        type: "image_url",
        image_url: { url: "data:x" },
      }]);
      assert.deepEqual(messages[1].tool_calls, [{
        id: "c1",
        function: { name: "terminal", arguments: "{}" },
      }, { id: "c2" }]);
      assert.equal(messages[1].reasoning_content, "");
      assert.equal(messages[1].reasoning_details, '[{"type": "summary"}]');
      assert.equal(messages[1].codex_message_items, null);
      assert.equal(messages[1].token_count, 42);
      assert.equal(messages[2].tool_name, "terminal");
      assert.equal(messages[0].timestamp, 101);
      const row = await store.getSession("s");
      assert.equal(row?.message_count, 3);
      assert.equal(row?.tool_call_count, 2);
      assert.equal(await store.messageCount("s"), 3);
      assert.equal(await store.messageCount(), 3);
    });

    test("appending to or replacing the messages of a missing session is a constraint StorageError naming it, and writes nothing", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessage("s", { role: "user", content: "kept" });
      const refused = (doing: string) => (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.kind, "constraint");
        assert.equal(
          error.message,
          `FOREIGN KEY constraint failed: cannot ${doing}: no session "none"`,
        );
        return true;
      };
      const one = { role: "user", content: "x" };
      await assert.rejects(store.appendMessage("none", one), refused("append message"));
      await assert.rejects(store.appendMessages("none", [one]), refused("append messages"));
      // More rows than one statement takes on PostgreSQL: appended in one transaction instead.
      const many = Array.from({ length: 1200 }, () => one);
      await assert.rejects(store.appendMessages("none", many), refused("append messages"));
      await assert.rejects(store.replaceMessages("none", [one]), refused("replace messages"));
      assert.equal(await store.messageCount(), 1);
      assert.deepEqual((await store.getMessages("s")).map((m) => m.content), ["kept"]);
    });

    test("appendMessage() rejects a bad field with a TypeError naming the value, writing nothing", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await assert.rejects(store.appendMessage("s", { role: 5 as unknown as string }), {
        name: "TypeError",
        message: "Cannot append message: role must be a string: current value is 5",
      });
      await assert.rejects(
        store.appendMessages("s", [{ role: "user" }, {
          role: "user",
          toolName: {} as unknown as string,
        }]),
        TypeError,
      );
      assert.equal(await store.messageCount("s"), 0);
      assert.equal((await store.getSession("s"))?.message_count, 0);
    });

    test("a field given by the other spelling (tool_calls to appendMessage, toolCalls to replaceMessages) is a TypeError, not dropped", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const calls = [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" } }];
      // An OpenAI-shaped message given to appendMessage: its tool calls were dropped without a word.
      await assert.rejects(
        store.appendMessage("s", { role: "assistant", tool_calls: calls } as never),
        {
          name: "TypeError",
          message:
            `Cannot append message: tool_calls is not read here, give it as toolCalls: current value is ${
              JSON.stringify(calls)
            }`,
        },
      );
      await assert.rejects(
        store.appendMessages("s", [{ role: "tool", content: "ok", tool_call_id: "c1" } as never]),
        /Cannot append messages: tool_call_id is not read here, give it as toolCallId/,
      );
      assert.equal(await store.messageCount("s"), 0);
      await store.appendMessage("s", { role: "user", content: "kept" });
      await assert.rejects(
        store.replaceMessages("s", [{ role: "assistant", toolCalls: calls } as never]),
        /Cannot replace messages: toolCalls is not read here, give it as tool_calls/,
      );
      assert.deepEqual((await store.getMessages("s")).map((m) => m.content), ["kept"]);
      // Both spellings null, or the right one given beside a null twin: nothing to refuse.
      await store.appendMessage(
        "s",
        { role: "assistant", toolCalls: calls, tool_calls: null } as never,
      );
      await store.replaceMessages("s", [
        { role: "assistant", tool_calls: calls, toolCalls: null } as never,
      ]);
      assert.deepEqual((await store.getMessages("s")).map((m) => m.tool_calls), [calls]);
    });

    test("appendMessages() checks every message before the session: a bad one is a TypeError, writing nothing", async () => {
      const store = await empty();
      const bad = [{ role: "user", content: "x" }, { role: 5 as never, content: "x" }];
      await assert.rejects(store.appendMessages("missing", bad), {
        name: "TypeError",
        message: "Cannot append messages: role must be a string: current value is 5",
      });
      await store.createSession("s", "cli");
      await assert.rejects(store.appendMessages("s", bad), TypeError);
      assert.equal(await store.messageCount(), 0);
      assert.equal((await store.getSession("s"))?.message_count, 0);
    });

    test("appendMessages() returns ascending ids, spaces timestamps by a microsecond, and counts once", async () => {
      const store = await empty({ clock: () => 500 });
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "a" },
        { role: "assistant", content: "b", toolCalls: [{}, {}, {}] },
        { role: "tool", content: "c" },
      ]);
      assert.equal(ids.length, 3);
      assert.deepEqual([...ids].sort((a, b) => a - b), ids);
      const messages = await store.getMessages("s");
      assert.deepEqual(messages.map((m) => m.id), ids);
      assert.deepEqual(messages.map((m) => m.timestamp), [500, 500 + 1e-6, 500 + 2e-6]);
      const row = await store.getSession("s");
      assert.equal(row?.message_count, 3);
      assert.equal(row?.tool_call_count, 3);
      assert.deepEqual(await store.appendMessages("s", []), []);
    });

    test("getMessages({ afterId }) returns only what was written after that message; a bad afterId is a TypeError", async () => {
      // A clock that moves: in one millisecond, a later append could sort before a batch's last.
      let now = 1;
      const store = await empty({ clock: () => now++ });
      await store.createSession("s", "cli");
      await store.createSession("other", "cli");
      const [first, second] = await store.appendMessages("s", [
        { role: "user", content: "one" },
        { role: "assistant", content: "two" },
      ]);
      await store.appendMessage("other", { role: "user", content: "elsewhere" });
      const third = await store.appendMessage("s", { role: "user", content: "three" });
      const after = async (afterId: number) =>
        (await store.getMessages("s", { afterId })).map((message) => message.id);
      assert.deepEqual(await after(first), [second, third]);
      assert.deepEqual(await after(second), [third]);
      assert.deepEqual(await after(third), []);
      assert.deepEqual(await after(0), [first, second, third]);
      // Any finite number, compared as a number: a fraction, a negative, one past 64-bit ids.
      assert.deepEqual(await after(first + 0.5), [second, third]);
      assert.deepEqual(await after(first - 0.5), [first, second, third]);
      assert.deepEqual(await after(-0.5), [first, second, third]);
      assert.deepEqual(await after(-1e20), [first, second, third]);
      assert.deepEqual(await after(1e20), []);
      for (const bad of [Number.NaN, "3", Infinity]) {
        await assert.rejects(
          async () => await store.getMessages("s", { afterId: bad as number }),
          (error: Error) =>
            error instanceof TypeError && /afterId must be a finite number/.test(error.message),
          String(bad),
        );
      }
    });

    test("getMessages() pages by place (beforeId, fromId) and count (limit, last) in the order (timestamp, id); countMessages() counts the same", async () => {
      const store = await empty();
      // Stored out of id order: the renumbered ids follow the original ones, the order the
      // timestamps (two equal: then the id).
      await store.importSession({
        id: "s",
        source: "cli",
        started_at: 1,
        messages: [
          { id: 1, role: "user", content: "a", timestamp: 10 },
          { id: 2, role: "assistant", content: "c", timestamp: 30 },
          { id: 3, role: "user", content: "b", timestamp: 20 },
          { id: 4, role: "assistant", content: "d", timestamp: 30 },
          { id: 5, role: "user", content: "e", timestamp: 50 },
          { id: 6, role: "assistant", content: "f", timestamp: 60 },
        ],
      });
      await store.createSession("other", "cli");
      const elsewhere = await store.appendMessage("other", { role: "user", content: "x" });
      const all = await store.getMessages("s");
      assert.deepEqual(all.map((m) => m.content), ["a", "b", "c", "d", "e", "f"]);
      const idOf = (content: string) => all.find((m) => m.content === content)!.id;
      const page = async (options: MessagesOptions) => {
        const rows = await store.getMessages("s", options);
        assert.equal(await store.countMessages("s", options), rows.length, JSON.stringify(options));
        return rows.map((m) => m.content).join("");
      };
      assert.equal(await page({}), "abcdef");
      assert.equal(await page({ beforeId: idOf("c") }), "ab");
      assert.equal(await page({ beforeId: idOf("d") }), "abc", "the same timestamp: by id");
      assert.equal(await page({ fromId: idOf("c") }), "cdef");
      assert.equal(await page({ fromId: idOf("b") }), "bcdef", "a place, not an id comparison");
      assert.equal(await page({ fromId: idOf("b"), beforeId: idOf("e") }), "bcd");
      assert.equal(await page({ last: 2 }), "ef");
      assert.equal(await page({ limit: 2 }), "ab");
      assert.equal(await page({ beforeId: idOf("e"), last: 3 }), "bcd");
      assert.equal(await page({ beforeId: idOf("e"), last: 30 }), "abcd");
      assert.equal(await page({ fromId: idOf("b"), limit: 2 }), "bc");
      assert.equal(await page({ last: 0 }), "");
      assert.equal(await page({ limit: 0 }), "");
      assert.equal(await page({ afterId: idOf("b") }), "def", "afterId compares ids: c's is less");
      assert.equal(await page({ afterId: idOf("b"), last: 2 }), "ef");
      // A place the session has no message at selects nothing: another session's, a fraction,
      // an id past any, a negative one.
      for (const missing of [elsewhere, idOf("c") + 0.5, 1e20, -3, 2 ** 63]) {
        assert.equal(await page({ beforeId: missing }), "", `beforeId ${missing}`);
        assert.equal(await page({ fromId: missing, last: 2 }), "", `fromId ${missing}`);
      }
      assert.equal(await page({ afterId: 2 ** 63 }), "");
      assert.equal(await page({ afterId: -(2 ** 64) }), "abcdef");
      assert.equal(await store.countMessages("nope"), 0);
      assert.deepEqual(await store.getMessages("nope", { last: 3 }), []);
      // A count of -0 is 0, and so is what it counts (it came back as -0).
      assert.ok(Object.is(await store.countMessages("s", { limit: -0 }), 0));
      assert.equal(await page({ last: -0 }), "");
      const bad: [MessagesOptions, RegExp][] = [
        [{ beforeId: Number.NaN }, /beforeId must be a finite number: current value is NaN$/],
        [{ fromId: "3" as never }, /fromId must be a finite number: current value is "3"$/],
        [{ limit: -1 }, /limit must be a whole number from 0: current value is -1$/],
        [{ last: 1.5 }, /last must be a whole number from 0: current value is 1\.5$/],
        [{ last: Infinity }, /last must be a whole number from 0: current value is Infinity$/],
        [
          { limit: 2, last: 3 },
          /limit and last cannot both be given .*: current values are 2 and 3$/,
        ],
      ];
      for (const [options, message] of bad) {
        for (
          const [action, read] of [
            ["read", () => store.getMessages("s", options)],
            ["count", () => store.countMessages("s", options)],
          ] as const
        ) {
          await assert.rejects(
            async () => await read(),
            (error: Error) =>
              error instanceof TypeError &&
              error.message.startsWith(`Cannot ${action} messages: `) &&
              message.test(error.message),
            JSON.stringify(options),
          );
        }
      }
    });

    test("replaceMessages() rewrites the transcript and the counters; clearMessages() empties both", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessages("s", [{ role: "user", content: "old" }, {
        role: "assistant",
        content: "old too",
      }]);
      await store.replaceMessages("s", [
        { role: "user", content: "new" },
        { role: "assistant", content: "answer", tool_calls: [{ id: "c" }], reasoning: "r" },
        { role: "tool", content: "out", tool_call_id: "c", reasoning: "dropped" },
      ]);
      const convo = await store.getMessagesAsConversation("s");
      assert.deepEqual(convo, [
        { role: "user", content: "new" },
        { role: "assistant", content: "answer", tool_calls: [{ id: "c" }], reasoning: "r" },
        { role: "tool", content: "out", tool_call_id: "c" },
      ]);
      let row = await store.getSession("s");
      assert.equal(row?.message_count, 3);
      assert.equal(row?.tool_call_count, 1);
      assert.equal((await store.searchMessages("old")).length, 0);
      assert.equal((await store.searchMessages("answer")).length, 1);
      await store.clearMessages("s");
      row = await store.getSession("s");
      assert.equal(row?.message_count, 0);
      assert.equal(row?.tool_call_count, 0);
      assert.deepEqual(await store.getMessages("s"), []);
    });

    test("getMessagesAsConversation() strips leaked memory context and joins ancestors without replays", async () => {
      let now = 1;
      const store = await empty({ clock: () => now++ });
      await store.createSession("root", "cli");
      await store.appendMessage("root", { role: "user", content: "plan it" });
      await store.appendMessage("root", {
        role: "assistant",
        content: "<memory-context>secret</memory-context> Done.",
      });
      await store.endSession("root", "compression");
      await store.createSession("tip", "cli", { parentSessionId: "root" });
      await store.appendMessage("tip", { role: "user", content: "plan it" });
      await store.appendMessage("tip", { role: "user", content: "plan it" });
      const own = await store.getMessagesAsConversation("tip");
      assert.equal(own.length, 2);
      const joined = await store.getMessagesAsConversation("tip", { includeAncestors: true });
      assert.deepEqual(joined.map((m) => m.content), ["plan it", "Done.", "plan it"]);
    });
  });

  describe(`${name}: titles, ids, lineage`, () => {
    test("setSessionTitle() sanitizes, refuses a taken title with Python's message, and clears", async () => {
      const store = await empty();
      await store.createSession("a", "cli");
      await store.createSession("b", "cli");
      assert.equal(await store.setSessionTitle("a", "  Weekly \t sync\u200b "), true);
      assert.equal(await store.getSessionTitle("a"), "Weekly sync");
      await assert.rejects(store.setSessionTitle("b", "Weekly sync"), (error) => {
        assert.ok(error instanceof TitleError);
        assert.equal(error.message, "Title 'Weekly sync' is already in use by session a");
        return true;
      });
      await assert.rejects(store.setSessionTitle("b", "x".repeat(101)), {
        message: "Title too long (101 chars, max 100)",
      });
      assert.equal(await store.setSessionTitle("missing", "t"), false);
      assert.equal(await store.setSessionTitle("a", "   "), true);
      assert.equal(await store.getSessionTitle("a"), null);
      assert.equal(await store.getSessionTitle("missing"), undefined);
      assert.equal(await store.setSessionTitle("b", "Weekly sync"), true);
      assert.equal((await store.getSessionByTitle("Weekly sync"))?.id, "b");
    });

    test("two writers racing for one title: exactly one wins, the other gets TitleError", async () => {
      const store = await empty();
      await store.createSession("a", "cli");
      await store.createSession("b", "cli");
      const results = await Promise.allSettled([
        store.setSessionTitle("a", "same"),
        store.setSessionTitle("b", "same"),
      ]);
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      const failed = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      assert.ok(failed.reason instanceof TitleError);
    });

    test("resolveSessionId() treats %, _ and \\ literally and answers only a unique prefix", async () => {
      const store = await empty();
      for (const id of ["abc_1", "abcX1", "ab%c", "a\\b"]) await store.createSession(id, "cli");
      assert.equal(await store.resolveSessionId("abc_"), "abc_1");
      assert.equal(await store.resolveSessionId("ab%"), "ab%c");
      assert.equal(await store.resolveSessionId("a\\"), "a\\b");
      assert.equal(await store.resolveSessionId("abc"), undefined);
      assert.equal(await store.resolveSessionId("zzz"), undefined);
      assert.equal(await store.resolveSessionId("abcX1"), "abcX1");
    });

    test("sessionIdsWithPrefix() counts every match and names the newest, % and _ literal", async () => {
      const store = await empty({
        clock: (() => {
          let t = 1000;
          return () => t++;
        })(),
      });
      for (const id of ["abc_1", "abcX1", "ab%c", "zz"]) await store.createSession(id, "cli");
      assert.deepEqual(await store.sessionIdsWithPrefix("ab"), {
        count: 3,
        ids: ["ab%c", "abcX1", "abc_1"],
      });
      assert.deepEqual(await store.sessionIdsWithPrefix("abc_", { limit: 1 }), {
        count: 1,
        ids: ["abc_1"],
      });
      assert.deepEqual(await store.sessionIdsWithPrefix("q"), { count: 0, ids: [] });
    });

    test("getAncestors() and getDescendants() stop on a cycle", async () => {
      const store = await empty();
      await store.createSession("a", "cli");
      await store.createSession("b", "cli", { parentSessionId: "a" });
      await store.createSession("c", "cli", { parentSessionId: "b" });
      await store.importSession({
        id: "a",
        source: "cli",
        started_at: 1,
        parent_session_id: "c",
        messages: [],
      }, { replace: true });
      assert.deepEqual((await store.getAncestors("c")).map((s) => s.id), ["c", "b", "a"]);
      assert.deepEqual((await store.getDescendants("a")).map((s) => s.id), ["a", "b", "c"]);
      assert.deepEqual(await store.getAncestors("none"), []);
      assert.deepEqual(await store.getDescendants("none"), []);
    });
  });

  describe(`${name}: delete, prune, meta`, () => {
    test("deleteSession() orphans children and removes messages; an unknown id is false", async () => {
      const store = await empty();
      await store.createSession("p", "cli");
      await store.createSession("c", "cli", { parentSessionId: "p" });
      await store.appendMessage("p", { role: "user", content: "bye" });
      assert.equal(await store.deleteSession("p"), true);
      assert.equal(await store.getSession("p"), undefined);
      assert.equal((await store.getSession("c"))?.parent_session_id, null);
      assert.equal(await store.messageCount(), 0);
      assert.equal((await store.searchMessages("bye")).length, 0);
      assert.equal(await store.deleteSession("p"), false);
    });

    test("deleteSession() with sessionsDir removes that session's transcript files only", async () => {
      const store = await empty();
      await store.createSession("gone", "cli");
      await store.createSession("kept", "cli");
      const dir = tempDir();
      const files = [
        "gone.json",
        "gone.jsonl",
        "request_dump_gone_1.json",
        "kept.json",
        "gone.txt",
      ];
      for (const name of files) writeFileSync(join(dir, name), "{}");
      assert.equal(await store.deleteSession("gone", { sessionsDir: dir }), true);
      assert.deepEqual(readdirSync(dir).sort(), ["gone.txt", "kept.json"]);
    });

    test("pruneSessions() removes only ended sessions started before the cutoff; ghosts go too", async () => {
      const day = 86400;
      let now = 1 * day;
      const store = await empty({ clock: () => now });
      await store.createSession("old-ended", "cli");
      await store.endSession("old-ended", "cli_close");
      await store.createSession("old-live", "cli");
      await store.createSession("ghost", "tui");
      await store.endSession("ghost", "tui_close");
      now = 100 * day;
      await store.createSession("new-ended", "cli");
      await store.endSession("new-ended", "x");
      const candidates = await store.pruneCandidates({ olderThanDays: 90 });
      assert.deepEqual(candidates.map((c) => c.id).sort(), ["ghost", "old-ended"]);
      const ghosts = await store.pruneCandidates({ ghosts: true });
      assert.deepEqual(ghosts.map((c) => [c.id, c.source, c.message_count]), [["ghost", "tui", 0]]);
      await assert.rejects(store.pruneCandidates({ ghosts: true, source: "tui" }), {
        name: "RangeError",
        message: /ghosts cannot be combined with olderThanDays or source/,
      });
      assert.equal(await store.pruneEmptyGhostSessions(), 1);
      assert.equal(await store.pruneSessions({ olderThanDays: 90 }), 1);
      assert.deepEqual((await store.searchSessions({ limit: 10 })).map((s) => s.id).sort(), [
        "new-ended",
        "old-live",
      ]);
      await assert.rejects(store.pruneSessions({ olderThanDays: NaN }), RangeError);
    });

    test("pruneSessions() throws a RangeError naming a negative olderThanDays and deletes nothing", async () => {
      const store = await empty({ clock: () => 1000 });
      await store.createSession("ended", "cli");
      await store.endSession("ended", "cli_close");
      await assert.rejects(store.pruneSessions({ olderThanDays: -1 }), {
        name: "RangeError",
        message:
          "Cannot prune sessions: olderThanDays must be a non-negative number: current value is -1",
      });
      assert.ok(await store.getSession("ended"), "an ended session of today is kept");
    });

    test("maybeAutoPruneAndVacuum() runs once per interval and records the marker", async () => {
      let now = 1000;
      const store = await empty({ clock: () => now });
      await store.createSession("old", "cli");
      await store.endSession("old", "cli_close");
      now = 1_000_000;
      const first = await store.maybeAutoPruneAndVacuum({ retentionDays: 1 });
      assert.deepEqual(first, { skipped: false, pruned: 1, vacuumed: true });
      assert.equal(await store.getSession("old"), undefined);
      assert.equal(await store.getMeta("last_auto_prune"), "1000000.0");
      const second = await store.maybeAutoPruneAndVacuum();
      assert.equal(second.skipped, true);
      await store.vacuum();
    });

    test("getMeta() and setMeta() upsert", async () => {
      const store = await empty();
      assert.equal(await store.getMeta("k"), undefined);
      await store.setMeta("k", "1");
      await store.setMeta("k", "2\u0000x");
      assert.equal(await store.getMeta("k"), "2\u0000x");
    });
  });

  describe(`${name}: import`, () => {
    test("importSession() imports, skips, replaces, and defers a missing parent", async () => {
      const store = await empty();
      const { records } = await fixtureRecords();
      const child = records.find((r) => typeof r.parent_session_id === "string")!;
      const result = await store.importSession(child);
      assert.equal(result.outcome, "imported");
      assert.equal(result.deferredParent, child.parent_session_id);
      assert.equal((await store.getSession(String(child.id)))?.parent_session_id, null);
      assert.equal((await store.importSession(child)).outcome, "skipped");
      assert.equal((await store.importSession(child, { replace: true })).outcome, "replaced");
      const parent = records.find((r) => r.id === child.parent_session_id)!;
      await store.importSession(parent);
      assert.equal(
        await store.restoreParentLinks([{ id: String(child.id), parentId: String(parent.id) }]),
        1,
      );
      assert.equal((await store.getSession(String(child.id)))?.parent_session_id, parent.id);
      const messages = child.messages as { id: number }[];
      assert.deepEqual(
        (await store.getMessages(String(child.id))).map((m) => m.id),
        messages.map((m) => m.id),
      );
      // A new message after imported ids gets a fresh, larger id.
      const next = await store.appendMessage(String(child.id), { role: "user", content: "after" });
      assert.ok(next > Math.max(0, ...messages.map((m) => m.id)));
    });

    test("importSession() of a session already present restores the parent link it lacks", async () => {
      const store = await empty();
      const { records } = await fixtureRecords();
      const child = records.find((r) => typeof r.parent_session_id === "string")!;
      const parent = records.find((r) => r.id === child.parent_session_id)!;
      await store.importSession(child);
      const waiting = await store.importSession(child);
      assert.deepEqual(
        [waiting.outcome, waiting.deferredParent, waiting.relinked],
        ["skipped", child.parent_session_id, false],
      );
      await store.importSession(parent);
      const again = await store.importSession(child);
      assert.deepEqual([again.outcome, again.deferredParent, again.relinked], [
        "skipped",
        null,
        true,
      ]);
      assert.equal((await store.getSession(String(child.id)))?.parent_session_id, parent.id);
      assert.equal((await store.importSession(child)).relinked, false);
    });

    test("importSession() gives a title another session has the lineage's next number, losing nothing", async () => {
      const store = await empty();
      await store.createSession("a", "cli");
      await store.setSessionTitle("a", "My title");
      await store.appendMessage("a", { role: "user", content: "hello" });
      const [record] = await store.exportAll();
      const taken = await store.importSession({ ...record, id: "b" });
      assert.deepEqual([taken.outcome, taken.renamedTo], ["imported", "My title #2"]);
      assert.equal(await store.getSessionTitle("b"), "My title #2");
      assert.equal(await store.messageCount("b"), 1);
      const third = await store.importSession({ ...record, id: "c" });
      assert.equal(third.renamedTo, "My title #3");
      // Its own title, on a replace, is no conflict.
      const replaced = await store.importSession(record, { replace: true });
      assert.deepEqual([replaced.outcome, replaced.renamedTo], ["replaced", null]);
      assert.equal(await store.getSessionTitle("a"), "My title");
      const untitled = await store.importSession({ ...record, id: "d", title: null });
      assert.deepEqual([untitled.outcome, untitled.renamedTo], ["imported", null]);
      // A title of 100 characters: the stem is cut so that the number fits (Python refuses
      // a longer title), and case counts as on SQLite (ASCII letters folded, others not).
      const long = "é".repeat(100);
      await store.setSessionTitle("d", long);
      const cut = await store.importSession({ ...record, id: "e", title: long });
      assert.equal(cut.renamedTo, `${"é".repeat(97)} #2`);
      await store.setSessionTitle("a", "über");
      await store.setSessionTitle("b", "ÜBER #5");
      const folded = await store.importSession({ ...record, id: "f", title: "über" });
      assert.equal(folded.renamedTo, "über #2");
    });

    test("importSession() rejects a bad record with a TypeError naming the field, writing nothing", async () => {
      const store = await empty();
      await assert.rejects(
        store.importSession({ id: "x", source: "cli", started_at: "soon", messages: [] }),
        {
          name: "TypeError",
          message:
            'Cannot import session: started_at must be a time in Unix seconds: current value is "soon"',
        },
      );
      await assert.rejects(store.importSession([]), TypeError);
      assert.equal(await store.sessionCount(), 0);
    });

    test("importSession() stores content that is no text as Python does: behind the JSON prefix", async () => {
      const store = await empty();
      // What an export carries for content Python stored as "\u0000json:5", "\u0000json:true".
      await store.importSession({
        id: "n",
        source: "cli",
        started_at: 1,
        messages: [
          { role: "user", content: 5, timestamp: 1 },
          { role: "user", content: 2.5, timestamp: 2 },
          { role: "user", content: true, timestamp: 3 },
          { role: "user", content: null, timestamp: 4 },
        ],
      });
      const contents = (await store.getMessages("n")).map((m) => m.content);
      assert.deepEqual(contents, [5, 2.5, true, null]);
    });

    test("importSession() stores a tool_calls string as the JSON of that string", async () => {
      const store = await empty();
      await store.createSession("a", "cli");
      // What Python's append_message(..., tool_calls="raw string tc") stores, read back.
      await store.appendMessage("a", {
        role: "assistant",
        content: "x",
        toolCalls: "raw string tc",
      });
      const [record] = await store.exportAll();
      assert.equal(record.messages[0].tool_calls, "raw string tc");
      await store.importSession({ ...record, id: "b" });
      const [message] = await store.getMessages("b");
      assert.equal(message.tool_calls, "raw string tc");
      assert.equal((await store.getSession("b"))?.tool_call_count, 1);
    });

    test("importSession() numbers renumbered messages in the order of their original ids", async () => {
      const store = await empty();
      await store.importSession({
        id: "first",
        source: "cli",
        started_at: 1,
        messages: [1, 2, 3].map((id) => ({ id, role: "user", content: "x", timestamp: 1 })),
      });
      // A clock stepped back: id 3 was written before id 2, with an earlier timestamp.
      const skewed = [
        { id: 1, role: "user", content: "one", timestamp: 10 },
        { id: 3, role: "user", content: "three", timestamp: 10.5 },
        { id: 2, role: "assistant", content: "two", timestamp: 11 },
      ];
      await store.importSession({ id: "skew", source: "cli", started_at: 1, messages: skewed });
      const rows = await store.getMessages("skew");
      const byId = [...rows].sort((a, b) => a.id - b.id);
      assert.deepEqual(byId.map((m) => m.content), ["one", "two", "three"]);
      assert.deepEqual(byId.map((m) => m.timestamp), [10, 11, 10.5], "timestamps kept");
      assert.ok(byId[0].id > 3, "new ids");
    });
  });

  describe(`${name}: change marker`, () => {
    test("dataVersion() is stable while nothing is written and moves at once after any write", async () => {
      const store = await empty();
      assert.equal(typeof await store.dataVersion(), "string");
      // On PostgreSQL any commit on the server moves it, the tests running beside this one's
      // too: reads must leave it alone at least once while they write nothing.
      assert.ok(
        await untilSteady(store, async () => {
          await store.getSession("none");
          await store.listSessionsRich({});
          await store.searchMessages("nothing");
        }),
        "a read changes nothing",
      );
      const first = await store.dataVersion();
      await store.createSession("s1", "cli");
      const second = await store.dataVersion();
      assert.notEqual(second, first, "a new session");
      let last = second;
      for (const title of ["one", "two", "three"]) {
        await store.setSessionTitle("s1", title);
        const now = await store.dataVersion();
        assert.notEqual(now, last, `an update in place (${title})`);
        last = now;
      }
      await store.deleteSession("s1");
      assert.notEqual(await store.dataVersion(), last, "a deletion");
    });
  });

  describe(`${name}: arguments and hostile input`, () => {
    test("paging arguments are checked with a RangeError naming the value", async () => {
      const store = await empty();
      await assert.rejects(store.listSessionsRich({ limit: -1 }), {
        name: "RangeError",
        message: "Cannot list sessions: limit must be a non-negative integer: current value is -1",
      });
      await assert.rejects(store.searchMessages("x", { offset: 1.5 }), RangeError);
      await assert.rejects(store.searchSessions({ limit: NaN }), RangeError);
      await assert.rejects(store.topSessionsByTokens(-2), RangeError);
    });

    test("searchMessages() checks since and until with a RangeError naming the value", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessage("s", { role: "user", content: "docker" });
      for (const [name, value] of [["since", NaN], ["until", Infinity], ["since", "1d"]] as const) {
        await assert.rejects(store.searchMessages("docker", { [name]: value as never }), {
          name: "RangeError",
          message:
            `Cannot search messages: ${name} must be a finite number of seconds: current value is ${
              typeof value === "string" ? `"${value}"` : value
            }`,
        });
      }
      assert.equal((await store.searchMessages("docker", { since: 0 })).length, 1);
    });

    test("a short CJK search folds the case of ASCII letters only, as SQLite's LIKE", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessages("s", [
        { role: "user", content: "É数 upper" },
        { role: "user", content: "é数 lower" },
        { role: "user", content: "A数 ascii" },
        { role: "user", content: "Café Müller 数据" },
      ]);
      assert.deepEqual((await store.searchMessages("é数")).map((h) => h.snippet), ["é数 lower"]);
      assert.equal((await store.searchMessages("a数")).length, 1);
      assert.equal((await store.searchMessages("数")).length, 4);
      // A word with ASCII letters too: theirs fold, the others' do not (PostgreSQL's ILIKE
      // folded É and Ü as well, in a UTF-8 locale).
      assert.equal((await store.searchMessages("MüLLER 数据")).length, 1);
      for (const query of ["MÜLLER 数据", "CAFÉ 数", "mÜller 数据"]) {
        assert.deepEqual(await store.searchMessages(query), [], query);
      }
    });

    test("a word inside Thai, Lao, Myanmar or Khmer text is found by substring, as CJK is", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const texts = [
        "ฉันต้องการย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่",
        "ຂ້ອຍຕ້ອງການຍ້າຍຖານຂໍ້ມູນ",
        "မြန်မာဘာသာ ဒေတာဘေ့စ်",
        "ខ្ញុំចង់ផ្លាស់ទីមូលដ្ឋានទិន្នន័យ",
      ];
      const ids = await store.appendMessages(
        "s",
        texts.map((content) => ({ role: "user", content })),
      );
      const found = async (query: string) =>
        (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
      // Three characters or more: the trigram index, with FTS5's marks.
      assert.deepEqual(await found("ฐานข้อมูล"), [0]);
      const [hit] = await store.searchMessages("ฐานข้อมูล");
      assert.match(hit.snippet ?? "", />>>ฐานข้อมูล<<</);
      assert.deepEqual(await found("ຖານຂໍ້ມູນ"), [1]);
      assert.deepEqual(await found("ဒေတာ"), [2]);
      assert.deepEqual(await found("ទិន្នន័យ"), [3]);
      // Shorter: by substring. Operators as everywhere else.
      assert.deepEqual(await found("ไป"), [0]);
      assert.deepEqual(await found("ฐานข้อมูล AND ย้าย"), [0]);
      assert.deepEqual(await found("ฐานข้อมูล NOT ย้าย"), []);
      assert.deepEqual(await found("ไป OR ဒေတာ"), [0, 2]);
      // A word of another script still needs the whole word.
      assert.deepEqual(await found("ฐานข้อมูลเก่า"), []);
    });

    test("an id or a source holding U+0000 or U+E000 is read, listed, filtered, exported and deleted", async () => {
      const store = await empty();
      const odd = "x\u0000y\uE000z";
      await store.createSession(odd, "cli");
      await store.appendMessage(odd, { role: "user", content: "docker here" });
      await store.createSession("child", "tool\u0000", { parentSessionId: odd });
      await store.createSession("plain", "cli");
      assert.equal((await store.getSession(odd))?.id, odd);
      assert.equal((await store.getMessagesAsConversation(odd)).length, 1);
      const exported = await store.exportAll();
      assert.deepEqual(exported.map((s) => s.id).sort(), ["child", "plain", odd].sort());
      assert.equal(exported.find((s) => s.id === odd)?.messages.length, 1);
      const streamed: string[] = [];
      for await (const session of store.iterateExport()) streamed.push(session.id);
      assert.deepEqual(streamed, exported.map((s) => s.id));
      const listed = await store.listSessionsRich({ excludeSources: ["tool\u0000"] });
      assert.deepEqual(listed.map((s) => s.id).sort(), ["plain", odd].sort());
      const hits = await store.searchMessages("docker", { sourceFilter: ["a\u0000", "cli"] });
      assert.deepEqual(hits.map((h) => h.session_id), [odd]);
      assert.deepEqual(await store.searchMessages("docker", { sourceFilter: ["cli\u0000"] }), []);
      assert.equal(await store.deleteSession(odd), true);
      assert.equal(await store.getSession(odd), undefined);
      assert.equal((await store.getSession("child"))?.parent_session_id, null);
      assert.equal(await store.sessionCount(), 2);
    });

    test('a short CJK search reads U+E000 then "0" as text, and stops at a NUL as SQLite\'s LIKE', async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "price \uE0000 记忆 🚀" },
        { role: "user", content: "\uE000\uE000\u0000 记忆 🚀" },
        { role: "user", content: "\uE000 记忆 🚀" },
        { role: "user", content: "a\u0000b 记忆 🚀" },
      ]);
      for (const query of ["记", "记忆", "🚀"]) {
        const found = (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
        assert.deepEqual(found, [0, 2], query);
      }
    });

    test("searchMessages() reads a * inside a word as FTS5 does: a prefix, then the next word", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "here we run docker" },
        { role: "user", content: "heretic docker" },
        { role: "user", content: "here only" },
        { role: "user", content: "content of contentment" },
      ]);
      const found = async (query: string) =>
        (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
      assert.deepEqual(await found("here*docker"), [0, 1]);
      assert.deepEqual(await found("here* docker"), [0, 1]);
      assert.deepEqual(await found("Content*Content*"), [3]);
    });

    test("searchMessages() reads a content: column filter as FTS5 does, its one column the whole text", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "prune docker images" },
        { role: "user", content: "content docker here" },
        { role: "tool", content: "ok", toolName: "docker" },
      ]);
      const found = async (query: string) =>
        (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
      for (
        const query of [
          "content:docker",
          "CONTENT : dock*",
          '"content":docker',
          "content:docker OR zzz",
        ]
      ) {
        assert.deepEqual(await found(query), [0, 1, 2], query);
      }
      assert.deepEqual(await found("docker content:prune"), [0]);
      assert.deepEqual(await found("content:content"), [1]);
      const [hit] = await store.searchMessages("docker content:prune");
      assert.equal(hit.snippet, ">>>prune<<< >>>docker<<< images  ");
      // Excluding the one column leaves nothing to match.
      assert.deepEqual(await found("-content:docker"), []);
      assert.deepEqual(await found("prune -content:docker"), []);
      assert.deepEqual(await found("-content:zzz OR images"), [0]);
      // Another column is no filter FTS5 accepts: the query is retried as quoted phrases.
      assert.deepEqual(await found("tool_name:docker"), []);
      assert.deepEqual(await found("content:"), [1]);
    });

    test("searchMessages() finds an emoji written with a variation selector, by itself and beside a word", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "love \u2764\uFE0F it" },
        { role: "user", content: "status \u26A0\uFE0F warning disk full" },
        { role: "user", content: "a warning without the sign" },
        { role: "user", content: "weather \u2600\uFE0F sunny" },
      ]);
      const found = async (query: string) =>
        (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
      // The selector (U+FE0F) separates words in FTS5's tokenizer: such a word is all symbol.
      assert.deepEqual(await found("\u2764\uFE0F"), [0]);
      assert.deepEqual(await found("\u2600\uFE0F"), [3]);
      assert.deepEqual(await found("warning \u26A0\uFE0F"), [1]);
      assert.deepEqual(await found("\u26A0"), [1]);
    });

    test("searchMessages() reads a NUL in the query as a space (it neither cuts the query nor matches all)", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const ids = await store.appendMessages("s", [
        { role: "user", content: "docker compose up" },
        { role: "user", content: "docker only" },
        { role: "user", content: "数据库 备份" },
        { role: "user", content: "plain text" },
      ]);
      const found = async (query: string) =>
        (await store.searchMessages(query)).map((h) => ids.indexOf(h.id)).sort();
      assert.deepEqual(await found("\u0000数据"), [2]);
      assert.deepEqual(await found("数据\u0000"), [2]);
      assert.deepEqual(await found("\u0000docker"), [0, 1]);
      assert.deepEqual(await found("docker\u0000compose"), [0]);
      assert.deepEqual(await found("\u0000"), []);
    });

    test("searchMessages() answers a pasted text of thousands of words, in quotes or not", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      const words = Array.from({ length: 17_000 }, (_, i) => `w${i.toString(36)}`);
      await store.appendMessage("s", { role: "user", content: words.slice(0, 20).join(" ") });
      // PostgreSQL overflowed its stack on a phrase of some 16,000 words (and on 50,000 without
      // quotes: postgres_odd_inputs_test.ts, too slow on SQLite for this suite).
      assert.deepEqual(await store.searchMessages(`"${words.join(" ")}"`), []);
      assert.equal((await store.searchMessages(`"${words.slice(0, 20).join(" ")}"`)).length, 1);
      assert.equal((await store.searchMessages(words.slice(0, 2_000).join(" OR "))).length, 1);
    });

    test("searchMessages() never throws on user text and finds what was written", async () => {
      const store = await empty();
      await store.createSession("s", "cli");
      await store.appendMessage("s", {
        role: "user",
        content: "it's a back\\slash 'quote' test:case 记忆断裂",
      });
      for (
        const query of [
          "'",
          "\\",
          "it's",
          "':*",
          "a & b | !c",
          "<->",
          "test:case",
          "记",
          "忆断",
          "\u0000",
          "%",
          "_",
          "''''",
        ]
      ) {
        const hits = await store.searchMessages(query);
        assert.ok(Array.isArray(hits), query);
      }
      assert.equal((await store.searchMessages("it's")).length, 1);
      assert.equal((await store.searchMessages("slash")).length, 1);
      assert.equal((await store.searchMessages("忆断")).length, 1);
      assert.equal((await store.searchMessages("记")).length, 1);
      assert.equal((await store.searchMessages("%")).length, 0);
    });
  });
}
