/**
 * A newer Hermes (its schema 25 and later) keeps each distinct system
 * prompt once, in `system_prompts (hash, prompt)`: a session's row names it
 * by `system_prompt_hash`, its own `system_prompt` is NULL, and `tool_names`
 * may be such a hash too. Reads, exports and imports must carry the prompt
 * itself, as that Hermes reads it (`COALESCE(sp.prompt, s.system_prompt)`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { runCli } from "./_cli_io.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { ARCHIVED, LIVE, PROMPT, promptsFile, REWOUND, TOOLS } from "./_newer_prompts.ts";

for (const readonly of [true, false]) {
  test(
    `a newer Hermes's file gives each session's prompt and tool names, not their hash (${
      readonly ? "read-only" : "writable"
    })`,
    async () => {
      const path = await promptsFile();
      using db = await SessionDB.open({ path, readonly });
      const live = db.getSession(LIVE)!;
      assert.equal(live.system_prompt, PROMPT);
      assert.equal(live.tool_names, TOOLS);
      assert.equal(live.system_prompt_hash, "h-prompt");
      assert.equal(db.getSession(ARCHIVED)!.system_prompt, PROMPT);
      const rewound = db.getSession(REWOUND)!;
      assert.equal(rewound.system_prompt, "inline prompt");
      assert.equal(rewound.tool_names, "terminal");
      assert.equal(db.exportSession(LIVE)!.system_prompt, PROMPT);
      assert.equal(db.exportAll().find((s) => s.id === LIVE)!.system_prompt, PROMPT);
      const listed = db.listSessionsRich({ includeArchived: true }).find((s) => s.id === ARCHIVED);
      assert.equal(listed!.system_prompt, PROMPT);
      // Writing beside it keeps working: the prompts are read, the table is written.
      if (!readonly) {
        db.updateSystemPrompt(REWOUND, "changed");
        assert.equal(db.getSession(REWOUND)!.system_prompt, "changed");
        // A prompt named by hash is replaced too: the hash, which reads prefer, goes with it.
        db.updateSystemPrompt(LIVE, "replaced");
        assert.equal(db.getSession(LIVE)!.system_prompt, "replaced");
        assert.equal(db.getSession(LIVE)!.system_prompt_hash, null);
        assert.equal(db.getSession(ARCHIVED)!.system_prompt, PROMPT, "the prompt it shared stays");
      }
    },
  );
}

test("the CLI's export of a newer Hermes's file carries each session's prompt", async () => {
  const path = await promptsFile();
  const exported = await runCli(["--db", path, "export", "-", "--session-id", LIVE]);
  assert.equal(exported.code, 0, exported.err);
  assert.equal(JSON.parse(exported.out).system_prompt, PROMPT);
});

test("importing such a session into a newer Hermes's file that lacks its prompt writes the prompt's row too", async () => {
  const source = await promptsFile();
  using from = await SessionDB.open({ path: source, readonly: true });
  const record = from.exportSession(LIVE)!;
  const target = await promptsFile();
  {
    // The target has neither the session nor the prompt (the foreign key would refuse its hash).
    using raw = await rawOpen(target);
    raw.prepare("DELETE FROM messages WHERE session_id = ?").run(LIVE);
    raw.prepare("DELETE FROM sessions WHERE id = ?").run(LIVE);
    raw.prepare("UPDATE sessions SET system_prompt_hash = NULL WHERE id = ?").run(ARCHIVED);
    raw.prepare("DELETE FROM system_prompts WHERE hash = 'h-prompt'").run();
  }
  {
    using db = await SessionDB.open({ path: target });
    assert.equal(db.importSession(record).outcome, "imported");
  }
  using raw = await rawOpen(target);
  const prompt = raw.prepare("SELECT prompt FROM system_prompts WHERE hash = 'h-prompt'").get();
  assert.equal(prompt?.prompt, PROMPT);
  assert.equal(raw.prepare("PRAGMA foreign_key_check").all().length, 0);
  using db = await SessionDB.open({ path: target, readonly: true });
  assert.equal(db.getSession(LIVE)!.system_prompt, PROMPT);
});

test("a session read again exactly (an integer beyond 2^53) keeps its prompt, in files read through a view", async () => {
  // Such a row is read a second time, exactly; a TEMP view (a newer Hermes's prompts, an older
  // Hermes's missing columns) has no rowid, which that read looked rows up by.
  const huge = 1152921504606846977n;
  const files: Array<[string, string, string | null]> = [
    [await promptsFile(), LIVE, PROMPT],
    [copyFixture("hermes-v6.db"), "", null],
  ];
  for (const [path, id, prompt] of files) {
    {
      using raw = await rawOpen(path);
      raw.prepare("UPDATE sessions SET input_tokens = ?").run(huge);
    }
    for (const readonly of [true, false]) {
      if (!readonly && prompt === null) continue; // a writable open upgrades the older file
      using db = await SessionDB.open({ path, readonly });
      const all = db.exportAll();
      const session = id === "" ? all[0] : all.find((s) => s.id === id)!;
      assert.equal(BigInt(session.input_tokens as number | bigint), huge, `${path} ${readonly}`);
      assert.equal(session.system_prompt ?? null, prompt, `${path} ${readonly}`);
    }
  }
});
