/**
 * The top-level help text: what the tool is, the commands, the global
 * options, exit codes and a few examples.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { padEnd } from "../render/width.ts";

/**
 * Builds the top-level usage text.
 *
 * @param commands The command table (for names and summaries).
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts ignore
 * io.stdout(topUsage(await loadCommands()));
 * ```
 */
export function topUsage(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const list = commands.map((c) => `  ${padEnd(c.name, width)}  ${c.summary}`).join("\n");
  return `hermes-state: look inside the Hermes agent's session store (state.db)

Usage:
  hermes-state [--db PATH] [--json] <command> [options] [arguments]
  hermes-state <command> --help

Commands:
${list}

Global options:
  --db PATH       The database file or a postgres:// URL (default:
                  $HERMES_STATE_DB, else $HERMES_HOME/state.db, else
                  ~/.hermes/state.db; on Windows
                  %LOCALAPPDATA%\\hermes\\state.db)
  --json          Print JSON instead of text
  --no-pager      Print to the terminal directly (list, show, search,
                  lineage, stats and usage page through less by default)
  -h, --help      Show help
  -V, --version   Print the version

Exit codes: 0 success, 1 failure, 2 usage error, 130 / 143 a write
stopped by Ctrl-C / SIGTERM.
Environment: HERMES_STATE_DB (the store: a path or a postgres:// URL),
HERMES_HOME (where state.db lives), NO_COLOR (no colour),
HERMES_STATE_LOCK_TIMEOUT (seconds a write waits for a lock; 15),
HERMES_STATE_DEBUG=1 (the stack of an unexpected error),
HERMES_STATE_PAGER, else PAGER (the pager; "" or "cat" for none; LESS
defaults to FRX).

Examples:
  hermes-state demo
  hermes-state list --limit 10
  hermes-state search "docker compose"
  hermes-state show 20260425_090019_d38f1d
  hermes-state export backup.jsonl
`;
}
