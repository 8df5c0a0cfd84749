/**
 * A TCP proxy to a PostgreSQL server for `pg_lost_writes_test.ts`: it can
 * hold new connections back (the client waits, as for a server restarting),
 * and lose a client's connection while the server's side stays open, as a
 * network partition leaves it: the server process goes on, unaware.
 *
 * @module
 */
import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";

/**
 * An Execute message of the unnamed portal, all rows (`E`, length 9, "", 0):
 * the client asks for a statement to run.
 */
const EXECUTE = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]);

/** The proxy, and what it does next. */
export interface LosingProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** New connections wait (not yet connected to the server) until {@linkcode release}. */
  hold: boolean;
  /** How many connections wait now. */
  readonly waiting: number;
  /** Connects the waiting connections, and no longer holds new ones. */
  release(): void;
  /**
   * The next bytes a client sends are not passed on: its connection is
   * closed, the server's side left open (the server process waits on).
   */
  swallowNext: boolean;
  /**
   * The next bytes a client sends that ask for a statement to run are passed
   * on, then its connection is closed, the server's side left open (and read).
   */
  loseAfterExecute: boolean;
  /**
   * The next bytes a client sends that ask for a statement to run are passed
   * on, then both sides of its connection are closed: the server runs it
   * (and commits it, when the bytes end the transaction) but its answer is lost.
   */
  cutAfterExecute: boolean;
  /** Client connections lost so far. */
  readonly lost: number;
  /** Closes everything. */
  stop(): Promise<void>;
}

/**
 * Starts a proxy to `host`:`port`.
 *
 * @returns The running proxy.
 */
export async function startLosingProxy(host: string, port: number): Promise<LosingProxy> {
  const sockets = new Set<Socket>();
  const keep = (socket: Socket) => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
  };
  const waiting: Array<() => void> = [];
  let lost = 0;
  const join = (client: Socket) => {
    const server = connect(port, host);
    keep(server);
    let orphaned = false;
    const loseClient = () => {
      lost++;
      orphaned = true;
      client.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (proxy.swallowNext) {
        proxy.swallowNext = false;
        loseClient();
      } else if (proxy.loseAfterExecute && chunk.includes(EXECUTE)) {
        proxy.loseAfterExecute = false;
        server.write(chunk);
        loseClient();
      } else if (proxy.cutAfterExecute && chunk.includes(EXECUTE)) {
        proxy.cutAfterExecute = false;
        lost++;
        server.end(chunk);
        client.destroy();
      } else server.write(chunk);
    });
    client.resume();
    server.on("data", (chunk: Buffer) => {
      if (!orphaned) client.write(chunk);
    });
    client.on("close", () => {
      if (!orphaned) server.destroy();
    });
    server.on("close", () => client.destroy());
  };
  const listener = createServer((client) => {
    keep(client);
    client.pause();
    if (proxy.hold) waiting.push(() => join(client));
    else join(client);
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const proxy: LosingProxy = {
    port: (listener.address() as AddressInfo).port,
    hold: false,
    get waiting() {
      return waiting.length;
    },
    release() {
      proxy.hold = false;
      for (const start of waiting.splice(0)) start();
    },
    swallowNext: false,
    loseAfterExecute: false,
    cutAfterExecute: false,
    get lost() {
      return lost;
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
  return proxy;
}
