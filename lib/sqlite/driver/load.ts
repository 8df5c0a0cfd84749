/**
 * Picks the driver of the running runtime.
 *
 * @module
 */
import type { SqliteDriver } from "./types.ts";

/** The JavaScript runtime executing this code. */
export type RuntimeName = "deno" | "bun" | "node";

/**
 * Names the running runtime.
 *
 * @returns `"deno"`, `"bun"` or `"node"`.
 */
export function runtimeName(): RuntimeName {
  const global = globalThis as { Deno?: unknown; Bun?: unknown };
  if (global.Bun !== undefined) return "bun";
  if (global.Deno !== undefined) return "deno";
  return "node";
}

/**
 * Loads the adapter for the running runtime: `bun:sqlite` on Bun,
 * `node:sqlite` on Deno and Node.
 *
 * @returns A function that opens connections.
 */
export async function loadDriver(): Promise<SqliteDriver> {
  if (runtimeName() === "bun") {
    const { loadBunSqlite } = await import("./bun_sqlite.ts");
    return await loadBunSqlite();
  }
  const { openNodeSqlite } = await import("./node_sqlite.ts");
  return openNodeSqlite;
}
