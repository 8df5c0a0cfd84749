/**
 * `copy` and `sync` as operators run them: the cases found in the field
 * that the other tests do not cover. None needs a server: each is refused
 * before any connection (the URLs name a port nothing listens on).
 *
 * - `copy URL URL` of one store: refused whatever the spelling of its URL
 *   (`?schema=hermes` is the default spelled out, `?pool_size=` is the
 *   store's own), and the message never shows the password the URL holds.
 *   It used to print the URL whole, password included, and to treat two
 *   spellings as two stores.
 * - A client key's passphrase (`?sslpassword=`), refused as unsupported, is
 *   shown as `***`, as a password is; it used to be printed twice.
 * - `copy sqlite:FILE URL` of a file synced there is refused with a `sync`
 *   command to run instead that names the file as `sync` takes it: it used
 *   to say `sync sqlite:FILE`, which `sync` reads as a missing file. (This
 *   one needs the test server.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, v11Copy } from "./_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

/** A server URL holding a password, on a port nothing listens on. */
const SERVER = "postgres://hermes:hunter2@127.0.0.1:1/hermes";

test("copy of a store onto itself is refused, however spelt, without its password", async () => {
  for (
    const [src, dest, schema] of [
      [`${SERVER}?schema=s1`, `${SERVER}?schema=s1`, "s1"],
      [SERVER, `${SERVER}?schema=hermes`, "hermes"],
      [`${SERVER}?schema=s1&pool_size=2`, `${SERVER}?schema=s1`, "s1"],
    ]
  ) {
    const run = await runCli(["copy", src, dest]);
    assert.equal(run.code, 1, run.err);
    assert.equal(
      run.err,
      `hermes-state: Cannot copy a store onto itself: SRC and DEST are schema "${schema}" of ` +
        "the same server\n",
    );
    assert.equal(run.out, "");
  }
  // Another schema of the same server is another store: it is opened (and here not reached).
  const other = await runCli(["copy", `${SERVER}?schema=a`, `${SERVER}?schema=b`]);
  assert.equal(other.code, 1);
  assert.doesNotMatch(other.err, /onto itself|hunter2/);
});

test("a URL's sslpassword is never shown, by copy or by sync", async () => {
  const url = `${SERVER}?sslpassword=hunter2&schema=x`;
  const copy = await runCli(["copy", v11Copy(), url]);
  const sync = await runCli(["sync", v11Copy(), "--to", url]);
  for (const run of [copy, sync]) {
    assert.equal(run.code, 1, run.err);
    assert.match(run.err, /parameter sslpassword is not supported by hermes-state/);
    assert.match(run.err, /\?sslpassword=\*\*\*&schema=x/);
    assert.doesNotMatch(run.err, /hunter2/);
  }
});

test("copy of a synced file given as sqlite:FILE names the sync to run as sync takes it", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  assert.equal((await runCli(["sync", file, "--to", url])).code, 0);
  const refused = await runCli(["copy", `sqlite:${file}`, url]);
  assert.equal(refused.code, 1);
  const [, command] = refused.err.match(/"(hermes-state sync [^"]*)" ships its changes/) ?? [];
  assert.ok(command !== undefined, refused.err);
  assert.ok(command.startsWith(`hermes-state sync ${file} --to `), command);
  const [, ...argv] = command.split(" ");
  const again = await runCli(argv);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /: 0 new, 0 updated, 0 deleted sessions; 0 messages written\.\n$/);
});
