// `/api/session?all=1`: every row of a transcript, those a newer Hermes rewound, compacted or
// hides too, each with the marks `show --all` prints; `left_out` says how many there are, so the
// page offers them only where there are some. Over a copy of the v21 fixture with a hidden row.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";

const LIVE = "20260501_090000_live01";
const REWOUND = "20260501_110000_rew01";
const COMPACTED = "20260501_120000_comp01";

interface Answer {
  status: number;
  body: {
    messages: { id: number; marks?: string[] }[];
    left_out: number;
    earlier: number;
    later: number;
    newest: number;
    error?: { message: string };
  };
}

describe("the transcript with every row (all=1)", () => {
  let store: SessionStore;
  let handle: Handler;

  before(async () => {
    const file = copyFixture("hermes-v21.db");
    {
      using raw = await rawOpen(file);
      raw.exec(`ALTER TABLE messages ADD COLUMN display_kind TEXT;
        UPDATE messages SET display_kind = 'hidden' WHERE id = 2`);
    }
    store = await openStore(file, { readonly: true });
    handle = createHandler(store);
  });
  after(async () => {
    await store?.close();
  });

  async function get(query: string): Promise<Answer> {
    const response = await handle(new Request(`http://127.0.0.1:8787/api/session?${query}`));
    return { status: response.status, body: await response.json() };
  }
  const marked = (answer: Answer) =>
    answer.body.messages.map((m) => [m.id, ...(m.marks ?? [])].join(" "));

  test("answers every row with its marks, and left_out counts those the transcript leaves out", async () => {
    const shown = await get(`id=${REWOUND}`);
    assert.deepEqual([marked(shown), shown.body.left_out], [["7", "8"], 2]);
    const every = await get(`id=${REWOUND}&all=1`);
    assert.deepEqual(marked(every), ["7", "8", "9 [rewound]", "10 [rewound]"]);
    assert.deepEqual([every.body.left_out, every.body.newest], [2, 10]);
    assert.deepEqual(marked(await get(`id=${COMPACTED}&all=1`)), [
      "11 [compacted]",
      "12 [compacted]",
      "13 [compacted]",
      "14",
      "15",
    ]);
    const hidden = await get(`id=${LIVE}&all=1`);
    assert.deepEqual(marked(hidden), ["1", "2 [hidden]", "3", "4"]);
    assert.equal((await get(`id=${LIVE}`)).body.left_out, 1);
    assert.equal((await get(`id=${LIVE}&all=0`)).body.messages.length, 3);
  });

  test("pages and opens at a message among every row", async () => {
    const at = await get(`id=${COMPACTED}&all=1&m=12`);
    assert.deepEqual([at.body.messages.length, at.body.earlier, at.body.later], [5, 0, 0]);
    const before = await get(`id=${COMPACTED}&all=1&before=14&limit=2`);
    assert.deepEqual(marked(before), ["12 [compacted]", "13 [compacted]"]);
    assert.equal(before.body.earlier, 1);
    // Without all, a rewound message is no place to page from.
    assert.equal((await get(`id=${REWOUND}&beyond=9`)).status, 409);
    assert.deepEqual(marked(await get(`id=${REWOUND}&all=1&beyond=9`)), ["10 [rewound]"]);
  });

  test("a bad all is refused, naming it", async () => {
    const answer = await get(`id=${REWOUND}&all=yes`);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error?.message, 'all must be 1 or 0: current value is "yes"');
  });
});
