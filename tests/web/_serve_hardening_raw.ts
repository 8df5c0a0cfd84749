/**
 * A raw HTTP/1.1 client for the serve hardening tests: it sends bytes as
 * they are (a request `fetch` would refuse or fix) and reads what comes back.
 */
import { connect, type Socket } from "node:net";

/** What came back on a connection. */
export interface RawAnswer {
  /** The status line's code, or 0 when nothing came. */
  readonly status: number;
  /** The header lines, names lower-cased (the last of a repeated name). */
  readonly headers: ReadonlyMap<string, string>;
  /** The bytes after the header block, as Latin-1 text (chunked framing left in). */
  readonly body: string;
  /** Milliseconds from the request to the first byte back (or to giving up). */
  readonly ms: number;
}

/** The text read so far, parsed. */
function parsed(text: string, ms: number): RawAnswer {
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
  return { status, headers, body: end < 0 ? "" : text.slice(end + 4), ms };
}

/**
 * Opens a connection to `port` on 127.0.0.1 and sends `request`.
 *
 * @param port The server's port.
 * @param request The bytes to send first.
 * @returns The socket, and `answer(ms)`: what came back once the server closed, once the
 *   header block and `until` (a pattern of the body) arrived, or after `ms`.
 */
export function rawConnection(port: number, request: string | Uint8Array) {
  const socket: Socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  const started = Date.now();
  let text = "";
  let firstByte = 0;
  const listeners = new Set<() => void>();
  socket.on("data", (chunk: Uint8Array) => {
    firstByte ||= Date.now() - started;
    text += new TextDecoder("latin1").decode(chunk);
    for (const listener of listeners) listener();
  });
  socket.on("close", () => {
    for (const listener of listeners) listener();
  });
  socket.write(request);
  return {
    socket,
    /** Waits for the answer: see {@linkcode rawConnection}. */
    answer(ms: number, until?: RegExp): Promise<RawAnswer> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(parsed(text, firstByte || Date.now() - started));
        };
        const check = () => {
          const headed = text.includes("\r\n\r\n");
          if (
            socket.destroyed ||
            (headed && (until === undefined || until.test(parsed(text, 0).body)))
          ) {
            done();
          }
        };
        const timer = setTimeout(done, ms);
        listeners.add(check);
        check();
      });
    },
  };
}

/**
 * Sends `request` on a new connection and reads the answer until the server
 * closes it, or `ms` passed.
 *
 * @param port The server's port.
 * @param request The request's bytes.
 * @param ms The longest wait.
 * @returns What came back.
 */
export async function rawRequest(port: number, request: string, ms = 5000): Promise<RawAnswer> {
  const connection = rawConnection(port, request);
  try {
    return await connection.answer(ms, /\}/);
  } finally {
    connection.socket.destroy();
  }
}
