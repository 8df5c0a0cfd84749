/**
 * The library contract of `openStore("postgres://…")` where the PostgreSQL
 * engine has options of its own (the cases every engine shares are in
 * `_api_contract.ts`, run by the conformance suite): a pool size or a number
 * of attempts that is not a positive integer, or a schema that is not text,
 * is refused naming the value, before anything is connected to or created.
 * `max: 0` waited 30 s and then said the server did not accept the
 * connection; `max: NaN` said "Invalid array length"; a Symbol schema
 * failed to convert to a string.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { OpenError } from "../../lib/core/errors.ts";
import { openStore } from "../../lib/open_store.ts";
import { adminSql, freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";

// deno-lint-ignore no-explicit-any -- the wrong types are what is tested
type Loose = any;

/** True when the server has a schema of that name. */
async function schemaExists(schema: string): Promise<boolean> {
  const rows = await adminSql(`SELECT 1 FROM pg_namespace WHERE nspname = '${schema}'`);
  return rows.length > 0;
}

test(
  "openStore() refuses a pool size or attempt count that is not a positive integer, at once, creating nothing",
  {
    skip: PG_SKIP,
  },
  async () => {
    const bad: [Loose, RegExp][] = [
      [{ max: 0 }, /max must be a positive integer: current value is 0$/],
      [{ max: NaN }, /max must be a positive integer: current value is NaN$/],
      [{ max: 1.5 }, /max must be a positive integer: current value is 1\.5$/],
      [{ max: "2" }, /max must be a positive integer: current value is "2"$/],
      [{ maxAttempts: 0 }, /maxAttempts must be a positive integer: current value is 0$/],
      [{ maxAttempts: Symbol("x") }, /maxAttempts .*: current value is Symbol\(x\)$/],
    ];
    for (const [options, message] of bad) {
      const schema = freshSchema();
      const started = Date.now();
      await assert.rejects(
        openStore(schemaUrl(schema), options),
        (error) =>
          error instanceof RangeError && message.test(error.message) &&
          error.message.startsWith("Cannot open database: "),
        String(message),
      );
      assert.ok(Date.now() - started < 5000, "refused without waiting for a connection");
      assert.equal(await schemaExists(schema), false);
    }
    // The defaults and good values still open.
    const schema = freshSchema();
    await using store = await openStore(schemaUrl(schema), { max: 1, maxAttempts: 1 });
    assert.equal(await store.sessionCount(), 0);
  },
);

test("openStore() names a schema option that is not text, as it names a bad schema name", {
  skip: PG_SKIP,
}, async () => {
  for (const [schema, shown] of [[Symbol("x"), "Symbol(x)"], [5, "5"], [{}, "{}"]] as const) {
    await assert.rejects(
      openStore(schemaUrl(freshSchema()), { schema: schema as Loose }),
      (error) =>
        error instanceof OpenError &&
        error.message.endsWith(
          `the schema must be a plain identifier (letters, digits, _ and $): current value is ${shown}`,
        ),
      shown,
    );
  }
});
