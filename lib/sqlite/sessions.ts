/**
 * Session lifecycle: create, ensure, end, reopen, system prompt, read.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { sessionsRead } from "./schema/read_views.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { isForeignKeyFailure, missingParentMessage } from "../core/missing_session.ts";
import type { SessionRow } from "../core/types.ts";
import { textValue } from "../core/message_values.ts";
import {
  checkKeyText,
  type CreateSessionOptions,
  ensureSessionModel,
  type EnsureSessionOptions,
  newSessionValues,
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
  const row = newSessionValues(id, source, options);
  store.write(() => {
    try {
      store.statement(INSERT_SESSION).run(
        id,
        source,
        row.userId,
        row.model,
        row.modelConfig,
        row.systemPrompt,
        row.parentSessionId,
        store.now(),
      );
    } catch (error) {
      if (!isForeignKeyFailure(error) || row.parentSessionId === null) throw error;
      const message = missingParentMessage(id, row.parentSessionId);
      throw new SqliteError(message, 19, { extendedCode: 787, cause: error });
    }
  });
  return id;
}

/** Implements `SessionDB.ensureSession`: `createSession` with only a model. */
export function ensureSession(
  store: Store,
  id: string,
  source = "unknown",
  options: EnsureSessionOptions = {},
): string {
  return createSession(store, id, source, { model: ensureSessionModel(options) });
}

/** Implements `SessionDB.endSession`: sets the end of a session not ended yet. */
export function endSession(store: Store, id: string, endReason: string): void {
  checkKeyText("end session", "id", id);
  const reason = textValue(endReason, "endReason", "end session");
  store.write(() =>
    store
      .statement(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      )
      .run(store.now(), reason, id)
  );
}

/** Implements `SessionDB.reopenSession`: clears the end of a session. */
export function reopenSession(store: Store, id: string): void {
  checkKeyText("reopen session", "id", id);
  store.write(() =>
    store
      .statement("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")
      .run(id)
  );
}

/**
 * Implements `SessionDB.updateSystemPrompt`: replaces the system prompt. In
 * a newer Hermes's file a row may name its prompt by `system_prompt_hash`,
 * which its reads prefer to the row's own text (`schema/read_views.ts`):
 * the hash is cleared with it, as that Hermes does when it replaces one
 * (it moves the text into `system_prompts` at its next start).
 */
export function updateSystemPrompt(store: Store, id: string, prompt: string): void {
  checkKeyText("update system prompt", "id", id);
  const text = textValue(prompt, "prompt", "update system prompt");
  const hash = store.columns("sessions").has("system_prompt_hash")
    ? ", system_prompt_hash = NULL"
    : "";
  store.write(() =>
    store.statement(`UPDATE sessions SET system_prompt = ?${hash} WHERE id = ?`).run(text, id)
  );
}

/** Implements `SessionDB.getSession`: one `SELECT *` row, or `undefined`. */
export function getSession(store: Store, id: string): SessionRow | undefined {
  checkKeyText("read session", "id", id);
  return store.statement(`SELECT * FROM ${sessionsRead(store)} WHERE id = ?`).get(id) as
    | SessionRow
    | undefined;
}
