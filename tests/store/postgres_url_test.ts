/**
 * Server URLs as `psql` takes them: a Unix socket folder (percent-encoded in
 * the authority, or in `?host=`), libpq's query parameters overriding the
 * authority, bad values refused by name, passwords masked wherever they are.
 * The socket forms connect to the real test server, and a role that must
 * give its password (scripts/pg.sh makes the cluster ask for it) logs in
 * with it from the URL or from a libpq password file.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AddressInfo, createServer } from "node:net";
import { openStore } from "../../lib/open_store.ts";
import { OpenError } from "../../lib/core/errors.ts";
import { maskPassword, passwordFor, serverOptions } from "../../lib/postgres/_url.ts";
import { lookUpPgpass, passwordFromPgpass } from "../../lib/postgres/_pgpass.ts";
import { runCli } from "../_cli_io.ts";
import { adminSql, freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";

describe("serverOptions() reads a URL as libpq does", () => {
  test("a TCP host, port, user, password and database", () => {
    assert.deepEqual(serverOptions("postgres://ann:s%40cret@db.example:6543/hermes"), {
      connection: {},
      host: ["db.example"],
      port: [6543],
      user: "ann",
      pass: "s@cret",
      database: "hermes",
    });
  });

  test("a socket folder in the authority (percent-encoded) or in ?host=", () => {
    const encoded = serverOptions("postgresql://postgres@%2Fvar%2Frun%2Fpostgresql:5433/db");
    assert.deepEqual(encoded.host, ["/var/run/postgresql"]);
    assert.equal(encoded.path, "/var/run/postgresql/.s.PGSQL.5433");
    const query = serverOptions("postgres:///db?host=/tmp/pg/&port=6000&user=u", {});
    assert.equal(query.path, "/tmp/pg/.s.PGSQL.6000");
    assert.equal(query.user, "u");
    assert.equal(query.database, "db");
  });

  test("?port= and ?host= replace the authority's; PGPORT fills a missing port", () => {
    assert.deepEqual(serverOptions("postgres://h:5432/d?port=7000").port, [7000]);
    assert.deepEqual(serverOptions("postgres://a:5000,b/d", { PGPORT: "6000" }).port, [
      5000,
      6000,
    ]);
    const replaced = serverOptions("postgres://h:5433/d?host=/s");
    assert.equal(replaced.path, "/s/.s.PGSQL.5433");
    // Only a port: the host is the environment's, as the client would pick.
    assert.deepEqual(
      serverOptions("postgres:///d?port=7001", { PGHOST: "/run/pg" }).path,
      "/run/pg/.s.PGSQL.7001",
    );
    // Nothing: every part is left to the client (PGHOST, PGPORT…, then localhost).
    assert.deepEqual(serverOptions("postgres://"), { connection: {} });
  });

  test("an IPv6 host in brackets", () => {
    const options = serverOptions("postgres://u@[::1]:5434/d");
    assert.deepEqual([options.host, options.port], [["::1"], [5434]]);
  });

  test("TLS modes, timeouts and run-time settings", () => {
    assert.equal(serverOptions("postgres://h/d?sslmode=disable").ssl, false);
    assert.equal(serverOptions("postgres://h/d?sslmode=require").ssl, "require");
    assert.equal(serverOptions("postgres://h/d?sslmode=verify-ca").ssl, "verify-full");
    assert.equal(serverOptions("postgres://h/d?sslrootcert=system").ssl, "verify-full");
    assert.equal(serverOptions("postgres://h/d?ssl=true").ssl, "verify-full");
    assert.equal(serverOptions("postgres://h/d?ssl=false").ssl, false);
    assert.throws(
      () => serverOptions("postgres://h/d?ssl=yes"),
      /ssl must be true, false or an sslmode/,
    );
    const options = serverOptions(
      "postgres://h/d?connect_timeout=4&application_name=gw-1&statement_timeout=5000",
    );
    assert.equal(options.connect_timeout, 4);
    assert.deepEqual(options.connection, { application_name: "gw-1", statement_timeout: "5000" });
    // libpq's environment for what the URL leaves out; the URL wins.
    const env = { PGSSLMODE: "require", PGCONNECT_TIMEOUT: "9", PGAPPNAME: "from-env" };
    const fromEnv = serverOptions("postgres://h/d", env);
    assert.deepEqual([fromEnv.ssl, fromEnv.connect_timeout, fromEnv.connection], [
      "require",
      9,
      { application_name: "from-env" },
    ]);
    const both = serverOptions("postgres://h/d?sslmode=disable&application_name=url", env);
    assert.deepEqual([both.ssl, both.connection.application_name], [false, "url"]);
    assert.throws(
      () => serverOptions("postgres://h/d", { PGSSLMODE: "sometimes" }),
      /PGSSLMODE is not a value libpq takes: current value is "sometimes"/,
    );
  });

  test("target_session_attrs from the URL or PGTARGETSESSIONATTRS, which the client reads itself", () => {
    const attrs = (url: string, env: Record<string, string> = {}) =>
      serverOptions(url, env).target_session_attrs;
    assert.equal(attrs("postgres://h/d?target_session_attrs=read-write"), "read-write");
    assert.equal(attrs("postgres://h/d?target_session_attrs=any"), undefined);
    // Taken here, so that a read-only store judges the server by its role (it was left to the
    // client, which sent read commands' read-only sessions to no server).
    assert.equal(attrs("postgres://h/d", { PGTARGETSESSIONATTRS: "primary" }), "primary");
    assert.equal(
      attrs("postgres://h/d?target_session_attrs=standby", { PGTARGETSESSIONATTRS: "primary" }),
      "standby",
    );
    // The client refused these with an error of its own, seen as an unexpected one.
    assert.throws(
      () => attrs("postgres://h/d", { PGTARGETSESSIONATTRS: "master" }),
      /PGTARGETSESSIONATTRS is not a value libpq takes: current value is "master"/,
    );
    assert.throws(
      () => attrs("postgres://h/d", { PGTARGETSESSIONATTRS: "any" }),
      /"any" cannot be told to the client while PGTARGETSESSIONATTRS is set .*: unset it/,
    );
    assert.throws(
      () => attrs("postgres://h/d?target_session_attrs=any", { PGTARGETSESSIONATTRS: "standby" }),
      /while PGTARGETSESSIONATTRS is set \(current value is "standby"\)/,
    );
    // The client never falls back to the primary: a URL naming only it failed at once, one
    // whose standby was down after 30 s.
    assert.throws(
      () => attrs("postgres://h/d?target_session_attrs=prefer-standby"),
      /^TypeError: target_session_attrs prefer-standby is not honoured by the client \(it would never fall back to the primary\): give standby \(a standby only\), or none \(any server\)$/,
    );
    assert.throws(
      () => attrs("postgres://h/d", { PGTARGETSESSIONATTRS: "prefer-standby" }),
      /^TypeError: PGTARGETSESSIONATTRS: target_session_attrs prefer-standby is not honoured/,
    );
  });

  test("bad values and parameters the client cannot honour are refused by name", () => {
    const refused = (url: string, pattern: RegExp) =>
      assert.throws(
        () => serverOptions(url),
        (e) => e instanceof TypeError && pattern.test(e.message),
      );
    refused("postgres://h:abc/d", /port must be a number from 1 to 65535: current value is "abc"/);
    refused("postgres://h/d?port=70000", /current value is "70000"/);
    refused(
      "postgres://h/d?sslmode=maybe",
      /sslmode is not a libpq mode: current value is "maybe"/,
    );
    refused("postgres://h/d?sslcert=/c.pem", /parameter sslcert is not supported/);
    refused("postgres://h/d?gssencmode=disable", /parameter gssencmode is not supported/);
    refused("postgres://h/d?sslrootcert=/ca.pem", /sslrootcert can only be system/);
    refused("postgres://h/d?search_path=x", /use \?schema=NAME/);
    refused("postgres://a,b/d?port=1,2,3", /ports must be one, or one per host \(2\)/);
    refused("postgres://%zz/d", /host is not valid percent-encoding/);
    // A password is never echoed, even one that does not decode.
    refused("postgres://ann:p%zz@h/d", /^the URL's password is not valid percent-encoding$/);
    refused("mysql://h/d", /scheme must be postgres:\/\/ or postgresql:\/\//);
    refused(
      "postgres://h/d?pgbouncer=yes",
      /pgbouncer must be true or false: current value is "yes"/,
    );
    refused(
      "postgres://h/d?pgbouncer=true&lock_timeout=2s",
      /parameter lock_timeout cannot reach the server through a transaction-mode pooler .*: current value is "2s"/,
    );
  });

  test("?pgbouncer=true marks a transaction-mode pooler, which keeps application_name only", () => {
    const read = serverOptions("postgres://h/d?pgbouncer=true&application_name=gw-1");
    assert.equal(read.transactionPooler, true);
    assert.deepEqual(read.connection, { application_name: "gw-1" });
    assert.equal(serverOptions("postgres://h/d?pgbouncer=false").transactionPooler, undefined);
    assert.equal(serverOptions("postgres://h/d").transactionPooler, undefined);
  });

  test("openStore() and the CLI refuse a bad URL with one OpenError line, before any connection", async () => {
    await assert.rejects(
      openStore("postgres://ann:secret@h:99999/d"),
      (e) =>
        e instanceof OpenError &&
        e.message ===
          'Cannot open database "postgres://ann:***@h:99999/d": the URL\'s port must be a number from 1 to 65535: current value is "99999"',
    );
    await assert.rejects(
      openStore("postgres://ann:secret@h/d?schema=bad-name"),
      (e) =>
        e instanceof OpenError && e.message.includes("ann:***@") &&
        e.message.endsWith(
          'plain identifier (letters, digits, _ and $): current value is "bad-name"',
        ),
    );
    const badSchema = async (query: string, said: string) =>
      await assert.rejects(
        openStore(`postgres://ann:secret@h/d?${query}`),
        (e) => e instanceof OpenError && e.message.includes("ann:***@") && e.message.endsWith(said),
      );
    await badSchema(
      `schema=${"x".repeat(64)}`,
      `at most 63 characters (PostgreSQL's limit): current value is "${"x".repeat(64)}"`,
    );
    await badSchema(
      "schema=team_a&schema=team_b",
      'gives ?schema= 2 times: current values are "team_a", "team_b"',
    );
    await badSchema(
      "schema=pg_catalog",
      `must not be one of the server's own: current value is "pg_catalog"`,
    );
    await badSchema(
      "schema=information_schema",
      `must not be one of the server's own: current value is "information_schema"`,
    );
    const run = await runCli(["--db", "postgres://h/d?sslmode=maybe", "list"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      'hermes-state: Cannot open database "postgres://h/d?sslmode=maybe": the URL\'s sslmode is not a libpq mode: current value is "maybe"\n',
    );
  });

  test("maskPassword() hides the authority's password and ?password=", () => {
    assert.equal(maskPassword("postgres://ann:secret@h/d"), "postgres://ann:***@h/d");
    assert.equal(
      maskPassword("postgres://h/d?user=ann&password=secret&schema=x"),
      "postgres://h/d?user=ann&password=***&schema=x",
    );
    assert.equal(maskPassword("postgres://ann@h/d"), "postgres://ann@h/d");
    // An @ left unencoded in the password: the host is after the last one, as the parser reads it.
    assert.equal(maskPassword("postgres://ann:p@ss@h/d"), "postgres://ann:***@h/d");
    assert.equal(serverOptions("postgres://ann:p@ss@h/d").pass, "p@ss");
    // A / ? or # left unencoded (a generated base64 password): the error named a "port" of its
    // first part and showed the rest.
    // A ?password= with an @, or an @ in another parameter: the greedy first fix masked up to
    // the last @ of the URL, showing the end of the password and hiding the host.
    assert.equal(
      maskPassword("postgres://host:5432/db?password=sec@ret"),
      "postgres://host:5432/db?password=***",
    );
    assert.equal(
      maskPassword("postgres://u:p@h/db?password=a@b"),
      "postgres://u:***@h/db?password=***",
    );
    assert.equal(
      maskPassword("postgres://u:p@h/db?user=adm@srv"),
      "postgres://u:***@h/db?user=adm@srv",
    );
    assert.equal(
      maskPassword("postgres://h:5432/db?application_name=a@b"),
      "postgres://h:5432/db?application_name=a@b",
    );
    for (
      const password of ["Xk3/9qZ+Lw=", "ab?cd", "ab#cd", "a/b?c#d@e", "pa?sslmode=word", "pa?s%zz"]
    ) {
      const url = `postgres://ann:${password}@127.0.0.1:5432/postgres`;
      assert.equal(maskPassword(url), "postgres://ann:***@127.0.0.1:5432/postgres", password);
      assert.throws(
        () => serverOptions(url),
        (e) => e instanceof TypeError && !e.message.includes(password.slice(0, 3)),
      );
    }
  });

  test("a + in a parameter is a +, as libpq reads it, and %2B too (not a form's space)", () => {
    const read = serverOptions("postgres://h/d?password=a+b&user=ann+x&application_name=a+b%2Bc");
    assert.equal(read.pass, "a+b");
    assert.equal(read.user, "ann+x");
    assert.equal(read.connection.application_name, "a+b+c");
    assert.equal(serverOptions("postgres://h/d?password=a%2Bb").pass, "a+b");
    assert.throws(
      () => serverOptions("postgres://h/d?password=100%"),
      (e) => e instanceof TypeError && !e.message.includes("100"),
    );
  });
});

describe("a store opened through the server's Unix socket", { skip: PG_SKIP }, () => {
  test("both socket forms reach the server the TCP URL reaches", { timeout: 60_000 }, async () => {
    const [socket] = await adminSql(
      "SELECT split_part(current_setting('unix_socket_directories'), ',', 1) AS folder, current_setting('port') AS port, current_user AS who",
    );
    const folder = String(socket.folder).trim();
    assert.ok(folder.startsWith("/"), `the test server listens on a socket: ${folder}`);
    const schema = freshSchema();
    const byQuery =
      `postgres:///postgres?host=${folder}&port=${socket.port}&user=${socket.who}&schema=${schema}`;
    const writer = await openStore(byQuery);
    await writer.createSession("over-socket", "cli");
    await writer.appendMessage("over-socket", { role: "user", content: "through the socket" });
    await writer.close();
    const byAuthority = `postgres://${socket.who}@${
      encodeURIComponent(folder)
    }:${socket.port}/postgres?schema=${schema}`;
    const reader = await openStore(byAuthority, { readonly: true });
    try {
      assert.equal((await reader.searchMessages("socket"))[0]?.session_id, "over-socket");
    } finally {
      await reader.close();
    }
    const [seen] = await adminSql(
      `SELECT count(*)::int AS n FROM "${schema}".messages WHERE session_id = 'over-socket'`,
    );
    assert.equal(seen.n, 1);
  });
});

describe("the libpq password file", () => {
  const login = { host: "db.example", port: 5432, database: "hermes", user: "ann" };

  test("the first matching line wins; * matches anything; \\ escapes : and \\", () => {
    const text = [
      "# comment line",
      "other.example:5432:hermes:ann:not-this-host",
      "db.example:5432:hermes:bob:not-this-user",
      "db.example:*:hermes:ann:p\\:w\\\\rd",
      "*:*:*:*:fallback",
    ].join("\n");
    assert.equal(passwordFromPgpass(text, login), "p:w\\rd");
    assert.equal(passwordFromPgpass(text, { ...login, user: "cy" }), "fallback");
    assert.equal(passwordFromPgpass("db.example:5432:hermes:ann\n", login), undefined, "4 fields");
  });

  test("a socket connection matches localhost, or the socket folder", () => {
    const socket = { ...login, host: "/var/run/postgresql" };
    assert.equal(passwordFromPgpass("localhost:5432:hermes:ann:local", socket), "local");
    assert.equal(
      passwordFromPgpass("/var/run/postgresql:5432:hermes:ann:folder", socket),
      "folder",
    );
  });

  test("a file others may read is ignored, as libpq ignores it; URL and PGPASSWORD come first", () => {
    const dir = mkdtempSync(join(tmpdir(), "pgpass-"));
    try {
      const file = join(dir, "pass");
      writeFileSync(file, "*:*:*:*:from-file\n");
      chmodSync(file, 0o644);
      assert.equal(lookUpPgpass(login, { PGPASSFILE: file }), undefined);
      chmodSync(file, 0o600);
      assert.equal(lookUpPgpass(login, { PGPASSFILE: file }), "from-file");
      assert.equal(lookUpPgpass(login, {}, join(dir, "missing")), undefined);
      const read = serverOptions(`postgres://ann@db.example/hermes?passfile=${file}`);
      assert.equal(passwordFor(read, {}), "from-file");
      assert.equal(passwordFor(read, { PGPASSWORD: "from-env" }), "from-env");
      assert.equal(passwordFor(serverOptions("postgres://ann:from-url@h/d"), {}), "from-url");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The role scripts/pg.sh's cluster asks a password of (its pg_hba.conf); absent elsewhere. */
const ROLE = "hermes_password_test";
const PASSWORD = "p@ss:w/rd?&#";

describe("a role that must give its password", { skip: PG_SKIP }, () => {
  let asks = false;
  let dir = "";
  let server: URL;
  before(async () => {
    const [rule] = await adminSql(
      `SELECT count(*)::int AS n FROM pg_hba_file_rules
       WHERE '${ROLE}' = ANY(user_name) AND auth_method = 'scram-sha-256'`,
    );
    asks = Number(rule.n) > 0;
    if (!asks && process.env.CI === "true") {
      throw new Error(`the CI server must ask ${ROLE} for a password (scripts/pg.sh sets that up)`);
    }
    await adminSql(`DO $$ BEGIN
      CREATE ROLE ${ROLE} LOGIN;
    EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await adminSql(`ALTER ROLE ${ROLE} PASSWORD '${PASSWORD}'`);
    await adminSql(`GRANT CREATE ON DATABASE postgres TO ${ROLE}`);
    dir = mkdtempSync(join(tmpdir(), "pgpass-"));
    server = new URL(PG_URL!);
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const urlFor = (password: string | null, params: string) =>
    `postgres://${ROLE}${
      password === null ? "" : `:${encodeURIComponent(password)}`
    }@${server.host}${server.pathname}?schema=${freshSchema()}${params}`;

  test("logs in with the URL's percent-encoded password; a wrong one is refused", {
    timeout: 60_000,
  }, async (t) => {
    if (!asks) return t.skip(`this server does not ask ${ROLE} for a password`);
    const store = await openStore(urlFor(PASSWORD, ""));
    await store.createSession("with-password", "cli");
    await store.close();
    await assert.rejects(
      openStore(urlFor("wrong", "")),
      (e) =>
        e instanceof OpenError && /password authentication failed/.test(e.message) &&
        e.message.includes(`${ROLE}:***@`) && !e.message.includes("wrong"),
    );
  });

  test("logs in with the password file's line for the connection", {
    timeout: 60_000,
  }, async (t) => {
    if (!asks) return t.skip(`this server does not ask ${ROLE} for a password`);
    const file = join(dir, "pgpass");
    const escaped = PASSWORD.replaceAll("\\", "\\\\").replaceAll(":", "\\:");
    writeFileSync(
      file,
      `${server.hostname}:${server.port}:postgres:someone_else:nope\n` +
        `${server.hostname}:*:postgres:${ROLE}:${escaped}\n`,
    );
    chmodSync(file, 0o600);
    const store = await openStore(urlFor(null, `&passfile=${encodeURIComponent(file)}`));
    await store.createSession("from-pgpass", "cli");
    await store.close();
    chmodSync(file, 0o640);
    await assert.rejects(
      openStore(urlFor(null, `&passfile=${encodeURIComponent(file)}`)),
      (e) =>
        e instanceof OpenError &&
        e.message.endsWith(": no password was given (in the URL, PGPASSWORD or ~/.pgpass)"),
      "a file others may read is not used",
    );
  });
});

describe("TLS as ?sslmode= asks", { skip: PG_SKIP }, () => {
  /** Whether the store's own connection is encrypted (pg_stat_ssl of its backend). */
  async function encrypted(url: string): Promise<boolean> {
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const client = await connectPg(url, "public", { max: 1 });
    try {
      const [row] = await client.query(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
      );
      return row.ssl === true;
    } finally {
      await client.close();
    }
  }

  test("require encrypts, disable does not, verify-full refuses a self-signed certificate", {
    timeout: 60_000,
  }, async (t) => {
    const [server] = await adminSql("SELECT current_setting('ssl') AS ssl");
    if (server.ssl !== "on") {
      if (process.env.CI === "true") throw new Error("the CI server has TLS (scripts/pg.sh)");
      return t.skip("this server has no TLS");
    }
    const join = (params: string) => `${PG_URL}${PG_URL!.includes("?") ? "&" : "?"}${params}`;
    assert.equal(await encrypted(join("sslmode=require")), true);
    assert.equal(await encrypted(join("sslmode=disable")), false);
    await assert.rejects(
      openStore(join(`sslmode=verify-full&schema=${freshSchema()}`)),
      (e) => e instanceof OpenError && /self.signed certificate/i.test(e.message),
    );
  });
});

describe("a server that cannot be reached", { skip: PG_SKIP }, () => {
  // Nothing listens on port 1: the connection is refused at once (the client package is loaded,
  // which is why this waits for a test server to be configured).
  const url = "postgres://ann:secret@127.0.0.1:1/d?schema=team_a";
  const named = (e: unknown) =>
    e instanceof OpenError &&
    e.message.startsWith(
      'Cannot open database "postgres://ann:***@127.0.0.1:1/d?schema=team_a": ',
    ) &&
    /did not accept the connection/.test(e.message);

  test("is named by the URL as given, its ?schema= kept, on every way in", {
    timeout: 30_000,
  }, async () => {
    await assert.rejects(openStore(url), named);
    await assert.rejects(openStore(url, { readonly: true }), named);
    const { migratePostgresStore } = await import("../../lib/postgres/postgres_store.ts");
    await assert.rejects(migratePostgresStore(url), named);
    const { connectSyncTarget } = await import("../../lib/postgres/sync.ts");
    await assert.rejects(connectSyncTarget(url), named);
  });

  test(
    "one that closes each connection (a balancer with no server behind) is given up on after connect_timeout",
    {
      timeout: 30_000,
    },
    async () => {
      // The client connects again for ever there, its own timeout rejecting nothing.
      const closer = createServer((socket) => {
        socket.on("data", () => setTimeout(() => socket.destroy(), 100));
      });
      await new Promise<void>((resolve) => closer.listen(0, "127.0.0.1", resolve));
      const { port } = closer.address() as AddressInfo;
      try {
        const started = Date.now();
        await assert.rejects(
          openStore(`postgres://ann@127.0.0.1:${port}/d?connect_timeout=1`),
          (e) =>
            e instanceof OpenError &&
            /did not accept the connection \(no answer within 1 s; \?connect_timeout=SECONDS waits longer\)/
              .test(e.message),
        );
        assert.ok(Date.now() - started < 10_000, `gave up after ${Date.now() - started} ms`);
      } finally {
        closer.close();
      }
    },
  );
});
