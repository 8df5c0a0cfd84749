/**
 * Worker process of `pg_lost_writes_test.ts`: writes through `openStore(url)`
 * while the test ends its server connections, and reports every call's
 * outcome. It never tries a call again on its own: what it reports is what
 * the store said.
 *
 * Argument: one JSON object `{ url, name, seed, seconds }`. Output, one line
 * each (written at once, so a killed process loses none):
 * - `ready <runtime>`;
 * - `op <n> <what> <session> <count>` before call `n`, where `what` is
 *   `append` (its `count` messages have the contents `lw <name>.<n>.<k>`),
 *   `tokens` (`count` input tokens added to the session's, in a transaction
 *   of two statements), `create` or `end` (of `session`);
 * - `ok <n>` once it returned, or `err <n> <unknown|notmade> <message>` once
 *   it threw: `unknown` when the error says whether it was written cannot be
 *   told, `notmade` for any other error (which says the call was not made);
 * - `done` after `seconds` of writing, the store closed.
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
  seed: number;
  seconds: number;
};
const random = mulberry32(config.seed);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let store: Awaited<ReturnType<typeof openStore>> | undefined;
while (store === undefined) {
  store = await openStore(config.url).catch(async () => {
    await pause(100);
    return undefined;
  });
}
const opened = store;
say(`ready ${runtimeName()}`);

let n = 0;
/** Reports call `n` as it starts and as it ends; whether it returned. */
async function call(what: string, session: string, count: number, run: () => Promise<unknown>) {
  const op = n++;
  say(`op ${op} ${what} ${session} ${count}`);
  try {
    await run();
    say(`ok ${op}`);
    return true;
  } catch (error) {
    const message = String(error instanceof Error ? error.message : error).replace(/\s+/g, " ");
    const told = /whether it was written cannot be told/.test(message) ? "unknown" : "notmade";
    say(`err ${op} ${told} ${error instanceof Error ? error.name : typeof error}: ${message}`);
    return false;
  }
}

/** Messages of call number `op`, each content unique. */
function messages(op: number, count: number) {
  return Array.from({ length: count }, (_, k) => ({
    role: k % 2 === 0 ? "user" : "assistant",
    content: `lw ${config.name}.${op}.${k}`,
  }));
}

let sessions = 0;
const newSession = () => `${config.name}-s${sessions++}`;
let session = newSession();
while (!await call("create", session, 0, () => opened.createSession(session, "lost"))) {
  session = newSession();
}
const until = Date.now() + config.seconds * 1000;
while (Date.now() < until) {
  const pick = random();
  if (pick < 0.08) {
    const ending = session;
    await call("end", ending, 0, () => opened.endSession(ending, "rotated"));
    const next = newSession();
    if (await call("create", next, 0, () => opened.createSession(next, "lost"))) session = next;
  } else if (pick < 0.25) {
    const tokens = n + 1;
    await call(
      "tokens",
      session,
      tokens,
      () => opened.updateTokenCounts(session, { inputTokens: tokens }),
    );
  } else if (pick < 0.29) {
    // More than one statement's worth (1,000 rows): one transaction.
    const list = messages(n, 1001 + Math.floor(random() * 300));
    await call("append", session, list.length, () => opened.appendMessages(session, list));
  } else if (pick < 0.55) {
    const list = messages(n, 2 + Math.floor(random() * 7));
    await call("append", session, list.length, () => opened.appendMessages(session, list));
  } else {
    const [message] = messages(n, 1);
    await call("append", session, 1, () => opened.appendMessage(session, message));
  }
  await pause(random() * 15);
}
await opened.close();
say("done");
