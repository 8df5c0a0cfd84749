/**
 * Everything at once on a PostgreSQL cluster of the test's own: 8 writer
 * processes on Deno, Bun and Node appending to the store, a `sync --follow`
 * shipping a state.db that another writer keeps appending to, 20 writers
 * killed with SIGKILL (each replaced), and the server stopped once as by a
 * power cut (`pg_ctl -m immediate stop`) and restarted. The writers report
 * the lost server, reconnect and go on. Then: every acknowledged append is
 * in PostgreSQL exactly once, and the server's copy of the file is the
 * file, message for message.
 *
 * Runs wherever PostgreSQL is installed (`initdb` found), and always under
 * `CI=true` (where `scripts/pg.sh` installs it when missing).
 */
import { describe, test } from "node:test";
import { execFileSync } from "node:child_process";
import { connect } from "node:net";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import assert from "node:assert/strict";
import { CLIENT_FRAME } from "../../lib/postgres/_pg_errors.ts";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { mulberry32 } from "../_random.ts";
import { acks, verify } from "./_pg_checks.ts";
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
const PG_SH = join(REPO, "scripts", "pg.sh");
const WRITERS = 8;
const KILLS = 20;
/** The kill after which the server is stopped and restarted. */
const CRASH_AFTER = 10;

/** True when the PostgreSQL server binaries (`initdb`) are installed. */
function pgInstalled(): boolean {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql") : [];
  if (versions.some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))) return true;
  return (process.env.PATH ?? "").split(delimiter).some((dir) => existsSync(join(dir, "initdb")));
}

const SKIP = process.env.CI === "true" || pgInstalled()
  ? false
  : "PostgreSQL is not installed (no initdb): install postgresql, or run under CI=true";

function pg(command: "start" | "crash" | "restart" | "stop", dir: string): string {
  return execFileSync("bash", [PG_SH, command, dir], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/**
 * The client package's own code crashing a writer process from a timer
 * while the server goes (porsager/postgres#1066: `socket.write` on a socket
 * it has already closed, outside any call the library could catch).
 */
const CLIENT_CRASH = new RegExp(
  // Deno prints the failing line and a caret between the message and the first frame.
  String.raw`TypeError: .*\n(?:(?!\s+at ).*\n){0,3}?\s+at .*` + CLIENT_FRAME.source,
);

/**
 * Runs `wait`; a writer that died of {@linkcode CLIENT_CRASH} instead counts
 * as one more writer killed (its acknowledged writes are still checked),
 * and is said on stderr. Any other failure stands.
 */
async function unlessClientCrashed(worker: Worker, wait: () => Promise<unknown>): Promise<void> {
  try {
    await wait();
  } catch (error) {
    if (!CLIENT_CRASH.test(worker.stderr)) throw error;
    process.stderr.write(
      `a writer died of the client's own crash (porsager/postgres#1066):\n${worker.stderr}\n`,
    );
  }
}

/** The file writer's acknowledged tokens (`ack <token> <id> <session> <ms>`). */
function fileAcks(worker: Worker): string[] {
  return worker.lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ")[1]);
}

describe("PostgreSQL under fire", { skip: SKIP || workersSpanRuntimes() }, () => {
  test(
    `${WRITERS} writers on Deno, Bun and Node and a sync --follow; ${KILLS} writers SIGKILLed and the server stopped as by a power cut: every acknowledged write once (seed ${seed})`,
    { timeout: 180_000 },
    async () => {
      // Directly under the temporary folder: the postgres user must be able to reach it.
      const clusterDir = join(tmpdir(), `hermes-pg-fire-${process.pid}-${seed}`);
      const dir = mkdtempSync(join(tmpdir(), "hermes-fire-"));
      const server = pg("start", clusterDir);
      const workers: Worker[] = [];
      try {
        await underFire(`${server}?schema=fire`, clusterDir, join(dir, "state.db"), workers);
      } finally {
        for (const worker of workers) worker.kill("SIGKILL");
        await Promise.all(workers.map((w) => w.exited));
        pg("stop", clusterDir);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

/** Whether the server at `url` refuses a TCP connection (it is down). */
function refused(url: string): Promise<boolean> {
  const { hostname: host, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

async function underFire(
  url: string,
  clusterDir: string,
  file: string,
  workers: Worker[],
): Promise<void> {
  await (await openStore(url)).close();
  const runtimes = workerRuntimes(["deno", "bun", "node"]);
  const random = mulberry32(seed);
  const writers: Worker[] = [];
  const live = new Set<Worker>();
  const startWriter = () => {
    const i = writers.length;
    const worker = startWorker(runtimes[i % runtimes.length], "_pg_writer.ts", [JSON.stringify({
      url,
      name: `f${i}`,
      own: `fire-${i}`,
      shared: "shared",
      count: 0,
      seed: seed + i,
      retry: true,
    })]);
    writers.push(worker);
    workers.push(worker);
    live.add(worker);
  };
  for (let i = 0; i < WRITERS; i++) startWriter();
  // The host's state.db: one writer keeps appending, sync --follow ships it.
  const fileWriter = startWorker(runtimes[1 % runtimes.length], "_writer.ts", [JSON.stringify({
    path: file,
    name: "file",
    own: "file-own",
    shared: "file-shared",
    count: 0,
    seed,
    pauseMs: 5,
  })]);
  workers.push(fileWriter);
  await fileWriter.waitFor((l) => l.startsWith("ready"), "ready", 60_000);
  const syncer = startWorker(runtimes[0], "../../cli.ts", [
    "--json",
    "sync",
    file,
    "--to",
    url,
    "--origin",
    "host-a",
    "--follow=0.2",
  ]);
  workers.push(syncer);
  await Promise.all([...live].map((w) => w.waitFor((l) => l.startsWith("ready"), "ready", 60_000)));

  let seenAtRestart = new Map<Worker, number>();
  for (let kill = 1; kill <= KILLS; kill++) {
    const candidates = [...live];
    const victim = candidates[Math.floor(random() * candidates.length)];
    await unlessClientCrashed(
      victim,
      () => victim.waitFor((l) => l.startsWith("ack "), "an append", 60_000),
    );
    await delay(random() * 150);
    victim.kill("SIGKILL");
    live.delete(victim);
    startWriter();
    if (kill === CRASH_AFTER) {
      pg("crash", clusterDir);
      // The server is down: its port refuses a connection. (A writer need not say so: a call in
      // flight when it went waits for it and is told its outcome, postgres/_commit_outcome.ts;
      // on a busy machine every writer may be in flight then.)
      assert.ok(await refused(url), "the server went down");
      await delay(300);
      pg("restart", clusterDir);
      seenAtRestart = new Map([...live].map((w) => [w, w.lines.length]));
    }
  }
  // Writers that lived through the restart wrote again.
  for (const [worker, seen] of seenAtRestart) {
    if (!live.has(worker)) continue;
    await unlessClientCrashed(worker, () =>
      worker.waitFor(
        (l) => l.startsWith("ack ") && worker.lines.indexOf(l) >= seen,
        "an append after the restart",
        60_000,
      ));
  }
  // What a writer was told of the outage, if it was told (see `refused`): the store's words.
  const errors = writers.flatMap((w) => w.lines.filter((l) => l.startsWith("error ")));
  for (const line of errors) {
    assert.match(
      line,
      /^error (PostgreSQL: |Cannot open database ".*": the PostgreSQL server)/,
      line,
    );
  }

  // Stop the writers (what they acknowledged is what counts), then the follower after its pass.
  for (const worker of live) worker.kill("SIGKILL");
  fileWriter.kill("SIGKILL");
  await Promise.all([...writers, fileWriter].map((w) => w.exited));
  syncer.kill("SIGTERM");
  await syncer.exited;
  // Each pass's report (--json, one object a line): the messages it wrote.
  const followed = syncer.lines.filter((line) => line.startsWith("{"))
    .reduce((n, line) => n + JSON.parse(line).messages, 0);
  assert.ok(followed > 0, `sync --follow shipped nothing: ${syncer.stderr}`);

  // PostgreSQL: every acknowledged append once, counters equal to rows.
  const acked = writers.flatMap(acks);
  assert.ok(acked.length >= KILLS, `${acked.length} acknowledged`);
  // (A writer killed before it was ready may not have created its session.)
  const ready = writers.flatMap((w, i) =>
    w.lines.includes(`ready ${w.runtime}`) ? [`fire-${i}`] : []
  );
  await verify(url, acked, ["shared", ...ready]);

  // The file: a last pass ships what the follower had not; the server then mirrors the file.
  const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
  const client = await connectSyncTarget(url);
  try {
    const last = await syncFile(client, file, { host: hostname() });
    assert.equal(last.origin, "host-a");
  } finally {
    await client.close();
  }
  const db = await SessionDB.open({ path: file, readonly: true });
  await using store = await openStore(url);
  try {
    const onServer = new Map<string, number>();
    for (const session of ["file-own", "file-shared"]) {
      const local = db.getMessages(session).map((m) => m.content);
      const shipped = (await store.getMessages(`host-a/${session}`)).map((m) => m.content);
      assert.deepEqual(shipped, local, `host-a/${session} mirrors the file`);
      for (const content of shipped) {
        const token = String(content).split(" ")[1];
        onServer.set(token, (onServer.get(token) ?? 0) + 1);
      }
    }
    const fileAcked = fileAcks(fileWriter);
    assert.ok(fileAcked.length > 0);
    for (const token of fileAcked) {
      assert.equal(onServer.get(token), 1, `file append ${token} shipped once`);
    }
  } finally {
    db.close();
  }
  // What the crashes left, as the store's own doctor sees it: nothing to mend (one search row and
  // the right vectors per message, counters, the id sequence, indexes).
  const { doctorPostgresStore } = await import("../../lib/postgres/doctor/doctor.ts");
  const health = await doctorPostgresStore(url, { full: true });
  assert.deepEqual(
    health.checks.filter((check) => check.status !== "ok").map((c) => `${c.name}: ${c.summary}`),
    [],
  );
}
