// A transcript page costs the page, not the session: `/api/session` reads the rows of the page
// it answers (and counts the others) instead of every row of the session, and answers exactly
// what slicing the whole transcript answered: the same messages, `earlier`, `later`, `newest`,
// `appended` and 409s, on a newer Hermes's file (rewound and hidden rows, a clock stepped back).
// On SQLite, and on PostgreSQL when HERMES_TEST_PG_URL is set.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { MessageRow } from "../../lib/core/types.ts";
import { isShownInTranscript, newestMessageId } from "../../lib/core/message_row.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { openPgStore, PG_SKIP } from "../store/_pg.ts";
import { caseRunsHere } from "../reliability/_runtimes.ts";

/** A session of the schema-21 fixture, given many more rows. */
const ID = "20260501_090000_live01";
const OTHER = "20260501_110000_rew01";

/** Queries asked at once: as many as the PostgreSQL store's connections (4 by default). */
const AT_ONCE = 4;

/** A small pseudo-random sequence, the same on every run. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/**
 * A copy of the schema-21 fixture (`active`) with `display_kind` added, and
 * 120 more rows in `ID`: timestamps drawn from a few values (ties; later ids
 * sorted before earlier ones), some rewound, some hidden (one as a BLOB).
 */
async function newerFile(): Promise<string> {
  const path = copyFixture("hermes-v21.db");
  using raw = await rawOpen(path);
  raw.exec("ALTER TABLE messages ADD COLUMN display_kind TEXT");
  const random = sequence(7);
  const insert = raw.prepare(
    `INSERT INTO messages (session_id, role, content, timestamp, active, display_kind)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const hidden = new TextEncoder().encode("hidden");
  for (let i = 0; i < 120; i++) {
    const kind = random();
    insert.run(
      ID,
      i % 2 === 0 ? "user" : "assistant",
      `row ${i}`,
      1777600000 + Math.floor(random() * 40),
      random() < 0.2 ? 0 : 1,
      kind < 0.15 ? "hidden" : kind < 0.2 ? hidden : kind < 0.25 ? "note" : null,
    );
  }
  return path;
}

/** The answer's transcript fields, as slicing the whole transcript made them (the old way). */
function slicedAnswer(rows: MessageRow[], url: URL, limit: number): unknown {
  const param = (name: string) =>
    url.searchParams.has(name) ? Number(url.searchParams.get(name)) : undefined;
  const messages = rows.filter(isShownInTranscript);
  const placeOf = (id: number, name: string) => {
    const at = messages.findIndex((message) => message.id === id);
    if (at < 0) throw new Error(`409 ${name}`);
    return at;
  };
  const window = () => {
    const newest = { start: Math.max(0, messages.length - limit), end: messages.length };
    const before = param("before");
    if (before !== undefined) {
      const end = placeOf(before, "before");
      return { start: Math.max(0, end - limit), end };
    }
    const beyond = param("beyond");
    if (beyond !== undefined) {
      const start = placeOf(beyond, "beyond") + 1;
      return { start, end: Math.min(messages.length, start + limit) };
    }
    const from = param("from");
    const at = from ?? param("m");
    const place = at === undefined ? -1 : messages.findIndex((message) => message.id === at);
    if (place < 0 || place >= newest.start) return newest;
    const start = from !== undefined ? place : Math.max(0, place - 20);
    return { start, end: Math.min(messages.length, start + limit) };
  };
  const since = url.searchParams.has("after")
    ? { after: param("after")!, shown: param("shown")!, first: param("first") }
    : undefined;
  const fresh = since === undefined ? [] : messages.filter((message) => message.id > since.after);
  const first = since?.first === undefined
    ? 0
    : messages.findIndex((message) => message.id === since.first);
  const appended = since !== undefined && first >= 0 && fresh.length <= limit &&
    messages.length - fresh.length - first === since.shown;
  let range;
  try {
    range = appended ? { start: messages.length - fresh.length, end: messages.length } : window();
  } catch (error) {
    return (error as Error).message;
  }
  return {
    ids: (appended ? fresh : messages.slice(range.start, range.end)).map((m) => m.id),
    appended,
    newest: newestMessageId(rows),
    earlier: appended ? first : range.start,
    later: messages.length - range.end,
  };
}

/**
 * The queries asked of a session whose transcript is `rows` (`all` with its
 * rewound rows): every kind, at every message, another session's and none;
 * each message with two of the four kinds at each limit, in turn, so that
 * every kind meets every message at three of the six limits.
 */
function queries(rows: MessageRow[], all: MessageRow[], others: number[]): string[] {
  const shown = rows.filter(isShownInTranscript).map((m) => m.id);
  const ids = [...new Set([...all.map((m) => m.id), ...others, 999999])];
  const random = sequence(11);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const out: string[] = [];
  const names = ["before", "beyond", "from", "m"];
  for (const [turn, limit] of [0, 1, 3, 7, 25, 200].entries()) {
    out.push(`limit=${limit}`);
    for (const [i, id] of ids.entries()) {
      for (const name of [names[(i + turn) % 4], names[(i + turn + 2) % 4]]) {
        out.push(`limit=${limit}&${name}=${id}`);
      }
    }
    for (let i = 0; i < 60; i++) {
      out.push(`limit=${limit}&before=${pick(ids)}&beyond=${pick(ids)}`);
      out.push(`limit=${limit}&from=${pick(ids)}&m=${pick(ids)}`);
      // The live path: what a page shows (from `first` to `after`, a few messages before
      // the newest), right or a little off.
      const end = Math.max(0, shown.length - Math.floor(random() * (limit + 3)));
      const start = Math.floor(random() * (end + 1));
      const after = random() < 0.8 ? Math.max(0, ...shown.slice(0, end)) : pick(ids);
      const count = Math.max(0, end - start + (random() < 0.8 ? 0 : pick([-1, 1])));
      const first = random() < 0.2 ? "" : `&first=${random() < 0.8 ? shown[start] : pick(ids)}`;
      out.push(`limit=${limit}&after=${after}&shown=${count}${first}&m=${pick(ids)}`);
    }
  }
  return out;
}

/** What {@linkcode counting} counted. */
interface Reads {
  /** Rows returned since the change marker was last read. */
  rows: number;
  /** The most rows returned between two reads of the change marker. */
  most: number;
  /** Reads of every row of a session. */
  whole: number;
}

/** No reads counted yet. */
function noReads(): Reads {
  return { rows: 0, most: 0, whole: 0 };
}

/**
 * The most rows one read of a page returned: a page is read again when the
 * change marker moved meanwhile, and on PostgreSQL any commit of the server
 * (another test's, in a suite run side by side) moves it.
 */
function rowsOfOneRead(read: Reads): number {
  return Math.max(read.most, read.rows);
}

/**
 * `store`, counting the rows its `getMessages` returns (into `read.rows`,
 * per read of the change marker into `read.most`) and refusing a read of
 * the whole session: one without a place, a count or an `afterId`.
 */
function counting(store: SessionStore, read: Reads): SessionStore {
  return new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      if (name === "dataVersion") {
        read.most = rowsOfOneRead(read);
        read.rows = 0;
        return value.bind(target);
      }
      if (name !== "getMessages") return value.bind(target);
      return async (id: string, options: Record<string, unknown> = {}) => {
        const paged = ["beforeId", "fromId", "limit", "last", "afterId"]
          .some((key) => options[key] !== undefined);
        if (!paged) read.whole++;
        const rows = await value.call(target, id, options);
        read.rows += rows.length;
        return rows;
      };
    },
  });
}

for (
  const [engine, open, skip] of [
    ["SQLite", async () => await openStore(await newerFile()), false],
    ["PostgreSQL", async () => {
      // The same file copied to the server: its newer columns come along (extra_columns).
      await using file = await openStore(await newerFile(), { readonly: true });
      const store = await openPgStore();
      for (const id of [ID, OTHER]) await store.importSession(await file.exportSession(id));
      return store;
    }, PG_SKIP],
  ] as const
) {
  describe(`transcript pages read the page, not the session, on ${engine}`, { skip }, () => {
    let store: SessionStore;

    before(async () => {
      store = await open();
    });
    after(async () => {
      await store?.close();
    });

    test("every answer is the one slicing the whole transcript gave", async () => {
      const rows = await store.getMessages(ID);
      const all = await store.getMessages(ID, { includeInactive: true });
      assert.ok(rows.length > 80 && all.length > rows.length, `${rows.length} rows, rewound ones`);
      assert.ok(rows.some((m) => !isShownInTranscript(m)), "hidden rows");
      assert.ok(
        rows.some((m, i) => i > 0 && m.id < rows[i - 1].id),
        "rows whose ids are out of the transcript's order",
      );
      const others = (await store.getMessages(OTHER, { includeInactive: true })).map((m) => m.id);
      const handle = createHandler(store);
      let appended = 0;
      let conflicts = 0;
      // Each query under one of Deno, Bun and Node (`caseRunsHere`); a few at a time,
      // as a page's readers ask them (on PostgreSQL each waits mostly for the server).
      const check = async (query: string) => {
        const url = new URL(`http://127.0.0.1:8787/api/session?id=${ID}&${query}`);
        const response = await handle(new Request(url));
        const body = await response.json();
        const limit = Number(url.searchParams.get("limit"));
        const want = slicedAnswer(rows, url, limit);
        if (typeof want === "string") {
          conflicts++;
          assert.equal(response.status, 409, query);
          assert.match(body.error.message, new RegExp(`^${want.slice(4)}: `), query);
          return;
        }
        assert.equal(response.status, 200, query);
        const got = {
          ids: body.messages.map((m: MessageRow) => m.id),
          appended: body.appended,
          newest: body.newest,
          earlier: body.earlier,
          later: body.later,
        };
        assert.deepEqual(got, want, query);
        if (body.appended) appended++;
      };
      const asked = queries(rows, all, others).filter((_, i) => caseRunsHere(i));
      for (let i = 0; i < asked.length; i += AT_ONCE) {
        await Promise.all(asked.slice(i, i + AT_ONCE).map(check));
      }
      // A third of the queries, dealt in turn: about 14 appended pages and 140 conflicts each.
      assert.ok(appended > 7 && conflicts > 25, `${appended} appended, ${conflicts} 409s`);
    });

    test("a page reads its own rows and a few more, never the whole session", async () => {
      const read = noReads();
      const handle = createHandler(counting(store, read));
      const shown = (await store.getMessages(ID)).filter(isShownInTranscript);
      const newest = newestMessageId(await store.getMessages(ID));
      const middle = shown[Math.floor(shown.length / 2)].id;
      const last = shown.at(-5)!.id;
      for (
        const query of [
          "limit=5",
          `limit=5&before=${middle}`,
          `limit=5&beyond=${middle}`,
          `limit=5&m=${middle}`,
          `limit=5&from=${middle}`,
          `limit=5&after=${newest}&shown=5&first=${last}`,
          `limit=5&after=${last}&shown=1&first=${last}`,
        ]
      ) {
        Object.assign(read, { rows: 0, most: 0 });
        const response = await handle(
          new Request(`http://127.0.0.1:8787/api/session?id=${ID}&${query}`),
        );
        assert.equal(response.status, 200, query);
        const body = await response.json();
        assert.ok(body.appended || body.messages.length > 0, query);
        // The page, one more past it, the message it starts at, the newest row and any row
        // written after it (and, opened at a message, the 20 above it, of which a page this
        // small shows some): a handful, of a session of more than a hundred.
        const most = query.includes("&m=") ? 5 + 20 + 4 : 2 * 5 + 4;
        assert.ok(rowsOfOneRead(read) <= most, `${query}: ${rowsOfOneRead(read)} rows read`);
      }
      assert.equal(read.whole, 0, "no read of every row");
    });

    test("a count answer (limit=0) reads no page: the message it is after, the newest, one more", async () => {
      const read = noReads();
      const handle = createHandler(counting(store, read));
      const shown = (await store.getMessages(ID)).filter(isShownInTranscript);
      const middle = shown[Math.floor(shown.length / 2)].id;
      for (const query of [`limit=0&beyond=${middle}`, `limit=0&from=${middle}`, "limit=0"]) {
        Object.assign(read, { rows: 0, most: 0 });
        const response = await handle(
          new Request(`http://127.0.0.1:8787/api/session?id=${ID}&${query}`),
        );
        assert.equal(response.status, 200, query);
        const body = await response.json();
        assert.deepEqual(body.messages, [], query);
        assert.ok(body.later > 0 || query === "limit=0", query);
        assert.ok(rowsOfOneRead(read) <= 4, `${query}: ${rowsOfOneRead(read)} rows read`);
      }
      assert.equal(read.whole, 0, "no read of every row");
    });

    test("a write between a page's reads has it read again: its counts and rows are of one state", async () => {
      let writes = 0;
      // The first count of each request is followed by a write, once: as a gateway's would.
      const racing = new Proxy(store, {
        get(target, name) {
          const value = Reflect.get(target, name, target);
          if (typeof value !== "function") return value;
          if (name !== "countMessages") return value.bind(target);
          return async (...args: unknown[]) => {
            const count = await value.apply(target, args);
            if (writes++ === 0) {
              await target.appendMessage(ID, { role: "user", content: "written meanwhile" });
            }
            return count;
          };
        },
      });
      const handle = createHandler(racing);
      const body = await (await handle(
        new Request(`http://127.0.0.1:8787/api/session?id=${ID}&limit=7`),
      )).json();
      const rows = await store.getMessages(ID);
      const url = new URL(`http://127.0.0.1:8787/api/session?id=${ID}&limit=7`);
      assert.deepEqual(
        {
          ids: body.messages.map((m: MessageRow) => m.id),
          appended: body.appended,
          newest: body.newest,
          earlier: body.earlier,
          later: body.later,
        },
        slicedAnswer(rows, url, 7),
      );
      assert.equal(body.messages.at(-1).content, "written meanwhile");
      assert.ok(writes > 1, "read again");
    });
  });
}
