/**
 * The command table. Each command's module is loaded only when that command
 * runs (or help lists them all), so `--version` and a single command start
 * without evaluating the rest of the CLI.
 *
 * @module
 */
import type { Command } from "./command.ts";

/**
 * How a command opens the database: `"read"` never changes the file (no
 * schema step, no write lock, not even a new -wal left behind), `"write"`
 * opens it as the agent does (and upgrades an older schema).
 */
export type CommandAccess = "read" | "write";

/** A command by name, with the loader of its module. */
export interface CommandEntry {
  /** The word after `hermes-state`. */
  readonly name: string;
  /** Whether it only reads the database. */
  readonly access: CommandAccess;
  /** Loads the command's module. */
  load(): Promise<Command>;
}

/** Every command, in the order the help lists them. */
export const COMMAND_TABLE: readonly CommandEntry[] = [
  {
    name: "list",
    access: "read",
    load: async () => (await import("./commands/list.ts")).listCommand,
  },
  {
    name: "show",
    access: "read",
    load: async () => (await import("./commands/show.ts")).showCommand,
  },
  {
    name: "search",
    access: "read",
    load: async () => (await import("./commands/search.ts")).searchCommand,
  },
  {
    name: "export",
    access: "read",
    load: async () => (await import("./commands/export.ts")).exportCommand,
  },
  {
    name: "import",
    access: "write",
    load: async () => (await import("./commands/import.ts")).importCommand,
  },
  {
    name: "delete",
    access: "write",
    load: async () => (await import("./commands/delete.ts")).deleteCommand,
  },
  {
    name: "prune",
    access: "write",
    load: async () => (await import("./commands/prune.ts")).pruneCommand,
  },
  {
    name: "vacuum",
    access: "write",
    load: async () => (await import("./commands/vacuum.ts")).vacuumCommand,
  },
  {
    name: "rename",
    access: "write",
    load: async () => (await import("./commands/rename.ts")).renameCommand,
  },
  {
    name: "lineage",
    access: "read",
    load: async () => (await import("./commands/lineage.ts")).lineageCommand,
  },
  {
    name: "stats",
    access: "read",
    load: async () => (await import("./commands/stats.ts")).statsCommand,
  },
  {
    name: "usage",
    access: "read",
    load: async () => (await import("./commands/usage.ts")).usageCommand,
  },
  {
    name: "migrate",
    access: "write",
    load: async () => (await import("./commands/migrate.ts")).migrateCommand,
  },
  {
    name: "info",
    access: "read",
    load: async () => (await import("./commands/info.ts")).infoCommand,
  },
  {
    name: "copy",
    access: "write",
    load: async () => (await import("./commands/copy.ts")).copyCommand,
  },
  // doctor, backup and recover open the file themselves (doctor writes only with --fix).
  {
    name: "doctor",
    access: "read",
    load: async () => (await import("./commands/doctor.ts")).doctorCommand,
  },
  {
    name: "backup",
    access: "read",
    load: async () => (await import("./commands/backup.ts")).backupCommand,
  },
  {
    name: "recover",
    access: "read",
    load: async () => (await import("./commands/recover.ts")).recoverCommand,
  },
  {
    name: "sync",
    access: "write",
    load: async () => (await import("./commands/sync.ts")).syncCommand,
  },
  {
    name: "origins",
    access: "read",
    load: async () => (await import("./commands/origins.ts")).originsCommand,
  },
  {
    name: "demo",
    access: "write",
    load: async () => (await import("./commands/demo.ts")).demoCommand,
  },
  // Read-only unless --allow-writes, which opens the store for writing itself.
  {
    name: "serve",
    access: "read",
    load: async () => (await import("./commands/serve.ts")).serveCommand,
  },
  {
    name: "completions",
    access: "read",
    load: async () => (await import("./commands/completions.ts")).completionsCommand,
  },
];

/**
 * Loads every command, in table order (for the help text).
 *
 * @returns The commands.
 */
export function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMAND_TABLE.map((entry) => entry.load()));
}
