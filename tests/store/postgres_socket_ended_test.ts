/**
 * A socket the server (or the network) ended, written to before the client
 * saw it close: the runtime's `net` fails the write with EPIPE, "This socket
 * has been ended by the other party", an error without a `syscall`, which
 * the client hands on as it is. It said "PostgreSQL: This socket has been
 * ended by the other party" where every other loss says the connection was
 * lost, and was not taken for a lost connection.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { setImmediate } from "node:timers";
import {
  connectionGone,
  endedByServer,
  lostUnderWay,
  translate,
} from "../../lib/postgres/_pg_errors.ts";
import { StorageError } from "../../lib/core/errors.ts";

/**
 * The error this runtime's `net` gives a write to a socket whose other end
 * ended it (its FIN read, its own side ended in turn).
 */
async function endedSocketWriteError(): Promise<Error> {
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.on("error", () => {});
    socket.resume();
    await new Promise<void>((resolve) => socket.once("end", () => resolve()));
    // Once the runtime has ended this side too (a tick after "end").
    await new Promise<void>((resolve) => setImmediate(resolve));
    const error = await new Promise<Error | null | undefined>((resolve) =>
      socket.write("Q", (error) => resolve(error))
    );
    socket.destroy();
    assert.ok(error instanceof Error, "the write failed");
    return error;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test("endedByServer() and connectionGone() know a write to a socket the other end ended", async () => {
  const error = await endedSocketWriteError();
  assert.equal((error as { code?: unknown }).code, "EPIPE", error.message);
  assert.ok(endedByServer(error), error.message);
  assert.ok(connectionGone(error));
  assert.ok(lostUnderWay(error));
  const translated = translate(error);
  assert.ok(translated instanceof StorageError);
  assert.equal(translated.kind, "io");
  assert.ok(connectionGone(translated));
});

test("endedByServer() still reads no server's words into an error of the library's own", () => {
  assert.ok(!endedByServer(new Error("This socket has been ended by the other party")));
  assert.ok(!endedByServer(Object.assign(new Error("no such thing"), { code: "ENOENT" })));
  assert.ok(!connectionGone(Object.assign(new Error("x"), { code: "UNDEFINED_VALUE" })));
});

test("translate() says a write refused on a hot standby is the standby's, not the function's", () => {
  const refused = Object.assign(
    new Error("cannot execute pg_current_xact_id() during recovery"),
    { name: "PostgresError", code: "25006" },
  );
  const translated = translate(refused);
  assert.ok(translated instanceof StorageError);
  assert.equal(translated.kind, "readonly");
  // Before: only the function PostgreSQL refused was named.
  assert.equal(
    translated.message,
    "PostgreSQL: cannot execute pg_current_xact_id() during recovery (SQLSTATE 25006): the " +
      "server is a standby, which takes no writes; write through the primary's URL",
  );
});
