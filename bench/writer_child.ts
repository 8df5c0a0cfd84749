/**
 * One writer process of `bench/pg.ts`: appends to its own session through
 * `openStore(url)` with the reliability writer's mix of calls (one message
 * in three of four calls, else 1–8 at once), but says nothing per append,
 * so the benchmark times the store and not its own pipe: the reliability
 * writer prints an acknowledgement per append, which its parent reads and
 * parses, and on two cores that is CPU the PostgreSQL server goes without
 * while SQLite's writers, waiting on the lock and `fsync`, would not miss it.
 *
 * It first appends `warmup` messages untimed (a gateway runs for hours: its
 * runtime has compiled the append path long before), then prints `ready`,
 * waits for `startFile`, appends `count` messages and prints
 * `done <CPU microseconds of the timed appends>`.
 *
 * Argument: one JSON object `{ url, session, count, warmup, seed, startFile }`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { openStore } from "../lib/open_store.ts";
import type { NewMessage } from "../lib/core/types.ts";
import { mulberry32 } from "../tests/_random.ts";
import { say } from "../tests/reliability/_runtimes.ts";

const config = JSON.parse(process.argv[2]) as {
  url: string;
  session: string;
  count: number;
  warmup: number;
  seed: number;
  startFile: string;
};
const random = mulberry32(config.seed);
const store = await openStore(config.url);
await store.createSession(config.session, "bench");

/** Appends `count` messages, numbered from `first`, in calls of 1 to 8. */
async function append(first: number, count: number): Promise<void> {
  for (let index = first; index < first + count;) {
    const left = first + count - index;
    const size = random() < 0.25 ? Math.min(left, 1 + Math.floor(random() * 8)) : 1;
    const messages: NewMessage[] = Array.from({ length: size }, (_, k) => ({
      role: "user",
      content: `hello ${config.session}x${index + k} from the benchmark`,
      toolCalls: (index + k) % 3 === 2 ? [{ id: `call_${index + k}` }] : undefined,
    }));
    if (size === 1) await store.appendMessage(config.session, messages[0]);
    else await store.appendMessages(config.session, messages);
    index += size;
  }
}

await append(0, config.warmup);
say("ready");
while (!existsSync(config.startFile)) await new Promise((resolve) => setTimeout(resolve, 5));
const before = process.cpuUsage();
await append(config.warmup, config.count);
const used = process.cpuUsage(before);
await store.close();
say(`done ${used.user + used.system}`);
