/**
 * Builds the {@linkcode Context} a command runs in, and closes what it
 * opened.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { OpenError } from "../errors.ts";
import { isPostgresTarget, openStore } from "../open_store.ts";
import type { SessionStore } from "../session_store.ts";
import type { Context } from "./command.ts";
import type { Io } from "./io.ts";
import { colourWanted, createStyle } from "./style.ts";
import { CommandError } from "./usage_error.ts";

/** A context and the function that releases it. */
export interface OpenContext {
  /** The context to pass to the command. */
  readonly ctx: Context;
  /** Closes every store the command opened. */
  close(): Promise<void>;
}

/**
 * Opens `target` for a command: a missing file is an error unless `create`;
 * an existing file that cannot be opened for writing (read-only file or
 * folder) is opened read-only, so reading it still works.
 */
async function openFor(io: Io, target: string, create: boolean): Promise<SessionStore> {
  const clock = () => io.now();
  if (isPostgresTarget(target)) return await openStore(target, { clock });
  const path = target.startsWith("sqlite:") ? target.slice("sqlite:".length) : target;
  if (!create && !existsSync(path)) {
    throw new CommandError(`No database at ${path} (give --db PATH, or set HERMES_HOME)`);
  }
  try {
    return await openStore(path, { clock });
  } catch (error) {
    if (create || !(error instanceof OpenError)) throw error;
    try {
      return await openStore(path, { clock, readonly: true });
    } catch {
      throw error;
    }
  }
}

/**
 * Creates the context of one run.
 *
 * @param io The process streams.
 * @param options The store (`--db`: a path or a URL) and `--json`.
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
export function createContext(io: Io, options: { dbPath: string; json: boolean }): OpenContext {
  const opened: SessionStore[] = [];
  const ctx: Context = {
    io,
    json: options.json,
    style: createStyle(colourWanted(io)),
    dbPath: options.dbPath,
    async openStore(open = {}) {
      const store = await openFor(io, open.path ?? options.dbPath, open.create ?? false);
      opened.push(store);
      return store;
    },
  };
  return {
    ctx,
    async close() {
      for (const store of opened.splice(0)) await store.close();
    },
  };
}
