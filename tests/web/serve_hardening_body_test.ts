// `hermes-state serve` hardening: a write's body over a real socket, as a client sends it
// (chunked, without a length, or a byte at a time). A body over the limit is a 413 at once and
// a body that trickles is given up on at the time limit, on every runtime (the Node adapter,
// which Deno uses too, read every body whole, up to 1 MB, before the handler saw it): the
// server answers others meanwhile and changes nothing. On a copy of the v11 fixture.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { MAX_WRITE_BODY } from "../../lib/web/api.ts";
import { HOSTILE_ID, hostileDb, serve, type Served } from "./_served.ts";
import { rawConnection } from "./_serve_hardening_raw.ts";

describe("a write's body over a socket", () => {
  let served: Served;
  let port: number;
  let csrf: string;
  before(async () => {
    served = await serve(await hostileDb(), { allowWrites: true, timeoutMs: 1500 });
    port = Number(new URL(served.origin).port);
    csrf = (await (await fetch(`${served.origin}/api/config`)).json()).csrf;
  });
  after(() => served.close());

  function writeHead(extra: string): string {
    return `PUT /api/sessions/${HOSTILE_ID}/title HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `X-Hermes-Csrf: ${csrf}\r\nContent-Type: application/json\r\n${extra}\r\n`;
  }

  test("a chunked body over the limit that then stalls is a 413 at once, and changes nothing", async () => {
    const titleBefore = await served.store.getSessionTitle(HOSTILE_ID);
    for (const size of [2 * MAX_WRITE_BODY, 2_000_000]) {
      const chunk = `{"title":"${"x".repeat(size)}`;
      const connection = rawConnection(
        port,
        `${writeHead("Transfer-Encoding: chunked\r\n")}${
          chunk.length.toString(16)
        }\r\n${chunk}\r\n`,
      );
      try {
        const answer = await connection.answer(3000, /\}/);
        assert.equal(
          answer.status,
          413,
          `${size} bytes: ${answer.status} ${answer.body.slice(0, 100)}`,
        );
        assert.match(answer.body, /too large \(at most 10000 bytes\)/);
      } finally {
        connection.socket.destroy();
      }
    }
    assert.equal(await served.store.getSessionTitle(HOSTILE_ID), titleBefore);
  });

  test("a body sent a byte at a time is given up on at the time limit; others are answered meanwhile", async () => {
    const titleBefore = await served.store.getSessionTitle(HOSTILE_ID);
    const body = JSON.stringify({ title: "a title that never arrives whole" });
    const connection = rawConnection(port, writeHead(`Content-Length: ${body.length}\r\n`));
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < body.length - 1 && !connection.socket.destroyed) {
        connection.socket.write(body[sent++]);
      }
    }, 200);
    try {
      const waiting = connection.answer(6000, /\}/);
      // Meanwhile the server answers others at once.
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const response = await fetch(`${served.origin}/api/sessions?limit=1`);
        assert.equal(response.status, 200);
        assert.equal((await response.json()).sessions.length, 1);
        assert.ok(Date.now() - started < 1000, `a listing took ${Date.now() - started} ms`);
        await new Promise((ok) => setTimeout(ok, 300));
      }
      const answer = await waiting;
      assert.equal(answer.status, 503, `${answer.status} ${answer.body.slice(0, 100)}`);
      assert.match(answer.body, /took longer than 1500 ms/);
      assert.ok(answer.ms < 4000, `answered after ${answer.ms} ms`);
    } finally {
      clearInterval(trickle);
      connection.socket.destroy();
    }
    assert.equal(await served.store.getSessionTitle(HOSTILE_ID), titleBefore);
  });

  test("a client that goes away mid-body is no failure of the server's: nothing is logged or changed", async () => {
    const logged: string[] = [];
    const quiet = await serve(await hostileDb(), {
      allowWrites: true,
      logError: (line) => logged.push(line),
    });
    try {
      const quietPort = Number(new URL(quiet.origin).port);
      const token = (await (await fetch(`${quiet.origin}/api/config`)).json()).csrf;
      const titleBefore = await quiet.store.getSessionTitle(HOSTILE_ID);
      const connection = rawConnection(
        quietPort,
        `PUT /api/sessions/${HOSTILE_ID}/title HTTP/1.1\r\nHost: 127.0.0.1:${quietPort}\r\n` +
          `X-Hermes-Csrf: ${token}\r\nContent-Length: 50\r\n\r\n{"title":`,
      );
      await new Promise((ok) => setTimeout(ok, 300));
      connection.socket.destroy();
      await new Promise((ok) => setTimeout(ok, 500));
      assert.deepEqual(logged, []);
      assert.equal(await quiet.store.getSessionTitle(HOSTILE_ID), titleBefore);
    } finally {
      await quiet.close();
    }
  });

  test("a body within the limit, chunked and without a length, still renames", async () => {
    const chunk = JSON.stringify({ title: "renamed over a raw socket" });
    const connection = rawConnection(
      port,
      `${writeHead("Transfer-Encoding: chunked\r\n")}${
        chunk.length.toString(16)
      }\r\n${chunk}\r\n0\r\n\r\n`,
    );
    try {
      const answer = await connection.answer(3000, /\}/);
      assert.equal(answer.status, 200, `${answer.status} ${answer.body.slice(0, 100)}`);
      assert.match(answer.body, /renamed over a raw socket/);
    } finally {
      connection.socket.destroy();
    }
    assert.equal(await served.store.getSessionTitle(HOSTILE_ID), "renamed over a raw socket");
  });
});
