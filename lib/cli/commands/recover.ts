/**
 * `hermes-state recover SRC DEST`: salvage a damaged state.db into a new one.
 *
 * @module
 */
import { looksLikeJsonLines } from "../sqlite_header.ts";
import { importCommand } from "../not_a_database.ts";
import { shellWord } from "../../core/shell_word.ts";
import { RecoverError } from "../../core/errors.ts";
import { recoverDatabase, type RecoverResult } from "../../health/recover.ts";
import type { Command, Context } from "../command.ts";
import { formatCount, plural } from "../../render/format.ts";
import { shownFileSize } from "../files.ts";
import { statusLine } from "../progress.ts";
import { printJson, snakeKeys } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { CommandError, InterruptedError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { isMissing, noDatabaseError } from "../missing_store.ts";
import { outputPathProblem } from "../../files/output_path.ts";
import { printableArgument } from "../shown_argument.ts";
import { lockTimeoutMs } from "../context.ts";
import { lockedReason, lockGivenUp } from "../locked_file.ts";

const USAGE = `Usage: hermes-state recover [options] SRC DEST

Salvage the sessions, messages and meta keys of a damaged state.db (SRC)
into a new file (DEST). Every table is read by rowid ranges, narrowing the
range around each page that fails, so every row on an undamaged page is
kept; rows SQLite cannot reach (under a damaged page, or all of them when
the header page is lost) are read from the pages directly. DEST gets the
version 11 schema, rebuilt search tables and recounted counters; messages
whose session was lost get a placeholder session (source "unknown").
SRC is only read. A -wal of another database beside SRC is left out (SRC
is read alone) and reported. Commits of the -wal past a frame that fails
its checksum are salvaged when a later commit wrote that frame's page
again (the image of the last commit, checked before use), and otherwise
reported as left out. A second session of one title is renamed
("title #2"). Integers beyond 2^53 and text that is not valid UTF-8 are
kept exactly. Reports what was recovered and which rowid ranges were
lost, or that a loss cannot be counted (a file cut short). Exits 1 when
something was or may have been lost, or a -wal was left out.

Stop every writer first. Then check DEST (\`hermes-state --db DEST doctor\`)
and put it in place of state.db (delete state.db-wal and state.db-shm).

Options:
  --force       Replace DEST when it exists
  --json        Report the result as JSON
  -h, --help    Show this help

Examples:
  hermes-state recover ~/.hermes/state.db ~/.hermes/state-recovered.db
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const [source, dest] = args.positionals;
  checkFileArgument(source, { command: "recover", name: "SRC", role: "input" });
  checkFileArgument(dest, { command: "recover", name: "DEST", role: "output" });
  if (isMissing(source)) throw noDatabaseError(source, { argument: true });
  // A name no file can have, said before any reading (recover refuses a folder itself, and
  // creates a missing one).
  const problem = outputPathProblem(dest);
  if (problem !== undefined && !/^it is a folder$|^the folder .* does not exist$/.test(problem)) {
    throw new CommandError(`Cannot recover into ${printableArgument(dest)}: ${problem}`);
  }
  // Ctrl-C or SIGTERM stops the recovery at its next stage and removes its temporary files.
  const stop = new AbortController();
  const stopListening = ctx.io.onInterrupt?.((signal) => stop.abort(new InterruptedError(signal)));
  // Every page, then every row, then the new file: minutes for a file of gigabytes (3.4 for a
  // million messages), silent until the report. A line on the terminal says what goes on.
  const size = shownFileSize(source);
  const recovering = `Recovering ${printableArgument(source)}${
    size === undefined ? "" : `, ${size}`
  }`;
  let erase = statusLine(ctx.io, `${recovering}…`);
  const result = await recoverDatabase(source, dest, {
    force: args.flag("force"),
    signal: stop.signal,
    lockTimeoutMs: lockTimeoutMs(ctx.io),
    onStage: (stage) => erase = statusLine(ctx.io, `${recovering}: ${stage}…`),
  }).catch((error) => {
    // Held whole by another process past HERMES_STATE_LOCK_TIMEOUT: the file named, as every
    // command names it (recover has no --db for the generic words to name).
    if (lockGivenUp(error)) throw new CommandError(lockedReason(error, source), { cause: error });
    if (!(error instanceof RecoverError)) throw error;
    // Nothing found: an export given for the database is read with import.
    const hint = looksLikeJsonLines(source)
      ? `; it is a JSON Lines file (an export?): to read it into a store, ${importCommand(source)}`
      : "";
    throw new CommandError(`${error.message}${hint}`, { cause: error });
  }).finally(() => {
    erase();
    stopListening?.();
  });
  const duplicates = result.duplicates.sessions + result.duplicates.messages +
    result.duplicates.state_meta;
  const complete = result.lost.length === 0 && !result.lossUnknown &&
    result.foreignWal === null && duplicates === 0 && result.clearedPrompts === 0 &&
    result.otherTables.every((table) => table.whole && table.leftOut === 0) &&
    (result.walCommitsIgnored === null || result.walCommitsSalvaged > 0);
  const code = complete ? 0 : 1;
  if (ctx.json) {
    printJson(ctx.io, snakeKeys(result));
    return code;
  }
  const { style } = ctx;
  const pages = result.fromPages.sessions + result.fromPages.messages + result.fromPages.state_meta;
  let out =
    `Recovered ${formatCount(result.sessions)} sessions and ${formatCount(result.messages)} ` +
    `messages (${formatCount(result.metaKeys)} meta keys) into ${result.dest}.\n`;
  if (result.fromWal) {
    out += `${
      style.yellow("note:")
    } the file was empty: every row came from the committed frames of its -wal (left as it was).\n`;
  } else if (!result.schemaReadable) {
    out += `${style.yellow("note:")} the schema was unreadable: every row came from the pages.\n`;
  } else if (pages > 0) {
    out += `${formatCount(pages)} rows SQLite could not reach were read from the pages.\n`;
  }
  if (result.foreignWal !== null) {
    out += `${style.red("The -wal was left out:")} ${result.foreignWal}. ` +
      "The file was read alone; what that -wal holds is not in the new file.\n";
  }
  if (result.walCommitsIgnored !== null && result.walCommitsSalvaged > 0) {
    const { frame } = result.walCommitsIgnored;
    out += `${style.yellow("note:")} the -wal's frame ${formatCount(frame)} fails its checksum, ` +
      `and SQLite ignores the ${plural(result.walCommitsSalvaged, "commit")} after it; a later ` +
      "commit wrote that frame's page again, so they were salvaged: the new file was read from " +
      "the image of the last commit, which passed the integrity, foreign key and search index " +
      "checks (the -wal was left as it was).\n";
  } else if (result.walCommitsIgnored !== null) {
    const { frame, commits } = result.walCommitsIgnored;
    const why = result.walSalvageRefused === null
      ? ""
      : ` They cannot be salvaged: ${result.walSalvageRefused}.`;
    out += `${style.red("Commits left out:")} the -wal's frame ${formatCount(frame)} fails its ` +
      `checksum, and SQLite ignores the ${plural(commits, "commit")} after it: they are not ` +
      `in the new file (keep a copy of the -wal).${why}\n`;
  }
  if (result.retitled.length > 0) {
    out += `${
      formatCount(result.retitled.length)
    } sessions had a title another session held; they were renamed:\n`;
    for (const { session, from, to } of result.retitled.slice(0, 20)) {
      out += `  ${session}: ${JSON.stringify(from)} → ${JSON.stringify(to)}\n`;
    }
    if (result.retitled.length > 20) {
      out += `  … and ${formatCount(result.retitled.length - 20)} more (--json lists all)\n`;
    }
  }
  if (result.textsTakenBack.length > 0) {
    const ids = result.textsTakenBack;
    const shown = ids.slice(0, 20).join(", ") +
      (ids.length > 20 ? ` and ${formatCount(ids.length - 20)} more` : "");
    out += `The text of ${plural(ids.length, "message")} was damaged in place (no longer ` +
      `valid UTF-8) and was taken back from the copy a search index keeps (${shown}).\n`;
  }
  if (result.placeholderSessions > 0) {
    out += `${
      formatCount(result.placeholderSessions)
    } sessions were lost and recreated empty (source "unknown") for their messages.\n`;
  }
  if (result.clearedParents > 0) {
    out += `${result.clearedParents} parent links to lost sessions were cleared.\n`;
  }
  if (result.clearedPrompts > 0) {
    out +=
      `${style.red("System prompts lost:")} ${
        plural(result.clearedPrompts, "session")
      } named a prompt that could not be read from system_prompts (where a newer Hermes keeps ` +
      "them); their links to it were cleared.\n";
  }
  for (const table of result.otherTables) {
    if (table.leftOut > 0) {
      out += `${style.red("Rows left out:")} ${plural(table.leftOut, "row")} of ${table.table}: ` +
        "each names a row the new file lacks (a lost session's), holds another row's key, or " +
        "breaks a constraint of the table.\n";
    }
    if (!table.whole) {
      out += `${style.red("Some rows may be lost:")} ${table.table} (a table of a newer Hermes) ` +
        "could not be read whole; the new file holds what could be read of it.\n";
    }
  }
  if (duplicates > 0) {
    const kinds = (["sessions", "messages", "state_meta"] as const)
      .filter((table) => result.duplicates[table] > 0)
      .map((table) =>
        `${result.duplicates[table]} ${table === "state_meta" ? "meta keys" : table}`
      );
    out += `${style.red("Rows left out:")} ${kinds.join(", ")} had the id of another row ` +
      "(the first was kept).\n";
  }
  if (result.lossUnknown) {
    const what = result.lossUnknownIn.map((table) => table === "state_meta" ? "meta keys" : table);
    out += style.red("Some rows may be lost:") +
      ` how many ${listed(what)} the file held cannot be known (${lossReason(result)}),` +
      " so rows on pages that are missing or did not parse cannot be counted" +
      (result.lost.length > 0 ? "; the ranges below are only the losses known.\n" : ".\n");
  }
  if (result.lost.length === 0) {
    if (result.foreignWal !== null) out += "Nothing of the file itself was lost.\n";
    else if (result.walCommitsIgnored !== null && result.walCommitsSalvaged === 0) {
      out += "Nothing else was lost.\n";
    } else if (complete) {
      out += style.green("Nothing was lost.\n");
    }
  } else {
    out += style.red("Lost rowid ranges") + " (they may include ids never used):\n";
    for (const range of result.lost.slice(0, 50)) {
      out += `  ${range.table} ${
        range.from === range.to ? range.from : `${range.from}–${range.to}`
      }\n`;
    }
    if (result.lost.length > 50) {
      out += `  … and ${formatCount(result.lost.length - 50)} more (--json lists all)\n`;
    }
  }
  out += `Next: hermes-state --db ${shellWord(result.dest)} doctor\n`;
  ctx.io.stdout(out);
  return code;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** Why the loss of some tables cannot be counted. */
function lossReason(result: RecoverResult): string {
  if (result.missingPages > 0) {
    return `the file is ${formatCount(result.missingPages)} pages shorter than its header says`;
  }
  // Damaged rows were left out, or pages past what was read may have held rows: in both, no
  // index and no record of the table's highest rowid says which rows it held.
  return result.schemaReadable
    ? "no readable index or record of their highest rowid says which rows there were"
    : "the schema was unreadable and nothing records their highest rowid";
}

/** The `recover` command. */
export const recoverCommand: Command = {
  name: "recover",
  summary: "Salvage a damaged file into a new state.db",
  usage: USAGE,
  options: { force: { type: "boolean" } },
  minPositionals: 2,
  maxPositionals: 2,
  positionalNames: "SRC and DEST",
  run,
};
