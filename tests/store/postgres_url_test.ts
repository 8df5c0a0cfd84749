/**
 * Server URLs as `psql` takes them: a Unix socket folder (percent-encoded in
 * the authority, or in `?host=`), libpq's query parameters overriding the
 * authority, bad values refused by name, passwords masked wherever they are.
 * The socket forms connect to the real test server.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { maskPassword, serverOptions } from "../../lib/postgres/_url.ts";
import { adminSql, freshSchema, PG_SKIP } from "./_pg.ts";

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
    const options = serverOptions(
      "postgres://h/d?connect_timeout=4&application_name=gw-1&statement_timeout=5000",
    );
    assert.equal(options.connect_timeout, 4);
    assert.deepEqual(options.connection, { application_name: "gw-1", statement_timeout: "5000" });
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
    refused("postgres://h/d?sslrootcert=/ca.pem", /sslrootcert can only be system/);
    refused("postgres://h/d?search_path=x", /use \?schema=NAME/);
    refused("postgres://a,b/d?port=1,2,3", /ports must be one, or one per host \(2\)/);
    refused("postgres://%zz/d", /host is not valid percent-encoding/);
    refused("mysql://h/d", /scheme must be postgres:\/\/ or postgresql:\/\//);
  });

  test("maskPassword() hides the authority's password and ?password=", () => {
    assert.equal(maskPassword("postgres://ann:secret@h/d"), "postgres://ann:***@h/d");
    assert.equal(
      maskPassword("postgres://h/d?user=ann&password=secret&schema=x"),
      "postgres://h/d?user=ann&password=***&schema=x",
    );
    assert.equal(maskPassword("postgres://ann@h/d"), "postgres://ann@h/d");
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
