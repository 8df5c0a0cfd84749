// `hermes-state serve` hardening: what another site's page in the operator's browser could
// send to a server run with --allow-writes (a form's POST, a write with its own Origin or the
// opaque `null`, a request under a rebound name) changes nothing; a client that is no browser
// (no Origin) with the CSRF header still writes. Over a real socket, on a copy of the v11
// fixture.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { HOSTILE_ID, hostileDb, serve, type Served } from "./_served.ts";
import { rawRequest } from "./_serve_hardening_raw.ts";

describe("writes another site could send", () => {
  let served: Served;
  let port: number;
  let csrf: string;
  before(async () => {
    served = await serve(await hostileDb(), { allowWrites: true });
    port = Number(new URL(served.origin).port);
    csrf = (await (await fetch(`${served.origin}/api/config`)).json()).csrf;
  });
  after(() => served.close());

  function write(method: string, path: string, headers: string, body: string): string {
    return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}` +
      `Content-Length: ${
        new TextEncoder().encode(body).byteLength
      }\r\nConnection: close\r\n\r\n${body}`;
  }

  test("a form's POST, a foreign or null Origin and a rebound Host change nothing", async () => {
    const title = `/api/sessions/${HOSTILE_ID}/title`;
    const session = `/api/sessions/${HOSTILE_ID}`;
    const before = await served.store.getSessionTitle(HOSTILE_ID);
    const cases: [string, string, number][] = [
      [
        "a form's urlencoded POST",
        write("POST", title, "Content-Type: application/x-www-form-urlencoded\r\n", "title=pwned"),
        405,
      ],
      [
        "a form's text/plain POST",
        write("POST", title, "Content-Type: text/plain\r\n", '{"title":"pwned"}'),
        405,
      ],
      [
        "a PUT without the CSRF header",
        write("PUT", title, "Content-Type: text/plain\r\n", '{"title":"pwned"}'),
        403,
      ],
      [
        "a PUT from another origin",
        write(
          "PUT",
          title,
          `X-Hermes-Csrf: ${csrf}\r\nOrigin: http://attacker.example\r\n`,
          '{"title":"pwned"}',
        ),
        403,
      ],
      [
        "a DELETE from an opaque origin",
        write(
          "DELETE",
          session,
          `X-Hermes-Csrf: ${csrf}\r\nOrigin: null\r\n`,
          JSON.stringify({ confirm: HOSTILE_ID }),
        ),
        403,
      ],
      [
        "a DELETE from another port of this host",
        write(
          "DELETE",
          session,
          `X-Hermes-Csrf: ${csrf}\r\nOrigin: http://127.0.0.1:1\r\n`,
          JSON.stringify({ confirm: HOSTILE_ID }),
        ),
        403,
      ],
      [
        "a DELETE that another site started",
        write(
          "DELETE",
          session,
          `X-Hermes-Csrf: ${csrf}\r\nSec-Fetch-Site: cross-site\r\n`,
          JSON.stringify({ confirm: HOSTILE_ID }),
        ),
        403,
      ],
      [
        "a DELETE under a rebound name",
        write(
          "DELETE",
          session,
          `X-Hermes-Csrf: ${csrf}\r\n`,
          JSON.stringify({ confirm: HOSTILE_ID }),
        ).replace(
          `Host: 127.0.0.1:${port}`,
          `Host: rebound.example:${port}`,
        ),
        403,
      ],
    ];
    for (const [what, request, status] of cases) {
      const answer = await rawRequest(port, request);
      assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body.slice(0, 160)}`);
      assert.match(
        answer.headers.get("content-security-policy") ?? "",
        /frame-ancestors 'none'/,
        what,
      );
    }
    assert.equal(await served.store.getSessionTitle(HOSTILE_ID), before);
    assert.notEqual(await served.store.getSession(HOSTILE_ID), undefined);
    // A client that is no browser sends no Origin: with the CSRF header it writes.
    const cli = await rawRequest(
      port,
      write(
        "PUT",
        title,
        `X-Hermes-Csrf: ${csrf}\r\nContent-Type: application/json\r\n`,
        '{"title":"by a script"}',
      ),
    );
    assert.equal(cli.status, 200, cli.body);
    assert.equal(await served.store.getSessionTitle(HOSTILE_ID), "by a script");
  });
});
