/**
 * Session lifecycle: create, ensure, end, reopen, system prompt, read.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { JsonValue, SessionRow } from "./types.ts";
import { encodeJson } from "./content.ts";

/** Options of `createSession`. */
export interface CreateSessionOptions {
  /** The model name. */
  model?: string | null;
  /** Model settings, stored as JSON (empty → NULL). */
  modelConfig?: JsonValue | null;
  /** The assembled system prompt. */
  systemPrompt?: string | null;
  /** The platform user. */
  userId?: string | null;
  /** The session this one continues; must exist. */
  parentSessionId?: string | null;
}

/** Options of `ensureSession`. */
export interface EnsureSessionOptions {
  /** The model name. */
  model?: string | null;
}

const INSERT_SESSION = `INSERT OR IGNORE INTO sessions
  (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Creates a session (`INSERT OR IGNORE`: an existing row is left untouched,
 * so the first write wins). `started_at` is the store's clock; an empty
 * `modelConfig` is stored as NULL.
 *
 * @param store The open store.
 * @param id The session id.
 * @param source Where it runs: `cli`, `telegram`, `discord`…
 * @param options Model, model config, system prompt, user, parent.
 * @returns The id.
 * @throws {SqliteError} A foreign-key constraint error when `parentSessionId`
 *   names a session that does not exist (nothing is written).
 * @throws {ReadonlyError} When the store is read-only.
 *
 * @example Creating a child session
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.createSession("s2", "cli", { parentSessionId: "s1", modelConfig: { effort: "high" } });
 * db.createSession("s2", "telegram"); // ignored: the first write wins
 * const row = db.getSession("s2")!;
 * console.assert(row.source === "cli" && row.model_config === '{"effort": "high"}');
 * ```
 */
export function createSession(
  store: Store,
  id: string,
  source: string,
  options: CreateSessionOptions = {},
): string {
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

/**
 * Makes sure a session row exists, as {@linkcode createSession} does (used
 * to recover from a create that failed under lock contention).
 *
 * @param store The open store.
 * @param id The session id.
 * @param source Its source.
 * @param options The model.
 * @returns The id.
 * @throws {ReadonlyError} When the store is read-only.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.ensureSession("s1");
 * console.assert(db.getSession("s1")!.source === "unknown");
 * ```
 */
export function ensureSession(
  store: Store,
  id: string,
  source = "unknown",
  options: EnsureSessionOptions = {},
): string {
  return createSession(store, id, source, { model: options.model });
}

/**
 * Ends a session that is not ended yet; the first end reason stays (call
 * {@linkcode reopenSession} first to end it again). An unknown id is a no-op.
 *
 * @param store The open store.
 * @param id The session id.
 * @param endReason Why it ended: `compression`, `branched`, `cli_close`…
 * @throws {ReadonlyError} When the store is read-only.
 *
 * @example The first end reason stays
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.endSession("s1", "compression");
 * db.endSession("s1", "cli_close");
 * console.assert(db.getSession("s1")!.end_reason === "compression");
 * ```
 */
export function endSession(store: Store, id: string, endReason: string): void {
  store.write(() =>
    store
      .statement(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      )
      .run(store.now(), endReason, id)
  );
}

/**
 * Clears the end time and reason of a session so it can be resumed. An
 * unknown id is a no-op.
 *
 * @param store The open store.
 * @param id The session id.
 * @throws {ReadonlyError} When the store is read-only.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.endSession("s1", "cli_close");
 * db.reopenSession("s1");
 * console.assert(db.getSession("s1")!.ended_at === null);
 * ```
 */
export function reopenSession(store: Store, id: string): void {
  store.write(() =>
    store
      .statement("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")
      .run(id)
  );
}

/**
 * Stores the full assembled system prompt of a session. An unknown id is a
 * no-op.
 *
 * @param store The open store.
 * @param id The session id.
 * @param prompt The new prompt.
 * @throws {ReadonlyError} When the store is read-only.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.updateSystemPrompt("s1", "You are Hermes.");
 * console.assert(db.getSession("s1")!.system_prompt === "You are Hermes.");
 * ```
 */
export function updateSystemPrompt(store: Store, id: string, prompt: string): void {
  store.write(() =>
    store.statement("UPDATE sessions SET system_prompt = ? WHERE id = ?").run(prompt, id)
  );
}

/**
 * Reads one session with every column, including columns a newer Hermes added.
 *
 * @param store The open store.
 * @param id The session id.
 * @returns The row, or `undefined` when there is none.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli", { model: "gpt-5" });
 * console.assert(db.getSession("s1")!.model === "gpt-5");
 * console.assert(db.getSession("nope") === undefined);
 * ```
 */
export function getSession(store: Store, id: string): SessionRow | undefined {
  return store.statement("SELECT * FROM sessions WHERE id = ?").get(id) as SessionRow | undefined;
}
