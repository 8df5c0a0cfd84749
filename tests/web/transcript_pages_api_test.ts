// The transcript of one huge session, a page at a time: `/api/session` answers the newest page
// and how many messages lie before it; `before` pages back, `m` opens at a message with `beyond`
// paging on; the live `after`/`shown`/`first` path still sends only what was appended. On
// SQLite, and on PostgreSQL when HERMES_TEST_PG_URL is set.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { TRANSCRIPT_PAGE } from "../../lib/web/api.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { openPgStore, PG_SKIP } from "../store/_pg.ts";
import { numberedMessages } from "./_served.ts";

const ID = "20260501_100000_huge";
const SMALL = "20260501_110000_small";

interface Page {
  messages: { id: number; content: string }[];
  appended: boolean;
  newest: number;
  earlier: number;
  later: number;
}

for (
  const [engine, open, skip] of [
    ["SQLite", () => openStore(tempDbPath()), false],
    ["PostgreSQL", () => openPgStore(), PG_SKIP],
  ] as const
) {
  describe(`transcript pages on ${engine}`, { skip }, () => {
    let store: SessionStore;
    let handle: Handler;
    /** The ids of the big session's messages, in transcript order. */
    let all: number[];

    before(async () => {
      store = await open();
      await store.createSession(ID, "cli");
      await store.appendMessages(ID, numberedMessages(TRANSCRIPT_PAGE + 25));
      await store.createSession(SMALL, "cli");
      await store.appendMessages(
        SMALL,
        Array.from({ length: 25 }, (_, i) => ({ role: "user", content: `small ${i}` })),
      );
      all = (await store.getMessages(ID)).map((m) => m.id);
      handle = createHandler(store);
    });
    after(async () => {
      await store?.close();
    });

    async function get(query: string): Promise<{ status: number; body: Page }> {
      const response = await handle(new Request(`http://127.0.0.1:8787/api/session?${query}`));
      return { status: response.status, body: await response.json() };
    }
    const ids = (page: Page) => page.messages.map((m) => m.id);

    test("a session larger than a page answers its newest page and how many lie before it", async () => {
      const { status, body } = await get(`id=${ID}`);
      assert.equal(status, 200);
      assert.equal(body.messages.length, TRANSCRIPT_PAGE);
      assert.deepEqual(ids(body), all.slice(25));
      assert.deepEqual([body.earlier, body.later, body.appended], [25, 0, false]);
      assert.equal(body.messages.at(-1)!.content, `message number ${TRANSCRIPT_PAGE + 24}`);
      assert.equal(body.newest, Math.max(...all));
      const small = await get(`id=${SMALL}`);
      assert.deepEqual([small.body.messages.length, small.body.earlier], [25, 0]);
    });

    test("the server's transcriptPage sets the page the page is told of; a bad one is refused", async () => {
      const small = createHandler(store, { transcriptPage: 10 });
      const ask = async (path: string) =>
        await (await small(new Request(`http://127.0.0.1:8787${path}`))).json();
      assert.equal((await ask("/api/config")).limits.transcript, 10);
      const page = await ask(`/api/session?id=${ID}`);
      assert.deepEqual([page.messages.length, page.earlier], [10, all.length - 10]);
      for (const bad of [0, 1.5, -3]) {
        assert.throws(
          () => createHandler(store, { transcriptPage: bad }),
          new RegExp(`transcriptPage must be a whole number .*: current value is ${bad}$`),
        );
      }
    });

    test("paging back with before= yields every message exactly once, in order", async () => {
      const seen: number[][] = [];
      let page = (await get(`id=${ID}&limit=700`)).body;
      seen.unshift(ids(page));
      while (page.earlier > 0) {
        const next = await get(`id=${ID}&limit=700&before=${page.messages[0].id}`);
        assert.equal(next.status, 200);
        assert.ok(next.body.messages.length <= 700);
        assert.equal(next.body.earlier + next.body.messages.length, page.earlier);
        page = next.body;
        seen.unshift(ids(page));
      }
      assert.deepEqual(seen.flat(), all);
      assert.equal(seen.length, Math.ceil(all.length / 700));
    });

    test("m= opens the page at an earlier message, and beyond= pages on to the newest", async () => {
      const target = all[100];
      const first = (await get(`id=${ID}&limit=500&m=${target}`)).body;
      assert.ok(ids(first).includes(target));
      assert.equal(first.earlier, 80, "a few messages above the one asked for");
      assert.equal(first.later, all.length - 580);
      const seen = [ids(first)];
      let page = first;
      while (page.later > 0) {
        page = (await get(`id=${ID}&limit=500&beyond=${page.messages.at(-1)!.id}`)).body;
        seen.push(ids(page));
      }
      assert.deepEqual(seen.flat(), all.slice(80));
      // A message in the newest page opens the newest page; from= draws a window again.
      const newest = (await get(`id=${ID}&m=${all.at(-3)}`)).body;
      assert.deepEqual([newest.earlier, newest.later], [25, 0]);
      const again = (await get(`id=${ID}&limit=500&from=${first.messages[0].id}`)).body;
      assert.deepEqual(ids(again), ids(first));
    });

    test("a before= or beyond= message not in the transcript is a 409 naming it", async () => {
      for (const name of ["before", "beyond"]) {
        const { status, body } = await get(`id=${ID}&${name}=999999999`);
        assert.equal(status, 409, name);
        assert.match(
          (body as unknown as { error: { message: string } }).error.message,
          new RegExp(`^${name}: the transcript shows no message 999999999`),
        );
      }
    });

    test("limit=0 answers the counts and newest without messages; other limits stay a 400", async () => {
      // What a page opened at an earlier message asks on a live change: the counts after its last.
      const last = all[579];
      const counts = await get(`id=${ID}&beyond=${last}&limit=0`);
      assert.equal(counts.status, 200);
      assert.deepEqual(
        [counts.body.messages, counts.body.appended, counts.body.earlier, counts.body.later],
        [[], false, 580, all.length - 580],
      );
      assert.equal(counts.body.newest, Math.max(...all));
      const newest = (await get(`id=${ID}&limit=0`)).body;
      assert.deepEqual([newest.messages, newest.earlier, newest.later], [[], all.length, 0]);
      const gone = await get(`id=${ID}&beyond=999999999&limit=0`);
      assert.equal(gone.status, 409, "a last message gone is still a 409");
      for (const bad of ["-1", "1.5", "x", "1000001"]) {
        const { status, body } = await get(`id=${ID}&limit=${bad}`);
        assert.equal(status, 400, bad);
        assert.equal(
          (body as unknown as { error: { message: string } }).error.message,
          `limit must be a whole number from 0 to 1000000: current value is "${bad}"`,
        );
      }
    });

    test("after=/shown=/first= sends only appended messages while the shown suffix stays", async () => {
      const page = (await get(`id=${SMALL}&limit=10`)).body;
      assert.deepEqual([page.messages.length, page.earlier], [10, 15]);
      const since = (shown: number, first: number) =>
        get(`id=${SMALL}&limit=10&after=${page.newest}&shown=${shown}&first=${first}`);
      const quiet = (await since(10, page.messages[0].id)).body;
      assert.deepEqual([quiet.messages.length, quiet.appended, quiet.earlier], [0, true, 15]);
      await store.appendMessages(SMALL, [{ role: "assistant", content: "news" }]);
      const news = (await since(10, page.messages[0].id)).body;
      assert.deepEqual(
        [news.messages.map((m) => m.content), news.appended, news.earlier, news.later],
        [["news"], true, 15, 0],
      );
      // A count that is not what the page shows from its first: the newest page again.
      const wrong = (await since(9, page.messages[0].id)).body;
      assert.deepEqual([wrong.appended, wrong.messages.length, wrong.earlier], [false, 10, 16]);
      assert.equal(wrong.messages.at(-1)!.content, "news");
      // Without first= the count is from the session's first message, as before pages.
      const whole = (await get(`id=${SMALL}&limit=100&after=${page.newest}&shown=25`)).body;
      assert.deepEqual([whole.appended, whole.messages.map((m) => m.content)], [true, ["news"]]);
      // A first message gone: the newest page again.
      const gone = (await since(10, 999999999)).body;
      assert.equal(gone.appended, false);
    });
  });
}
