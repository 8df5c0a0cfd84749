import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { wallClockSeconds } from "../lib/core/wall_clock.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { tempDbPath } from "./_helpers.ts";

// First, on a clock no other test has read: the tests below set Date.now() back and forth, and on a
// busy machine read anchors in wide brackets; either can read as drift to the stores' clock until its
// next anchor, up to a second later, and meanwhile give times up to a millisecond early (still within
// the millisecond Date.now() reads).
test("a message written just after Python's comes after it, and its session's child starts after the parent ends", async () => {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  db.createSession("s", "cli");
  // A Python writer, as the Python Hermes writes: time.time() to the microsecond. It writes
  // one message (or ends a session) each time it reads a line, and answers when committed.
  const python = spawn("python3", [
    "-c",
    [
      "import sqlite3, sys, time",
      "db = sqlite3.connect(sys.argv[1], isolation_level=None)",
      "db.execute('PRAGMA busy_timeout = 5000')",
      "for line in sys.stdin:",
      "    n = line.strip()",
      "    now = time.time()",
      "    if n.startswith('end '):",
      "        db.execute(\"UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ?\", (now, n[4:]))",
      "    else:",
      "        db.execute(\"INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, ?)\", ('question ' + n, now))",
      "    print('ok %r' % now, flush=True)",
    ].join("\n"),
    path,
  ], { stdio: ["pipe", "pipe", "inherit"] });
  const answers = createInterface({ input: python.stdout! })[Symbol.asyncIterator]();
  /** Python's times later than this process's `Date.now()` read once it answered (ms). */
  const ahead: string[] = [];
  const ask = async (line: string) => {
    python.stdin!.write(`${line}\n`);
    const [said, time] = String((await answers.next()).value).split(" ");
    const after = Date.now();
    assert.equal(said, "ok");
    // Python stamped before it answered: a time past the millisecond read after is the
    // machine's clocks disagreeing between processes, which no store's clock can follow.
    if (Number(time) * 1000 >= after + 1) ahead.push(`${line}: ${Number(time) * 1000 - after} ms`);
  };
  try {
    for (let i = 0; i < 100; i++) {
      await ask(String(i));
      db.appendMessage("s", { role: "assistant", content: `answer ${i}` });
      db.createSession(`p${i}`, "cli");
      await ask(`end p${i}`);
      db.createSession(`c${i}`, "cli", { parentSessionId: `p${i}` });
    }
  } finally {
    python.stdin!.end();
    await new Promise((resolve) => python.once("exit", resolve));
  }
  const messages = db.getMessages("s");
  const expected = Array.from({ length: 100 }, (_, i) => [`question ${i}`, `answer ${i}`]).flat();
  assert.equal(messages.length, expected.length);
  const misplaced = messages.findIndex((m, i) => m.content !== expected[i]);
  assert.equal(
    misplaced,
    -1,
    `${messages.slice(misplaced, misplaced + 4).map((m) => `${m.content} at ${m.timestamp}`)}; ` +
      `Python's time ahead of this process's Date.now() at ${ahead.length} answers: ${ahead}`,
  );
  for (let i = 0; i < 100; i++) {
    const parent = db.getSession(`p${i}`)!;
    const child = db.getSession(`c${i}`)!;
    assert.ok(child.started_at >= parent.ended_at!, `c${i} started before p${i} ended`);
  }
  db.close();
});

test("the clock counts microseconds, keeps near Date.now() and never runs back", () => {
  let previous = -Infinity;
  /** How many of 2,000 reads carry a fraction of a millisecond; every read is checked. */
  const fractionsOf2000 = () => {
    let fractions = 0;
    for (let i = 0; i < 2000; i++) {
      const before = Date.now();
      const now = wallClockSeconds();
      const after = Date.now();
      // Within the millisecond Date.now() reads (a pause inside the call may add to it).
      assert.ok(now * 1000 >= before && now * 1000 < after + 2, `${now} ${before} ${after}`);
      assert.ok(now >= previous, `${now} after ${previous}`);
      previous = now;
      const ms = now * 1000;
      if (Math.abs(ms - Math.round(ms)) > 1e-3) fractions++;
    }
    return fractions;
  };
  // Date.now() / 1000 is always a whole number of milliseconds. While the machine is too busy
  // to bracket a turn of Date.now() (other test files run beside this one), the clock gives
  // whole milliseconds for a while (it looks again 50 ms later): within 5 s of rounds, one
  // must show the microseconds. (Three rounds back to back once fell inside one such while.)
  const started = Date.now();
  const rounds = [fractionsOf2000()];
  while (rounds.at(-1)! <= 1000 && Date.now() - started < 5000) rounds.push(fractionsOf2000());
  assert.ok(
    rounds.at(-1)! > 1000,
    `${
      rounds.slice(-5).join(", ")
    } (last of ${rounds.length} rounds) of 2000 with a fraction of a millisecond`,
  );
});

test("a Date.now() that does not move (fake timers) gives its time at once, and is followed back", {
  timeout: 10_000,
}, () => {
  const real = Date.now;
  const frozen = real() - 3_600_000;
  Date.now = () => frozen;
  try {
    for (let i = 0; i < 50; i++) assert.equal(wallClockSeconds(), frozen / 1000);
  } finally {
    Date.now = real;
  }
  // The clock set forward again: followed, and never behind Date.now().
  const before = Date.now();
  assert.ok(wallClockSeconds() * 1000 >= before);
});

test("a pause between the clock's reads never puts a time ahead of the millisecond it read", () => {
  const real = Date.now;
  let pauses = 0;
  // Every 7th read of Date.now() comes 5 ms late, as a process paused there would see it.
  Date.now = () => {
    if (++pauses % 7 === 0) {
      const until = performance.now() + 5;
      while (performance.now() < until) { /* paused */ }
    }
    return real();
  };
  try {
    let previous = -Infinity;
    for (let i = 0; i < 500; i++) {
      const before = real();
      const now = wallClockSeconds() * 1000;
      const after = real();
      assert.ok(now >= before && now < after + 1.05, `${now} outside ${before}..${after}`);
      assert.ok(now >= previous, `${now} after ${previous}`);
      previous = now;
    }
  } finally {
    Date.now = real;
  }
});

test("an anchor read late, then reads each slowed by a pause, never give a time past the millisecond Date.now() reads", () => {
  const real = Date.now;
  try {
    // The wall clock a millisecond ahead while the anchor is read again: it is read 1 ms late.
    Date.now = () => real() + 1;
    wallClockSeconds();
    // Then every read of Date.now() comes after a pause, which widens every bracket of monotonic
    // reads around it: the late anchor is never seen to be wrong (as on a busy machine).
    Date.now = () => {
      const until = performance.now() + 2;
      while (performance.now() < until) { /* paused */ }
      return real();
    };
    for (let i = 0; i < 50; i++) {
      const before = real();
      const now = wallClockSeconds() * 1000;
      const after = real();
      assert.ok(now >= before && now <= after + 1, `${now} outside ${before}..${after}`);
    }
  } finally {
    Date.now = real;
  }
});

test("a process paused as it reads its anchor still gets microseconds", () => {
  // Before, the anchor was given up when a pause of the process (a busy machine) came before
  // two reads saw Date.now() turn by one: for 50 ms at a time the clock then gave whole
  // milliseconds, up to one early (a message stamped before the question Python wrote before it).
  const real = Date.now;
  try {
    // A clock that does not move first: the anchor is dropped, and looked for again 50 ms later.
    const frozen = real();
    Date.now = () => frozen;
    wallClockSeconds();
    const spin = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) { /* paused, or time passing */ }
    };
    spin(60);
    // Every 100th read of Date.now() comes after the process was paused for 25 ms.
    let reads = 0;
    Date.now = () => {
      if (++reads % 100 === 0) spin(25);
      return real();
    };
    let fractions = 0;
    for (let i = 0; i < 40; i++) {
      const before = real();
      const now = wallClockSeconds() * 1000;
      const after = real();
      assert.ok(now >= before && now <= after + 1, `${now} outside ${before}..${after}`);
      if (Math.abs(now - Math.round(now)) > 1e-3) fractions++;
      spin(2);
    }
    assert.ok(fractions > 30, `${fractions} of 40 times with a fraction of a millisecond`);
  } finally {
    Date.now = real;
  }
});
