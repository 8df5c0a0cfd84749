// `hermes-state serve` hardening: a request the runtime's HTTP server cannot read or `fetch`
// refuses (a URL or headers over its limit, bytes that are no HTTP, TRACE, CONNECT) gets an
// answer as the handler's are: a 4xx with a JSON error naming why, and the security headers.
// Over a real socket, on a copy of the v11 fixture.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { hostileDb, serve, type Served } from "./_served.ts";
import { type RawAnswer, rawRequest } from "./_serve_hardening_raw.ts";

/** Bun's own server answers the requests it cannot read itself (plain, without headers). */
const ON_BUN = (globalThis as { Bun?: unknown }).Bun !== undefined;

function assertJsonError(answer: RawAnswer, status: number, message: RegExp, what: string): void {
  assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body.slice(0, 200)}`);
  assert.match(answer.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/, what);
  assert.equal(answer.headers.get("x-content-type-options"), "nosniff", what);
  assert.equal(answer.headers.get("referrer-policy"), "no-referrer", what);
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/, what);
  const json = answer.body.slice(answer.body.indexOf("{"), answer.body.lastIndexOf("}") + 1);
  assert.equal(JSON.parse(json).error.status, status, what);
  assert.match(JSON.parse(json).error.message, message, what);
  assert.doesNotMatch(answer.body, /\bat [\w.<>]+ \(|node:internal|ext:/, `${what}: a stack trace`);
}

describe("requests the server cannot take", () => {
  let served: Served;
  let port: number;
  before(async () => {
    served = await serve(await hostileDb());
    port = Number(new URL(served.origin).port);
  });
  after(() => served.close());

  test("TRACE is a 405 JSON error with the security headers, its Allow the path's methods", async () => {
    const asked = (line: string) =>
      rawRequest(port, `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const cases: [string, string][] = [
      ["TRACE /", "GET, HEAD"],
      ["TRACE /api/search?q=x", "GET, HEAD"],
      ["TRACE /api/sessions/abc", "GET, HEAD, DELETE"],
      ["TRACE /api/sessions/abc/title", "PUT"],
    ];
    for (const [line, allow] of cases) {
      const answer = await asked(line);
      const method = line.split(" ")[0];
      assertJsonError(answer, 405, new RegExp(`${method} is not allowed on /`), line);
      assert.equal(answer.headers.get("allow"), allow, line);
    }
    assertJsonError(await asked("TRACE /nowhere"), 404, /Not found: \/nowhere/, "TRACE /nowhere");
  });

  test("two Host headers are a 400 (RFC 9112, 3.2): which one is meant cannot be told", async () => {
    for (const hosts of [["127.0.0.1", "127.0.0.1"], ["127.0.0.1", "evil.example"]]) {
      const answer = await rawRequest(
        port,
        `GET /api/config HTTP/1.1\r\n${
          hosts.map((host) => `Host: ${host}\r\n`).join("")
        }Connection: close\r\n\r\n`,
      );
      assert.equal(answer.status, 400, `${hosts}: ${answer.status} ${answer.body.slice(0, 200)}`);
    }
  });

  test(
    "a URL or headers over the limit are a 431, bytes that are no HTTP a 400: JSON with the security headers",
    { skip: ON_BUN && "Bun.serve answers these itself, before any code of the server runs" },
    async () => {
      const host = "Host: 127.0.0.1\r\nConnection: close\r\n";
      const cases: [string, string, number, RegExp][] = [
        [
          "a 100 KB URL",
          `GET /api/search?q=${"a".repeat(100_000)} HTTP/1.1\r\n${host}\r\n`,
          431,
          /too large/,
        ],
        [
          "a 100 KB header",
          `GET /api/config HTTP/1.1\r\n${host}X-Big: ${"b".repeat(100_000)}\r\n\r\n`,
          431,
          /too large/,
        ],
        [
          "3000 headers",
          `GET / HTTP/1.1\r\n${host}${
            Array.from({ length: 3000 }, (_, i) => `X-Header-${i}: value\r\n`).join("")
          }\r\n`,
          431,
          /too large/,
        ],
        [
          "a TLS hello",
          "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",
          400,
          /not an HTTP\/1\.1 request/,
        ],
        ["HTTP/9.9", `GET / HTTP/9.9\r\n${host}\r\n`, 400, /not an HTTP\/1\.1 request/],
        [
          "a path of raw bytes",
          `GET /\xff\xfe HTTP/1.1\r\n${host}\r\n`,
          400,
          /not an HTTP\/1\.1 request/,
        ],
        [
          "Content-Length with chunked",
          `PUT /api/session/title?id=x HTTP/1.1\r\n${host}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
          400,
          /not an HTTP\/1\.1 request/,
        ],
        ["CONNECT", `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}\r\n`, 405, /CONNECT is not allowed/],
      ];
      for (const [what, request, status, message] of cases) {
        assertJsonError(await rawRequest(port, request), status, message, what);
      }
      // And the server answers as before.
      const config = await fetch(`${served.origin}/api/config`);
      assert.equal(config.status, 200);
      assert.equal(typeof (await config.json()).version, "string");
    },
  );
});
