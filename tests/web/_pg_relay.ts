/**
 * A TCP relay to the test PostgreSQL server that a test can stop and start
 * again on the same port, or freeze: a store opened through it sees the
 * server go away (connections cut, new ones refused) and come back, as when
 * the database server is restarted, or stop answering (a hung server, a
 * network that drops packets), while the other tests keep the real server.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { PG_URL } from "../store/_pg.ts";

/** A relay to the test server. */
export interface PgRelay {
  /** The test server's URL with the relay's port. */
  readonly url: string;
  /** Cuts every connection and refuses new ones. */
  stop(): Promise<void>;
  /** Accepts connections again, on the same port. */
  start(): Promise<void>;
  /** Passes nothing on, either way, keeping every connection open, until {@linkcode stop}. */
  freeze(): void;
  /** Stops for good. */
  close(): Promise<void>;
}

/**
 * Starts a relay on a free loopback port to the server of `HERMES_TEST_PG_URL`.
 *
 * @returns The running relay.
 */
export async function startPgRelay(): Promise<PgRelay> {
  const target = new URL(PG_URL!);
  const targetPort = Number(target.port || 5432);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  let frozen = false;
  const listen = async () => {
    const next = createServer((client) => {
      const upstream = connect(targetPort, target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
      if (frozen) {
        client.pause();
        upstream.pause();
      }
    });
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => resolve());
    });
    port = (next.address() as AddressInfo).port;
    server = next;
  };
  const stop = async () => {
    const was = server;
    server = null;
    frozen = false;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (was !== null) await new Promise<void>((resolve) => was.close(() => resolve()));
  };
  await listen();
  const url = new URL(PG_URL!);
  url.port = String(port);
  return {
    url: url.toString(),
    stop,
    start: listen,
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    close: stop,
  };
}
