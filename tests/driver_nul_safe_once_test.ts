/**
 * The NUL-safe form of a query (Deno's `node:sqlite` cuts returned text at
 * U+0000, `lib/sqlite/driver/_nul_safe.ts`) computes each column once a
 * row, as the query alone does. SQLite flattened the wrapped query into the
 * wrapper, which names each column four times: a snippet or a correlated
 * subquery ran four times a row, and a search on Deno took half as long again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import type { SqlValue } from "../lib/sqlite/driver/types.ts";
import { maskColumns, NUL_MASK, nulSafeQuery, nulSafeRow } from "../lib/sqlite/driver/_nul_safe.ts";

/** `node:sqlite` (Deno and Node): the wrapper is its adapter's, and its functions count calls. */
const skip = runtimeName() === "bun" ? "the wrapper serves node:sqlite (Deno and Node)" : false;

/** The rows of `sql` and of its NUL-safe form, with the calls of `f()` each made. */
async function callsOf(sql: string, columns: string[]) {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(":memory:");
  try {
    let calls = 0;
    db.function("f", (id) => {
      calls++;
      return Number(id) % 3 === 0 ? `nul\u0000${id}` : `text ${id}`;
    });
    db.exec(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB);" +
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) " +
        "INSERT INTO t (id, b) SELECT i, x'00ff' FROM n",
    );
    const plain = db.prepare(sql).all();
    const plainCalls = calls;
    calls = 0;
    const safe = nulSafeQuery(sql, columns);
    assert.ok(safe !== undefined, sql);
    const names = [...columns, ...maskColumns(columns.length)];
    const rows = db.prepare(safe).all().map((row) =>
      nulSafeRow(names.map((name) => (row as Record<string, SqlValue>)[name]), columns)
    );
    return { plain, plainCalls, rows, safeCalls: calls };
  } finally {
    db.close();
  }
}

test("the NUL-safe form of a query computes each column once a row, as the query does", {
  skip,
}, async () => {
  for (
    const sql of [
      "SELECT id, f(id) AS text, b FROM t",
      "SELECT id, f(id) AS text, b FROM t WHERE id > 20",
      "SELECT id, f(id) AS text, b FROM t ORDER BY id DESC LIMIT 50 OFFSET 5",
      "SELECT id, (SELECT f(u.id) FROM t AS u WHERE u.id = t.id) AS text, b FROM t",
    ]
  ) {
    const { plain, plainCalls, rows, safeCalls } = await callsOf(sql, ["id", "text", "b"]);
    assert.equal(safeCalls, plainCalls, sql);
    // The same rows, in the same order, text holding U+0000 whole and BLOBs kept as bytes.
    assert.equal(rows.length, plain.length, sql);
    for (const [i, row] of rows.entries()) {
      assert.equal(row.id, plain[i].id, sql);
      assert.equal(row.text, `${Number(row.id) % 3 === 0 ? "nul\u0000" : "text "}${row.id}`, sql);
      assert.deepEqual(row.b, new Uint8Array([0, 255]), sql);
      assert.ok(!(NUL_MASK in row), sql);
    }
  }
});
