/**
 * Builds the {@linkcode Context} a command runs in, and closes what it
 * opened.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { OpenError } from "../errors.ts";
import { SessionDB } from "../session_db.ts";
import type { Context } from "./command.ts";
import type { Io } from "./io.ts";
import { colourWanted, createStyle } from "./style.ts";
import { CommandError } from "./usage_error.ts";

/** A context and the function that releases it. */
export interface OpenContext {
  /** The context to pass to the command. */
  readonly ctx: Context;
  /** Closes every database the command opened. */
  close(): void;
}

/**
 * Opens `path` for a command: a missing file is an error unless `create`;
 * an existing file that cannot be opened for writing (read-only file or
 * folder) is opened read-only, so reading it still works.
 */
async function openFor(io: Io, path: string, create: boolean): Promise<SessionDB> {
  if (!create && !existsSync(path)) {
    throw new CommandError(`No database at ${path} (give --db PATH, or set HERMES_HOME)`);
  }
  const clock = () => io.now();
  try {
    return await SessionDB.open({ path, clock });
  } catch (error) {
    if (create || !(error instanceof OpenError)) throw error;
    try {
      return await SessionDB.open({ path, clock, readonly: true });
    } catch {
      throw error;
    }
  }
}

/**
 * Creates the context of one run.
 *
 * @param io The process streams.
 * @param options The database path and `--json`.
 * @returns The context and its `close`.
 *
 * @example
 * ```ts
 * import { createContext } from "./context.ts";
 * import { defaultIo } from "./io.ts";
 * const { ctx, close } = createContext(defaultIo(), { dbPath: "/tmp/x.db", json: false });
 * console.assert(ctx.dbPath === "/tmp/x.db");
 * close();
 * ```
 */
export function createContext(io: Io, options: { dbPath: string; json: boolean }): OpenContext {
  const opened: SessionDB[] = [];
  const ctx: Context = {
    io,
    json: options.json,
    style: createStyle(colourWanted(io)),
    dbPath: options.dbPath,
    async openDb(open = {}) {
      const db = await openFor(io, open.path ?? options.dbPath, open.create ?? false);
      opened.push(db);
      return db;
    },
  };
  return {
    ctx,
    close() {
      for (const db of opened.splice(0)) db.close();
    },
  };
}
