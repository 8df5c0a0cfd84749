/**
 * Session lifecycle: create, ensure, end, reopen, system prompt, read.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SessionRow } from "../core/types.ts";
import { encodeJson } from "../core/content.ts";
import {
  checkKeyText,
  type CreateSessionOptions,
  type EnsureSessionOptions,
} from "../core/session_options.ts";

const INSERT_SESSION = `INSERT OR IGNORE INTO sessions
  (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;

/** Implements `SessionDB.createSession`: `INSERT OR IGNORE` of a session row. */
export function createSession(
  store: Store,
  id: string,
  source: string,
  options: CreateSessionOptions = {},
): string {
  checkKeyText("create session", "id", id);
  checkKeyText("create session", "source", source);
  const modelConfig = encodeJson(options.modelConfig);
  store.write(() =>
    store.statement(INSERT_SESSION).run(
      id,
      source,
      options.userId ?? null,
      options.model ?? null,
      modelConfig,
      options.systemPrompt ?? null,
      options.parentSessionId ?? null,
      store.now(),
    )
  );
  return id;
}

/** Implements `SessionDB.ensureSession`: `createSession` with only a model. */
export function ensureSession(
  store: Store,
  id: string,
  source = "unknown",
  options: EnsureSessionOptions = {},
): string {
  return createSession(store, id, source, { model: options.model });
}

/** Implements `SessionDB.endSession`: sets the end of a session not ended yet. */
export function endSession(store: Store, id: string, endReason: string): void {
  store.write(() =>
    store
      .statement(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      )
      .run(store.now(), endReason, id)
  );
}

/** Implements `SessionDB.reopenSession`: clears the end of a session. */
export function reopenSession(store: Store, id: string): void {
  store.write(() =>
    store
      .statement("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")
      .run(id)
  );
}

/** Implements `SessionDB.updateSystemPrompt`: replaces the system prompt. */
export function updateSystemPrompt(store: Store, id: string, prompt: string): void {
  store.write(() =>
    store.statement("UPDATE sessions SET system_prompt = ? WHERE id = ?").run(prompt, id)
  );
}

/** Implements `SessionDB.getSession`: one `SELECT *` row, or `undefined`. */
export function getSession(store: Store, id: string): SessionRow | undefined {
  return store.statement("SELECT * FROM sessions WHERE id = ?").get(id) as SessionRow | undefined;
}
