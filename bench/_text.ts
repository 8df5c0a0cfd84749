/**
 * Word lists and text builders for the benchmark corpus: English technical
 * prose, Chinese/Japanese/Korean prose, compounds, tool-call JSON.
 *
 * @module
 */

import type { Random } from "../tests/_random.ts";

/**
 * One element of `list`, chosen by `rnd`.
 *
 * @param rnd The generator.
 * @param list A non-empty list.
 * @returns An element.
 */
export function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/**
 * An element of `list`, early elements far more likely (Zipf-like), so a few
 * words occur in tens of thousands of messages and most in few.
 */
function zipf<T>(rnd: Random, list: readonly T[]): T {
  const r = rnd();
  return list[Math.floor(list.length * r * r * r)];
}

/** English words, most frequent first. The benchmark queries use several. */
const ENGLISH = (
  "the to and a of is in it that for you this with on be can i we not are if as have " +
  "but or an so at by from what use file run will check then error do your should " +
  "test function code database config python server docker timeout deploy build " +
  "install update output request response query value data user session message " +
  "memory cache token model api key log debug fix issue change branch commit merge " +
  "review version release script command path folder directory permission network " +
  "connection pool rate limit retry backoff schema migration index table column row " +
  "sqlite postgres redis queue worker thread process signal kernel container image " +
  "registry cluster node pod service endpoint latency throughput benchmark profile " +
  "trace metric alert dashboard webhook gateway proxy certificate domain dns route " +
  "handler middleware router template render component state store reducer hook " +
  "typescript javascript rust golang java kotlin swift compiler linker runtime " +
  "package dependency lockfile workspace monorepo pipeline artifact cache invalidation " +
  "authentication authorization oauth password secret vault encryption hash signature " +
  "parser lexer grammar syntax token stream buffer encoding unicode utf8 newline " +
  "unit tests integration fixture mock assertion coverage flaky regression snapshot " +
  "terminal shell bash zsh prompt history alias environment variable export import " +
  "refactor rename extract inline cleanup deprecate remove replace upgrade downgrade " +
  "summary plan step approach tradeoff option alternative recommendation decision " +
  "yesterday today tomorrow morning meeting notes draft email calendar reminder"
).split(" ");

/** Two-word phrases that recur verbatim (phrase queries look for them). */
const PHRASES = [
  "connection pool",
  "rate limit",
  "unit tests",
  "memory leak",
  "race condition",
  "file descriptor",
  "exit code",
  "stack trace",
];

/** Dotted, hyphenated and underscored compounds (sanitized into quoted phrases). */
const COMPOUNDS = [
  "chat-send",
  "sp_new",
  "P2.2",
  "my-app.config.ts",
  "docker-compose.yml",
  "node_modules",
  "e2e-tests",
  "v1.4.4",
];

/** Chinese words (2–4 characters), most frequent first. */
const CHINESE = (
  "我们 你 这个 问题 可以 需要 数据 记忆 系统 测试 性能 数据库 服务器 配置 部署 " +
  "内存 断裂 会话 搜索 索引 模型 用户 消息 错误 日志 文件 目录 网络 连接 超时 " +
  "性能测试 内存泄漏 数据迁移 缓存失效 并发控制 负载均衡 版本发布 代码审查 " +
  "广西 桂林 漓江 北京 上海 深圳 今天 明天 昨天 已经 完成 开始 继续 修复 更新"
).split(" ");

/** Japanese words (kana and kanji). */
const JAPANESE = (
  "検索 負荷テスト データベース サーバー 設定 メモリ キャッシュ エラー ログ " +
  "ファイル ネットワーク 接続 タイムアウト テスト 修正 確認 お願いします ありがとう"
).split(" ");

/** Korean words. */
const KOREAN = (
  "검색 데이터베이스 서버 설정 메모리 캐시 오류 로그 파일 네트워크 연결 테스트 " +
  "수정 확인 감사합니다 성능 배포"
).split(" ");

/** Tool names of the agent. */
export const TOOLS = [
  "terminal",
  "read_file",
  "write_file",
  "search_files",
  "web_search",
  "browser_navigate",
  "memory",
  "todo",
  "patch",
  "execute_code",
];

function englishSentence(rnd: Random): string {
  const words: string[] = [];
  const n = 6 + Math.floor(rnd() * 14);
  for (let i = 0; i < n; i++) {
    const r = rnd();
    if (r < 0.04) words.push(pick(rnd, PHRASES));
    else if (r < 0.055) words.push(pick(rnd, COMPOUNDS));
    else words.push(zipf(rnd, ENGLISH));
  }
  const text = words.join(" ");
  return text[0].toUpperCase() + text.slice(1) + pick(rnd, [".", ".", ".", "?", "!", ":"]);
}

function cjkSentence(rnd: Random): string {
  const r = rnd();
  const [list, joiner, stop] = r < 0.6
    ? [CHINESE, "", "。"]
    : r < 0.8
    ? [JAPANESE, "", "。"]
    : [KOREAN, " ", "."];
  const words: string[] = [];
  const n = 4 + Math.floor(rnd() * 10);
  for (let i = 0; i < n; i++) {
    // Some English technical words inside CJK prose, as real chats have.
    words.push(rnd() < 0.12 ? ` ${zipf(rnd, ENGLISH)} ` : zipf(rnd, list));
  }
  return words.join(joiner).trim() + stop;
}

function codeBlock(rnd: Random): string {
  const name = zipf(rnd, ENGLISH.slice(40));
  return "```ts\n" +
    `export function ${name}(input: string): number {\n` +
    `  const ${pick(rnd, ENGLISH.slice(40))} = input.split("${pick(rnd, COMPOUNDS)}");\n` +
    `  return ${name}.length; // ${englishSentence(rnd)}\n}\n` + "```";
}

/**
 * A message text of about `length` characters (never below 20).
 *
 * @param rnd The generator.
 * @param length Target length in characters.
 * @param cjk True for Chinese/Japanese/Korean prose.
 * @returns The text.
 */
export function prose(rnd: Random, length: number, cjk: boolean): string {
  let text = "";
  // CJK characters carry more per character: aim for a third of the length.
  const target = Math.max(20, cjk ? Math.ceil(length / 2) : length);
  while (text.length < target) {
    const r = rnd();
    let part: string;
    if (cjk) part = r < 0.9 ? cjkSentence(rnd) : englishSentence(rnd);
    else if (r < 0.06 && target > 300) part = codeBlock(rnd);
    else part = englishSentence(rnd);
    text += (text === "" ? "" : rnd() < 0.15 ? "\n\n" : " ") + part;
  }
  return text.length > target + 200 ? text.slice(0, target + 200) : text;
}

/**
 * The arguments of one tool call, as JSON text (what the model sends).
 *
 * @param rnd The generator.
 * @param tool The tool name.
 * @returns JSON text.
 */
export function toolArguments(rnd: Random, tool: string): string {
  switch (tool) {
    case "terminal":
      return JSON.stringify({
        command: `${pick(rnd, ["docker", "git", "npm", "deno", "python"])} ${
          zipf(rnd, ENGLISH.slice(40))
        } --${pick(rnd, COMPOUNDS)}`,
      });
    case "read_file":
    case "write_file":
    case "patch":
      return JSON.stringify({
        path: `src/${zipf(rnd, ENGLISH.slice(40))}/${pick(rnd, COMPOUNDS)}`,
        ...(tool === "read_file" ? {} : { content: englishSentence(rnd) }),
      });
    default:
      return JSON.stringify({ query: englishSentence(rnd) });
  }
}
