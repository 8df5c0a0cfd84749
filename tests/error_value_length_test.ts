/**
 * An error that names a value the user gave names a long one by its start
 * and its whole length (`"aaaa…" (200,000 characters)`), never whole: a
 * 2 MB argument once made a 2 MB line on stderr. Short values read as they
 * always did; a plain object reads as JSON and a bigint as its digits in
 * every check (some read `[object Object]` and `[object BigInt]`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../lib/open_store.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";
import { openPgStore, PG_SKIP } from "./store/_pg.ts";

const LONG = "a".repeat(200_000);
/** How a message names {@linkcode LONG} in double quotes. */
const LONG_QUOTED = `"${"a".repeat(100)}…" (200,000 characters)`;
/** How a message names `{ k: LONG }`: the start of its JSON, then the JSON's length. */
const LONG_OBJECT_SHOWN = `{"k":"${"a".repeat(94)}… (200,008 characters)`;

/** The message of what `run` threw (synchronously or not), asserted short (a line, not megabytes). */
async function messageOf(run: () => unknown): Promise<string> {
  let message: string | undefined;
  try {
    await run();
  } catch (error) {
    message = (error as Error).message;
  }
  assert.ok(message !== undefined, "expected an error");
  assert.ok(message.length < 600, `${message.length} characters: ${message.slice(0, 200)}…`);
  return message;
}

const engines: [string, () => Promise<SessionStore>, string | false][] = [
  ["SQLite", () => openStore(v11Copy()), false],
  ["PostgreSQL", () => openPgStore(), PG_SKIP],
];

for (const [engine, open, skip] of engines) {
  test(`${engine}: a long bad value is named by its start and length, a short one as before`, {
    skip,
  }, async () => {
    const store = await open();
    try {
      const append = (tokenCount: unknown) =>
        messageOf(() => store.appendMessage("s", { role: "user", tokenCount } as never));
      const long = await append(LONG);
      assert.equal(
        long,
        `Cannot append message: tokenCount must be a number: current value is ${LONG_QUOTED}`,
      );
      assert.equal(
        await append("abc"),
        'Cannot append message: tokenCount must be a number: current value is "abc"',
      );
      // 160 characters are still shown whole; one more is cut.
      assert.match(await append("b".repeat(160)), new RegExp(`is "${"b".repeat(160)}"$`));
      assert.match(await append("b".repeat(161)), /b…" \(161 characters\)$/);

      assert.equal(
        await messageOf(() => store.getSession({ k: LONG } as never)),
        `Cannot read session: id must be a string: current value is ${LONG_OBJECT_SHOWN}`,
      );
      assert.equal(
        await messageOf(() => store.getSession({ k: "v" } as never)),
        'Cannot read session: id must be a string: current value is {"k":"v"}',
      );

      const sort = (value: string) =>
        messageOf(() => store.searchMessages("docker", { sort: value } as never));
      const sortProblem = 'Cannot search messages: sort must be "rank", "newest" or "oldest"';
      assert.equal(await sort(LONG), `${sortProblem}: current value is ${LONG_QUOTED}`);
      assert.equal(await sort("year"), `${sortProblem}: current value is "year"`);

      const zone = await messageOf(() => store.usageReport({ timeZone: LONG }));
      assert.ok(zone.length < 300, `${zone.length} characters`);
      assert.ok(zone.endsWith(`current value is ${LONG_QUOTED}`), zone.slice(0, 200));

      const model = await messageOf(() =>
        store.createSession("s", "cli", { model: { k: LONG } } as never)
      );
      assert.equal(
        model,
        `Cannot create session: model must be a string: current value is ${LONG_OBJECT_SHOWN}`,
      );

      const links = await messageOf(() => store.restoreParentLinks(LONG as never));
      assert.ok(links.endsWith(`current value is ${LONG_QUOTED}`), links.slice(0, 200));
    } finally {
      await store.close();
    }
  });

  test(`${engine}: a bigint and an object are named by their digits and JSON in every check`, {
    skip,
  }, async () => {
    const store = await open();
    try {
      assert.equal(
        await messageOf(() => store.restoreParentLinks([12n] as never)),
        "Cannot restore parent links: link 0 must be { id, parentId } with both strings: " +
          "current value is 12",
      );
      assert.equal(
        await messageOf(() => store.searchMessages("docker", { limit: { n: 5 } } as never)),
        'Cannot search messages: limit must be a non-negative integer: current value is {"n":5}',
      );
    } finally {
      await store.close();
    }
  });
}

test("SQLite: the open and retry settings name an object as JSON and a long value by its start", async () => {
  const path = v11Copy();
  const timeout = await messageOf(() =>
    openStore(path, { retry: { timeoutMs: { ms: 5 } } } as never)
  );
  assert.equal(
    timeout,
    'Cannot open the store: retry.timeoutMs must be a non-negative number of milliseconds: current value is {"ms":5}',
  );
  assert.equal(
    await messageOf(() => openStore(path, { retry: { timeoutMs: "5" } } as never)),
    'Cannot open the store: retry.timeoutMs must be a non-negative number of milliseconds: current value is "5"',
  );
  assert.equal(
    await messageOf(() => SessionDB.open({ path, retry: { maxAttempts: { n: 2 } } } as never)),
    'Cannot open database: retry.maxAttempts must be a positive integer: current value is {"n":2}',
  );
  assert.equal(
    await messageOf(() => openStore(path, { synchronous: LONG } as never)),
    `Cannot open database: synchronous must be "full" or "normal": current value is ${LONG_QUOTED}`,
  );
  assert.equal(
    await messageOf(() => openStore(path, { synchronous: "off" } as never)),
    'Cannot open database: synchronous must be "full" or "normal": current value is "off"',
  );
});

test("SQLite: -0 is named -0, as the session checks always named it", async () => {
  const store = await openStore(v11Copy());
  try {
    assert.equal(
      await messageOf(() => store.appendMessage("s", -0 as never)),
      "Cannot append message: a message must be an object ({ role, content, … }): current value is -0",
    );
  } finally {
    await store.close();
  }
});

const CLI_CASES: [string[], string][] = [
  [["show", LONG], `Session '${"a".repeat(100)}…' (200,000 characters) not found`],
  [["list", "--limit", LONG], `--limit must be a whole number of at least 1, got ${LONG_QUOTED}`],
  [["search", "--role", LONG, "x"], `got ${LONG_QUOTED}`],
  [["export", "-", "--since", LONG], `got ${LONG_QUOTED}`],
  [["list", `--${LONG}`], `unknown option --${"a".repeat(98)}… (200,002 characters)`],
  [[LONG], `unknown command ${LONG_QUOTED}`],
  [["info", LONG], `unexpected argument ${LONG_QUOTED}`],
  [["search", `-${LONG}`], `put -- before it: hermes-state search -- -${"a".repeat(99)}…`],
];

for (const [args, expected] of CLI_CASES) {
  const shown = args.map((arg) => arg.length > 20 ? `${arg.slice(0, 3)}…` : arg).join(" ");
  test(`CLI: ${shown} names the long argument by its start and length`, async () => {
    const { err } = await runCli(["--db", v11Copy(), ...args]);
    assert.ok(err.length < 600, `${err.length} characters`);
    assert.ok(err.includes(expected), err.slice(0, 300));
  });
}

for (
  const [name, args, problem] of [
    ["--db", (path: string) => ["--db", path, "list"], /Cannot open database ".*\/a{20,}…" \(/],
    [
      "backup",
      (path: string) => ["--db", v11Copy(), "backup", path],
      /Cannot back up to .*\/a{20,}… \(/,
    ],
    ["import", (path: string) => ["--db", v11Copy(), "import", path], /Cannot read .*\/a{20,}… \(/],
  ] as const
) {
  test(`CLI: ${name} with a long path names it by its start and length`, async () => {
    const { err } = await runCli(args(join(tempDir(), LONG)));
    assert.ok(err.length < 600, `${err.length} characters`);
    assert.match(err, problem);
    assert.match(err, /\(\d{3},\d{3} characters\)/);
  });
}

test("CLI: a short argument is named exactly as before", async () => {
  const db = v11Copy();
  const cases: [string[], string][] = [
    [
      ["show", "nosuch"],
      "hermes-state: Session 'nosuch' not found (give an id, a unique id prefix or a title)\n",
    ],
    [
      ["list", "--limit", "abc"],
      'hermes-state list: --limit must be a whole number of at least 1, got "abc"\nTry: hermes-state list --help\n',
    ],
    [
      ["list", "--nope"],
      "hermes-state list: unknown option --nope\nTry: hermes-state list --help\n",
    ],
    [
      ["lisst"],
      'hermes-state: unknown command "lisst"; did you mean "list"?\nTry: hermes-state --help\n',
    ],
  ];
  for (const [args, expected] of cases) {
    assert.equal((await runCli(["--db", db, ...args])).err, expected);
  }
});
