/**
 * appendMessages() above the bulk-index threshold (full-text triggers set
 * aside inside the transaction) with real processes: a writer racing the
 * import loses nothing, and a SIGKILL in the middle of a batch leaves the
 * file as it was before the batch, triggers included.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { tempDir } from "../_helpers.ts";
import { describeVerdict, newLedger, record, sound, verify } from "./_checks.ts";
import { delay, runSeed, startWorker, workerRuntimes } from "./_runtimes.ts";

const seed = runSeed();
const MASTER_SQL =
  "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY type, name";

async function master(path: string): Promise<unknown[]> {
  const db = (await loadDriver())(path, { readonly: true });
  try {
    return db.prepare(MASTER_SQL).all();
  } finally {
    db.close();
  }
}

/** The first `try` and the last `ack` of a worker, in epoch ms. */
function span(lines: readonly string[]): [number, number] {
  const first = Number(lines.find((l) => l.startsWith("try "))!.split(" ")[3]);
  const last = Number(lines.findLast((l) => l.startsWith("ack "))!.split(" ")[4]);
  return [first, last];
}

test(
  `appendMessages() of large batches in one process and appendMessage() in another at once lose nothing (seed ${seed})`,
  async () => {
    const [importer, writer] = workerRuntimes(["deno", "bun"]).concat(workerRuntimes(["deno"]));
    const dir = tempDir();
    const path = join(dir, "state.db");
    (await SessionDB.open({ path })).close();
    const before = await master(path);
    const startFile = join(dir, "start");
    const bulk = startWorker(importer, "_bulk_writer.ts", [
      JSON.stringify({ path, name: "bulk", own: "imported", batches: 6, size: 400, startFile }),
    ]);
    const single = startWorker(writer, "_writer.ts", [
      JSON.stringify({ path, name: "live", own: "live", count: 300, seed, startFile }),
    ]);
    await bulk.waitFor((l) => l.startsWith("ready"), "ready");
    await single.waitFor((l) => l.startsWith("ready"), "ready");
    writeFileSync(startFile, "");
    const [bulkLines, singleLines] = await Promise.all([bulk.succeeded(), single.succeeded()]);
    const ledger = newLedger();
    record(ledger, bulkLines);
    record(ledger, singleLines);
    const verdict = await verify(path, ledger);
    assert.ok(sound(verdict), describeVerdict(verdict));
    assert.equal(verdict.appends, 2700);
    assert.equal(verdict.rows, 2700);
    const [a, b] = [span(bulkLines), span(singleLines)];
    assert.ok(a[0] <= b[1] && b[0] <= a[1], `the two did not overlap: ${a} ${b}`);
    assert.deepEqual(await master(path), before, "sqlite_master is unchanged");
  },
);

test("appendMessages() killed with SIGKILL in the middle of a large batch leaves the file as before it", async () => {
  const [runtime] = workerRuntimes(["deno", "bun"]);
  const dir = tempDir();
  const path = join(dir, "state.db");
  {
    using db = await SessionDB.open({ path });
    db.createSession("earlier", "cli");
    db.appendMessages("earlier", [{ role: "user", content: "hello earlierx0 from before" }]);
  }
  const before = await master(path);
  const bulk = startWorker(runtime, "_bulk_writer.ts", [
    JSON.stringify({ path, name: "killed", own: "killed", batches: 1, size: 40_000 }),
  ]);
  await bulk.waitFor((l) => l.startsWith("try "), "the batch");
  await delay(300);
  bulk.kill("SIGKILL");
  const exit = await bulk.exited;
  assert.equal(exit.signal, "SIGKILL");
  assert.ok(!bulk.lines.some((l) => l.startsWith("ack ")), "the batch was still running");
  const ledger = newLedger();
  record(ledger, ["try earlier earlierx0 0", "ack earlierx0 1 earlier 0"]);
  record(ledger, bulk.lines);
  const verdict = await verify(path, ledger);
  assert.ok(sound(verdict), describeVerdict(verdict));
  assert.equal(verdict.rows, 1, "only the message from before the batch");
  assert.deepEqual(await master(path), before, "sqlite_master is as before, triggers included");
});
