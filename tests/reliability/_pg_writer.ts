/**
 * Worker process for the PostgreSQL reliability tests: appends messages to
 * its own session and to a shared one through `openStore(url)`, and reports
 * each append on stdout only after the call has returned.
 *
 * Argument: one JSON object `{ url, name, own, shared, count, seed, retry? }`
 * (`count` 0 appends until killed). Output: `ready <runtime>`, then
 * `ack <token> <id> <session>` per message, then `done`. With `retry`, a
 * failed call (the server gone) prints `error <message>` and the writer
 * goes on after a pause with new tokens: the failed call's tokens were
 * never acknowledged, and may or may not be stored (all of a call or none).
 *
 * @module
 */
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
  /** Goes on after a failed call instead of exiting. @default {false} */
  retry?: boolean;
};
const runtime = runtimeName();
const random = mulberry32(config.seed);
/** Runs `call`; with `retry`, again after a pause for as long as it fails. */
async function attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (!config.retry) throw error;
    say(`error ${String((error as Error).message).split("\n")[0]}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return undefined;
  }
}

let store: Awaited<ReturnType<typeof openStore>> | undefined;
while (store === undefined) store = await attempt(() => openStore(config.url));
const opened = store;
while (
  await attempt(() =>
    opened.createSession(config.own, "reliability", { model: `test-${runtime}` })
  ) ===
    undefined
);
while (await attempt(() => opened.createSession(config.shared, "reliability")) === undefined);
say(`ready ${runtime}`);

let index = 0;
while (config.count === 0 || index < config.count) {
  const session = random() < 0.5 ? config.shared : config.own;
  const left = config.count === 0 ? 8 : config.count - index;
  const size = random() < 0.25 ? Math.min(left, 1 + Math.floor(random() * 8)) : 1;
  const tokens = Array.from({ length: size }, (_, k) => `${config.name}x${index + k}`);
  const messages = tokens.map((token, k) => ({
    role: "user",
    content: `hello ${token} from ${runtime}`,
    toolCalls: (index + k) % 3 === 2 ? [{ id: `call_${token}` }] : undefined,
  }));
  const ids = await attempt(async () =>
    size === 1
      ? [await opened.appendMessage(session, messages[0])]
      : await opened.appendMessages(session, messages)
  );
  if (ids !== undefined) tokens.forEach((token, k) => say(`ack ${token} ${ids[k]} ${session}`));
  index += size;
}
await opened.close();
say("done");
