/**
 * Another process (Python's sqlite3, as a Hermes gateway is) that holds a
 * whole state.db when told to, and lets it go when told to: in WAL mode as
 * a connection in `locking_mode = EXCLUSIVE` (or one recovering a crashed
 * writer's WAL) holds it, or, in a rollback-journal file, as a writer
 * writing its pages does (`BEGIN EXCLUSIVE`, a write). Each order is
 * answered before the call returns, so a test can take the file at a set
 * point inside a synchronous read (a hook on `SessionDB.prototype`): an
 * order goes down a FIFO and its answer comes back up another, read with a
 * blocking read, no process started for it.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDir } from "./_helpers.ts";

/**
 * The holder: it reads orders, one a line, from the FIFO `orders` and writes each answer, one
 * line, to the FIFO `answers`, in the folder it is given. It makes both and opens its ends
 * before it says `ready`, so the test's opens never wait (`answers` read and written, so the
 * test's read end always has a writer until the holder ends: then the test reads end of file).
 * The test's end of `orders` closed (its `quit`, or the test process gone), it ends.
 */
const HOLDER = String.raw`
import os, sqlite3, sys
path, folder, exclusive = sys.argv[1], sys.argv[2], sys.argv[3] == "exclusive"
orders_path, answers_path = os.path.join(folder, "orders"), os.path.join(folder, "answers")
os.mkfifo(orders_path)
os.mkfifo(answers_path)
waiting = os.open(orders_path, os.O_RDONLY | os.O_NONBLOCK)
answers = os.open(answers_path, os.O_RDWR)
print("ready", flush=True)
# Returns once the test has opened its end (at once if it has).
orders = open(orders_path, "r")
os.close(waiting)
db = None
for line in orders:
    order = line.strip()
    answer = "ok"
    try:
        if order == "take":
            db = sqlite3.connect(path, isolation_level=None, timeout=1)
            if exclusive:
                db.execute("PRAGMA locking_mode = EXCLUSIVE")
            db.execute("BEGIN EXCLUSIVE")
            db.execute("UPDATE sessions SET title = 'held by python' WHERE id = 's1'")
        elif order in ("commit", "rollback"):
            db.execute(order.upper())
            db.close()
            db = None
    except Exception as error:
        answer = "error: %s" % error
    os.write(answers, (answer + "\n").encode())
    if order == "quit":
        break
`;

let interpreter: string | undefined;

/**
 * The interpreter `python3` runs, found once: started by its own path, a holder skips what
 * stands in front of it on `PATH` (pyenv's shim, a shell script, costs more than Python's start).
 */
function python(): string {
  if (interpreter === undefined) {
    const run = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    interpreter = run.stdout.trim() || "python3";
  }
  return interpreter;
}

/** How the file is held: `wal` (locking_mode = EXCLUSIVE) or `journal` (a rollback-journal writer). */
export type HeldAs = "wal" | "journal";

/** A Python process that holds a state.db whole on order. */
export class WholeFileHolder {
  readonly #orders: number;
  readonly #answers: number;
  #ended: Promise<void>;
  #held = false;

  private constructor(child: ChildProcess, folder: string) {
    this.#ended = new Promise((resolve) => child.once("exit", () => resolve()));
    // The holder has its ends open: neither open waits.
    this.#orders = openSync(join(folder, "orders"), "w");
    this.#answers = openSync(join(folder, "answers"), "r");
  }

  /**
   * Starts the holder for `path` (holding nothing yet).
   *
   * @param path The state.db.
   * @param as `wal`: it takes the file in `locking_mode = EXCLUSIVE`; `journal`: as a writer of
   *   a rollback-journal file (the file must be in that mode).
   */
  static async start(path: string, as: HeldAs): Promise<WholeFileHolder> {
    const folder = tempDir();
    const mode = as === "wal" ? "exclusive" : "normal";
    const child = spawn(python(), ["-c", HOLDER, path, folder, mode], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the holder ended (${code})`)));
      child.stdout!.once("data", () => resolve());
    });
    child.removeAllListeners("exit");
    return new WholeFileHolder(child, folder);
  }

  /** Writes one order and waits (blocking the thread, no process started) for its answer. */
  #order(order: string): void {
    try {
      writeSync(this.#orders, order + "\n");
    } catch (cause) {
      throw new Error(`The holder ended before it was told to ${order}`, { cause });
    }
    const buffer = new Uint8Array(256);
    let answer = "";
    while (!answer.endsWith("\n")) {
      const read = readSync(this.#answers, buffer, 0, buffer.length, null);
      if (read === 0) throw new Error(`The holder ended before it answered ${order}`);
      answer += new TextDecoder().decode(buffer.subarray(0, read));
    }
    answer = answer.trim();
    if (answer !== "ok") throw new Error(`The holder could not ${order}: ${answer}`);
  }

  /**
   * Takes the whole file (its write of session `s1`'s title begun); returns once it holds it.
   * Throws, naming SQLite's words, when it cannot (within a second); held already, does nothing.
   */
  take(): void {
    if (this.#held) return;
    this.#order("take");
    this.#held = true;
  }

  /**
   * Lets the file go; with `commit`, its write (session `s1` titled "held by python") is
   * committed first, else rolled back.
   */
  release(options: { commit?: boolean } = {}): void {
    if (!this.#held) return;
    this.#held = false;
    this.#order(options.commit ? "commit" : "rollback");
  }

  /** Lets the file go (rolled back) and ends the process. */
  async stop(): Promise<void> {
    try {
      this.release();
      this.#order("quit");
    } finally {
      closeSync(this.#orders);
      closeSync(this.#answers);
    }
    await this.#ended;
  }
}

/**
 * Puts the file at `path` in rollback-journal mode (`journal_mode = DELETE`), as a
 * Hermes of another make could leave it; no connection may be open on it. The
 * runtime's own SQLite does it (the mode is the file's, whoever sets it): no process.
 */
export async function toRollbackJournal(path: string): Promise<void> {
  using raw = await rawOpen(path);
  assert.equal(raw.prepare("PRAGMA journal_mode = DELETE").get()?.journal_mode, "delete");
}
