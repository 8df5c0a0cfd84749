// `hermes-state serve` as a real process on the running runtime: it prints
// the address, answers on it, guards a non-loopback bind with a token, and
// stops cleanly (exit 0) on SIGTERM.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { cliArgv } from "../_helpers.ts";
import { V11, v11Copy } from "../_cli_io.ts";

/** The status and body of a GET / sent by hand over a socket, with `host` as its Host header. */
function rawGet(base: URL, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), "127.0.0.1", () => {
      socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => void (text += chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (status) resolve({ status: Number(status[1]), text });
      else reject(new Error(`no status line: ${JSON.stringify(text)}`));
    });
  });
}

interface Running {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** What it wrote to stderr so far. */
  stderr: () => string;
}

/** Starts `cli.ts serve …` and waits for its "Open URL" line. */
async function start(args: readonly string[]): Promise<{ running: Running; url: string }> {
  const [command, ...argv] = cliArgv(args);
  const child = spawn(command, argv, {
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code, signal) => {
      if (code === null) lines.push(`killed by ${signal}; stderr: ${err}`);
      resolve(code);
    })
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts);
      // The last line of the banner: everything before it has been printed.
      if (!lines.some((line) => line.includes("Ctrl-C stops the server"))) return;
      resolve(lines.find((line) => line.startsWith("Open "))!.slice("Open ".length));
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    timer = setTimeout(() => reject(new Error(`serve printed no address in 30 s: ${err}`)), 30_000);
  }).finally(() => clearTimeout(timer));
  return { running: { child, lines, exited, stderr: () => err }, url };
}

/**
 * Sends SIGTERM and asserts a clean stop: the server says "Stopped." and
 * exits 0. (Deno's node:child_process reports a child that exited after
 * handling SIGTERM as killed by it, so there the line is the proof.)
 */
async function stop(running: Running): Promise<void> {
  running.child.kill("SIGTERM");
  const code = await running.exited;
  const log = running.lines.join("\n");
  assert.ok(running.lines.includes("Stopped."), log);
  if (runtimeName() !== "deno") assert.equal(code, 0, log);
}

describe(`hermes-state serve as a process (${runtimeName()})`, () => {
  test("serve prints its loopback address, answers there, and exits 0 on SIGTERM", {
    timeout: 60_000,
  }, async () => {
    const path = v11Copy();
    const { running, url } = await start(["--db", path, "serve", "--port", "0"]);
    try {
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      assert.ok(running.lines.some((line) => line === `Serving ${path} (read-only)`));
      const page = await fetch(url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>hermes-state<\/title>/);
      const transcript = await (await fetch(`${url}api/sessions/${V11.compressionTip}`)).json();
      assert.equal(transcript.session.title, "my project #3");
      // Nothing for the operator to wonder about (Deno warned of request.signal's legacy abort).
      assert.equal(running.stderr(), "");
    } finally {
      await stop(running);
    }
  });

  test("a second serve on a port in use says so and exits 1", { timeout: 60_000 }, async () => {
    const path = v11Copy();
    const { running, url } = await start(["--db", path, "serve", "--port", "0"]);
    try {
      const port = new URL(url).port;
      const second = await start(["--db", path, "serve", "--port", port]).then(
        () => assert.fail("the second server started"),
        (error: Error) => error.message,
      );
      assert.match(
        second,
        new RegExp(
          `^serve exited 1: hermes-state: Cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`,
        ),
      );
    } finally {
      await stop(running);
    }
  });

  test(
    "a --host that names no host, or an address not of this machine, is said so on every runtime",
    {
      timeout: 60_000,
    },
    async () => {
      const path = v11Copy();
      const token = "a".repeat(24);
      // Bun said the port was in use, Deno "listen EINVAL: invalid argument".
      for (
        const [host, reason] of [
          ["no.such.host.invalid", "no such host \\(the name does not resolve\\)"],
          ["192.0.2.77", "this machine has no such address"],
        ]
      ) {
        const refused = await start(["--db", path, "serve", "--host", host, "--token", token]).then(
          () => assert.fail(`a server started on ${host}`),
          (error: Error) => error.message,
        );
        assert.match(
          refused,
          new RegExp(
            `^serve exited 1: hermes-state: Cannot listen on ${
              host.replaceAll(".", "\\.")
            }:\\d+: ${reason}`,
          ),
        );
      }
    },
  );

  test(
    "serve changes not a byte of the file it shows, searches included",
    { timeout: 60_000 },
    async () => {
      const path = v11Copy();
      const digest = () =>
        ["", "-wal", "-shm"].map((suffix) =>
          existsSync(path + suffix)
            ? createHash("sha256").update(readFileSync(path + suffix)).digest("hex")
            : "none"
        ).join(" ");
      const before = digest();
      const { running, url } = await start(["--db", path, "serve", "--port", "0"]);
      try {
        for (const q of ["docker", "记忆", "数据库迁移"]) {
          assert.equal((await fetch(`${url}api/search?q=${encodeURIComponent(q)}`)).status, 200);
        }
        assert.equal((await fetch(`${url}api/sessions`)).status, 200);
        const write = await fetch(`${url}api/sessions/${V11.compressionTip}/title`, {
          method: "PUT",
          body: JSON.stringify({ title: "x" }),
        });
        assert.equal(write.status, 403);
      } finally {
        await stop(running);
      }
      assert.equal(digest(), before);
    },
  );

  test(
    "serve --allow-writes renames from the page with its CSRF token",
    { timeout: 60_000 },
    async () => {
      const { running, url } = await start([
        "--db",
        v11Copy(),
        "serve",
        "--port",
        "0",
        "--allow-writes",
      ]);
      try {
        const config = await (await fetch(`${url}api/config`)).json();
        assert.equal(config.allowWrites, true);
        const renamed = await fetch(`${url}api/sessions/${V11.compressionTip}/title`, {
          method: "PUT",
          headers: { "x-hermes-csrf": config.csrf, "content-type": "application/json" },
          body: JSON.stringify({ title: "renamed in the browser" }),
        });
        assert.equal(renamed.status, 200);
        const transcript = await (await fetch(`${url}api/sessions/${V11.compressionTip}`)).json();
        assert.equal(transcript.session.title, "renamed in the browser");
      } finally {
        await stop(running);
      }
    },
  );

  test("serve on every interface prints a token once and answers 401 without it", {
    timeout: 60_000,
  }, async () => {
    const { running, url } = await start([
      "--db",
      v11Copy(),
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
    ]);
    try {
      const token = new URL(url).searchParams.get("token");
      assert.match(token ?? "", /^[0-9a-f]{32}$/);
      assert.ok(running.lines.some((line) => /printed only this once/.test(line)));
      const base = url.slice(0, url.indexOf("?"));
      assert.equal((await fetch(`${base}api/sessions`)).status, 401);
      // A page of the server's own goes on to the app (a redirect would lose the cookie when the
      // link is followed from another site).
      const exchange = await fetch(url, { redirect: "manual" });
      assert.equal(exchange.status, 200);
      assert.match(await exchange.text(), /<a id="go" href="\/">/);
      const cookie = exchange.headers.get("set-cookie")!.split(";")[0];
      assert.equal((await fetch(`${base}api/sessions`, { headers: { cookie } })).status, 200);
      // A Host header that is no host is a bad request, not a server error.
      for (const host of ["a b", "%", "127.0.0.1:99999", "[::1"]) {
        const answer = await rawGet(new URL(base), host);
        assert.equal(answer.status, 400, host);
        // Named as the Host header's fault, whatever the runtime made of the URL.
        assert.ok(
          answer.text.includes(
            `the Host header is not a host and port: current value is ${
              JSON.stringify(JSON.stringify(host)).slice(1, -1)
            }`,
          ),
          answer.text,
        );
      }
    } finally {
      await stop(running);
    }
  });
});
