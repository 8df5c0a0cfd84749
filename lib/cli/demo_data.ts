/**
 * The demo database: a few days of a realistic Hermes life (several
 * sources, Chinese, Japanese and Korean text, tool calls and their results,
 * a compression chain, a branch, a delegate, titles), written through the
 * public API with a clock that walks forward from three days ago.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { JsonValue, NewMessage } from "../core/types.ts";

/** A settable clock: the demo moves it forward as the story goes. */
export interface DemoClock {
  /** The current demo time, in Unix seconds. */
  now: number;
}

/** Ids the demo prints hints with. */
export interface DemoIds {
  /** The live end of the compression chain. */
  tip: string;
  /** The docker session. */
  docker: string;
}

let callCounter = 0;

function toolCall(name: string, args: Record<string, JsonValue>): JsonValue {
  callCounter++;
  return {
    id: `call_demo_${String(callCounter).padStart(4, "0")}`,
    type: "function",
    function: { name, arguments: JSON.stringify(args) },
  };
}

function idAt(seconds: number, suffix: string): string {
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}${
    p(d.getUTCMinutes())
  }${p(d.getUTCSeconds())}_${suffix}`;
}

const MODEL = "anthropic/claude-sonnet-4.5";

/** Writes a conversation: each message a little after the previous one. */
async function say(
  store: SessionStore,
  clock: DemoClock,
  id: string,
  messages: readonly NewMessage[],
): Promise<void> {
  for (const message of messages) {
    clock.now += message.role === "user" ? 45 : 8;
    await store.appendMessage(id, message);
    if (message.role === "assistant") {
      await store.updateTokenCounts(id, {
        inputTokens: 1800 + 40 * (callCounter % 7),
        outputTokens: 220 + 15 * (callCounter % 5),
        cacheReadTokens: 1200,
        estimatedCostUsd: 0.0071,
        apiCallCount: 1,
        billingProvider: "openrouter",
        billingBaseUrl: "https://openrouter.ai/api/v1",
        billingMode: "chat_completions",
        model: MODEL,
      });
    }
  }
}

async function start(
  store: SessionStore,
  clock: DemoClock,
  at: number,
  options: { suffix: string; source: string; title?: string; parent?: string; model?: string },
): Promise<string> {
  clock.now = at;
  const id = idAt(at, options.suffix);
  await store.createSession(id, options.source, {
    model: options.model ?? MODEL,
    systemPrompt: "You are Hermes Agent, an intelligent AI assistant created by Nous Research.",
    parentSessionId: options.parent ?? null,
  });
  if (options.title) await store.setSessionTitle(id, options.title);
  return id;
}

/**
 * Fills an empty database with the demo story.
 *
 * @param store The open, empty store.
 * @param clock The clock `store` was opened with; moved forward as sessions are written.
 * @returns Ids worth showing.
 *
 * @example
 * ```ts ignore
 * const clock = { now: Date.now() / 1000 - 3 * 86400 };
 * const store = await openStore(path, { clock: () => clock.now });
 * const ids = await writeDemo(store, clock);
 * ```
 */
export async function writeDemo(store: SessionStore, clock: DemoClock): Promise<DemoIds> {
  callCounter = 0;
  const day0 = Math.floor(clock.now / 3600) * 3600;

  // 1. A CLI session with tool calls: deploying with docker compose.
  const docker = await start(store, clock, day0 + 9 * 3600, {
    suffix: "a1c2e3",
    source: "cli",
    title: "Deploy chat service with docker compose",
  });
  const up = toolCall("terminal", { command: "docker compose up -d --build" });
  const ps = toolCall("terminal", { command: "docker compose ps" });
  await say(store, clock, docker, [
    { role: "user", content: "Deploy the chat service to staging with docker compose, please." },
    {
      role: "assistant",
      content: "I'll build and start the stack, then check the containers.",
      toolCalls: [up, ps],
      finishReason: "tool_calls",
      reasoning: "Build first so the new image is used; then list the containers.",
    },
    {
      role: "tool",
      toolName: "terminal",
      toolCallId: "call_demo_0001",
      content: [
        "[+] Building 41.2s (18/18) FINISHED",
        ...Array.from({ length: 14 }, (_, i) => ` => [chat ${i + 1}/14] RUN step ${i + 1}`),
        "[+] Running 3/3",
        " ✔ Container chat-db-1     Started",
        " ✔ Container chat-redis-1  Started",
        " ✔ Container chat-api-1    Started",
      ].join("\n"),
    },
    {
      role: "tool",
      toolName: "terminal",
      toolCallId: "call_demo_0002",
      content:
        "NAME         STATUS\nchat-api-1   Up 5 seconds (healthy)\nchat-db-1    Up 6 seconds",
    },
    {
      role: "assistant",
      content:
        "Staging is up: `chat-api`, `chat-db` and `chat-redis` are running and the API is healthy.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(docker, "cli_close");

  // 2. A delegate the docker session started (a child, hidden from `list`).
  const delegate = await start(store, clock, day0 + 9 * 3600 + 30, {
    suffix: "d4e5f6",
    source: "cli",
    parent: docker,
  });
  await say(store, clock, delegate, [
    { role: "user", content: "Check that port 8080 is free on the staging host." },
    {
      role: "assistant",
      content: "Port 8080 is free; nothing listens on it.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(delegate, "delegate_done");

  // 3. Telegram, in Chinese.
  const zh = await start(store, clock, day0 + 13 * 3600, {
    suffix: "7b8c9d0e",
    source: "telegram",
    title: "数据库迁移计划",
  });
  await say(store, clock, zh, [
    {
      role: "user",
      content: "帮我制定数据库迁移计划。另外，助手的记忆断裂了，昨天的内容今天不记得。",
    },
    {
      role: "assistant",
      content:
        "迁移计划：一、先备份 state.db；二、在测试环境演练；三、切换后核对会话数量。记忆断裂通常是会话被压缩后摘要丢了细节。",
      finishReason: "stop",
    },
  ]);

  // 4. Discord, in Japanese, with a web search.
  const ja = await start(store, clock, day0 + 20 * 3600, {
    suffix: "1f2a3b4c",
    source: "discord",
    title: "週次レポート",
  });
  await say(store, clock, ja, [
    { role: "user", content: "今週の負荷テストの結果をまとめてください。" },
    {
      role: "assistant",
      content: null,
      toolCalls: [toolCall("web_search", { query: "負荷テスト レポート テンプレート" })],
      finishReason: "tool_calls",
    },
    {
      role: "tool",
      toolName: "web_search",
      toolCallId: `call_demo_${String(callCounter).padStart(4, "0")}`,
      content: '{"results": [{"title": "負荷テストの報告書の書き方"}]}',
    },
    {
      role: "assistant",
      content: "今週の負荷テスト：毎秒 1,200 リクエストで p99 は 180 ms でした。",
      finishReason: "stop",
    },
  ]);

  // 5. A compression chain: the conversation went on after two compressions.
  const root = await start(store, clock, day0 + 86400 + 9 * 3600, {
    suffix: "c0ffee",
    source: "cli",
    title: "Refactor the auth middleware",
  });
  await say(store, clock, root, [
    {
      role: "user",
      content: "Let's refactor the auth middleware: sessions should expire after 30 minutes.",
    },
    {
      role: "assistant",
      content: null,
      toolCalls: [toolCall("read_file", { path: "src/auth/middleware.py" })],
      finishReason: "tool_calls",
    },
    {
      role: "tool",
      toolName: "read_file",
      toolCallId: `call_demo_${String(callCounter).padStart(4, "0")}`,
      content: "def check_session(request):\n    token = request.cookies.get('sid')\n    ...",
    },
    {
      role: "assistant",
      content: "The expiry check is missing; I'll add it.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(root, "compression");
  const mid = await start(store, clock, clock.now + 5, {
    suffix: "c0ffef",
    source: "cli",
    parent: root,
    title: await store.getNextTitleInLineage("Refactor the auth middleware"),
  });
  await say(store, clock, mid, [
    { role: "user", content: "[CONTEXT COMPACTION] Summary: expiry check added to check_session." },
    { role: "user", content: "Now write the tests for the expiry." },
    {
      role: "assistant",
      content: "Added tests: fresh session passes, 31-minute-old session is rejected.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(mid, "compression");
  const tip = await start(store, clock, clock.now + 5, {
    suffix: "c0fff0",
    source: "cli",
    parent: mid,
    title: await store.getNextTitleInLineage("Refactor the auth middleware"),
  });
  await say(store, clock, tip, [
    { role: "user", content: "[CONTEXT COMPACTION] Summary: expiry implemented and tested." },
    { role: "user", content: "Ship it: open the pull request and deploy with docker compose." },
    {
      role: "assistant",
      content: "Pull request opened; deploying with docker compose after review.",
      finishReason: "stop",
    },
  ]);

  // 6. A /branch off a design discussion.
  const trunk = await start(store, clock, day0 + 2 * 86400 + 10 * 3600, {
    suffix: "b1a2c3",
    source: "tui",
    title: "Cache design",
  });
  await say(store, clock, trunk, [
    { role: "user", content: "Should the cache be Redis or in-process?" },
    {
      role: "assistant",
      content: "Redis, since three API replicas must share it.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(trunk, "branched");
  const branch = await start(store, clock, clock.now + 60, {
    suffix: "b1a2c4",
    source: "tui",
    parent: trunk,
    title: await store.getNextTitleInLineage("Cache design"),
  });
  await say(store, clock, branch, [
    { role: "user", content: "Alternative: what would an in-process LRU cost us?" },
    {
      role: "assistant",
      content: "Lower latency, but replicas would disagree for up to the TTL.",
      finishReason: "stop",
    },
  ]);

  // 7. Korean over ACP, a cron run, and a third-party tool session.
  const ko = await start(store, clock, day0 + 2 * 86400 + 14 * 3600, {
    suffix: "9e8d7c",
    source: "acp",
    title: "회의록 정리",
  });
  await say(store, clock, ko, [
    { role: "user", content: "오늘 회의록을 정리해 줘. 배포 일정과 담당자를 포함해서." },
    {
      role: "assistant",
      content: "회의록: 배포는 금요일, 담당자는 민수 씨입니다.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(ko, "acp_close");
  const cron = await start(store, clock, day0 + 2 * 86400 + 18 * 3600, {
    suffix: "c7a8b9",
    source: "cron",
  });
  await say(store, clock, cron, [
    { role: "user", content: "Nightly: check disk usage on the docker host and report above 80%." },
    {
      role: "assistant",
      content: null,
      toolCalls: [toolCall("terminal", { command: "df -h /var/lib/docker" })],
      finishReason: "tool_calls",
    },
    {
      role: "tool",
      toolName: "terminal",
      toolCallId: `call_demo_${String(callCounter).padStart(4, "0")}`,
      content: "Filesystem  Size  Used Avail Use%\n/dev/sda1   200G  122G   78G  61%",
    },
    {
      role: "assistant",
      content: "Disk usage is 61%: below the 80% threshold.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(cron, "cron_complete");
  const tool = await start(store, clock, day0 + 2 * 86400 + 19 * 3600, {
    suffix: "70015a",
    source: "tool",
  });
  await say(store, clock, tool, [
    { role: "user", content: "Summarize the docker logs of chat-api for errors." },
    {
      role: "assistant",
      content: "No errors in the last hour of chat-api logs.",
      finishReason: "stop",
    },
  ]);
  await store.endSession(tool, "tool_done");
  return { tip, docker };
}
