/**
 * The one-line values `show` prints, as another writer may have stored them.
 * A message's role and finish reason went to the terminal as stored: a role
 * holding `ESC [2J` cleared the screen and `ESC ]0;…BEL` set the window's
 * title. A tool name, title, source, model, user, end reason or cost status
 * holding a newline broke its line in two (a title could print a line that
 * reads as another field, `Ended …`). Now each is shown on its line with its
 * control characters as marks (`␛`, `␊`), as `list` and `search` show them.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { rawOpen, waitUntil } from "./_helpers.ts";
import { interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";

let path: string;

before(async () => {
  path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, started_at, ended_at, end_reason, title, model, user_id,
                          estimated_cost_usd, cost_status, billing_provider)
      VALUES ('fields', 'te' || char(10) || 'le', 1777453504, 1777453600,
              'clo' || char(10) || 'se', 'one' || char(10) || 'Ended     never',
              'gpt' || char(13) || 'x', 'u' || char(10) || '1', 0.5,
              'est' || char(27) || '[2Jimated', 'open' || char(10) || 'router');
    INSERT INTO messages (session_id, role, content, timestamp, tool_name, finish_reason)
      VALUES ('fields', 'tool' || char(27) || '[2J' || char(27) || ']0;pwned' || char(7),
              'the result', 1777453505, 'termi' || char(10) || 'nal',
              'len' || char(27) || '[31mgth');
  `);
});

/** Whether `text` holds a control character other than a newline. */
function hasControls(text: string): boolean {
  // deno-lint-ignore no-control-regex -- looking for control characters is the point
  return /[\u0000-\u0009\u000b-\u001f\u007f]/.test(text);
}

describe("show keeps each stored value on its line, its controls as marks", () => {
  test("a message's role, tool name and finish reason", async () => {
    const run = await runCli(["--db", path, "show", "fields"]);
    assert.equal(run.code, 0, run.err);
    assert.ok(!hasControls(run.out), JSON.stringify(run.out));
    assert.match(
      run.out,
      /\n── tool␛\[2J␛\]0;pwned␇ · termi␊nal · [^\n]+ · len␛\[31mgth ─+\nthe result\n/,
    );
  });

  test("the details: title, source, model, user, end reason, cost status, billing", async () => {
    const run = await runCli(["--db", path, "show", "fields"]);
    const lines = run.out.split("\n");
    const field = (name: string) => lines.filter((line) => line.startsWith(`${name} `));
    assert.deepEqual(field("Title"), ["Title     one␊Ended     never"]);
    assert.equal(field("Ended").length, 1, run.out);
    assert.match(field("Ended")[0], / · clo␊se$/);
    assert.deepEqual(field("Source"), ["Source    te␊le"]);
    assert.deepEqual(field("Model"), ["Model     gpt␍x"]);
    assert.deepEqual(field("User"), ["User      u␊1"]);
    assert.deepEqual(field("Cost"), ["Cost      $0.50 estimated (est␛[2Jimated)"]);
    assert.deepEqual(field("Billing"), ["Billing   open␊router"]);
  });

  test("--follow's note on the end of the session", { timeout: 30_000 }, async () => {
    {
      using raw = await rawOpen(path);
      raw.exec(`
        INSERT INTO sessions (id, source, started_at) VALUES ('followed', 'cli', 1777453504);
        INSERT INTO messages (session_id, role, content, timestamp)
          VALUES ('followed', 'user', 'still going', 1777453505);
      `);
    }
    const io = interruptibleIo();
    const run = main(["--db", path, "show", "followed", "--follow=0.05"], io);
    await waitUntil(() => io.out.includes("still going"), "the message shown");
    {
      using raw = await rawOpen(path);
      raw.exec(
        "UPDATE sessions SET ended_at = 1777453700, end_reason = 'b' || char(10) || 'ye' " +
          "WHERE id = 'followed'",
      );
    }
    await waitUntil(() => io.out.includes("── ended"), "the end shown");
    io.interrupt();
    assert.equal(await run, 0);
    assert.match(io.out, /\n── ended [^\n]+ · b␊ye ──\n/);
  });
});
