/**
 * Worker process for the PostgreSQL sync churn test: runs `passes` sync
 * passes of one file to the server, one after another, a pause between.
 *
 * Argument: one JSON object `{ url, path, origin, passes, pauseMs }`.
 * Output: `ready <runtime>`, then per pass `pass <created> <updated>
 * <deleted> <messages>` or `error <name>: <message>` (its first line), then
 * `done`.
 *
 * @module
 */
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { say } from "./_runtimes.ts";

const config = JSON.parse(process.argv[2]) as {
  url: string;
  path: string;
  origin: string;
  passes: number;
  pauseMs: number;
};
const client = await connectSyncTarget(config.url);
say(`ready ${runtimeName()}`);
try {
  for (let i = 0; i < config.passes; i++) {
    try {
      const result = await syncFile(client, config.path, { origin: config.origin, host: "h" });
      say(`pass ${result.created} ${result.updated} ${result.deleted} ${result.messages}`);
    } catch (error) {
      const { name, message } = error as Error;
      say(`error ${name}: ${String(message).split("\n")[0]}`);
    }
    await new Promise((resolve) => setTimeout(resolve, config.pauseMs));
  }
} finally {
  await client.close();
}
say("done");
