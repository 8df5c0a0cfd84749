import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { RuntimeName } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { NewMessage } from "../../lib/core/types.ts";
import { tempDbPath, tempDir } from "../_helpers.ts";
import { runtimeBinary, workerEnv, workersSpanRuntimes } from "../reliability/_runtimes.ts";

const CHILD = fileURLToPath(new URL("./_recover_child.ts", import.meta.url));

/** A heap of this many MiB: less than the text of the second file's messages (80 MB). */
const HEAP_MIB = 64;

/** The command line running the child under `runtime` with its JavaScript heap limited. */
function limited(runtime: RuntimeName, args: readonly string[]): [string, string[]] {
  const binary = runtimeBinary(runtime)!;
  const limit = `--max-old-space-size=${HEAP_MIB}`;
  return runtime === "deno"
    ? [binary, ["run", "-A", "--no-lock", `--v8-flags=${limit}`, CHILD, ...args]]
    : [binary, [limit, CHILD, ...args]];
}

/** Recovers `source` under each runtime with its heap limited, expecting `messages` back. */
function recoverLimited(source: string, messages: number): void {
  const runtimes = (["deno", "node"] as const).filter((r) => runtimeBinary(r) !== undefined);
  assert.ok(runtimes.length > 0, "a Deno or Node binary");
  for (const runtime of runtimes) {
    const dest = join(tempDir(), "recovered.db");
    const [command, args] = limited(runtime, [source, dest]);
    const run = spawnSync(command, args, { encoding: "utf8", env: workerEnv() });
    assert.equal(run.status, 0, `${runtime}: ${run.stderr.slice(-2000)}`);
    assert.equal(run.stdout, `${messages}\n`, runtime);
  }
}

/** A new file of one session holding `count` messages, each `message(i)`. */
async function fileOf(count: number, message: (i: number) => NewMessage): Promise<string> {
  const source = tempDbPath();
  const db = await SessionDB.open({ path: source });
  try {
    db.createSession("big", "cli");
    for (let i = 0; i < count; i++) db.appendMessage("big", message(i));
  } finally {
    db.close();
  }
  return source;
}

describe("recover of a file larger than memory", () => {
  // Deno and Node take a heap limit (Bun's engine has none to give): the run under Deno runs both.
  test("the page scan holds no record: a file of 84 MB is recovered in a 64 MiB heap", {
    skip: workersSpanRuntimes(),
    timeout: 120_000,
  }, async () => {
    // 200 messages of 100 KB: their text again in each search table's content and index,
    // which a scan that kept every record held too, beside SQLite's read of the messages.
    const source = await fileOf(200, (i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `message ${i} ` + "recovered words ".repeat(6_250),
    }));
    recoverLimited(source, 200);
  });

  test("the rows read are not held: 80 MB of text is recovered in a 64 MiB heap", {
    skip: workersSpanRuntimes(),
    timeout: 120_000,
  }, async () => {
    // 800 messages of 100 KB of reasoning (which no search table holds: the file is quick to
    // make): all of it was kept in memory until the new file was written.
    const source = await fileOf(800, (i) => ({
      role: "assistant",
      content: `answer ${i}`,
      reasoning: `thought ${i} ` + "recovered reasoning ".repeat(5_000),
    }));
    recoverLimited(source, 800);
  });
});
