/**
 * Worker process: loses the connection of its transactions (the server ends
 * it, once with a statement waiting for a connection), then closes its
 * client and lets the process end by itself, as a library user's would.
 *
 * Argument: the server URL. Output: `closed` once both clients are closed;
 * the process should then end at once (nothing of the client left open).
 *
 * @module
 */
import process from "node:process";
import { connectPg } from "../../lib/postgres/_client.ts";
import { say } from "./_runtimes.ts";

const url = process.argv[2];
const name = `hermes-close-${crypto.randomUUID().slice(0, 8)}`;
const client = await connectPg(
  `${url}${url.includes("?") ? "&" : "?"}application_name=${name}`,
  "public",
  {
    max: 1,
  },
);
const admin = await connectPg(url, "public", { max: 1 });
for (const queued of [false, true]) {
  const waiting: Promise<unknown>[] = [];
  await client.transaction(async (query) => {
    await query("SELECT 1");
    if (queued) waiting.push(client.query("SELECT 1"));
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [
        name,
      ],
    );
    await query("SELECT pg_sleep(1)").catch(() => {});
  }).catch(() => {});
  await Promise.all(waiting);
}
await client.close();
await admin.close();
say("closed");
