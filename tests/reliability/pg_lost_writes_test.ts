/**
 * Writes whose connection is lost once they were sent, for real: writer
 * processes on Deno, Bun and Node (`_pg_lost_writer.ts`) append messages
 * with unique contents (one at a time, a few in one statement, more than
 * 1,000 in a transaction), add input tokens (a transaction of two
 * statements), end sessions and create new ones, while the test ends their
 * server processes (`pg_terminate_backend`) at random moments, many times,
 * has the proxy they connect through cut a connection right after it passed
 * a statement on (the server runs it, its answer is lost), and stops the
 * server once as by a power cut and starts it again. No writer tries a call
 * again on its own. Then, of every call: returned, what it wrote is there
 * exactly once; failed without saying that whether it was written cannot be
 * told, nothing of it is there; said so, all of it or none. No message is
 * there twice, each session's message_count is its messages, its input
 * tokens the sum of the additions made. Before it, the cases one at a time
 * (a crash that gives a transaction id again, a server back a second later,
 * a server process left running by a network partition, a second try that
 * fails). A cluster of the test's own (it is stopped and removed).
 *
 * `HERMES_LOST_WRITES_SECONDS` (10 by default) and
 * `HERMES_LOST_WRITES_WRITERS` (4) make a longer, harder run.
 */
import { after, before, describe, test } from "node:test";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import assert from "node:assert/strict";
import { connectPg } from "../../lib/postgres/_client.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { openStore } from "../../lib/open_store.ts";
import { StorageError } from "../../lib/core/errors.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { mulberry32 } from "../_random.ts";
import { type LosingProxy, startLosingProxy } from "../store/_pg_proxy.ts";
import { sideBySideTests } from "../_side_by_side.ts";
import {
  delay,
  REPO,
  runSeed,
  startWorker,
  type Worker,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";

const seed = runSeed();
const SECONDS = Number(process.env.HERMES_LOST_WRITES_SECONDS || 10);
const WRITERS = Number(process.env.HERMES_LOST_WRITES_WRITERS || 4);
/** The writers' `application_name`: the backends the test ends are theirs alone. */
const APP = "hermes-lost-writer";
const SCHEMA = "lost";

function pgInstalled(): boolean {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql") : [];
  if (versions.some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))) return true;
  return (process.env.PATH ?? "").split(delimiter).some((dir) => existsSync(join(dir, "initdb")));
}

function pgbouncerInstalled(): boolean {
  return process.env.CI === "true" || existsSync("/usr/sbin/pgbouncer") ||
    (process.env.PATH ?? "").split(delimiter).some((dir) => existsSync(join(dir, "pgbouncer")));
}

const SKIP = process.env.CI === "true" || pgInstalled()
  ? false
  : "PostgreSQL is not installed (no initdb): install postgresql, or run under CI=true";

function pg(
  command: "start" | "crash" | "restart" | "stop" | "standby",
  dir: string,
  ...more: string[]
): string {
  return execFileSync("bash", [join(REPO, "scripts", "pg.sh"), command, dir, ...more], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/** {@linkcode pg}, without blocking the process meanwhile. */
function pgAsync(command: "restart", dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("bash", [join(REPO, "scripts", "pg.sh"), command, dir], (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.trim());
    });
  });
}

/** One call of a writer, as it reported it. */
interface Call {
  readonly what: "append" | "tokens" | "create" | "end";
  readonly session: string;
  readonly count: number;
  /** `ok`, `unknown` (may stand), `notmade`, or `none` (no outcome: the writer died). */
  outcome: "ok" | "unknown" | "notmade" | "none";
  said?: string;
}

/** The calls `worker` reported, by number. */
function callsOf(worker: Worker): Map<number, Call> {
  const calls = new Map<number, Call>();
  for (const line of worker.lines) {
    const [tag, number, rest] = [line.split(" ")[0], Number(line.split(" ")[1]), line];
    if (tag === "op") {
      const [, , what, session, count] = line.split(" ");
      calls.set(number, {
        what: what as Call["what"],
        session,
        count: Number(count),
        outcome: "none",
      });
    } else if (tag === "ok") calls.get(number)!.outcome = "ok";
    else if (tag === "err") {
      const call = calls.get(number)!;
      call.outcome = rest.split(" ")[2] as Call["outcome"];
      call.said = rest.split(" ").slice(3).join(" ");
    }
  }
  return calls;
}

/**
 * Ends writers' backends at random moments until `stop()` says so: one of
 * them, or one busy with a statement or a transaction; or has `proxy` cut
 * the next connection whose statement it passes on. Its count of ends.
 */
function keepKilling(
  admin: PgClient,
  proxy: LosingProxy,
  random: () => number,
): { stop(): Promise<number> } {
  let running = true;
  let kills = 0;
  const loop = (async () => {
    while (running) {
      await delay(3 + random() * 90);
      if (random() < 0.3) {
        if (!proxy.cutAfterExecute) kills++;
        proxy.cutAfterExecute = true;
        continue;
      }
      const busy = random() < 0.6 ? "AND state <> 'idle'" : "";
      try {
        const rows = await admin.query(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
           WHERE application_name = $1 ${busy} ORDER BY random() LIMIT 1`,
          [APP],
        );
        if (rows[0]?.ended === true) kills++;
      } catch {
        // The server is down (the power cut): the next try.
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return kills;
    },
  };
}

describe("PostgreSQL writes whose connection is lost", { skip: SKIP }, () => {
  // Directly under the temporary folder: the postgres user must be able to reach it.
  const cluster = join(tmpdir(), `hermes-pg-lost-${process.pid}-${seed}`);
  let server = "";
  let admin: PgClient | undefined;
  before(async () => {
    server = pg("start", cluster);
    admin = await connectPg(server, "public", { max: 2 });
  });
  after(async () => {
    await admin?.close();
    pg("stop", cluster);
  });

  /** A proxy to the cluster, a pool through it on a fresh schema with table `t`; both closed after. */
  async function throughProxy(
    schema: string,
    fn: (proxy: LosingProxy, client: PgClient, rows: () => Promise<number>) => Promise<void>,
  ): Promise<void> {
    await admin!.query(`CREATE SCHEMA ${schema}`);
    await admin!.query(`CREATE TABLE ${schema}.t (n integer)`);
    const target = new URL(server);
    const proxy = await startLosingProxy(target.hostname, Number(target.port));
    const url = new URL(server);
    url.host = `127.0.0.1:${proxy.port}`;
    url.searchParams.set("connect_timeout", "20");
    const client = await connectPg(url.href, schema);
    try {
      await fn(proxy, client, async () => {
        const [row] = await admin!.query(`SELECT count(*) AS n FROM ${schema}.t`);
        return Number(row.n);
      });
    } finally {
      await client.close();
      await proxy.stop();
    }
  }

  /** A store on the cluster through a proxy of its own (`settings`: URL parameters); both closed after. */
  async function withProxiedStore(
    settings: Record<string, string>,
    fn: (store: SessionStore, proxy: LosingProxy) => Promise<void>,
  ): Promise<void> {
    const target = new URL(server);
    const proxy = await startLosingProxy(target.hostname, Number(target.port));
    const url = new URL(server);
    url.host = `127.0.0.1:${proxy.port}`;
    for (const [name, value] of Object.entries(settings)) url.searchParams.set(name, value);
    const store = await openStore(url.href);
    try {
      await fn(store, proxy);
    } finally {
      await store.close();
      await proxy.stop();
    }
  }

  test(
    "a write transaction lost once its COMMIT was sent, the server crashed before the write reached its disk and gave its id again: not said committed",
    { timeout: 60_000 },
    async () => {
      await throughProxy("reuse", async (proxy, client, rows) => {
        await admin!.query("CREATE TABLE burn (n integer)");
        let runs = 0;
        const outcome = client.transaction(async (query) => {
          runs++;
          await query("INSERT INTO t VALUES (1)");
          if (runs === 1) {
            // The question that follows the loss waits, and the server stops as by a power cut.
            proxy.hold = true;
            pg("crash", cluster);
          }
          return runs;
        }, { writes: true }).then((value) => ({ value }), (error: unknown) => ({ error }));
        while (proxy.waiting === 0) await delay(20);
        pg("restart", cluster);
        // Others write first, and are given the ids the crash took back (its own among them).
        for (let i = 0; i < 5; i++) await admin!.query("INSERT INTO burn VALUES (1)");
        proxy.release();
        const result = await outcome;
        const stored = await rows();
        if ("value" in result) {
          assert.equal(stored, 1, `said written (run ${result.value}), but it is not there`);
        } else {
          assert.match(String(result.error), /whether it was written cannot be told/);
        }
      });
    },
  );

  test(
    "a write transaction whose server stopped as its COMMIT was sent, and was back a second later: asked once it is back, and run again",
    { timeout: 60_000 },
    async () => {
      await admin!.query("CREATE SCHEMA back");
      await admin!.query("CREATE TABLE back.t (n integer)");
      const client = await connectPg(`${server}?connect_timeout=20`, "back");
      let restarted: Promise<unknown> | undefined;
      try {
        let runs = 0;
        const value = await client.transaction(async (query) => {
          runs++;
          await query("INSERT INTO t VALUES (1)");
          if (runs === 1) {
            pg("crash", cluster);
            restarted = delay(1500).then(() => pgAsync("restart", cluster));
          }
          return runs;
        }, { writes: true });
        await restarted;
        assert.equal(value, 2);
        const [row] = await admin!.query("SELECT count(*) AS n FROM back.t");
        assert.equal(Number(row.n), 1);
      } finally {
        // Failed before the restart, the next tests still find the server.
        await restarted?.catch(() => {});
        await client.close();
      }
    },
  );

  /**
   * The three below, side by side: each waits out the second after which the store ends a lost
   * write's server process, on a schema of its own (none stops the cluster).
   */
  const sideBySide = sideBySideTests({ skip: SKIP });

  sideBySide(
    "a write transaction whose COMMIT was lost on the way, its server process left waiting (a network partition): rolled back and run again at once",
    async () => {
      await throughProxy("orphan_tx", async (proxy, client, rows) => {
        let runs = 0;
        const started = Date.now();
        const value = await client.transaction(async (query) => {
          runs++;
          await query("INSERT INTO t VALUES (1)");
          // Its next bytes are the COMMIT.
          if (runs === 1) proxy.swallowNext = true;
          return runs;
        }, { writes: true });
        assert.equal(proxy.lost, 1, "the proxy lost the connection at the COMMIT");
        assert.equal(value, 2);
        assert.equal(await rows(), 1);
        assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
      });
    },
  );

  sideBySide(
    "appendMessage whose connection was lost once the server ran it, its server process left open: its id is given, the message there once",
    async () => {
      await withProxiedStore({ schema: "orphan_append" }, async (store, proxy) => {
        await store.createSession("s", "cli");
        const started = Date.now();
        proxy.loseAfterExecute = true;
        const id = await store.appendMessage("s", { role: "user", content: "hello" });
        assert.equal(proxy.lost, 1, "the proxy lost the connection at the append");
        const messages = await store.getMessages("s");
        assert.deepEqual(messages.map((m) => [m.id, m.content]), [[id, "hello"]]);
        assert.equal((await store.getSession("s"))?.message_count, 1);
        assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
      });
    },
  );

  sideBySide(
    "endSession made but its answer lost, and its second try failing: the error does not say it was not made",
    async () => {
      const settings = { schema: "second_try", statement_timeout: "500" };
      await withProxiedStore(settings, async (store, proxy) => {
        await store.createSession("s", "cli");
        proxy.loseAfterExecute = true;
        const ending = store.endSession("s", "user_exit").then(() => "ended", (error) => error);
        // Made on the server; while the store waits for its server process to end, another
        // holds the sessions table: the second try waits for it, beyond the statement timeout.
        while (proxy.lost === 0) await delay(10);
        let release!: () => void;
        const released = new Promise<void>((resolve) => release = resolve);
        let locked!: () => void;
        const holding = new Promise<void>((resolve) => locked = resolve);
        const holder = admin!.transaction(async (query) => {
          await query("LOCK TABLE second_try.sessions IN ACCESS EXCLUSIVE MODE");
          locked();
          await released;
        });
        await holding;
        const outcome = await ending;
        release();
        await holder;
        const session = await store.getSession("s");
        assert.equal(session?.end_reason, "user_exit", "the first try ended it");
        if (outcome !== "ended") {
          assert.match(String(outcome), /whether it was written cannot be told/);
        }
      });
    },
  );

  test(
    "on a hot standby, a write transaction fails as read-only, not as its later statements say (it gives no transaction id)",
    { timeout: 60_000 },
    async () => {
      const primary = await openStore(`${server}?schema=standby_writes`);
      try {
        await primary.createSession("s", "cli");
        await primary.appendMessage("s", { role: "user", content: "hello" });
      } finally {
        await primary.close();
      }
      const dir = `${cluster}-standby`;
      const standby = pg("standby", dir, cluster);
      try {
        let store: SessionStore | undefined;
        // Open once the schema has reached the standby.
        for (let tries = 0; store === undefined; tries++) {
          store = await openStore(`${standby}?schema=standby_writes`).catch((error) => {
            if (tries > 50) throw error;
            return delay(100).then(() => undefined);
          });
        }
        try {
          while ((await store.getSession("s"))?.message_count !== 1) await delay(100);
          // A transaction (the messages, then the session); one statement of its own.
          for (
            const write of [() => store!.deleteSession("s"), () => store!.createSession("t", "cli")]
          ) {
            const error = await write().then(() => undefined, (thrown: unknown) => thrown);
            assert.ok(error instanceof StorageError, `not a StorageError: ${error}`);
            assert.equal(error.kind, "readonly", error.message);
          }
        } finally {
          await store.close();
        }
      } finally {
        pg("stop", dir);
      }
    },
  );

  test(
    "through a pooler (?pgbouncer=true), whose server processes are not known: a write whose answer was lost says it cannot be told",
    { timeout: 60_000, skip: pgbouncerInstalled() ? false : "PgBouncer is not installed" },
    async () => {
      const bouncerDir = join(tmpdir(), `hermes-pgbouncer-lost-${process.pid}-${seed}`);
      const bouncer = new URL(
        execFileSync("bash", [join(REPO, "scripts", "pgbouncer.sh"), "start", bouncerDir, server], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        }).trim(),
      );
      const proxy = await startLosingProxy(bouncer.hostname, Number(bouncer.port));
      bouncer.host = `127.0.0.1:${proxy.port}`;
      // The role's schema: `postgres` has none of its name, so `public`.
      bouncer.search = "?pgbouncer=true&schema=public";
      const store = await openStore(bouncer.href);
      try {
        await store.createSession("pooled", "cli");
        for (
          const write of [
            () => store.appendMessage("pooled", { role: "user", content: "hello" }),
            () => store.endSession("pooled", "user_exit"),
          ]
        ) {
          proxy.loseAfterExecute = true;
          const error = await write().then(() => undefined, (thrown: unknown) => thrown);
          assert.match(String(error), /whether it was written cannot be told \(a pooler stood/);
        }
        assert.equal(proxy.lost, 2);
      } finally {
        await store.close();
        await proxy.stop();
        execFileSync("bash", [join(REPO, "scripts", "pgbouncer.sh"), "stop", bouncerDir]);
      }
    },
  );

  test(
    `${WRITERS} writers, their server processes ended at random and the server stopped once as by a power cut: every call written as it said, exactly once (seed ${seed})`,
    // HERMES_LOST_WRITES_SECONDS=0 runs the other tests alone.
    { timeout: (SECONDS + 150) * 1000, skip: SECONDS === 0 || workersSpanRuntimes() },
    async () => {
      // Through a proxy that also cuts connections right after a statement was sent.
      const target = new URL(server);
      const proxy = await startLosingProxy(target.hostname, Number(target.port));
      const proxied = new URL(server);
      proxied.host = `127.0.0.1:${proxy.port}`;
      const url = `${proxied.href}?schema=${SCHEMA}&application_name=${APP}`;
      const workers: Worker[] = [];
      try {
        await (await openStore(url)).close();
        const client = await connectPg(server, SCHEMA, { max: 2 });
        try {
          await underFire(url, cluster, client, proxy, workers);
        } finally {
          await client.close();
        }
      } finally {
        for (const worker of workers) worker.kill("SIGKILL");
        await Promise.all(workers.map((w) => w.exited));
        await proxy.stop();
      }
    },
  );
});

async function underFire(
  url: string,
  cluster: string,
  admin: PgClient,
  proxy: LosingProxy,
  workers: Worker[],
): Promise<void> {
  const runtimes = workerRuntimes(["deno", "bun", "node"]);
  const random = mulberry32(seed);
  for (let i = 0; i < WRITERS; i++) {
    workers.push(startWorker(runtimes[i % runtimes.length], "_pg_lost_writer.ts", [
      JSON.stringify({ url, name: `w${i}`, seed: seed + i, seconds: SECONDS }),
    ]));
  }
  await Promise.all(workers.map((w) => w.waitFor((l) => l.startsWith("ready"), "ready", 60_000)));
  const killer = keepKilling(admin, proxy, random);
  // The power cut, somewhere in the middle of the writing.
  await delay((0.3 + random() * 0.3) * SECONDS * 1000);
  pg("crash", cluster);
  await delay(200 + random() * 1500);
  pg("restart", cluster);
  let kills = 0;
  try {
    await Promise.all(
      workers.map((w) => w.waitFor((l) => l === "done", "done", (SECONDS + 90) * 1000)),
    );
  } finally {
    kills = await killer.stop();
  }
  for (const worker of workers) {
    assert.deepEqual(await worker.exited, { code: 0, signal: null }, worker.stderr);
  }

  // What is stored: each token's count, and each session's state.
  const counts = new Map<string, number>();
  for (const row of await admin.query("SELECT content FROM messages")) {
    const token = String(row.content).split(" ")[1];
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  const stored = new Map<string, { ended: boolean; tokens: number }>();
  for (const row of await admin.query("SELECT id, ended_at, input_tokens FROM sessions")) {
    stored.set(String(row.id), { ended: row.ended_at !== null, tokens: Number(row.input_tokens) });
  }
  /** Per session, the input tokens added by calls that returned, and by those that may stand. */
  const added = new Map<string, { ok: number; unknown: number }>();
  const twice = [...counts].filter(([, n]) => n > 1).map(([token]) => token);
  assert.deepEqual(twice, [], "no message is stored twice");
  const miscounted = await admin.query(
    `SELECT s.id, s.message_count, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n
     FROM sessions s WHERE s.message_count <> (SELECT count(*) FROM messages m WHERE m.session_id = s.id)`,
  );
  assert.deepEqual(miscounted, [], "each session's message_count is its messages");

  const tally = { ok: 0, notmade: 0, unknown: 0, none: 0 };
  const endings = new Map<string, Array<{ where: string; outcome: Call["outcome"] }>>();
  const unknown: string[] = [];
  for (const [w, worker] of workers.entries()) {
    for (const [op, call] of callsOf(worker)) {
      tally[call.outcome]++;
      const where = `w${w}.${op} (${call.what} ${call.session}, ${call.outcome}: ${call.said})`;
      if (call.outcome === "unknown") unknown.push(where);
      if (call.what === "append") {
        const present = Array.from({ length: call.count }, (_, k) => counts.get(`w${w}.${op}.${k}`))
          .filter((n) => n === 1).length;
        if (call.outcome === "ok") assert.equal(present, call.count, `all of ${where} stored`);
        else if (call.outcome === "notmade") assert.equal(present, 0, `none of ${where} stored`);
        else assert.ok(present === 0 || present === call.count, `all or none of ${where}`);
      } else if (call.what === "tokens") {
        const sum = added.get(call.session) ?? { ok: 0, unknown: 0 };
        if (call.outcome === "ok") sum.ok += call.count;
        if (call.outcome === "unknown") sum.unknown += call.count;
        added.set(call.session, sum);
      } else if (call.what === "create") {
        if (call.outcome === "ok") assert.ok(stored.has(call.session), `${where} made`);
        if (call.outcome === "notmade") assert.ok(!stored.has(call.session), `${where} not made`);
      } else {
        // A session whose next one was not made is ended again at the next turn.
        const ends = endings.get(call.session) ?? [];
        endings.set(call.session, [...ends, { where, outcome: call.outcome }]);
      }
    }
  }
  for (const [session, sum] of added) {
    // Each addition once: those that returned, none that failed, perhaps those untold.
    const tokens = stored.get(session)?.tokens ?? 0;
    assert.ok(
      tokens >= sum.ok && tokens <= sum.ok + sum.unknown,
      `input tokens of ${session}: ${tokens}, added ${sum.ok} (+${sum.unknown} untold)`,
    );
  }
  for (const [session, ends] of endings) {
    const ended = stored.get(session)?.ended;
    const said = ends.map((end) => end.where).join("; ");
    if (ends.some((end) => end.outcome === "ok")) assert.equal(ended, true, `made: ${said}`);
    else if (ends.every((end) => end.outcome === "notmade")) {
      assert.equal(ended, false, `not made: ${said}`);
    }
  }
  const reasons = new Map<string, number>();
  for (const worker of workers) {
    for (const call of callsOf(worker).values()) {
      if (call.outcome !== "notmade") continue;
      const reason = String(call.said).replace(/\d+/g, "N").slice(0, 160);
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
  }
  process.stderr.write(
    `pg_lost_writes: ${kills} connections ended (${proxy.lost} by the proxy); calls ${
      JSON.stringify(tally)
    }\n` +
      [...reasons].map(([reason, n]) => `  not made ×${n}: ${reason}\n`).join("") +
      unknown.map((line) => `  cannot be told: ${line}\n`).join(""),
  );
  assert.ok(
    tally.ok > 0 && tally.notmade > 0,
    `some calls made, some failed: ${JSON.stringify(tally)}`,
  );
  // The server was reachable but for the power cut: few writes left untold. A question runs on a
  // connection of the writers' own, which the test ends as any other, and one ended three times
  // leaves its write untold; on a busy machine questions take longer and more of them are ended, so
  // the bound grows with the ends (3 untold of 124 ends seen, four test files at a time).
  assert.ok(
    unknown.length <= Math.max(2, tally.ok / 200, kills / 30),
    `too many untold (${kills} connections ended):\n${unknown}`,
  );
}
