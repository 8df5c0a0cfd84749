/**
 * What `import` and `copy` stopped midway (a lock given up on, Ctrl-C) say
 * the same command run again with `--replace` does: it goes on where this
 * run stopped, but writes again first every session this run wrote.
 *
 * @module
 */
import { plural } from "../render/format.ts";

/**
 * The clause of a stopped `--replace` run that says what the same command
 * run again does.
 *
 * @param command The command that stopped.
 * @param written The sessions this run wrote (imported or replaced).
 * @returns E.g. `the same import --replace again goes on, after writing again the 3 sessions this run wrote`.
 */
export function replaceAgain(command: "import" | "copy", written: number): string {
  return `the same ${command} --replace again goes on, after writing again the ${
    plural(written, "session")
  } this run wrote`;
}
