// `/api/resolve` (the session an id or a unique prefix names, offered above the search hits):
// its preview is the listing's, read from one row of a huge session's messages rather than
// all of them, and its answer is kept until the store changes, as the other read answers are.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { NewMessage } from "../../lib/core/types.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { copyFixture } from "../_helpers.ts";

const ORIGIN = "http://127.0.0.1:8787";
/** An untitled session of 50,000 messages. */
const HUGE = "resolve_huge";
const HUGE_COUNT = 50_000;
/** The same first messages, and nothing else. */
const SMALL = "resolve_small";
/** Two sessions started at the very same instant. */
const TWIN_A = "resolve_twin_a";
const TWIN_B = "resolve_twin_b";
const FIRST_WORDS =
  "  请帮我看看\nthe disk usage on the build box, it keeps filling up every night  ";

/** What a session starts with: a system prompt, an assistant's note, then the first question. */
const OPENING: NewMessage[] = [
  { role: "system", content: "You are a helpful agent." },
  { role: "assistant", content: "Ready when you are." },
  { role: "user", content: FIRST_WORDS },
];

let path: string;
let store: SessionStore;

before(async () => {
  path = copyFixture("hermes-v11.db");
  {
    let tick = 1777800000;
    await using writer = await openStore(path, { clock: () => tick++ });
    await writer.createSession(HUGE, "tool");
    const rest: NewMessage[] = Array.from({ length: HUGE_COUNT - OPENING.length }, (_, i) => ({
      role: i % 2 === 0 ? "assistant" : "user",
      content: `turn ${i}`,
    }));
    await writer.appendMessages(HUGE, [...OPENING, ...rest]);
    await writer.createSession(SMALL, "tool");
    await writer.appendMessages(SMALL, OPENING);
  }
  {
    await using twins = await openStore(path, { clock: () => 1777900000.5 });
    await twins.createSession(TWIN_A, "tool");
    await twins.appendMessages(TWIN_A, [{ role: "user", content: "the first twin" }]);
    await twins.createSession(TWIN_B, "tool");
    await twins.appendMessages(TWIN_B, [{ role: "user", content: "the second twin" }]);
  }
  store = await openStore(path);
});

after(() => store?.close());

/** `store`, counting the rows its methods return (messages, sessions, hits). */
function counting(inner: SessionStore): { store: SessionStore; rows: () => number } {
  let rows = 0;
  const store = new Proxy(inner, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const result = await value.apply(target, args);
        if (Array.isArray(result)) rows += result.length;
        return result;
      };
    },
  });
  return { store, rows: () => rows };
}

async function resolve(on: SessionStore, id: string) {
  const response = await createHandler(on)(
    new Request(`${ORIGIN}/api/resolve?id=${encodeURIComponent(id)}`),
  );
  assert.equal(response.status, 200);
  return await response.json();
}

describe("GET /api/resolve", () => {
  test("previews an untitled session with its first user message, cut as the listing cuts it", async () => {
    const { session } = await resolve(store, SMALL);
    assert.equal(session.title, null);
    assert.equal(
      session.preview,
      "请帮我看看 the disk usage on the build box, it keeps filling up e...",
    );
    const [listed] = (await store.listSessionsRich({ source: "tool", limit: 100 }))
      .filter((row) => row.id === SMALL);
    assert.equal(session.preview, listed.preview, "the listing's preview");
  });

  test("reads a few rows of a 50,000-message session, and previews it as the small one", async () => {
    const { store: counted, rows } = counting(store);
    const huge = await resolve(counted, HUGE);
    assert.ok(rows() < 100, `read ${rows()} rows`);
    const small = await resolve(store, SMALL);
    assert.equal(huge.session.preview, small.session.preview);
    assert.equal(huge.session.id, HUGE);
  });

  test("tells apart two sessions started at the same instant", async () => {
    assert.equal((await resolve(store, TWIN_A)).session.preview, "the first twin");
    assert.equal((await resolve(store, TWIN_B)).session.preview, "the second twin");
  });

  test("keeps its answer until the store changes", async () => {
    const { store: counted, rows } = counting(store);
    const handle = createHandler(counted);
    const ask = () => handle(new Request(`${ORIGIN}/api/resolve?id=${SMALL}`));
    const first = await ask();
    assert.equal(first.headers.get("x-hermes-cache"), "miss");
    await first.body?.cancel();
    const read = rows();
    const again = await ask();
    assert.equal(again.headers.get("x-hermes-cache"), "hit");
    assert.equal(rows(), read, "nothing read again");
    assert.equal((await again.json()).session.title, null);
    await store.setSessionTitle(SMALL, "disk usage");
    try {
      const changed = await ask();
      assert.equal(changed.headers.get("x-hermes-cache"), "miss");
      const { session } = await changed.json();
      assert.deepEqual([session.title, session.preview], ["disk usage", ""]);
    } finally {
      await store.setSessionTitle(SMALL, null);
    }
  });
});
