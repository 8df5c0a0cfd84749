/**
 * Builds the {@linkcode Context} a command runs in, and closes what it
 * opened.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { NotStateDbError, OpenError } from "../core/errors.ts";
import { isPostgresTarget, notAStoreReason, openStore, sqlitePath } from "../open_store.ts";
import type { SessionStore } from "../core/session_store.ts";
import { linkedSqliteVersion, sqliteVersionWarning } from "../sqlite/durability.ts";
import type { Context } from "./command.ts";
import type { CommandAccess } from "./command_table.ts";
import type { Io } from "./io.ts";
import { colourWanted } from "./style.ts";
import { createStyle } from "../render/style.ts";
import { CommandError } from "./usage_error.ts";
import { isMissing, noDatabaseError } from "./missing_store.ts";
import { readOnlyPart, unwritableReason } from "./writable.ts";
import { quotedArgument } from "./shown_argument.ts";

/** A context and the function that releases it. */
export interface OpenContext {
  /** The context to pass to the command. */
  readonly ctx: Context;
  /** Closes every store the command opened. */
  close(): Promise<void>;
  /**
   * Closes every store the command opened without waiting, for a process
   * that ends now: a SQLite file is closed when this returns (its last
   * connection removes the -wal and -shm it made), a PostgreSQL store's
   * connections are dropped with the process.
   */
  closeAtOnce(): void;
}

/** Options of {@linkcode createContext}. */
export interface ContextOptions {
  /** The store (`--db`: a path or a URL). */
  readonly dbPath: string;
  /** `--json` was given. */
  readonly json: boolean;
  /**
   * How the command opens the store: `"read"` changes nothing in the file
   * and takes no write lock; `"write"` opens it as the agent does.
   * @default {"read"}
   */
  readonly access?: CommandAccess;
}

/**
 * Refuses, before anything is written, a file that is not a Hermes store;
 * `allowEmpty` lets a file without any table through (import into a new
 * or 0-byte file).
 */
async function assertStateDb(
  path: string,
  allowEmpty: boolean,
  retry: { readonly timeoutMs: number },
): Promise<void> {
  try {
    // Waits for a file another process holds whole as long as the write after it would.
    await (await openStore(path, { readonly: true, retry })).close();
  } catch (error) {
    if (allowEmpty && error instanceof NotStateDbError && error.empty) return;
    throw error;
  }
}

/**
 * How long a command waits for a lock another process holds:
 * `HERMES_STATE_LOCK_TIMEOUT` seconds, else 15.
 *
 * @param io The process environment.
 * @returns Milliseconds.
 * @throws {CommandError} When the variable is not a number of seconds.
 */
export function lockTimeoutMs(io: Io): number {
  const given = io.env("HERMES_STATE_LOCK_TIMEOUT")?.trim() ?? "";
  const seconds = given === "" ? 15 : Number(given);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new CommandError(
      `HERMES_STATE_LOCK_TIMEOUT must be a number of seconds: current value is ${
        quotedArgument(given)
      }`,
    );
  }
  return seconds * 1000;
}

/**
 * Opens `target` for a command. A missing file is an error unless `create`.
 * A read opens it read-only, so it works on a read-only file or folder and
 * never waits for a writer. A write first makes sure the file is a Hermes
 * store (or, with `create`, empty), then opens it as the agent does.
 */
async function openFor(
  io: Io,
  target: string,
  options: { create: boolean; access: CommandAccess },
): Promise<SessionStore> {
  const clock = () => io.now();
  const retry = { timeoutMs: lockTimeoutMs(io) };
  const readonly = options.access === "read";
  if (isPostgresTarget(target)) return await openStore(target, { clock, readonly, retry });
  // Said before "No database at mysql://…": no file of that name is meant.
  const notStore = notAStoreReason(target);
  if (notStore !== undefined) throw new OpenError(target, notStore);
  const path = sqlitePath(target);
  const exists = existsSync(path);
  if (!options.create && isMissing(path)) throw noDatabaseError(path);
  if (readonly) return await openStore(path, { clock, readonly: true, retry });
  if (exists) await assertStateDb(path, options.create, retry);
  const readOnly = exists ? readOnlyPart(path) : undefined;
  if (readOnly !== undefined) {
    throw new CommandError(`Cannot write ${path}: ${unwritableReason(readOnly)}`);
  }
  try {
    return await openStore(path, { clock, retry });
  } catch (error) {
    if (!(error instanceof OpenError)) throw error;
    const part = exists ? readOnlyPart(path, { evenAsRoot: true }) : undefined;
    if (part !== undefined) {
      throw new CommandError(`Cannot write ${path}: ${unwritableReason(part)}`, { cause: error });
    }
    throw error;
  }
}

/**
 * How a command that writes first looks for what it names: a read on a
 * file, where a session that is not there then leaves an older file as it
 * was; the write's own open on a server, whose read refuses a schema at an
 * older migration that the write upgrades (`rename` on such a schema failed
 * with "upgrade it … or any write").
 *
 * @param ctx The command's context.
 * @returns The access of the first look.
 */
export function findingAccess(ctx: Context): CommandAccess {
  return isPostgresTarget(ctx.dbPath) ? "write" : "read";
}

/**
 * Creates the context of one run.
 *
 * @param io The process streams.
 * @param options The store, `--json`, and how the command opens the store.
 * @returns The context and its `close`.
 *
 * @example
 * ```ts
 * import { createContext } from "./context.ts";
 * import { defaultIo } from "./io.ts";
 * const { ctx, close } = createContext(defaultIo(), { dbPath: "/tmp/x.db", json: false });
 * console.assert(ctx.dbPath === "/tmp/x.db");
 * await close();
 * ```
 */
export function createContext(io: Io, options: ContextOptions): OpenContext {
  const opened: SessionStore[] = [];
  const access = options.access ?? "read";
  let versionChecked = false;
  const ctx: Context = {
    io,
    json: options.json,
    style: createStyle(colourWanted(io)),
    dbPath: options.dbPath,
    access,
    async openStore(open = {}) {
      const target = open.path ?? options.dbPath;
      const store = await openFor(io, target, {
        create: open.create ?? false,
        access: open.access ?? access,
      });
      opened.push(store);
      if (!versionChecked && store.engine === "sqlite") {
        // Once per run: SQLite before 3.51.3 can corrupt a file written by several processes.
        versionChecked = true;
        const warning = sqliteVersionWarning(await linkedSqliteVersion());
        if (warning !== null) io.stderr(`hermes-state: warning: ${warning}\n`);
      }
      return store;
    },
  };
  return {
    ctx,
    async close() {
      for (const store of opened.splice(0)) await store.close();
    },
    closeAtOnce() {
      // SqliteStore.close closes its file before it returns its promise.
      for (const store of opened.splice(0)) {
        // One that fails to close (at once or later) keeps none of the others open.
        try {
          store.close().catch(() => {});
        } catch {
          // The process ends anyway.
        }
      }
    },
  };
}
