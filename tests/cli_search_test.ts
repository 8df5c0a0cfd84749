import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { copyFixture, tempDbPath } from "./_helpers.ts";
import { displaySnippet, showWindowCuts } from "../lib/render/excerpt.ts";
import type { SearchHit } from "../lib/core/types.ts";

/** A search hit with `snippet`, as the store returns one (an assistant's, unless `more` says). */
function hitOf(snippet: string, more: Partial<SearchHit> = {}): SearchHit {
  return {
    id: 1,
    session_id: "s",
    role: "assistant",
    snippet,
    timestamp: 1,
    tool_name: null,
    source: "cli",
    model: null,
    session_started: 0,
    context: [],
    ...more,
  };
}

interface Hit {
  timestamp: number;
  session_id: string;
  source: string;
  role: string;
}

describe("search", () => {
  test("search prints numbered hits with title, id, source, the match and its neighbours", async () => {
    const run = await runCli(["--db", v11Copy(), "search", "haiku"]);
    assert.equal(run.code, 0);
    const lines = run.out.trimEnd().split("\n");
    assert.match(lines[0], /^1\. 20260424_093245_2e4f65 · cli · 2026-04-24 \d\d:\d\d \(5d ago\)$/);
    assert.equal(lines[1], "   ▶ user: Write a >>>haiku<<< about docker.");
    assert.equal(
      lines[2],
      "     assistant: Whale carries the load / every layer a promise / pull, run, and forget",
    );
  });

  test("search shows session titles, and the hits of a CJK query", async () => {
    const run = await runCli(["--db", v11Copy(), "search", "记忆断裂", "--limit", "2"]);
    assert.equal(run.code, 0);
    assert.match(run.out, new RegExp(`^1\\. 记忆断裂排查 · ${V11.telegramZh} · telegram · `));
    assert.match(run.out, />>>记忆断裂<<</);
    assert.match(run.out, /\n\(2 hits\)\n$/, "exactly 2 hits: not 'first 2'");
  });

  test("search highlights matches in colour instead of markers on a terminal", async () => {
    const run = await runCli(["--db", v11Copy(), "search", "haiku"], { isTerminal: true });
    assert.ok(run.out.includes("\x1b[1m\x1b[33mhaiku\x1b[39m\x1b[22m"));
    assert.ok(!run.out.includes(">>>"));
    const short = await runCli(["--db", v11Copy(), "search", "记忆"], { isTerminal: true });
    assert.ok(
      short.out.includes("\x1b[1m\x1b[33m记忆\x1b[39m\x1b[22m"),
      "LIKE hits are highlighted too",
    );
  });

  test("search --json prints what searchMessages returns, with the filters passed on", async () => {
    const path = v11Copy();
    const args = [
      "docker",
      "--source",
      "telegram",
      "--source",
      "cli",
      "--role",
      "assistant",
      "--limit",
      "4",
      "--offset",
      "1",
    ];
    const run = await runCli(["--db", path, "--json", "search", ...args]);
    const hits = JSON.parse(run.out) as Hit[];
    const expected = await withDb(path, (db) =>
      db.searchMessages("docker", {
        sourceFilter: ["telegram", "cli"],
        roleFilter: ["assistant"],
        limit: 4,
        offset: 1,
      }));
    assert.deepEqual(hits, JSON.parse(JSON.stringify(expected)));
    assert.ok(
      hits.length > 0 &&
        hits.every((h) => ["telegram", "cli"].includes(h.source) && h.role === "assistant"),
    );
  });

  test("search --sort newest|oldest orders by time, then rank, as searchMessages does", async () => {
    const path = v11Copy();
    for (const sort of ["newest", "oldest", "rank"] as const) {
      const run = await runCli(["--db", path, "--json", "search", "docker", "--sort", sort]);
      const hits = JSON.parse(run.out) as Hit[];
      const expected = await withDb(path, (db) => db.searchMessages("docker", { sort }));
      assert.deepEqual(hits, JSON.parse(JSON.stringify(expected)), sort);
      if (sort === "rank") continue;
      const times = hits.map((h) => h.timestamp);
      const ordered = [...times].sort((a, b) => sort === "newest" ? b - a : a - b);
      assert.ok(hits.length > 1 && times.every((t, i) => t === ordered[i]), `${sort}: ${times}`);
    }
    const bad = await runCli(["--db", path, "search", "docker", "--sort", "latest"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--sort must be one of rank, newest, oldest, got "latest"/);
  });

  test("search --exclude-source leaves those sources out", async () => {
    const run = await runCli([
      "--db",
      v11Copy(),
      "--json",
      "search",
      "docker",
      "--exclude-source",
      "cli",
      "--limit",
      "50",
    ]);
    const hits = JSON.parse(run.out) as Hit[];
    assert.ok(hits.length > 0);
    assert.ok(hits.every((h) => h.source !== "cli"));
  });

  test("search joins several words and never fails on hostile text", async () => {
    const path = v11Copy();
    const words = await runCli(["--db", path, "--json", "search", "docker", "compose"]);
    const joined = await withDb(path, (db) => db.searchMessages("docker compose"));
    assert.equal(JSON.parse(words.out).length, joined.length);
    for (const query of ['"unbalanced', "***", "AND", "foo:bar", "(", "🚀"]) {
      const run = await runCli(["--db", path, "search", query]);
      assert.equal(run.code, 0, `${query}: ${run.err}`);
    }
    const none = await runCli(["--db", path, "search", "zzqqxx"]);
    assert.equal(none.out, 'No messages match "zzqqxx".\n');
  });

  test("search marks substring (CJK, emoji) matches with >>>…<<< in piped output", async () => {
    const path = v11Copy();
    const cjk = await runCli(["--db", path, "search", "记忆", "--limit", "3"]);
    assert.match(cjk.out, /▶ assistant: .*>>>记忆<<</);
    const emoji = await runCli(["--db", path, "search", "🚀", "--limit", "1"]);
    assert.match(emoji.out, /▶ .*>>>🚀<<</);
    const mixed = await runCli(["--db", path, "search", "docker", "数据"]);
    assert.match(mixed.out, />>>docker<<<.*>>>数据<<</);
  });

  test("search marks the words of hits read by substring where an index is missing or stale", async () => {
    // A v6 file has no trigram index: a CJK word of three or more characters is read by substring.
    const old = await runCli([
      "--db",
      copyFixture("hermes-v6.db"),
      "search",
      "记忆断裂",
      "--limit",
      "1",
    ]);
    assert.equal(old.code, 0, old.err);
    assert.match(old.out, /▶ assistant: >>>记忆断裂<<</);
    // A words index marked stale: its messages are read by substring, said on stderr.
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessage("s", { role: "user", content: "prune the docker images" });
      db.setMeta("fts_stale:messages_fts", "test");
    });
    const stale = await runCli(["--db", path, "search", "docker"]);
    assert.equal(stale.code, 0, stale.err);
    assert.match(stale.err, /stale/);
    assert.match(stale.out, /▶ user: prune the >>>docker<<< images/);
  });

  test("a substring hit found only in its tool call shows the call, not an empty ▶ line", async () => {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessages("s", [
        { role: "user", content: "Is the rollout done?" },
        {
          role: "assistant",
          content: null,
          toolCalls: [{
            id: "call_1",
            type: "function",
            function: { name: "terminal", arguments: '{"command": "kubectl rollout status"}' },
          }],
        },
      ]);
      db.setMeta("fts_stale:messages_fts", "test");
    });
    const run = await runCli(["--db", path, "search", "kubectl"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, /stale/);
    const hit = run.out.split("\n").find((line) => line.startsWith("   ▶ "));
    assert.match(hit ?? "", /^ {3}▶ assistant: .*>>>kubectl<<< rollout status/, run.out);
  });

  test("search requires every word of a mixed CJK and Latin query", async () => {
    const path = v11Copy();
    for (const query of ["docker 数据", "数据 AND docker"]) {
      const run = await runCli(["--db", path, "--json", "search", query, "--limit", "100"]);
      const hits = JSON.parse(run.out) as { id: number }[];
      assert.equal(hits.length, 2, query);
    }
  });

  test("search refuses a query that starts with NOT instead of finding that word", async () => {
    for (const query of ["NOT docker", "not 数据库"]) {
      const run = await runCli(["--db", v11Copy(), "search", query]);
      assert.equal(run.code, 2, query);
      assert.equal(run.out, "");
      assert.match(run.err, /^hermes-state search: a query cannot start with NOT .*\nTry: /);
    }
    // Outside CJK text FTS5 reads a lower-case "not" as a word: an error message is searched for.
    const words = await runCli(["--db", v11Copy(), "search", "not working"]);
    assert.equal(words.code, 0, words.err);
  });

  test("search refuses an empty or blank query as a usage error (it answered 'No messages match')", async () => {
    for (const words of [[""], ["   "], ["", " "]]) {
      const run = await runCli(["--db", v11Copy(), "--json", "search", ...words]);
      assert.equal(run.code, 2, JSON.stringify(words));
      assert.equal(run.out, "");
      assert.match(run.err, /^hermes-state search: the query is empty \(".*"\): .*\nTry: /);
    }
    // Text the engine cannot read is still searched, and finds nothing: exit 0.
    const odd = await runCli(["--db", v11Copy(), "search", "***"]);
    assert.equal(odd.code, 0, odd.err);
  });

  test("search gives a usage error for values outside an option's set", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--role", "bogus"], /--role must be one of user, assistant, tool, system, got "bogus"/],
      [["--source="], /option --source needs a value, got ""/],
      [["--limit", "-1"], /--limit must be a whole number of at least 1, got "-1"/],
      [["--limit", "0"], /--limit must be a whole number of at least 1, got "0"/],
      [["--since", "last tuesday"], /--since must be a date/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(["--db", v11Copy(), "search", "docker", ...args]);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.err, message);
    }
  });

  test("search counts its hits: no 'first N' when there are exactly N, and 1 hit", async () => {
    const path = v11Copy();
    const all = JSON.parse((await runCli(["--db", path, "--json", "search", "记忆断裂"])).out);
    const exact = await runCli(["--db", path, "search", "记忆断裂", "--limit", String(all.length)]);
    assert.ok(exact.out.endsWith(`\n(${all.length} hits)\n`), exact.out.slice(-80));
    const one = await runCli(["--db", path, "search", "docker", "--limit", "1"]);
    assert.ok(one.out.endsWith("\n(first 1 hit; --limit and --offset show more)\n"));
  });

  test("search past the last hit says so, instead of 'No messages match'", async () => {
    const path = v11Copy();
    const all = JSON.parse(
      (await runCli(["--db", path, "--json", "search", "docker", "--limit", "1000"])).out,
    );
    assert.ok(all.length > 20 && all.length < 1000);
    for (const offset of [all.length, all.length + 100, Number.MAX_SAFE_INTEGER]) {
      const past = await runCli(["--db", path, "search", "docker", "--offset", String(offset)]);
      assert.equal(past.code, 0);
      // The count there is, not the offset asked for.
      assert.equal(past.out, `No hits for "docker" past the first ${all.length} hits.\n`);
    }
  });

  test("search --limit beyond any store's size shows every hit (it failed as an internal error)", async () => {
    const path = v11Copy();
    const all = JSON.parse(
      (await runCli(["--db", path, "--json", "search", "docker", "--limit", "1000"])).out,
    );
    for (const query of ["docker", "数据"]) {
      for (const sort of ["rank", "newest"]) {
        const argv = ["--db", path, "search", query, "--sort", sort];
        const run = await runCli([...argv, "--limit", String(Number.MAX_SAFE_INTEGER)]);
        assert.equal(run.code, 0, run.err);
        if (query === "docker") {
          assert.match(run.out, new RegExp(`\\n\\(${all.length} hits\\)\\n$`));
        }
      }
    }
  });

  test("search --session, --since and --until narrow the hits", async () => {
    const path = v11Copy();
    const json = async (...args: string[]) =>
      JSON.parse(
        (await runCli(["--db", path, "--json", "search", "docker", "--limit", "100", ...args])).out,
      ) as {
        session_id: string;
        timestamp: number;
      }[];
    const all = await json();
    const sessionId = all[0].session_id;
    const mine = await json("--session", sessionId.slice(0, 17));
    assert.ok(mine.length > 0 && mine.length < all.length);
    assert.ok(mine.every((h) => h.session_id === sessionId));
    const times = all.map((h) => h.timestamp).sort((a, b) => a - b);
    const middle = times[Math.floor(times.length / 2)];
    const since = await json("--since", String(Math.floor(middle)));
    const until = await json("--until", String(Math.floor(middle)));
    assert.ok(since.length > 0 && until.length > 0);
    assert.equal(since.length + until.length, all.length);
    assert.ok(since.every((h) => h.timestamp >= Math.floor(middle)));
    assert.ok(until.every((h) => h.timestamp < Math.floor(middle)));
  });

  test("a substring hit's window shows with … where its content goes on, not cut mid-word", async () => {
    const path = tempDbPath();
    const long = `Plan for the rollout: canary first, then half, then all of the fleet, ` +
      `with 部署 images pinned and the dashboards watched, ${
        "and then some more words ".repeat(6)
      }`;
    await withDb(path, (db) => {
      db.createSession("s1", "cli");
      db.appendMessage("s1", { role: "user", content: long });
      db.appendMessage("s1", { role: "user", content: "部署 is short" });
    });
    const run = await runCli(["--db", path, "search", "部署"]);
    assert.equal(run.code, 0);
    const hits = run.out.split("\n").filter((line) => line.startsWith("   ▶ "));
    assert.equal(hits.length, 2, run.out);
    const cut = hits.find((line) => line.includes("fleet"));
    assert.match(
      cut ?? "",
      /^ {3}▶ user: … ?then half/,
      "the window starts 40 characters before the word",
    );
    assert.match(cut ?? "", /…$/, "and ends before the content does");
    assert.ok(!cut?.includes("canary"), cut);
    assert.equal(hits.find((line) => line.includes("short")), "   ▶ user: >>>部署<<< is short");
  });

  test("showWindowCuts() marks only a bare window's cut ends, never FTS5's own snippets", () => {
    const content = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const window = [...content].slice(10, 130).join("");
    assert.equal(showWindowCuts(window, content), `…${window}…`);
    assert.equal(showWindowCuts(content.slice(0, 120), content), `${content.slice(0, 120)}…`);
    assert.equal(showWindowCuts("short and whole", "short and whole"), "short and whole");
    assert.equal(showWindowCuts("...a >>>docker<<< b...", content), "...a >>>docker<<< b...");
    assert.equal(showWindowCuts("a window", undefined), "a window", "no context: as it is");
    const shorter = content.slice(0, 150); // whole in the context: its end is known
    const tail = shorter.slice(-120);
    assert.equal(showWindowCuts(tail, shorter), `…${tail}`, "a window at the end of the content");
  });

  test("a hit in a command line shows the tool call as → name arguments, not its JSON", async () => {
    const run = await runCli(["--db", v11Copy(), "search", "docker", "--limit", "20"]);
    assert.equal(run.code, 0, run.err);
    const hits = run.out.split("\n").filter((line) => line.startsWith("   ▶ "));
    assert.ok(
      hits.includes(
        "   ▶ assistant: Let me look at how much space >>>docker<<< is using first. " +
          '→ terminal {"command": ">>>docker<<< system df"}',
      ),
      hits.join("\n"),
    );
    assert.ok(!hits.some((line) => line.includes('"type": "function"')), "no call JSON");
    assert.ok(
      hits.includes(
        '   ▶ tool (web_search): {"results": [{"title": ">>>Docker<<< Swarm mode", ' +
          '"snippet": "Swarm mode is still supported in >>>Docker<<< Engine."}]}',
      ),
      "a tool result without the tool name the index appends to it",
    );
  });

  test("a neighbour without text (an assistant that only called tools) says so", async () => {
    const path = await buildDb((db) => {
      db.createSession("s1", "cron");
      db.appendMessages("s1", [
        { role: "user", content: "Nightly: check disk usage on the docker host." },
        {
          role: "assistant",
          content: "",
          toolCalls: [{
            id: "call_1",
            type: "function",
            function: { name: "terminal", arguments: '{"command": "df -h"}' },
          }],
        },
      ]);
    });
    const run = await runCli(["--db", path, "search", "nightly"]);
    assert.equal(run.code, 0, run.err);
    const lines = run.out.trimEnd().split("\n");
    assert.equal(lines[1], "   ▶ user: >>>Nightly<<<: check disk usage on the docker host.");
    assert.equal(lines[2], "     assistant: (no text)");
    // Text that starts past the context's first 200 characters is text all the same.
    const late = await buildDb((db) => {
      db.createSession("s2", "cron");
      db.appendMessages("s2", [
        { role: "user", content: "Nightly again." },
        { role: "tool", toolName: "terminal", content: "\n".repeat(250) + "ERROR: disk full" },
      ]);
    });
    const again = await runCli(["--db", late, "search", "nightly"]);
    assert.equal(again.out.split("\n")[2], "     tool: ");
  });

  test("displaySnippet() keeps 150 characters of a long stretch next to a match (a minified line), not a screen of it", () => {
    const hit = (snippet: string) => hitOf(snippet, { role: "tool" });
    const blob = "QUJD".repeat(60_000); // one token of 240,000 characters
    assert.equal(
      displaySnippet(hit(`${blob} >>>needle<<< ${blob}`)),
      `…${blob.slice(-149)} >>>needle<<< ${blob.slice(0, 149)}…`,
    );
    assert.equal(
      displaySnippet(hit(`>>>a<<< ${blob} >>>b<<<`)),
      `>>>a<<< ${blob.slice(0, 149)}…${blob.slice(-149)} >>>b<<<`,
    );
    // Without a match (a substring window elsewhere), its start; a short snippet as it is.
    assert.equal(displaySnippet(hit(blob)), `${blob.slice(0, 400)}…`);
    const usual = `${"word ".repeat(79)}>>>x<<< ${"word ".repeat(79)}`;
    assert.equal(displaySnippet(hit(usual)), usual);
  });

  test("displaySnippet() rewrites each call of either JSON spelling, keeps marks, and nothing else", () => {
    const hit = hitOf;
    const python = (name: string, args: string) =>
      `{"id": "call_1", "type": "function", "function": {"name": "${name}", "arguments": ${
        JSON.stringify(args)
      }}}`;
    // Two calls as Python writes them, the second name marked; unicode and newline escapes.
    const two = `Reading.  [${python("read_file", '{"path": "a.txt"}')}, ${
      python(">>>grep<<<", '{"pattern": "caf\u00e9\\n"}')
    }]`;
    assert.equal(
      displaySnippet(hit(two)),
      'Reading. → read_file {"path": "a.txt"} → >>>grep<<< {"pattern": "caf\u00e9\\n"}',
    );
    // Compact JSON, as an older file holds it, and a call cut by the snippet's window.
    const compact = '{"function":{"name":"web_search","arguments":"{\\"q\\":\\">>>sqlite<<<\\"}"}}';
    assert.equal(displaySnippet(hit(compact)), '→ web_search {"q":">>>sqlite<<<"}');
    const cut = `[${python("terminal", '{"command": "docker compose up -d --build"}')}]`.slice(
      0,
      -20,
    );
    assert.equal(displaySnippet(hit(`${cut}...`)), '→ terminal {"command": "docker compose ...');
    // Python writes non-ASCII text as \u escapes (json.dumps): shown as the characters.
    const ascii =
      '{"function": {"name": "terminal", "arguments": "{\\"command\\": \\"echo \\u4f60\\u597d\\"}"}}';
    assert.equal(displaySnippet(hit(ascii)), '→ terminal {"command": "echo 你好"}');
    // Gemini's calls carry extra_content after the function; other keys may be null.
    const gemini = '[{"id": "c1", "type": "function", "function": {"name": "terminal", ' +
      '"arguments": "{\\"command\\": \\">>>docker<<< ps\\"}"}, "extra_content": {"google": ' +
      '{"thought_signature": "a}b"}}}]';
    assert.equal(displaySnippet(hit(gemini)), '→ terminal {"command": ">>>docker<<< ps"}');
    const nulls = '[{"id": "c1", "response_item_id": null, "type": "function", "function": ' +
      '{"name": "grep", "arguments": "{}"}}]';
    assert.equal(displaySnippet(hit(nulls)), "→ grep {}");
    // A match in what the rewrite would leave out (the call's id) keeps the call as it is.
    const inId = python("terminal", "{}").replace('"call_1"', '">>>call_1<<<"');
    assert.equal(displaySnippet(hit(inId)), inId);
    // Only an assistant's message holds calls: a user's pasted JSON stays as typed.
    const pasted = `see ${python("f", "a")}`;
    assert.equal(displaySnippet(hit(pasted, { role: "user" })), pasted);
    // Text that only looks like JSON stays as it is; so does a snippet without calls.
    const plain = 'config: {"name": "x", "arguments": 3} and "name": "y"';
    assert.equal(displaySnippet(hit(plain)), plain);
    assert.equal(displaySnippet(hit("no >>>calls<<< here")), "no >>>calls<<< here");
    assert.equal(displaySnippet(hit("x", { snippet: null })), null);
    // A tool's result: the tool name the index appends goes, unless the match is in it.
    const tool = { role: "tool", tool_name: "terminal" };
    assert.equal(
      displaySnippet(hit('{"output": ">>>ok<<<"} terminal ', tool)),
      '{"output": ">>>ok<<<"}',
    );
    // A substring match's window is content: its last word is not the appended tool name.
    assert.equal(
      displaySnippet(hit("笔记已写入 memory", { ...tool, tool_name: "memory" })),
      "笔记已写入 memory",
    );
    assert.equal(
      displaySnippet(hit('{"output": "ok"} >>>terminal<<< ', tool)),
      '{"output": "ok"} >>>terminal<<< ',
    );
  });
});
