/**
 * `hermes-state import`: reads a JSON Lines export back. Idempotent: a
 * session already present is skipped (or replaced with `--replace`); each
 * session is written whole or not at all; a malformed line is reported with
 * its number and nothing of it is written.
 *
 * @module
 */
import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { ParentLink } from "../../import.ts";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { Progress } from "../progress.ts";
import { isDatabaseFile } from "../same_file.ts";
import { CommandError } from "../usage_error.ts";
import { LockPacer } from "../../batches.ts";
import { diskFullReason, isDiskFull } from "../../disk_space.ts";

const USAGE = `Usage: hermes-state import [options] FILE|-

Read a JSON Lines export (from "hermes-state export" or "hermes sessions
export") into the database, creating the file if needed; "-" reads standard
input. Sessions keep their ids, columns, timestamps and (when free) message
ids. A session already in the database is skipped, so importing twice
changes nothing; --replace rewrites it instead. Each session is written
whole or not at all: a malformed line is reported with its line number,
nothing of it is written, and the other lines are still imported (the exit
code is then 1). A child whose parent comes later in the file is linked
once the parent is in.

Options:
  --replace     Replace sessions that are already present
  --json        Report the result as JSON
  --db PATH     The database file (created when missing)
  -h, --help    Show this help

Examples:
  hermes-state import backup.jsonl
  hermes-state export - --db old.db | hermes-state import - --db new.db
`;

/** Checks that FILE can be read (before the database is created for it). */
function checkInput(source: string, dbPath: string): void {
  if (source === "-") return;
  // Reading the database through a descriptor of ours would drop the locks
  // of the connection this command holds on it when the descriptor closes.
  if (isDatabaseFile(source, dbPath)) {
    throw new CommandError(
      `Cannot import ${source}: it is the database itself (or one of its files)`,
    );
  }
  let isFile: boolean;
  try {
    isFile = statSync(source).isFile();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new CommandError(`Cannot read ${source}: ${reason}`, { cause: error });
  }
  if (!isFile) throw new CommandError(`Cannot read ${source}: not a file`);
}

/**
 * Lines of input, from a file or from standard input. Iterate at once: a
 * line reader drops the lines it reads before someone listens.
 */
function inputLines(ctx: Context, source: string): AsyncIterable<string> {
  if (source === "-") return ctx.io.stdinLines();
  return createInterface({ input: createReadStream(source, "utf8"), crlfDelay: Infinity });
}

function reason(error: unknown): string {
  if (error instanceof SyntaxError) return `not valid JSON (${error.message})`;
  return error instanceof Error ? error.message : String(error);
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const source = args.positionals[0];
  checkInput(source, ctx.dbPath);
  const store = await ctx.openStore({ create: true });
  const replace = args.flag("replace");
  const counts = { imported: 0, replaced: 0, skipped: 0, messages: 0, failed: 0, linked: 0 };
  const failures: { line: number; error: string }[] = [];
  const links: ParentLink[] = [];
  const dropped = new Set<string>();
  const progress = new Progress(ctx.io, "Imported");
  const pacer = new LockPacer();
  let number = 0;
  try {
    for await (const raw of inputLines(ctx, source)) {
      number++;
      const line = number === 1 ? raw.replace(/^\uFEFF/, "") : raw;
      if (line.trim() === "") continue;
      try {
        const result = await store.importSession(JSON.parse(line), { replace });
        counts[result.outcome]++;
        counts.messages += result.messages;
        for (const column of result.droppedColumns) dropped.add(column);
        if (result.deferredParent !== null) {
          links.push({ id: result.id, parentId: result.deferredParent });
        }
        // Leave the lock free now and then, so that other writers get in.
        const pause = pacer.due();
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      } catch (error) {
        if (isDiskFull(error, store.target)) {
          // Every line after this one would fail the same way: one line, and stop.
          throw new CommandError(
            `Cannot import line ${number}: ${diskFullReason(store.target)} (nothing of that line ` +
              `was written; ${counts.imported + counts.replaced} sessions before it were)`,
            { cause: error },
          );
        }
        counts.failed++;
        failures.push({ line: number, error: reason(error) });
        if (!ctx.json) ctx.io.stderr(`hermes-state: import: line ${number}: ${reason(error)}\n`);
      }
      progress.update(counts.imported + counts.replaced + counts.skipped);
    }
  } finally {
    progress.done();
  }
  counts.linked = await store.restoreParentLinks(links);
  const droppedColumns = [...dropped];
  if (droppedColumns.length > 0 && !ctx.json) {
    ctx.io.stderr(
      `hermes-state: import: this file has no column for ${droppedColumns.join(", ")}: ` +
        "those values were not kept\n",
    );
  }
  if (ctx.json) {
    printJson(ctx.io, { ...counts, dropped_columns: droppedColumns, failures });
  } else {
    const parts = [
      `Imported ${counts.imported} session${counts.imported === 1 ? "" : "s"}`,
    ];
    if (counts.replaced > 0) parts.push(`replaced ${counts.replaced}`);
    parts.push(`skipped ${counts.skipped} already present`);
    let text = `${parts.join(", ")} (${counts.messages} messages written)`;
    if (counts.failed > 0) {
      text += `; ${counts.failed} line${counts.failed === 1 ? "" : "s"} failed`;
    }
    ctx.io.stdout(`${text}.\n`);
  }
  return counts.failed > 0 ? 1 : 0;
}

/** The `import` command. */
export const importCommand: Command = {
  name: "import",
  summary: "Read a JSON Lines export back",
  usage: USAGE,
  options: { replace: { type: "boolean" } },
  minPositionals: 1,
  maxPositionals: 1,
  positionalNames: "FILE (or - for standard input)",
  run,
};
