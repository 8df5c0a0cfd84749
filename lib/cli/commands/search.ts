/**
 * `hermes-state search`: full-text search over every message, with the
 * matched words highlighted and the messages around each hit.
 *
 * @module
 */
import type { SessionStore } from "../../core/session_store.ts";
import { FTS_STALE_PREFIX } from "../../sqlite/fts_stale.ts";
import { FTS_BACKFILL_PREFIX } from "../../sqlite/schema/fts_backfill.ts";
import { NEWER_STALE_KEYS } from "../../sqlite/schema/fts_layout.ts";
import { FTS_TABLES } from "../../sqlite/schema/schema_sql.ts";
import type { SearchHit } from "../../core/types.ts";
import type { SearchOptions } from "../../core/search/options.ts";
import type { Command, Context } from "../command.ts";
import { originOption } from "../origin.ts";
import { formatCount, formatWhen, oneLine, plural } from "../../render/format.ts";
import { markWords, showMarks } from "../../render/highlight.ts";
import { displaySnippet, hitEntryIndex } from "../../render/excerpt.ts";
import { printJson } from "../json.ts";
import { choiceOption, choicesOption, integerOption, type ParsedArgs } from "../parse.ts";
import { resolveSession } from "../resolve.ts";
import { timeOption } from "../time_option.ts";
import { UsageError } from "../usage_error.ts";
import { unmarkedWords } from "../../core/search/plan.ts";
import { leadingNotProblem } from "../../core/search/leading_not.ts";
import type { Style } from "../../render/style.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { truncate } from "../../render/width.ts";

const USAGE = `Usage: hermes-state search [options] QUERY...

Search every message (content, tool names and tool-call arguments). Words
are matched whole ("docker"), as a prefix ("deploy*") or as a phrase
("\\"docker compose\\""); every word must be present unless OR joins them,
and NOT leaves out what follows it ("docker NOT compose"; a query cannot
start with NOT). Words side by side bind tightest, then NOT, then AND, then
OR. Chinese, Japanese and Korean text, Thai, Lao, Myanmar and Khmer (which
also put no spaces between words) and emoji are matched anywhere in a word,
and so is every other word of such a query. Each hit shows its session,
the matched words highlighted (>>>like this<<< when not on a terminal), and
the messages just before and after it. Several QUERY words are joined with
spaces.

Options:
  --source SOURCE          Only sessions of this source (repeatable)
  --exclude-source SOURCE  Never sessions of this source (repeatable)
  --origin NAME            Only sessions synced from this origin (a PostgreSQL
                           store; see sync)
  --role ROLE              Only messages of this role: user, assistant, tool,
                           system (repeatable)
  --session ID             Only messages of this session (an id, a unique id
                           prefix or a title)
  --since TIME             Only messages at or after TIME: a date
                           (2026-04-20), a date and time (2026-04-20 09:30),
                           an age (30m, 12h, 7d, 2w, 6mo, 1y) or Unix seconds
  --until TIME             Only messages before TIME
  --limit N                Show at most N hits (default 20)
  --offset N               Skip the first N hits (default 0)
  --sort ORDER             rank (most relevant first, the default), newest
                           or oldest (by time, then relevance)
  --json                   Print the hits as a JSON array
  --db PATH                The database file, or a postgres:// URL
  -h, --help               Show this help

Examples:
  hermes-state search docker
  hermes-state search '"docker compose"' --role assistant
  hermes-state search 记忆 --source telegram --since 7d --json
  hermes-state search 'deploy* NOT staging' --session 20260425
  hermes-state search docker --sort newest
`;

/** The roles a message can have. */
const ROLES = ["user", "assistant", "tool", "system"] as const;
/** The orders `--sort` takes. */
const SORTS = ["rank", "newest", "oldest"] as const;

/** Columns of a context line. */
const CONTEXT_WIDTH = 110;

/**
 * The snippet with every match marked: FTS5 marks its own; the words the
 * search matched by substring are marked here, then the markers become
 * colour on a terminal.
 */
function highlight(snippet: string, words: readonly string[], style: Style): string {
  return showMarks(markWords(snippet, words), style);
}

async function titleOf(
  store: SessionStore,
  cache: Map<string, string | null>,
  id: string,
): Promise<string | null> {
  if (!cache.has(id)) cache.set(id, await store.getSessionTitle(id) ?? null);
  return cache.get(id) ?? null;
}

function renderHit(
  hit: SearchHit,
  n: number,
  title: string | null,
  words: readonly string[],
  ctx: Context,
): string {
  const { style } = ctx;
  const when = formatWhen(hit.timestamp, ctx.io.now(), { minutes: true });
  const head = [
    title ? style.bold(visibleControls(oneLine(title))) : undefined,
    style.cyan(visibleInline(hit.session_id)),
    visibleInline(hit.source),
    when,
  ].filter((part) => part !== undefined).join(" · ");
  const lines = [`${n}. ${head}`];
  const context = hit.context ?? [];
  const at = hitEntryIndex(hit);
  const role = hit.tool_name
    ? `${visibleInline(hit.role)} (${visibleInline(hit.tool_name)})`
    : visibleInline(hit.role);
  const raw = displaySnippet(hit) ?? String(context[at]?.content ?? "");
  const snippet = highlight(visibleControls(oneLine(raw)), words, style);
  if (context.length === 0) lines.push(`   ▶ ${role}: ${snippet}`);
  context.forEach((message, i) => {
    if (i === at) {
      lines.push(`   ▶ ${role}: ${snippet}`);
    } else {
      // A message without text (an assistant that only called tools) says so.
      const empty = message.content === null || message.content === "";
      const content = visibleControls(oneLine(String(message.content ?? "")));
      const speaker = visibleInline(String(message.role));
      const text = truncate(`${speaker}: ${empty ? "(no text)" : content}`, CONTEXT_WIDTH);
      lines.push(style.dim(`     ${text}`));
    }
  });
  return lines.join("\n") + "\n";
}

/**
 * Says once, on stderr, when a full-text table misses messages (marked
 * stale after damage, still being filled after a migration, or marked stale
 * by the newer Hermes whose layout it has): search then reads those
 * messages by substring, slower and without ranking.
 */
async function noteUnindexed(
  db: Pick<SessionStore, "engine" | "getMeta" | "inspect">,
  ctx: Context,
): Promise<void> {
  if (db.engine !== "sqlite") return;
  const notes: string[] = [];
  const noted = new Set<string>();
  // A file of an older Hermes, read as it is, may have no state_meta: getMeta answers undefined.
  for (const table of FTS_TABLES) {
    if (await db.getMeta(`${FTS_STALE_PREFIX}${table}`) !== undefined) {
      notes.push(`${table} is stale after damage (run "hermes-state doctor --fix")`);
      noted.add(table);
    } else if (await db.getMeta(`${FTS_BACKFILL_PREFIX}${table}`) !== undefined) {
      notes.push(
        `${table} is still being filled (after an upgrade or a repair: "hermes-state migrate" ends it)`,
      );
      noted.add(table);
    }
  }
  // A newer Hermes's own marks count only for a table of its layout, which `inspect` tells.
  let newer = false;
  for (const key of NEWER_STALE_KEYS) {
    const value = await db.getMeta(key);
    if (value !== undefined && value !== "0") newer = true;
  }
  if (newer) {
    for (const { table } of (await db.inspect({ integrity: false })).staleFtsTables) {
      if (noted.has(table)) continue;
      notes.push(
        `${table} is marked stale by the newer Hermes that wrote this file (its next start rebuilds it)`,
      );
    }
  }
  if (notes.length === 0) return;
  ctx.io.stderr(
    `hermes-state: search: the search index ${notes.join("; ")}; ` +
      "those messages were matched by substring instead (slower, newest first)\n",
  );
}

/** More hits than any store holds: a `--limit` above it asks for them all. */
const ALL_HITS = 2 ** 40;

/** What the page shows: `3 hits`, `first 20 hits; …`, `hits 21–40; …`. */
function footer(count: number, offset: number, more: boolean): string {
  const range = offset === 0
    ? `${more ? "first " : ""}${plural(count, "hit")}`
    : count === 1
    ? `hit ${formatCount(offset + 1)}`
    : `hits ${formatCount(offset + 1)}–${formatCount(offset + count)}`;
  return more ? `${range}; --limit and --offset show more` : range;
}

/**
 * Refuses a query with no text (`search "$Q"` with Q unset would answer "no
 * messages match", as if searched), and one that starts with NOT: FTS5
 * would drop the NOT and find the very word.
 */
function checkQuery(query: string): void {
  if (query.trim() === "") {
    const problem = `the query is empty (${quotedValue(query)}): give a word to search for`;
    throw new UsageError(problem, { command: "search" });
  }
  const problem = leadingNotProblem(query);
  if (problem !== null) throw new UsageError(problem, { command: "search" });
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const limit = integerOption(args, "limit", { fallback: 20, min: 1, command: "search" });
  const offset = integerOption(args, "offset", { fallback: 0, command: "search" });
  const sort = choiceOption(args, "sort", {
    choices: SORTS,
    fallback: "rank",
    command: "search",
  });
  const roles = choicesOption(args, "role", { choices: ROLES, command: "search" });
  const now = ctx.io.now();
  const since = timeOption(args, "since", { now, command: "search" });
  const until = timeOption(args, "until", { now, command: "search" });
  const query = args.positionals.join(" ");
  checkQuery(query);
  const sources = args.strings("source");
  const excluded = args.strings("exclude-source");
  const store = await ctx.openStore();
  const session = args.string("session");
  const origin = await originOption(args, store);
  const sessionId = session === undefined
    ? null
    : await resolveSession(store, session, "search", { origin });
  const filters: SearchOptions = {
    ...(origin === undefined ? {} : { origin }),
    sourceFilter: sources.length > 0 ? sources : null,
    excludeSources: excluded.length > 0 ? excluded : null,
    roleFilter: roles.length > 0 ? roles : null,
    sessionId,
    since,
    until,
    sort,
  };
  // One more than shown tells whether there are more; a limit past any
  // store's size asks for all (and keeps that one within safe integers).
  const found = await store.searchMessages(query, {
    ...filters,
    limit: Math.min(limit, ALL_HITS) + 1,
    offset,
  });
  await noteUnindexed(store, ctx);
  const hits = found.slice(0, limit);
  if (ctx.json) {
    printJson(ctx.io, hits);
    return 0;
  }
  if (hits.length === 0) {
    if (offset === 0) {
      ctx.io.stdout(`No messages match ${quotedValue(query)}.\n`);
      return 0;
    }
    // Past the last hit: say how many there are, as list does (counted, not read: reading
    // every hit's snippet and context took 22 s for a word of 275,622 hits at 1M messages).
    const upTo = Math.min(offset, ALL_HITS);
    const before = await store.countSearchHits(query, filters, upTo);
    ctx.io.stdout(
      `No hits for ${quotedValue(query)} past the first ${plural(before, "hit")}.\n`,
    );
    return 0;
  }
  const words = unmarkedWords(query);
  // A hit read by substring because its index is missing or stale has no marks of FTS5's.
  const allWords = unmarkedWords(query, { fts: false, trigram: false });
  const titles = new Map<string, string | null>();
  const blocks: string[] = [];
  for (const [i, hit] of hits.entries()) {
    const title = await titleOf(store, titles, hit.session_id);
    const marked = hit.snippet?.includes(">>>") ?? false;
    blocks.push(renderHit(hit, offset + i + 1, title, marked ? words : allWords, ctx));
  }
  ctx.io.stdout(blocks.join("\n"));
  ctx.io.stdout(ctx.style.dim(`\n(${footer(hits.length, offset, found.length > limit)})\n`));
  return 0;
}

/** The `search` command. */
export const searchCommand: Command = {
  name: "search",
  summary: "Search every message",
  usage: USAGE,
  options: {
    source: { type: "string", multiple: true, names: "sources" },
    "exclude-source": { type: "string", multiple: true, names: "sources" },
    origin: { type: "string", names: "origins" },
    role: { type: "string", multiple: true, choices: ROLES },
    session: { type: "string", names: "sessions" },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    offset: { type: "string" },
    sort: { type: "string", choices: SORTS },
  },
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "QUERY",
  dashWord: (word) => `to search for ${word}`,
  run,
};
