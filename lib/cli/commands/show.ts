/**
 * `hermes-state show`: a session's details and its transcript.
 *
 * @module
 */
import type { SessionStore } from "../../core/session_store.ts";
import type { MessageRow, SessionRow } from "../../core/types.ts";
import type { Command, Context } from "../command.ts";
import {
  alignColumns,
  formatCost,
  formatCount,
  formatDateTime,
  formatWhen,
  plural,
} from "../../render/format.ts";
import { printRecordJson } from "../print_record_json.ts";
import { integerOption, type ParsedArgs, positiveSeconds } from "../parse.ts";
import { openStoreNaming, resolveSession } from "../resolve.ts";
import { renderTranscript, visibleControls, visibleInline } from "../../render/transcript.ts";
import { CommandError, UsageError } from "../usage_error.ts";
import { followSession } from "../follow_session.ts";
import { printTranscript } from "../print_transcript.ts";
import { isShownInTranscript } from "../../core/message_row.ts";
import { newestOf } from "../../core/newest_message.ts";

const USAGE = `Usage: hermes-state show [options] ID|PREFIX|TITLE

Show a session: its details (source, model, times, lineage, tokens, cost)
and its transcript, with tool calls and their arguments. Long tool results
are folded; reasoning is hidden unless --reasoning. The session is named by
its id, a unique id prefix, or its title.

Options:
  --reasoning    Show the model's reasoning
  --full         Do not fold long tool results and arguments
  --system       Show the system prompt
  --all          Also show messages a newer Hermes rewound, compacted or
                 hides (marked [rewound], [compacted], [hidden])
  --last N       Only the last N messages of the transcript (as tail -n);
                 a long session's others are not read
  --follow[=SECONDS]
                 After the transcript, print new messages as they are
                 written (looking every SECONDS, default 1) until Ctrl-C;
                 say when the session ends, and go on into the session
                 that continues a compressed one
  --json         Print the session and its messages as one JSON document
                 (the shape of one "export" line)
  --db PATH      The database file, or a postgres:// URL
  -h, --help     Show this help

Examples:
  hermes-state show 20260425_090019_d38f1d
  hermes-state show 20260425 --reasoning
  hermes-state show "my project #3" --json
  hermes-state show 20260425 --follow
  hermes-state show 20260425 --last 20 --follow
`;

/** How many times {@linkcode chainEnd} asks for the tip, each a walk of up to 100 steps. */
const TIP_WALKS = 100;

/**
 * The live end of the compression chain `id` belongs to. `getCompressionTip`
 * walks at most 100 continuations (Python's bound), and a long-lived gateway
 * compresses more often than that: where it stops, it is asked again, up to
 * {@linkcode TIP_WALKS} times (a loop in a damaged file ends the walk).
 * `reached` says whether the end was found.
 */
async function chainEnd(
  store: SessionStore,
  id: string,
): Promise<{ id: string; reached: boolean }> {
  const seen = new Set([id]);
  let tip = await store.getCompressionTip(id);
  for (let walk = 1; walk < TIP_WALKS && tip !== id && !seen.has(tip); walk++) {
    seen.add(tip);
    const further = await store.getCompressionTip(tip);
    if (further === tip) return { id: tip, reached: true };
    tip = further;
  }
  if (tip === id || seen.has(tip)) return { id: tip, reached: tip === id };
  // The walks ran out: the last one may have ended on the end itself (a chain of 9,999
  // continuations), which said "the chain goes on past it" of the live end.
  return { id: tip, reached: (await store.getCompressionTip(tip)) === tip };
}

async function details(
  store: SessionStore,
  session: SessionRow,
  ctx: Context,
  showSystem: boolean,
): Promise<string> {
  const { style } = ctx;
  const now = ctx.io.now();
  const rows: string[][] = [["ID", style.cyan(visibleInline(session.id))]];
  if (session.title) rows.push(["Title", style.bold(visibleInline(session.title))]);
  rows.push(["Source", visibleInline(session.source)]);
  if (session.model) rows.push(["Model", visibleInline(session.model)]);
  if (session.user_id) rows.push(["User", visibleInline(session.user_id)]);
  rows.push(["Started", formatWhen(session.started_at, now)]);
  if (session.ended_at !== null) {
    const reason = session.end_reason ? ` · ${visibleInline(session.end_reason)}` : "";
    rows.push(["Ended", `${formatDateTime(session.ended_at)}${reason}`]);
  } else {
    rows.push(["Ended", style.green("— (open)")]);
  }
  if (session.parent_session_id) {
    rows.push(["Parent", visibleInline(session.parent_session_id)]);
  }
  if (session.end_reason === "compression") {
    const tip = await chainEnd(store, session.id);
    if (tip.id !== session.id) {
      // The end of the chain is live only while it is open.
      const ended = tip.reached && (await store.getSession(tip.id))?.ended_at != null;
      const said = !tip.reached
        ? "the chain goes on past it"
        : ended
        ? "the end of the chain, ended"
        : "the live end of the chain";
      rows.push(["Continued in", `${visibleInline(tip.id)} (${said})`]);
    }
  }
  rows.push([
    "Messages",
    `${plural(session.message_count ?? 0, "message")} · ${
      plural(session.tool_call_count ?? 0, "tool call")
    } · ${plural(session.api_call_count ?? 0, "API call")}`,
  ]);
  rows.push([
    "Tokens",
    [
      `${formatCount(session.input_tokens)} in`,
      `${formatCount(session.output_tokens)} out`,
      `${formatCount(session.cache_read_tokens)} cache read`,
      `${formatCount(session.cache_write_tokens)} cache write`,
      `${formatCount(session.reasoning_tokens)} reasoning`,
    ].join(" · "),
  ]);
  if (session.estimated_cost_usd !== null || session.actual_cost_usd !== null) {
    const costs = [`${formatCost(session.estimated_cost_usd)} estimated`];
    if (session.actual_cost_usd !== null) {
      costs.push(`${formatCost(session.actual_cost_usd)} actual`);
    }
    // The status says how the cost was found; "estimated" is said already.
    if (session.cost_status && session.cost_status !== "estimated") {
      costs.push(`(${visibleInline(session.cost_status)})`);
    }
    rows.push(["Cost", costs.join(" · ").replace(" · (", " (")]);
  }
  if (session.billing_provider) rows.push(["Billing", visibleInline(session.billing_provider)]);
  const prompt = session.system_prompt ?? "";
  if (prompt !== "" && !showSystem) {
    rows.push([
      "System",
      style.dim(`${formatCount(Array.from(prompt).length)} characters (--system shows it)`),
    ]);
  }
  const lines = alignColumns(rows.map(([k, v]) => [style.dim(k), v]));
  if (prompt !== "" && showSystem) {
    lines.push("", style.bold("System prompt"), visibleControls(prompt).trimEnd());
  }
  return lines.join("\n") + "\n";
}

/**
 * The last `count` messages of the transcript `show` prints (`--all` or
 * not), read from the end of the session: a long one's others are not read.
 * With `newest`, only those with an id up to it (the rows written since are
 * the follow's to print): read back a page at a time until `count` are kept.
 */
async function lastMessages(
  store: SessionStore,
  id: string,
  all: boolean,
  count: number,
  newest = Infinity,
): Promise<MessageRow[]> {
  const shown = { includeInactive: all, excludeHidden: !all };
  let page = await store.getMessages(id, { ...shown, last: count });
  let kept = page.filter((message) => message.id <= newest);
  // A page the newer rows shortened: the ones before it make up the count (pages of at
  // least 200, so a transcript rewritten meanwhile, none of it kept, is read in few steps).
  let size = count;
  while (kept.length < count && page.length > 0 && page.length === size) {
    size = Math.max(count, 200);
    page = await store.getMessages(id, { ...shown, beforeId: page[0].id, last: size });
    kept = [...page.filter((message) => message.id <= newest), ...kept].slice(-count);
  }
  return kept;
}

/**
 * Where `show --last --follow` starts following: the newest id of the rows
 * `show` reads (hidden ones too, and an id written later with an earlier
 * timestamp), how many there are, and the last one.
 */
async function readTail(store: SessionStore, id: string, all: boolean) {
  // Counted first: a row written between the reads is then taken as printed (it is, being up
  // to the newest) but not counted, which a later look reads as an append, not a rewrite.
  const known = await store.countMessages(id, { includeInactive: all });
  const { last, newest } = await newestOf(store, id, { includeInactive: all });
  return { newest, known, lastRow: last };
}

/** How many messages of the transcript come before `printed` (all of them when it is empty). */
function leftOut(
  store: SessionStore,
  id: string,
  all: boolean,
  printed: readonly MessageRow[],
): Promise<number> {
  const shown = { includeInactive: all, excludeHidden: !all };
  return store.countMessages(
    id,
    printed.length === 0 ? shown : { ...shown, beforeId: printed[0].id },
  );
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const follow = args.has("follow")
    ? positiveSeconds("--follow", args.string("follow") ?? "1", "show")
    : undefined;
  const last = args.has("last")
    ? integerOption(args, "last", { fallback: 0, min: 0, command: "show" })
    : undefined;
  if (last !== undefined && ctx.json) {
    throw new UsageError(
      "--last shortens the transcript printed as text: --json prints the whole session (its export line)",
      { command: "show" },
    );
  }
  if (follow !== undefined && ctx.json) {
    throw new UsageError(
      "--follow prints text: for JSON, read the session again (show --json) or export it",
      { command: "show" },
    );
  }
  const typed = args.positionals.join(" ");
  const store = await openStoreNaming(ctx, [typed], "show");
  const id = await resolveSession(store, typed, "show").catch((error) => {
    // `show ID --follow 5` reads "ID 5" as the session, and `show --follow 5 ID` "5 ID":
    // say how the seconds are given.
    const { positionals } = args;
    const number = [positionals.at(-1), positionals[0]].find((word) =>
      word !== undefined && /^\d+(?:\.\d+)?$/.test(word)
    );
    const seconds = follow !== undefined && args.string("follow") === undefined &&
      positionals.length > 1 && number !== undefined;
    if (!seconds || !(error instanceof CommandError)) throw error;
    throw new CommandError(
      `${error.message}; for a pause of ${number} s, write --follow=${number}`,
      { cause: error },
    );
  });
  if (ctx.json) {
    const record = await store.exportSession(id);
    if (record === undefined) throw new CommandError(`Session '${visibleInline(id)}' not found`);
    // In pieces, as printJson writes it: a long session's document is never one string.
    await printRecordJson(ctx.io, record);
    return 0;
  }
  const session = await store.getSession(id);
  if (session === undefined) throw new CommandError(`Session '${visibleInline(id)}' not found`);
  ctx.io.stdout(await details(store, session, ctx, args.flag("system")));
  const all = args.flag("all");
  const read = (sessionId: string, afterId?: number) =>
    store.getMessages(sessionId, { includeInactive: all, afterId });
  const render = (messages: readonly MessageRow[]) =>
    renderTranscript(messages.filter((message) => all || isShownInTranscript(message)), {
      style: ctx.style,
      reasoning: args.flag("reasoning"),
      full: args.flag("full"),
    });
  // Where a --follow of the last messages starts, read first: the messages printed are those
  // up to it, and any written since are the follow's to print (once).
  const tail = last !== undefined && follow !== undefined
    ? await readTail(store, id, all)
    : undefined;
  const messages = last === undefined
    ? await read(id)
    : await lastMessages(store, id, all, last, tail?.newest);
  // How many messages of the transcript --last left out, said above the ones printed.
  const before = last === undefined ? 0 : await leftOut(store, id, all, messages);
  if (before > 0) {
    ctx.io.stdout(
      `\n${ctx.style.dim(`(${plural(before, "earlier message")} not shown: --last ${last})`)}\n`,
    );
  }
  // In pieces: a long session's transcript is never one string, and it starts at once.
  const printed = await printTranscript(ctx.io, messages, render);
  if (!printed && before === 0) ctx.io.stdout(`\n${ctx.style.dim("(no messages)")}\n`);
  if (follow === undefined) return 0;
  if (last === undefined) {
    return await followSession(store, ctx, { session, messages, seconds: follow, read, render });
  }
  return await followSession(store, ctx, {
    session,
    messages,
    seconds: follow,
    read,
    render,
    tail,
    reprinted: (rows) =>
      rows.filter((row) => all || isShownInTranscript(row)).slice(-last || rows.length),
  });
}

/** The `show` command. */
export const showCommand: Command = {
  name: "show",
  summary: "Show a session's details and transcript",
  usage: USAGE,
  options: {
    reasoning: { type: "boolean" },
    full: { type: "boolean" },
    system: { type: "boolean" },
    all: { type: "boolean" },
    last: { type: "string" },
    follow: { type: "boolean", inlineValue: true },
  },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "ID|PREFIX|TITLE",
  dashWord: (word) => `to show the session titled ${word}`,
  run,
};
