/**
 * Worker process: appends large batches with `appendMessages` (above the
 * bulk-index threshold, so the full-text triggers are set aside during each
 * batch), reporting as `_writer.ts` does so that `_checks.ts` can verify it.
 *
 * Argument: one JSON object ({@linkcode BulkWriterConfig}). Output lines:
 * `ready <runtime>`; `try <session> <token,…> <epoch ms>` before each batch;
 * `ack <token> <id> <session> <epoch ms>` after it returned, one per message;
 * `done` at the end. Contents are `hello <token> from <runtime>`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { sleepSync } from "../../lib/sqlite/write.ts";
import type { NewMessage } from "../../lib/core/types.ts";
import { say } from "./_runtimes.ts";

/** What a bulk writer does. */
export interface BulkWriterConfig {
  /** The database file. */
  readonly path: string;
  /** Worker name, the prefix of its tokens (letters and digits only). */
  readonly name: string;
  /** Its session. */
  readonly own: string;
  /** How many batches. */
  readonly batches: number;
  /** Messages per batch. */
  readonly size: number;
  /** Waits for this file to exist before the first batch. */
  readonly startFile?: string;
}

const config = JSON.parse(process.argv[2]) as BulkWriterConfig;
const runtime = runtimeName();

function message(token: string, index: number): NewMessage {
  const content = `hello ${token} from ${runtime} 数据库 docker`;
  if (index % 4 === 3) {
    return {
      role: "assistant",
      content,
      toolName: "probe",
      toolCalls: [{ id: `call_${token}`, type: "function", function: { name: "probe" } }],
    };
  }
  return { role: index % 2 === 0 ? "user" : "assistant", content };
}

const db = await SessionDB.open({ path: config.path });
db.createSession(config.own, "reliability");
say(`ready ${runtime}`);
if (config.startFile) {
  while (!existsSync(config.startFile)) sleepSync(2);
}
for (let b = 0; b < config.batches; b++) {
  const tokens = Array.from({ length: config.size }, (_, k) => `${config.name}x${b}y${k}`);
  const batch = tokens.map((token, k) => message(token, k));
  say(`try ${config.own} ${tokens.join(",")} ${Date.now()}`);
  const ids = db.appendMessages(config.own, batch);
  const now = Date.now();
  tokens.forEach((token, k) => say(`ack ${token} ${ids[k]} ${config.own} ${now}`));
}
db.close();
say("done");
