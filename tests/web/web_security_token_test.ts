// The access token of a non-loopback server, whatever characters `--token` holds: the printed
// link carries it whole, and the cookie the link sets is one value (no attribute slipped in)
// that lets the browser in.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { openStore } from "../../lib/open_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { cliArgv } from "../_helpers.ts";
import { v11Copy } from "../_cli_io.ts";

/** A token of the characters a cookie or a query string would split or change. */
const ODD_TOKEN = "abcdefghijklmnop; Domain=evil.test+&#=é€ x";

const store = await openStore(v11Copy());
after(() => store.close());

/** The `name=value` a browser keeps of a `Set-Cookie`, and the attributes after it. */
function cookieOf(setCookie: string): { pair: string; attributes: string[] } {
  const [pair, ...attributes] = setCookie.split(";").map((part) => part.trim());
  return { pair, attributes };
}

describe("a --token of any characters", () => {
  test("its link sets one cookie value, with no attribute of the token's, that lets the page in", async () => {
    const handle = createHandler(store, { host: "0.0.0.0", token: ODD_TOKEN });
    const link = `http://192.168.1.5:8787/?token=${encodeURIComponent(ODD_TOKEN)}`;
    const exchange = await handle(new Request(link));
    assert.equal(exchange.status, 200);
    const { pair, attributes } = cookieOf(exchange.headers.get("set-cookie")!);
    assert.deepEqual(
      attributes.map((attribute) => attribute.split("=")[0]).sort(),
      ["HttpOnly", "Path", "SameSite"],
    );
    const config = await handle(
      new Request("http://192.168.1.5:8787/api/config", { headers: { cookie: pair } }),
    );
    assert.equal(config.status, 200);
    const wrong = await handle(
      new Request("http://192.168.1.5:8787/api/config", {
        headers: { cookie: "hermes_state_token_8787=abcdefghijklmnop" },
      }),
    );
    assert.equal(wrong.status, 401, "the token's first part alone is not the token");
    const bad = await handle(
      new Request("http://192.168.1.5:8787/api/config", {
        headers: { cookie: "hermes_state_token_8787=%E0%A4%A" },
      }),
    );
    assert.equal(bad.status, 401, "a cookie that is no valid encoding is refused, not a 500");
  });

  test("serve prints a link that carries the token whole", { timeout: 60_000 }, async () => {
    const [command, ...args] = cliArgv([
      "--db",
      v11Copy(),
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--token",
      ODD_TOKEN,
      "--json",
    ]);
    const child = spawn(command, args, {
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((ok) => child.on("close", ok));
    try {
      const printed = await new Promise<{ url: string }>((resolve, reject) => {
        let out = "";
        child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk;
          try {
            resolve(JSON.parse(out));
          } catch {
            // not whole yet
          }
        });
        child.on("close", (code) => reject(new Error(`serve exited ${code}`)));
      });
      const url = new URL(printed.url);
      assert.equal(url.searchParams.get("token"), ODD_TOKEN);
      // The link as printed, asked of the loopback address.
      const exchange = await fetch(`http://127.0.0.1:${url.port}/${url.search}`);
      assert.equal(exchange.status, 200);
      await exchange.body?.cancel();
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
