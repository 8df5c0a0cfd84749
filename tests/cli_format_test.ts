import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  alignColumns,
  formatBytes,
  formatCost,
  formatCount,
  formatDate,
  formatUtc,
  oneLine,
  plural,
  relativeTime,
} from "../lib/render/format.ts";
import { colourWanted } from "../lib/cli/style.ts";
import { createStyle } from "../lib/render/style.ts";
import { toolCallViews, visibleControls } from "../lib/render/transcript.ts";
import { contentText } from "../lib/core/content.ts";
import { fenced, renderMarkdown } from "../lib/render/markdown.ts";
import { renderSessionHtml } from "../lib/web/html_transcript.ts";
import type { SessionExport } from "../lib/core/types.ts";
import { markWords, showMarks } from "../lib/render/highlight.ts";
import { parseTime } from "../lib/cli/time_option.ts";
import { displayWidth, padEnd, truncate } from "../lib/render/width.ts";

describe("format helpers", () => {
  test("displayWidth() counts CJK and emoji as two columns and colour codes as none", () => {
    assert.equal(displayWidth("abc"), 3);
    assert.equal(displayWidth("数据库"), 6);
    assert.equal(displayWidth("週次レポート"), 12);
    assert.equal(displayWidth("회의록"), 6);
    assert.equal(displayWidth("🚀x"), 3);
    assert.equal(displayWidth("\x1b[1mab\x1b[22m"), 2);
    assert.equal(displayWidth("e\u0301"), 1);
  });

  test("truncate() cuts by columns and marks the cut; padEnd() pads by columns", () => {
    assert.equal(truncate("abcdef", 6), "abcdef");
    assert.equal(truncate("abcdefg", 6), "abcde…");
    assert.equal(truncate("数据库迁移计划", 7), "数据库…");
    assert.equal(padEnd("数据", 6), "数据  ");
    assert.equal(padEnd("toolong", 3), "toolong");
  });

  test("relativeTime() follows hermes sessions list's steps", () => {
    const now = 1_800_000_000;
    assert.equal(relativeTime(null, now), "?");
    assert.equal(relativeTime(0, now), "?");
    assert.equal(relativeTime(now + 500, now), "just now");
    assert.equal(relativeTime(now - 59, now), "just now");
    assert.equal(relativeTime(now - 60, now), "1m ago");
    assert.equal(relativeTime(now - 3599, now), "59m ago");
    assert.equal(relativeTime(now - 3600, now), "1h ago");
    assert.equal(relativeTime(now - 86399, now), "23h ago");
    assert.equal(relativeTime(now - 86400, now), "yesterday");
    assert.equal(relativeTime(now - 172800, now), "2d ago");
    assert.equal(relativeTime(now - 604799, now), "6d ago");
    assert.equal(relativeTime(now - 604800, now), formatDate(now - 604800));
    assert.match(formatDate(now), /^\d{4}-\d\d-\d\d$/);
  });

  test("formatCount(), formatCost() and formatBytes() render numbers for people", () => {
    assert.equal(formatCount(0), "0");
    assert.equal(formatCount(999), "999");
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(-1234), "-1,234");
    assert.equal(formatCost(null), "—");
    assert.equal(formatCost(0), "$0.00");
    assert.equal(formatCost(0.0880275), "$0.09");
    assert.equal(formatCost(0.29), "$0.29");
    assert.equal(formatCost(1.77), "$1.77");
    assert.equal(formatCost(0.0042), "$0.0042");
    assert.equal(formatCost(3.9264851999999997), "$3.93");
    assert.equal(formatCost(1234.5), "$1,234.50");
    assert.equal(formatCost(12.5), "$12.50");
    // Below what four decimals show: not "$0.0000", which hid it as "$0.00" would.
    assert.equal(formatCost(0.0000042), "<$0.0001");
    assert.equal(formatCost(1e-9), "<$0.0001");
    assert.equal(formatCost(0.00005), "$0.0001");
    assert.equal(formatBytes(1048575), "1.0 MiB");
    assert.equal(formatBytes(1023 * 1024), "1023.0 KiB");
    assert.equal(plural(1, "hit"), "1 hit");
    assert.equal(plural(4, "hit"), "4 hits");
    assert.equal(plural(1, "day"), "1 day");
    assert.equal(plural(1200, "session"), "1,200 sessions");
    assert.equal(formatBytes(0), "0 B");
    assert.equal(formatBytes(1023), "1023 B");
    assert.equal(formatBytes(1536), "1.5 KiB");
    assert.equal(formatBytes(5 * 1024 * 1024), "5.0 MiB");
  });

  test("oneLine() and alignColumns() lay text out on lines and columns", () => {
    assert.equal(oneLine("  a\n\tb \r\n c  "), "a b c");
    assert.deepEqual(alignColumns([["id", "记忆", "x"], ["longer", "a", "y"]]), [
      "id      记忆  x",
      "longer  a     y",
    ]);
  });
});

describe("style", () => {
  test("colourWanted() is true only on a terminal without NO_COLOR or TERM=dumb", () => {
    const env = (vars: Record<string, string>) => (name: string) => vars[name];
    assert.equal(colourWanted({ isTerminal: false, env: env({}) }), false);
    assert.equal(colourWanted({ isTerminal: true, env: env({}) }), true);
    assert.equal(colourWanted({ isTerminal: true, env: env({ NO_COLOR: "1" }) }), false);
    assert.equal(colourWanted({ isTerminal: true, env: env({ NO_COLOR: "" }) }), true);
    assert.equal(colourWanted({ isTerminal: true, env: env({ TERM: "dumb" }) }), false);
  });

  test("createStyle() decorates only when enabled", () => {
    assert.equal(createStyle(false).highlight("x"), "x");
    assert.equal(createStyle(true).red("x"), "\x1b[31mx\x1b[39m");
  });
});

describe("transcript helpers", () => {
  test("visibleControls() shows control characters as symbols but keeps newlines and tabs", () => {
    assert.equal(visibleControls("a\u0000b\u001b[31m\n\tc\u007f"), "a␀b␛[31m\n\tc␡");
  });

  test("contentText() in transcript rendering joins text parts and marks images", () => {
    const transcript = { parts: "transcript" } as const;
    assert.equal(contentText(null, transcript), "");
    assert.equal(contentText("plain", transcript), "plain");
    assert.equal(
      contentText([
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      ], transcript),
      "look\n[image_url: data:image/png;base64,AAAA]",
    );
    assert.equal(contentText({ type: "input_audio" }, transcript), "[input_audio]");
    assert.equal(
      contentText(
        [{ type: "image_url", image_url: `https://e.org/${"x".repeat(80)}` }],
        transcript,
      ),
      `[image_url: https://e.org/${"x".repeat(45)}…]`,
    );
  });

  test("toolCallViews() reads OpenAI tool calls and keeps non-JSON arguments raw", () => {
    assert.deepEqual(
      toolCallViews([
        {
          id: "1",
          type: "function",
          function: { name: "terminal", arguments: '{"command": "ls -la"}' },
        },
        { function: { name: "broken", arguments: "{not json" } },
        { function: { name: "obj", arguments: { a: "记" } } },
      ]),
      [
        { name: "terminal", args: '{"command":"ls -la"}' },
        { name: "broken", args: "{not json" },
        { name: "obj", args: '{"a":"记"}' },
      ],
    );
    assert.deepEqual(toolCallViews(null), []);
  });

  test("fenced() uses a fence longer than any backtick run inside", () => {
    assert.equal(fenced("x"), "```\nx\n```");
    assert.equal(fenced("a ```` b", "json"), "`````json\na ```` b\n`````");
  });
});

describe("highlight helpers", () => {
  test("markWords() marks substring matches outside FTS5's own markers, case-insensitively", () => {
    assert.equal(
      markWords("Docker 记忆 >>>docker<<<", ["记忆", "docker"]),
      ">>>Docker<<< >>>记忆<<< >>>docker<<<",
    );
    assert.equal(markWords("🚀 launch", ["🚀"]), ">>>🚀<<< launch");
    assert.equal(markWords("a.b", ["."]), "a>>>.<<<b", "words are literal, not patterns");
    assert.equal(markWords("plain", []), "plain");
  });

  test("showMarks() keeps markers without colour and colours them on a terminal", () => {
    assert.equal(showMarks("x >>>y<<<", createStyle(false)), "x >>>y<<<");
    assert.ok(!showMarks("x >>>y<<<", createStyle(true)).includes(">>>"));
  });
});

describe("time options", () => {
  test("parseTime() reads ages, Unix seconds, local dates and refuses the rest", () => {
    assert.equal(parseTime("30m", 10_000), 10_000 - 1800);
    assert.equal(parseTime("2w", 2_000_000), 2_000_000 - 2 * 604800);
    assert.equal(parseTime("90min", 10_000), 10_000 - 5400);
    assert.equal(parseTime("6mo", 20_000_000), 20_000_000 - 180 * 86400);
    assert.equal(parseTime("1y", 40_000_000), 40_000_000 - 365 * 86400);
    assert.equal(parseTime("1776675600", 0), 1776675600);
    assert.equal(parseTime("2026-04-20", 0), new Date(2026, 3, 20).getTime() / 1000);
    assert.equal(parseTime("2026-04-20 09:30", 0), new Date(2026, 3, 20, 9, 30).getTime() / 1000);
    for (const bad of ["2026-02-30", "2026-04-20 25:00", "yesterday", "-3d", "", "3mon", "1yr"]) {
      assert.equal(parseTime(bad, 0), undefined, bad);
    }
  });

  test("exports write a start in its last half millisecond on its own day, and a year past 9999 whole", () => {
    const session = (started_at: number) =>
      ({
        id: "s",
        source: "cli",
        title: null,
        started_at,
        ended_at: null,
        end_reason: null,
        message_count: 0,
        messages: [],
      }) as unknown as SessionExport;
    assert.equal(formatUtc(1775001599.9996), "2026-03-31 23:59:59 UTC");
    assert.equal(formatUtc("yesterday"), undefined);
    assert.match(renderMarkdown(session(1775001599.9996)), /2026-03-31 23:59:59 UTC/);
    assert.match(renderSessionHtml(session(1775001599.9996)), /2026-03-31 23:59:59 UTC/);
    // A time in milliseconds another writer stored: the HTML cut the seconds off.
    assert.match(renderSessionHtml(session(1775000000123)), /\+058217-07-06 11:35:23 UTC/);
  });
});
