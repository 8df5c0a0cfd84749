/**
 * Another process (Python's sqlite3, as a Hermes gateway is) that holds a
 * whole state.db when told to, and lets it go when told to: in WAL mode as
 * a connection in `locking_mode = EXCLUSIVE` (or one recovering a crashed
 * writer's WAL) holds it, or, in a rollback-journal file, as a writer
 * writing its pages does (`BEGIN EXCLUSIVE`, a write). Each order is
 * answered before the call returns, so a test can take the file at a set
 * point inside a synchronous read (a hook on `SessionDB.prototype`).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";

/** The holder: a Unix socket server, one order per connection, each answered with one line. */
const HOLDER = String.raw`
import os, socket, sqlite3, sys
path, address, exclusive = sys.argv[1], sys.argv[2], sys.argv[3] == "exclusive"
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(address)
server.listen(1)
print("ready", flush=True)
db = None
while True:
    conn, _ = server.accept()
    order = conn.makefile().readline().strip()
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
        elif order == "quit":
            conn.sendall(b"ok\n")
            conn.close()
            break
    except Exception as error:
        answer = "error: %s" % error
    conn.sendall((answer + "\n").encode())
    conn.close()
`;

/** Sends one order and prints the answer. */
const CLIENT = String.raw`
import socket, sys
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sys.argv[1])
conn.sendall((sys.argv[2] + "\n").encode())
print(conn.makefile().readline().strip())
`;

/** How the file is held: `wal` (locking_mode = EXCLUSIVE) or `journal` (a rollback-journal writer). */
export type HeldAs = "wal" | "journal";

/** A Python process that holds a state.db whole on order. */
export class WholeFileHolder {
  readonly #child: ChildProcess;
  readonly #address: string;
  #ended: Promise<void>;
  #held = false;

  private constructor(child: ChildProcess, address: string) {
    this.#child = child;
    this.#address = address;
    this.#ended = new Promise((resolve) => child.once("exit", () => resolve()));
  }

  /**
   * Starts the holder for `path` (holding nothing yet).
   *
   * @param path The state.db.
   * @param as `wal`: it takes the file in `locking_mode = EXCLUSIVE`; `journal`: as a writer of
   *   a rollback-journal file (the file must be in that mode).
   */
  static async start(path: string, as: HeldAs): Promise<WholeFileHolder> {
    const address = join(tempDir(), "holder.sock");
    const mode = as === "wal" ? "exclusive" : "normal";
    const child = spawn("python3", ["-c", HOLDER, path, address, mode], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the holder ended (${code})`)));
      child.stdout!.once("data", () => resolve());
    });
    child.removeAllListeners("exit");
    return new WholeFileHolder(child, address);
  }

  #order(order: string): void {
    const run = spawnSync("python3", ["-c", CLIENT, this.#address, order], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const answer = run.stdout.trim();
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
    this.release();
    this.#order("quit");
    await this.#ended;
  }
}

/**
 * Puts the file at `path` in rollback-journal mode (`journal_mode = DELETE`), as a
 * Hermes of another make could leave it; no connection may be open on it.
 */
export function toRollbackJournal(path: string): void {
  const script = "import sqlite3, sys\n" +
    "db = sqlite3.connect(sys.argv[1])\n" +
    "print(db.execute('PRAGMA journal_mode = DELETE').fetchone()[0])\n" +
    "db.close()";
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), "delete");
}
