// `hermes-state serve` hardening: the access token of a server beyond loopback. It is taken
// from the cookie or an `Authorization` header whose scheme is written in any case, and it
// leaks nowhere: not behind a foreign Host, not in the failure log, not as a Referer, not in
// an export. Over a real socket, on a copy of the v11 fixture.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { hostileDb, serve, type Served } from "./_served.ts";

const TOKEN = "a token with a space;0123456789";

/** A request with any Host header (`fetch` sets its own). */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => body += chunk);
      response.on(
        "end",
        () => resolve({ status: response.statusCode!, headers: response.headers, body }),
      );
    });
    request.on("error", reject);
    request.end();
  });
}

describe("the access token", () => {
  let served: Served;
  let port: number;
  const logged: string[] = [];
  before(async () => {
    served = await serve(await hostileDb(), {
      host: "0.0.0.0",
      token: TOKEN,
      logError: (line) => logged.push(line),
    });
    port = Number(new URL(served.origin).port);
  });
  after(() => served.close());

  test("an Authorization header's scheme in any case is read, beside a stale cookie too", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const answer = await get(port, "/api/config", { authorization: `${scheme} ${TOKEN}` });
      assert.equal(answer.status, 200, `${scheme}: ${answer.body}`);
    }
    const stale = await get(port, "/api/config", {
      cookie: `hermes_state_token_${port}=an-earlier-runs-token`,
      authorization: `Bearer ${TOKEN}`,
    });
    assert.equal(stale.status, 200, stale.body);
    const wrong = await get(port, "/api/config", { authorization: "Bearer nope" });
    assert.equal(wrong.status, 401);
    assert.doesNotMatch(wrong.body, /token with a space/);
  });

  test("a foreign Host is refused before the token is taken or a cookie set", async () => {
    const link = await get(port, `/?token=${encodeURIComponent(TOKEN)}`, {
      host: "rebound.example:80",
    });
    assert.equal(link.status, 403);
    assert.equal(link.headers["set-cookie"], undefined);
    const bearer = await get(port, "/api/config", {
      host: "rebound.example",
      authorization: `Bearer ${TOKEN}`,
    });
    assert.equal(bearer.status, 403);
    assert.doesNotMatch(bearer.body, /csrf/);
  });

  test("the token link's page sends no Referer and goes on without the token", async () => {
    const page = await get(port, `/api/export?format=html&token=${encodeURIComponent(TOKEN)}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers["referrer-policy"], "no-referrer");
    assert.match(String(page.headers["content-security-policy"]), /frame-ancestors 'none'/);
    assert.match(page.body, /href="\/api\/export\?format=html"/);
    assert.ok(!page.body.includes(encodeURIComponent(TOKEN)) && !page.body.includes(TOKEN));
    const cookie = String(page.headers["set-cookie"]).split(";")[0];
    const exported = await get(port, "/api/export?format=html", { cookie });
    assert.equal(exported.status, 200);
    assert.ok(!exported.body.includes(TOKEN) && !exported.body.includes(encodeURIComponent(TOKEN)));
    assert.ok(logged.every((line) => !line.includes("0123456789")), logged.join("\n"));
  });
});
