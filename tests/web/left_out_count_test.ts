// `/api/session`'s `left_out` counts every row of the session only where a row can be left out:
// a file without `active` and `display_kind` (v11 and older) has none, and a count of a session of
// 200,000 messages is some 30 ms spent on every answer. Where there can be some (the v21 fixture,
// a v11 file given `display_kind`), the count is still right.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { MessagesOptions } from "../../lib/core/session_options.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { mayLeaveRowsOut } from "../../lib/web/left_out.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";

const V11_SESSION = "20260420_090000_994beb";
const V21_REWOUND = "20260501_110000_rew01";

/** `store`, with the options of every `countMessages` call written to `counts`. */
function countingCalls(store: SessionStore, counts: MessagesOptions[]): SessionStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === "countMessages") {
        return (id: string, options: MessagesOptions = {}) => {
          counts.push(options);
          return target.countMessages(id, options);
        };
      }
      const value = Reflect.get(target, name, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** `left_out` of `/api/session?id=ID&…query`, and the counts of every row it made. */
async function leftOutOf(
  file: string,
  query: string,
): Promise<{ leftOut: number; everyRowCounts: number }> {
  const store = await openStore(file, { readonly: true });
  try {
    const counts: MessagesOptions[] = [];
    const handle = createHandler(countingCalls(store, counts));
    const response = await handle(new Request(`http://127.0.0.1:8787/api/session?${query}`));
    assert.equal(response.status, 200);
    const body = await response.json() as { left_out: number };
    return {
      leftOut: body.left_out,
      everyRowCounts: counts.filter((options) => options.includeInactive).length,
    };
  } finally {
    await store.close();
  }
}

describe("left_out of /api/session", () => {
  test("transcript() counts no row apart on a v11 file, with or without all", async () => {
    const file = copyFixture("hermes-v11.db");
    assert.deepEqual(await leftOutOf(file, `id=${V11_SESSION}`), {
      leftOut: 0,
      everyRowCounts: 0,
    });
    const every = await leftOutOf(file, `id=${V11_SESSION}&all=1`);
    // With all, the rows shown are every row: counted once, as the page's own count.
    assert.deepEqual(every, { leftOut: 0, everyRowCounts: 1 });
  });

  test("transcript() still counts the rows a v21 file's transcript leaves out", async () => {
    const file = copyFixture("hermes-v21.db");
    assert.equal((await leftOutOf(file, `id=${V21_REWOUND}`)).leftOut, 2);
    assert.equal((await leftOutOf(file, `id=${V21_REWOUND}&all=1`)).leftOut, 2);
  });

  test("transcript() counts the hidden rows of a file with display_kind but no active", async () => {
    const file = copyFixture("hermes-v11.db");
    {
      using raw = await rawOpen(file);
      raw.exec(`ALTER TABLE messages ADD COLUMN display_kind TEXT;
        UPDATE messages SET display_kind = 'hidden'
          WHERE id = (SELECT max(id) FROM messages WHERE session_id = '${V11_SESSION}')`);
    }
    assert.equal((await leftOutOf(file, `id=${V11_SESSION}`)).leftOut, 1);
    assert.equal((await leftOutOf(file, `id=${V11_SESSION}&all=1`)).leftOut, 1);
  });

  test("transcript() counts the rows of a file a newer Hermes upgraded while it was open", async () => {
    const file = copyFixture("hermes-v11.db");
    const store = await openStore(file, { readonly: true });
    try {
      const handle = createHandler(store);
      const leftOut = async (query: string) => {
        const url = `http://127.0.0.1:8787/api/session?id=${V11_SESSION}&${query}`;
        return (await (await handle(new Request(url))).json() as { left_out: number }).left_out;
      };
      // Read before the upgrade (the server's statements prepared on the v11 schema).
      assert.equal(await leftOut("limit=1"), 0);
      assert.equal(await leftOut("limit=1&all=1"), 0);
      {
        using raw = await rawOpen(file);
        raw.exec(`ALTER TABLE messages ADD COLUMN active INTEGER DEFAULT 1;
          ALTER TABLE messages ADD COLUMN compacted INTEGER DEFAULT 0;
          UPDATE messages SET active = 0 WHERE id IN
            (SELECT id FROM messages WHERE session_id = '${V11_SESSION}' ORDER BY id DESC LIMIT 2)`);
      }
      assert.equal(await leftOut("limit=2"), 2);
      assert.equal(await leftOut("limit=2&all=1"), 2);
    } finally {
      await store.close();
    }
  });

  test("mayLeaveRowsOut() is false on a v11 file only", async () => {
    for (
      const [fixture, id, may] of [
        ["hermes-v11.db", V11_SESSION, false],
        ["hermes-v21.db", V21_REWOUND, true],
        // No row to tell by: the count tells (0 for a session without messages).
        ["hermes-v11.db", "no_such_session", true],
      ] as const
    ) {
      const store = await openStore(copyFixture(fixture), { readonly: true });
      try {
        const [row] = await store.getMessages(id, { last: 1 });
        assert.equal(mayLeaveRowsOut(store, row), may, `${fixture} ${id}`);
      } finally {
        await store.close();
      }
    }
  });
});
