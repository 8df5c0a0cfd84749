/**
 * A TCP proxy to a PostgreSQL server for the tests of lost connections: it
 * can take new connections and stay silent, hang up on them (as a balancer
 * with no server behind it), refuse them, or hold them back (as a server
 * restarting); lose a client's connection while the server's side stays
 * open, as a network partition leaves it (the server process goes on,
 * unaware); or cut a connection at a chosen byte: before a request, after
 * a statement was asked to run, at the answer that says a statement of a
 * given tag completed.
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

/** The start of a BackendKeyData message (`K`, length 12), then the process id and the key. */
const BACKEND_KEY = Buffer.from([0x4b, 0, 0, 0, 12]);

/** The server's CommandComplete message (`C`, its length, the tag) for `tag`. */
function completed(tag: string): Buffer {
  const text = Buffer.from(`${tag}\0`);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(4 + text.length);
  return Buffer.concat([Buffer.from("C"), length, text]);
}

/**
 * What the proxy does with a new connection: passes it on to the server;
 * stays silent (accepts it and never answers); hangs up on it once it said
 * something (as a balancer with no server behind it); or closes it at once.
 */
export type ArrivalMode = "forward" | "silent" | "close" | "refuse";

/** The proxy, and what it does next. */
export interface LosingProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** What it does with a new connection (not with those it holds). */
  mode: ArrivalMode;
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
  /**
   * The next bytes a client sends are not passed on: both sides of its
   * connection are closed (the server sees its client go, and rolls back).
   */
  cutNextRequest: boolean;
  /**
   * The next answer that says a statement of this tag completed (`COMMIT`,
   * `SELECT 1`, `UPDATE 1`) is not passed on: both sides of its connection
   * are closed instead (what the server did stands; its answer is lost).
   */
  loseAnswer: string | undefined;
  /**
   * Once a connection is lost at one of the bytes above, the next statement
   * asked to run, on any connection, is cut as it is sent (both sides
   * closed, nothing passed on), and so is every statement asked in the
   * `burstMs` milliseconds that follow, as a server stopping ends each
   * connection it still accepts: a loss that comes in a burst. 0 (none) by
   * default.
   */
  burstMs: number;
  /**
   * New connections are told a made-up server process id (and key) at
   * start-up, as a pooler tells them (PgBouncer in any mode).
   */
  fakeBackendKeys: boolean;
  /** Client connections lost so far (cut, or lost at one of the bytes above). */
  readonly lost: number;
  /** Closes every connection open now. */
  cutAll(): void;
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
  /** Whether the next statement starts a burst of losses. */
  let burstNext = false;
  /** Until when (`performance.now()`) the burst lasts. */
  let burstUntil = -Infinity;
  /** One more connection lost at a chosen byte; the next statement starts a burst, if asked for. */
  const lose = () => {
    lost++;
    burstNext = proxy.burstMs > 0;
  };
  /** Whether a statement asked for now is cut by a burst. */
  const inBurst = () => {
    if (burstNext) {
      burstNext = false;
      burstUntil = performance.now() + proxy.burstMs;
    }
    return performance.now() < burstUntil;
  };
  const join = (client: Socket) => {
    const server = connect(port, host);
    keep(server);
    let orphaned = false;
    const loseClient = () => {
      lose();
      orphaned = true;
      client.destroy();
    };
    const cut = () => {
      lose();
      client.destroy();
      server.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (chunk.includes(EXECUTE) && inBurst()) {
        lost++;
        client.destroy();
        server.destroy();
      } else if (proxy.swallowNext) {
        proxy.swallowNext = false;
        loseClient();
      } else if (proxy.cutNextRequest) {
        proxy.cutNextRequest = false;
        cut();
      } else if (proxy.loseAfterExecute && chunk.includes(EXECUTE)) {
        proxy.loseAfterExecute = false;
        server.write(chunk);
        loseClient();
      } else if (proxy.cutAfterExecute && chunk.includes(EXECUTE)) {
        proxy.cutAfterExecute = false;
        lose();
        server.end(chunk);
        client.destroy();
      } else server.write(chunk);
    });
    client.resume();
    server.on("data", (chunk: Buffer) => {
      if (orphaned) return;
      const key = proxy.fakeBackendKeys ? chunk.indexOf(BACKEND_KEY) : -1;
      if (key >= 0) chunk.writeUInt32BE(1 + Math.floor(Math.random() * 2 ** 30), key + 5);
      if (proxy.loseAnswer !== undefined && chunk.includes(completed(proxy.loseAnswer))) {
        proxy.loseAnswer = undefined;
        cut();
      } else client.write(chunk);
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
    else if (proxy.mode === "refuse") client.destroy();
    else if (proxy.mode === "close") {
      // As a balancer with no server behind it: reads the start-up message, then hangs up.
      client.on("data", () => setTimeout(() => client.end(), 20));
      client.resume();
    } else if (proxy.mode === "forward") join(client);
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const proxy: LosingProxy = {
    port: (listener.address() as AddressInfo).port,
    mode: "forward",
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
    cutNextRequest: false,
    loseAnswer: undefined,
    burstMs: 0,
    fakeBackendKeys: false,
    get lost() {
      return lost;
    },
    cutAll() {
      for (const socket of sockets) socket.destroy();
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
  return proxy;
}
