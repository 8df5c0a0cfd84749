/**
 * A seeded, realistic corpus for the benchmark: sessions from several
 * sources and models, compression chains, branches and subagents, titles
 * (with `#N` lineage titles), and messages of 20–2,000 characters of which
 * about 30% take part in tool calls, about 15% are CJK and a few are
 * multimodal.
 *
 * The plan (one small record per session) is computed up front; the messages
 * of a session are generated from the seed and the session index whenever
 * they are needed, so a 200,000-message corpus never sits in memory whole.
 *
 * Run alone it prints what it would generate:
 * `deno run -A bench/corpus.ts --sessions 100 --messages 50`.
 *
 * @module
 */
import process from "node:process";
import type { MessageContent, NewMessage } from "../lib/core/types.ts";
import { pick, prose, toolArguments, TOOLS } from "./_text.ts";
import { mulberry32, type Random } from "../tests/_random.ts";

/** Size and seed of a corpus. */
export interface CorpusOptions {
  /**
   * Sessions.
   * @default {2000}
   */
  readonly sessions?: number;
  /**
   * Messages per session on average (the total is exactly sessions × messages).
   * @default {100}
   */
  readonly messages?: number;
  /**
   * The seed; the same seed gives the same corpus.
   * @default {7}
   */
  readonly seed?: number;
}

/** Everything known about one session before its messages are generated. */
export interface SessionPlan {
  /** Position in creation order (parents come before their children). */
  readonly index: number;
  readonly id: string;
  readonly source: string;
  readonly model: string;
  readonly userId: string | null;
  readonly systemPrompt: string;
  readonly parentId: string | null;
  readonly startedAt: number;
  /** Seconds between two messages. */
  readonly step: number;
  /** Messages in this session. */
  readonly count: number;
  endedAt: number | null;
  endReason: string | null;
  readonly title: string | null;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** A planned corpus. */
export interface Corpus {
  readonly seed: number;
  readonly sessions: readonly SessionPlan[];
  /** Total messages (sessions × messages). */
  readonly messageCount: number;
}

const SOURCES = [
  ["cli", 0.45],
  ["telegram", 0.2],
  ["discord", 0.14],
  ["slack", 0.06],
  ["whatsapp", 0.05],
  ["tool", 0.05],
  ["tui", 0.05],
] as const;
const MODELS = ["anthropic/claude-sonnet-4", "openai/gpt-5", "google/gemini-2.5-pro", "qwen3"];
const END_REASONS = ["cli_close", "user_exit", "timeout", "new_session"];
const TITLE_WORDS = [
  "Fix",
  "docker",
  "timeout",
  "Deploy",
  "gateway",
  "Refactor",
  "search",
  "index",
  "Plan",
  "release",
  "Debug",
  "memory",
  "leak",
  "Review",
  "schema",
  "migration",
  "数据库",
  "性能",
];
/** The last planned session starts here (a fixed instant keeps the corpus reproducible). */
const END_EPOCH = 1_750_000_000;
/** The corpus spans this many days. */
const SPAN_DAYS = 120;

function gaussian(rnd: Random): number {
  return Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
}

function weightedSource(rnd: Random): string {
  let r = rnd();
  for (const [source, weight] of SOURCES) {
    if (r < weight) return source;
    r -= weight;
  }
  return "cli";
}

/** Message counts that vary per session (a few long ones) and sum to `total`. */
function messageCounts(rnd: Random, sessions: number, total: number): number[] {
  const weights = Array.from({ length: sessions }, () => Math.exp(0.9 * gaussian(rnd)));
  const sum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.floor((total * w) / sum));
  let rest = total - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % sessions, rest--) counts[i]++;
  return counts;
}

function sessionId(rnd: Random, startedAt: number, taken: Set<string>): string {
  const d = new Date(startedAt * 1000).toISOString();
  const stamp = `${d.slice(0, 10).replaceAll("-", "")}_${d.slice(11, 19).replaceAll(":", "")}`;
  while (true) {
    const hex = Math.floor(rnd() * 0xffffff).toString(16).padStart(6, "0");
    const id = `${stamp}_${hex}`;
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/**
 * Plans a corpus: sessions, lineage, titles and message counts.
 *
 * @param options Size and seed.
 * @returns The plan, in creation order.
 */
export function planCorpus(options: CorpusOptions = {}): Corpus {
  const sessionTotal = options.sessions ?? 2000;
  const perSession = options.messages ?? 100;
  const seed = options.seed ?? 7;
  const rnd = mulberry32(seed);
  const counts = messageCounts(rnd, sessionTotal, sessionTotal * perSession);
  const taken = new Set<string>();
  const titles = new Set<string>();
  const plans: SessionPlan[] = [];
  const chainLength = new Map<string, number>();
  const rootTitle = new Map<string, string | null>();
  const gap = (SPAN_DAYS * 86400) / Math.max(1, sessionTotal);
  let clock = END_EPOCH - SPAN_DAYS * 86400;

  for (let index = 0; index < sessionTotal; index++) {
    clock += gap * (0.5 + rnd());
    const count = counts[index];
    const step = 5 + rnd() * 60;
    const previous = plans[index - 1];
    const r = rnd();
    let kind: "root" | "compression" | "branch" | "subagent" = "root";
    if (previous !== undefined && previous.endedAt !== null) {
      const free = previous.endReason !== "compression" && previous.endReason !== "branched";
      if (r < 0.1 && free && (chainLength.get(previous.id) ?? 1) < 6) kind = "compression";
      else if (r < 0.13 && free) kind = "branch";
      else if (r < 0.18) kind = "subagent";
    }
    let startedAt = clock;
    let source = weightedSource(rnd);
    let model = pick(rnd, MODELS);
    let userId: string | null = source === "cli" ? null : `user-${Math.floor(rnd() * 50)}`;
    let parentId: string | null = null;
    let title: string | null = null;
    if (kind !== "root") {
      const parent = previous!;
      parentId = parent.id;
      source = parent.source;
      model = parent.model;
      userId = parent.userId;
      if (kind === "subagent") {
        startedAt = parent.startedAt + (parent.count * parent.step) / 2;
      } else {
        parent.endReason = kind === "compression" ? "compression" : "branched";
        startedAt = parent.endedAt! + 0.25;
      }
    }
    const id = sessionId(rnd, startedAt, taken);
    if (kind === "compression") {
      const length = (chainLength.get(parentId!) ?? 1) + 1;
      chainLength.set(id, length);
      const base = rootTitle.get(parentId!) ?? null;
      rootTitle.set(id, base);
      if (base !== null) title = `${base} #${length}`;
    } else if (kind === "root" || (kind === "branch" && rnd() < 0.3)) {
      if (rnd() < 0.6) {
        const words = Array.from(
          { length: 2 + Math.floor(rnd() * 3) },
          () => pick(rnd, TITLE_WORDS),
        );
        title = `${words.join(" ")} ${index}`;
      }
      rootTitle.set(id, title);
    }
    if (title !== null) titles.add(title);
    // The most recent sessions are still running; a few empty ones are ghosts.
    const live = index > sessionTotal * 0.92 && rnd() < 0.6;
    const endedAt = live ? null : startedAt + count * step + 1;
    const endReason = live ? null : kind === "subagent" ? "subagent_done" : pick(rnd, END_REASONS);
    plans.push({
      index,
      id,
      source,
      model,
      userId,
      systemPrompt: `You are Hermes, a helpful agent. Session ${index}. ${
        "Be concise. ".repeat(20)
      }`,
      parentId,
      startedAt,
      step,
      count,
      endedAt,
      endReason,
      title,
      inputTokens: count * (400 + Math.floor(rnd() * 800)),
      outputTokens: count * (50 + Math.floor(rnd() * 200)),
      costUsd: Math.round(count * rnd() * 1000) / 100000,
    });
  }
  return { seed, sessions: plans, messageCount: sessionTotal * perSession };
}

/** A length in [min, max], log-uniform (many short messages, some long). */
function length(rnd: Random, min: number, max: number): number {
  return Math.round(Math.exp(Math.log(min) + rnd() * (Math.log(max) - Math.log(min))));
}

/**
 * The messages of one planned session, generated from the corpus seed.
 *
 * @param corpus The corpus.
 * @param plan One of its sessions.
 * @returns Exactly `plan.count` messages, in order.
 */
export function sessionMessages(corpus: Corpus, plan: SessionPlan): NewMessage[] {
  const rnd = mulberry32((corpus.seed * 1_000_003 + plan.index * 7919) >>> 0);
  const cjkSession = rnd() < 0.23;
  const out: NewMessage[] = [];
  const text = (min: number, max: number) =>
    prose(rnd, length(rnd, min, max), cjkSession && rnd() < 0.9);
  let call = 0;
  while (out.length < plan.count) {
    // A user turn: now and then multimodal (text plus an image).
    const userText = text(20, 1200);
    let content: MessageContent = userText;
    if (rnd() < 0.03) {
      content = [
        { type: "text", text: userText },
        { type: "image_url", image_url: { url: `https://example.com/shot-${plan.index}.png` } },
      ];
    }
    out.push({ role: "user", content, tokenCount: Math.ceil(userText.length / 4) });
    // Assistant rounds: tool calls and their results, then an answer.
    while (out.length < plan.count && rnd() < 0.28) {
      const calls = 1 + Math.floor(rnd() * rnd() * 3);
      const toolCalls = Array.from({ length: calls }, () => {
        const name = pick(rnd, TOOLS);
        return {
          id: `call_${plan.index}_${call++}`,
          type: "function",
          function: { name, arguments: toolArguments(rnd, name) },
        };
      });
      out.push({
        role: "assistant",
        content: rnd() < 0.5 ? text(20, 300) : "",
        toolCalls,
        finishReason: "tool_calls",
        reasoning: rnd() < 0.3 ? text(40, 400) : null,
      });
      for (const tc of toolCalls) {
        if (out.length >= plan.count) break;
        const result = prose(rnd, length(rnd, 40, 2000), false);
        out.push({
          role: "tool",
          content: rnd() < 0.3 ? JSON.stringify({ ok: true, output: result }) : result,
          toolCallId: tc.id,
          toolName: tc.function.name,
        });
      }
    }
    if (out.length >= plan.count) break;
    const answer = text(60, 2000);
    out.push({
      role: "assistant",
      content: answer,
      finishReason: "stop",
      tokenCount: Math.ceil(answer.length / 4),
      reasoning: rnd() < 0.2 ? text(40, 600) : null,
    });
  }
  return out.slice(0, plan.count);
}

/** What a corpus holds, for the report. */
export interface CorpusStats {
  readonly sessions: number;
  readonly messages: number;
  readonly toolCallShare: number;
  readonly cjkShare: number;
  readonly multimodal: number;
  readonly averageLength: number;
  readonly largestSession: number;
  readonly compressionChildren: number;
  readonly branches: number;
  readonly subagents: number;
  readonly titled: number;
}

const CJK = /[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/;

/**
 * Counts what a corpus holds (generates every message once).
 *
 * @param corpus The corpus.
 * @returns The counts and shares.
 */
export function corpusStats(corpus: Corpus): CorpusStats {
  let messages = 0, tool = 0, cjk = 0, multimodal = 0, chars = 0;
  for (const plan of corpus.sessions) {
    for (const m of sessionMessages(corpus, plan)) {
      messages++;
      if (m.toolCalls || m.role === "tool") tool++;
      if (typeof m.content !== "string") multimodal++;
      const body = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
      if (CJK.test(body)) cjk++;
      chars += body.length;
    }
  }
  const s = corpus.sessions;
  const parentReason = new Map(s.map((p) => [p.id, p.endReason]));
  const childKind = (reason: string) =>
    s.filter((p) => p.parentId !== null && parentReason.get(p.parentId) === reason).length;
  return {
    sessions: s.length,
    messages,
    toolCallShare: tool / messages,
    cjkShare: cjk / messages,
    multimodal,
    averageLength: chars / messages,
    largestSession: Math.max(...s.map((p) => p.count)),
    compressionChildren: childKind("compression"),
    branches: childKind("branched"),
    subagents: s.filter((p) => p.parentId !== null).length - childKind("compression") -
      childKind("branched"),
    titled: s.filter((p) => p.title !== null).length,
  };
}

/**
 * Reads `--sessions N --messages N --seed N` from `argv`.
 *
 * @param argv Command-line arguments.
 * @returns The corpus options.
 */
export function corpusArgs(argv: readonly string[]): CorpusOptions {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const n = Number(argv[i + 1]);
    if (!Number.isInteger(n) || n < 1) {
      throw new RangeError(
        `Cannot read ${flag}: expected a positive integer: current value is ${argv[i + 1]}`,
      );
    }
    return n;
  };
  return { sessions: value("--sessions"), messages: value("--messages"), seed: value("--seed") };
}

if (import.meta.main) {
  const corpus = planCorpus(corpusArgs(process.argv.slice(2)));
  process.stdout.write(JSON.stringify(corpusStats(corpus), null, 2) + "\n");
}
