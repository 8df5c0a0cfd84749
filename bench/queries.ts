/**
 * The fixed search queries of the benchmark, per kind, with what the raw
 * floor sends to SQLite for each (the sanitized MATCH text, or the LIKE
 * tokens), worked out by hand from the rules of SPEC §5.
 *
 * @module
 */

/** The kinds of query the benchmark reports separately. */
export type QueryKind =
  | "english word"
  | "phrase"
  | "prefix"
  | "compound"
  | "boolean"
  | "CJK 2-char"
  | "CJK ≥3-char";

/** One benchmark query. */
export type QuerySpec =
  & { readonly kind: QueryKind; readonly text: string }
  & (
    | { readonly path: "fts" | "trigram"; readonly match: string }
    | { readonly path: "like"; readonly tokens: readonly string[] }
  );

/** Every query, grouped by kind in report order. */
export const QUERIES: readonly QuerySpec[] = [
  { kind: "english word", text: "docker", path: "fts", match: "docker" },
  { kind: "english word", text: "database", path: "fts", match: "database" },
  { kind: "english word", text: "kernel", path: "fts", match: "kernel" },
  { kind: "english word", text: "reminder", path: "fts", match: "reminder" },
  { kind: "phrase", text: '"connection pool"', path: "fts", match: '"connection pool"' },
  { kind: "phrase", text: '"rate limit"', path: "fts", match: '"rate limit"' },
  { kind: "phrase", text: '"stack trace"', path: "fts", match: '"stack trace"' },
  { kind: "prefix", text: "deplo*", path: "fts", match: "deplo*" },
  { kind: "prefix", text: "conf*", path: "fts", match: "conf*" },
  { kind: "prefix", text: "auth*", path: "fts", match: "auth*" },
  { kind: "compound", text: "chat-send", path: "fts", match: '"chat-send"' },
  { kind: "compound", text: "sp_new", path: "fts", match: '"sp_new"' },
  { kind: "compound", text: "P2.2", path: "fts", match: '"P2.2"' },
  { kind: "compound", text: "docker-compose.yml", path: "fts", match: '"docker-compose.yml"' },
  { kind: "boolean", text: "docker AND timeout", path: "fts", match: "docker AND timeout" },
  { kind: "boolean", text: "python OR rust", path: "fts", match: "python OR rust" },
  { kind: "boolean", text: "database NOT sqlite", path: "fts", match: "database NOT sqlite" },
  { kind: "CJK 2-char", text: "记忆", path: "like", tokens: ["记忆"] },
  { kind: "CJK 2-char", text: "断裂", path: "like", tokens: ["断裂"] },
  { kind: "CJK 2-char", text: "検索", path: "like", tokens: ["検索"] },
  { kind: "CJK 2-char", text: "검색", path: "like", tokens: ["검색"] },
  { kind: "CJK ≥3-char", text: "数据库", path: "trigram", match: '"数据库"' },
  { kind: "CJK ≥3-char", text: "性能测试", path: "trigram", match: '"性能测试"' },
  { kind: "CJK ≥3-char", text: "負荷テスト", path: "trigram", match: '"負荷テスト"' },
  { kind: "CJK ≥3-char", text: "데이터베이스", path: "trigram", match: '"데이터베이스"' },
];
