/**
 * Worker process: appends messages to its own session and to a shared one,
 * and reports each append on stdout only after the call has returned.
 *
 * Argument: one JSON object ({@linkcode WriterConfig}). Output lines:
 * - `ready <runtime>` once the sessions exist;
 * - `try <session> <token,token,…> <epoch ms>` before each call;
 * - `ack <token> <id> <session> <epoch ms>` after the call returned, one per message;
 * - `done` after the last append (never, when `count` is 0: it runs until killed).
 *
 * Every message's content is `hello <token> from <runtime>`; `<token>` is
 * unique in the whole run, so the checker can count each append.
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
import { mulberry32 } from "../_random.ts";

/** What a writer does. */
export interface WriterConfig {
  /** The database file. */
  readonly path: string;
  /** Worker name, the prefix of its tokens (letters and digits only). */
  readonly name: string;
  /** Its own session. */
  readonly own: string;
  /** The session every writer shares, if any. */
  readonly shared?: string;
  /** Messages to append; 0 appends until the process is killed. */
  readonly count: number;
  /** Seed of the choices (single or batch, batch size, target session). */
  readonly seed: number;
  /** Waits for this file to exist before the first append. */
  readonly startFile?: string;
  /** Pause after each append, in milliseconds (none by default). */
  readonly pauseMs?: number;
}

const config = JSON.parse(process.argv[2]) as WriterConfig;
const runtime = runtimeName();
const random = mulberry32(config.seed);

function message(token: string, index: number): NewMessage {
  const content = `hello ${token} from ${runtime}`;
  if (index % 3 === 2) {
    return {
      role: "assistant",
      content,
      toolCalls: [{
        id: `call_${token}`,
        type: "function",
        function: { name: "probe", arguments: JSON.stringify({ token }) },
      }],
      finishReason: "tool_calls",
    };
  }
  return { role: index % 3 === 0 ? "user" : "assistant", content };
}

const db = await SessionDB.open({ path: config.path });
db.createSession(config.own, "reliability", { model: `test-${runtime}` });
if (config.shared) db.createSession(config.shared, "reliability");
say(`ready ${runtime}`);

if (config.startFile) {
  while (!existsSync(config.startFile)) sleepSync(2);
}

let index = 0;
while (config.count === 0 || index < config.count) {
  const session = config.shared && random() < 0.5 ? config.shared : config.own;
  const left = config.count === 0 ? 8 : config.count - index;
  const size = random() < 0.25 ? Math.min(left, 1 + Math.floor(random() * 8)) : 1;
  const tokens = Array.from({ length: size }, (_, k) => `${config.name}x${index + k}`);
  const batch = tokens.map((token, k) => message(token, index + k));
  say(`try ${session} ${tokens.join(",")} ${Date.now()}`);
  const ids = size === 1 && random() < 0.8
    ? [db.appendMessage(session, batch[0])]
    : db.appendMessages(session, batch);
  const now = Date.now();
  tokens.forEach((token, k) => say(`ack ${token} ${ids[k]} ${session} ${now}`));
  index += size;
  if (config.pauseMs) sleepSync(config.pauseMs);
}
db.close();
say("done");
