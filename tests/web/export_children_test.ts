/**
 * The export of the listing's selection over HTTP on a real store follows its "Has children"
 * filter: `children=1` exports the sessions that have a child session, as the listing shows
 * them, and not the others; without it, every session of the filters (children too).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import { serve, type Served } from "./_served.ts";

const PARENT = "20260601_090000_parent";
const CHILD = "20260601_091000_child";
const LONE = "20260601_100000_lone";
/** A session of another source with a child: the source filter leaves it out. */
const OTHER_PARENT = "20260601_110000_other";
const OTHER_CHILD = "20260601_111000_other_child";

let served: Served;

before(async () => {
  const path = tempDbPath();
  {
    await using writer = await openStore(path);
    await writer.createSession(PARENT, "cli");
    await writer.createSession(CHILD, "cli", { parentSessionId: PARENT });
    await writer.createSession(LONE, "cli");
    await writer.createSession(OTHER_PARENT, "telegram");
    await writer.createSession(OTHER_CHILD, "telegram", { parentSessionId: OTHER_PARENT });
    for (const id of [PARENT, CHILD, LONE, OTHER_PARENT, OTHER_CHILD]) {
      await writer.appendMessages(id, [{ role: "user", content: `words of ${id}` }]);
    }
  }
  served = await serve(path);
});

after(async () => {
  await served?.close();
});

/** The session ids of the JSON Lines export `query` asks for, sorted. */
async function exported(query: string): Promise<string[]> {
  const response = await fetch(`${served.origin}/api/export?format=jsonl${query}`);
  assert.equal(response.status, 200, query);
  const lines = (await response.text()).split("\n").filter((line) => line !== "");
  return lines.map((line) => JSON.parse(line).id as string).sort();
}

describe('the export of the listing\'s selection and its "Has children" filter', () => {
  test("children=1 exports only the sessions that have a child, as the listing shows", async () => {
    const listed = await (await fetch(`${served.origin}/api/sessions?children=1`)).json();
    const shown = listed.sessions.map((row: { id: string }) => row.id).sort();
    assert.deepEqual(shown, [PARENT, OTHER_PARENT].sort());
    assert.deepEqual(await exported("&children=1"), shown);
  });

  test("with a source too, the sessions of that source that have a child", async () => {
    assert.deepEqual(await exported("&source=cli&children=1"), [PARENT]);
  });

  test("without it (or children=0), every session of the filters, children too", async () => {
    assert.deepEqual(await exported("&source=cli"), [PARENT, CHILD, LONE].sort());
    assert.deepEqual(await exported("&source=cli&children=0"), [PARENT, CHILD, LONE].sort());
  });

  test("a children value other than 1 or 0 is a 400 naming it", async () => {
    const response = await fetch(`${served.origin}/api/export?format=jsonl&children=yes`);
    assert.equal(response.status, 400);
    assert.match((await response.json()).error.message, /children must be 1 or 0/);
  });
});

describe("the export of the listing's selection holds a compression chain whole, as its one row", () => {
  // The listing shows a chain as its tip, under its root's start: the export of that day (or
  // of "Has children") held the root, not the sessions that continue it.
  const ROOT = "20260401_090000_root";
  const MID = "20260402_090000_mid";
  const TIP = "20260403_090000_tip";
  const DAY = Date.UTC(2026, 3, 1) / 1000;
  let chained: Served;

  before(async () => {
    const path = tempDbPath();
    let now = DAY + 9 * 3600;
    {
      await using writer = await openStore(path, { clock: () => now });
      let parent: string | undefined;
      for (const id of [ROOT, MID, TIP]) {
        await writer.createSession(
          id,
          "cli",
          parent === undefined ? {} : { parentSessionId: parent },
        );
        await writer.appendMessages(id, [{ role: "user", content: `words of ${id}` }]);
        if (id !== TIP) await writer.endSession(id, "compression");
        parent = id;
        now += 86_400;
      }
    }
    chained = await serve(path);
  });

  after(async () => {
    await chained?.close();
  });

  async function chainExport(query: string): Promise<string[]> {
    const response = await fetch(`${chained.origin}/api/export?format=jsonl${query}`);
    assert.equal(response.status, 200, query);
    const lines = (await response.text()).split("\n").filter((line) => line !== "");
    return lines.map((line) => JSON.parse(line).id as string);
  }

  test("the day of its root: the listing's row is the tip; the export holds root, mid and tip", async () => {
    const range = `&from=${DAY}&to=${DAY + 86_400}`;
    const listed = await (await fetch(`${chained.origin}/api/sessions?${range.slice(1)}`)).json();
    assert.deepEqual(listed.sessions.map((row: { id: string }) => row.id), [TIP]);
    assert.deepEqual(await chainExport(range), [ROOT, MID, TIP]);
  });

  test("children=1: the chain whole, the tip too, though it has no child", async () => {
    assert.deepEqual((await chainExport("&children=1")).sort(), [ROOT, MID, TIP]);
  });

  test("no filter: each session once", async () => {
    assert.deepEqual((await chainExport("")).sort(), [ROOT, MID, TIP]);
  });
});
