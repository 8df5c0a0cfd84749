/**
 * A question on standard input (`delete` asks before it deletes) reads at
 * most a line's start: an endless line (`cat /dev/zero | hermes-state
 * delete ID`) is a "no" at once. It was gathered whole, searched again for
 * its end at each chunk: 700 MB of zeros ran for minutes and took 2.7 GB.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { v11Copy, withDb } from "./_cli_io.ts";
import { ROOT } from "./_helpers.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";

const SESSION = "20260429_090322_3762ca";

test("delete asked through an endless line of zeros cancels at once and keeps the session", async () => {
  const db = v11Copy();
  const cli = runtimeName() === "deno"
    ? ["run", "-A", join(ROOT, "cli.ts")]
    : [join(ROOT, "cli.ts")];
  const child = spawnSync(
    "sh",
    [
      "-c",
      'head -c 300M /dev/zero | "$@"',
      "sh",
      process.execPath,
      ...cli,
      "--db",
      db,
      "delete",
      SESSION,
    ],
    // Far more than the run takes; before the bound, the run was still going when this killed it.
    { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 60_000 },
  );
  assert.equal(child.signal, null, "the command ended by itself");
  assert.equal(child.status, 1);
  assert.equal(
    child.stderr,
    `Delete session '${SESSION}' and its 5 messages? [y/N] Cancelled.\n`,
  );
  const kept = await withDb(db, (store) => store.messageCount());
  assert.equal(kept, 197, "nothing deleted");
});
