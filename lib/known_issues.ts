/**
 * Integrity reports that are a known, harmless condition rather than
 * damage, so that `info` can name the condition and its fix instead of
 * calling the file corrupt.
 *
 * @module
 */
import type { Store } from "./store.ts";

/** A known condition found by the integrity check. */
export interface KnownIssue {
  /** A stable name: `trigram_nul_prefix`. */
  code: "trigram_nul_prefix";
  /** What it is, in one sentence. */
  message: string;
  /** The command that repairs it. */
  fix: string;
  /** The lines of the check it explains. */
  lines: string[];
}

/** What FTS5's check says about the trigram index written by SQLite 3.40 around NUL characters. */
const TRIGRAM_LINE = "malformed inverted index for FTS5 table main.messages_fts_trigram";

/** Messages whose indexed text holds U+0000 (multimodal content, a tool result with NUL). */
const NUL_MESSAGES_SQL = `SELECT COUNT(*) AS n FROM messages WHERE
  instr(CAST(content AS BLOB), X'00') > 0 OR instr(CAST(tool_name AS BLOB), X'00') > 0
  OR instr(CAST(tool_calls AS BLOB), X'00') > 0`;

/**
 * Splits the lines of `PRAGMA quick_check` into known conditions and the
 * rest. The one known today: SQLite up to 3.40 indexed a text holding
 * U+0000 only up to that character in the trigram table, and a newer
 * SQLite's check then calls that index malformed (README, "Known
 * limitations"); search is unaffected, and rebuilding the index repairs it.
 *
 * @param store The open store.
 * @param lines The check's lines (not `["ok"]`).
 * @returns The known issues, and the lines they do not explain.
 */
export function explainIntegrity(
  store: Store,
  lines: readonly string[],
): { issues: KnownIssue[]; unexplained: string[] } {
  const trigram = lines.filter((line) => line === TRIGRAM_LINE);
  const unexplained = lines.filter((line) => line !== TRIGRAM_LINE);
  if (trigram.length === 0) return { issues: [], unexplained };
  const withNul = Number(store.statement(NUL_MESSAGES_SQL).get()?.n ?? 0);
  if (withNul === 0) return { issues: [], unexplained: [...lines] };
  return {
    issues: [{
      code: "trigram_nul_prefix",
      message: `the trigram index was written by SQLite 3.40 or older, which indexed ${withNul} ` +
        `message${withNul === 1 ? "" : "s"} holding a NUL character only up to it; ` +
        "search is unaffected",
      fix: "hermes-state doctor --fix",
      lines: trigram,
    }],
    unexplained,
  };
}
