/**
 * A TypeError the client package's own code throws while its connection goes
 * away (porsager/postgres#1066 and kin) is a lost connection to the caller,
 * not a fault of its arguments; one from anywhere else stays what it is.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { failedInsideClient } from "../../lib/postgres/_pg_errors.ts";

function thrownAt(frame: string): TypeError {
  const error = new TypeError("Cannot read properties of null (reading 'write')");
  error.stack =
    `TypeError: ${error.message}\n    at ${frame}\n    at process.processImmediate (node:internal/timers:574:21)`;
  return error;
}

test("failedInsideClient() knows the client's frames on Node, Bun and Deno, and nothing else", () => {
  for (
    const frame of [
      "Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)",
      "nextWrite (/app/node_modules/postgres/cjs/src/connection.js:255:22)",
      "nextWrite (file:///root/.cache/deno/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)",
    ]
  ) assert.ok(failedInsideClient(thrownAt(frame)), frame);
  for (
    const frame of [
      "appendMessage (file:///app/lib/postgres/postgres_store.ts:10:5)",
      "checkRole (file:///app/lib/core/message_values.ts:3:9)",
    ]
  ) assert.ok(!failedInsideClient(thrownAt(frame)), frame);
  assert.ok(!failedInsideClient(new RangeError("x")));
  assert.ok(!failedInsideClient("text"));
});
