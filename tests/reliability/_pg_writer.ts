/**
 * Worker process for the PostgreSQL reliability tests: appends messages to
 * its own session and to a shared one through `openStore(url)`, and reports
 * each append on stdout only after the call has returned.
 *
 * Argument: one JSON object `{ url, name, own, shared, count, seed, sharedRatio? }`
 * (`count` 0 appends until killed). Output: `ready <runtime>`, then
 * `ack <token> <id> <session>` per message, then `done`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { openStore } from "../../lib/open_store.ts";
import { mulberry32 } from "../_random.ts";
import { say } from "./_runtimes.ts";

const config = JSON.parse(process.argv[2]) as {
  url: string;
  name: string;
  own: string;
  shared: string;
  count: number;
  seed: number;
  /** Share of appends that go to the shared session. @default {0.5} */
  sharedRatio?: number;
  /** Waits for this file to exist before the first append (to start writers together). */
  startFile?: string;
};
const runtime = runtimeName();
const random = mulberry32(config.seed);
const store = await openStore(config.url);
await store.createSession(config.own, "reliability", { model: `test-${runtime}` });
await store.createSession(config.shared, "reliability");
say(`ready ${runtime}`);
while (config.startFile && !existsSync(config.startFile)) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}

let index = 0;
while (config.count === 0 || index < config.count) {
  const session = random() < (config.sharedRatio ?? 0.5) ? config.shared : config.own;
  const left = config.count === 0 ? 8 : config.count - index;
  const size = random() < 0.25 ? Math.min(left, 1 + Math.floor(random() * 8)) : 1;
  const tokens = Array.from({ length: size }, (_, k) => `${config.name}x${index + k}`);
  const messages = tokens.map((token, k) => ({
    role: "user",
    content: `hello ${token} from ${runtime}`,
    toolCalls: (index + k) % 3 === 2 ? [{ id: `call_${token}` }] : undefined,
  }));
  const ids = size === 1
    ? [await store.appendMessage(session, messages[0])]
    : await store.appendMessages(session, messages);
  tokens.forEach((token, k) => say(`ack ${token} ${ids[k]} ${session}`));
  index += size;
}
await store.close();
say("done");
