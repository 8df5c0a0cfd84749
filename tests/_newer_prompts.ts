/**
 * A newer Hermes's prompts (its schema 25 and later): each distinct system prompt is kept once, in
 * `system_prompts (hash, prompt)`, and a session's row names it by `system_prompt_hash`.
 */
import { copyFixture, rawOpen } from "./_helpers.ts";

export const LIVE = "20260501_090000_live01";
export const ARCHIVED = "20260501_100000_arch01";
export const REWOUND = "20260501_110000_rew01";
export const PROMPT = "You are Hermes, an agent. Answer briefly and cite the files you read.";
export const TOOLS = '["terminal","web_search","read_file"]';

/**
 * A copy of `hermes-v21.db` laid out as the newer Hermes lays out its prompts: the live and the
 * archived session share one prompt by hash, the live one's tool names are a hash too, and the
 * rewound one keeps a prompt inline (a row that Hermes has not moved yet).
 */
export async function promptsFile(): Promise<string> {
  const path = copyFixture("hermes-v21.db");
  using raw = await rawOpen(path);
  raw.exec(`CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
    ALTER TABLE sessions ADD COLUMN system_prompt_hash TEXT REFERENCES system_prompts(hash);
    ALTER TABLE sessions ADD COLUMN tool_names TEXT;
    UPDATE schema_version SET version = 30;`);
  raw.prepare("INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)").run("h-prompt", PROMPT);
  raw.prepare("INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)").run("h-tools", TOOLS);
  raw.prepare("UPDATE sessions SET system_prompt_hash = 'h-prompt' WHERE id IN (?, ?)")
    .run(LIVE, ARCHIVED);
  raw.prepare("UPDATE sessions SET tool_names = 'h-tools' WHERE id = ?").run(LIVE);
  raw.prepare(
    "UPDATE sessions SET system_prompt = 'inline prompt', tool_names = 'terminal' WHERE id = ?",
  )
    .run(REWOUND);
  return path;
}
