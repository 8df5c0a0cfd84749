/**
 * The command table. Each command's module is loaded only when that command
 * runs (or help lists them all), so `--version` and a single command start
 * without evaluating the rest of the CLI.
 *
 * @module
 */
import type { Command } from "./command.ts";

/** A command by name, with the loader of its module. */
export interface CommandEntry {
  /** The word after `hermes-state`. */
  readonly name: string;
  /** Loads the command's module. */
  load(): Promise<Command>;
}

/** Every command, in the order the help lists them. */
export const COMMAND_TABLE: readonly CommandEntry[] = [
  { name: "list", load: async () => (await import("./commands/list.ts")).listCommand },
  { name: "show", load: async () => (await import("./commands/show.ts")).showCommand },
  { name: "search", load: async () => (await import("./commands/search.ts")).searchCommand },
  { name: "export", load: async () => (await import("./commands/export.ts")).exportCommand },
  { name: "import", load: async () => (await import("./commands/import.ts")).importCommand },
  { name: "delete", load: async () => (await import("./commands/delete.ts")).deleteCommand },
  { name: "prune", load: async () => (await import("./commands/prune.ts")).pruneCommand },
  { name: "rename", load: async () => (await import("./commands/rename.ts")).renameCommand },
  { name: "lineage", load: async () => (await import("./commands/lineage.ts")).lineageCommand },
  { name: "stats", load: async () => (await import("./commands/stats.ts")).statsCommand },
  { name: "info", load: async () => (await import("./commands/info.ts")).infoCommand },
  { name: "copy", load: async () => (await import("./commands/copy.ts")).copyCommand },
  { name: "demo", load: async () => (await import("./commands/demo.ts")).demoCommand },
];

/**
 * Loads every command, in table order (for the help text).
 *
 * @returns The commands.
 */
export function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMAND_TABLE.map((entry) => entry.load()));
}
