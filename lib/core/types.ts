/**
 * The records hermes-state reads and writes. Records keep the column names of
 * the file (snake_case), so a JSON export is interchangeable with Python's;
 * options are camelCase.
 *
 * @module
 */

/** A JSON value as stored in the JSON columns. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Message content: text, or multimodal parts (a list or one object). */
export type MessageContent = string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A row of `sessions`. Columns a newer Hermes added come back too. A BLOB in a
 * text column (Python's sqlite3 stores `bytes` so) comes as its UTF-8 text,
 * each bad byte U+FFFD; only an export record keeps the exact bytes.
 *
 * The types are what Hermes writes. SQLite keeps any value in any column,
 * so a time or a count that a hand-edited file or another writer stored as
 * text (`'yesterday'`) comes back as that text, as Python's `sqlite3` gives
 * it: check `typeof` before doing arithmetic on a row of a file you did not
 * write. An integer beyond 2^53 comes rounded to a `number` here, and exact
 * (a `bigint`) only in an export record.
 */
export interface SessionRow {
  /** The session id. */
  id: string;
  /** Where it runs: `cli`, `telegram`, `discord`, `tool`, `cron`… */
  source: string;
  /** The platform user. */
  user_id: string | null;
  /** The model name. */
  model: string | null;
  /** Model settings as JSON text. */
  model_config: string | null;
  /** The assembled system prompt. */
  system_prompt: string | null;
  /** The session this one continues (compression, branch, delegate). */
  parent_session_id: string | null;
  /** Start, in Unix seconds. */
  started_at: number;
  /** End, in Unix seconds; `null` while live. */
  ended_at: number | null;
  /** Why it ended: `compression`, `branched`, `cli_close`… */
  end_reason: string | null;
  /** Messages appended. */
  message_count: number;
  /** Tool calls made. */
  tool_call_count: number;
  /** Prompt tokens. */
  input_tokens: number;
  /** Completion tokens. */
  output_tokens: number;
  /** Tokens read from the prompt cache. */
  cache_read_tokens: number;
  /** Tokens written to the prompt cache. */
  cache_write_tokens: number;
  /** Reasoning tokens. */
  reasoning_tokens: number;
  /** Who bills the calls (first non-null wins). */
  billing_provider: string | null;
  /** The API base URL (first non-null wins). */
  billing_base_url: string | null;
  /** The billing mode (first non-null wins). */
  billing_mode: string | null;
  /** Estimated cost in US dollars. */
  estimated_cost_usd: number | null;
  /** Actual cost in US dollars, once known. */
  actual_cost_usd: number | null;
  /** Cost status (latest non-null wins). */
  cost_status: string | null;
  /** Where the cost came from (latest non-null wins). */
  cost_source: string | null;
  /** Pricing table version (latest non-null wins). */
  pricing_version: string | null;
  /** The unique title, or `null`. */
  title: string | null;
  /** API calls made. */
  api_call_count: number;
  /** Columns a newer Hermes added, returned as they are. */
  [column: string]: unknown;
}

/**
 * A row of `messages` as `getMessages` returns it: `tool_calls` parsed, content decoded.
 * As in a {@linkcode SessionRow}, a time or a count stored as text comes back as that text.
 */
export interface MessageRow {
  /** The message id (AUTOINCREMENT). */
  id: number;
  /** Its session. */
  session_id: string;
  /** `user`, `assistant`, `tool`, `system`… */
  role: string;
  /** Text, or the decoded multimodal parts. */
  content: MessageContent | null;
  /** The call a tool result answers. */
  tool_call_id: string | null;
  /** The assistant's tool calls, parsed. */
  tool_calls: JsonValue | null;
  /** The tool that produced a tool result. */
  tool_name: string | null;
  /** When it was appended, in Unix seconds. */
  timestamp: number;
  /** Tokens of this message. */
  token_count: number | null;
  /** Why the model stopped. */
  finish_reason: string | null;
  /** Raw reasoning text. */
  reasoning: string | null;
  /** Provider reasoning content. */
  reasoning_content: string | null;
  /** Structured reasoning, as stored JSON text (Python returns it unparsed too). */
  reasoning_details: string | null;
  /** Codex reasoning items, as stored JSON text. */
  codex_reasoning_items: string | null;
  /** Codex message items, as stored JSON text. */
  codex_message_items: string | null;
  /** Columns a newer Hermes added, returned as they are. */
  [column: string]: unknown;
}

/** One message to append (camelCase options; SPEC §4 `appendMessage`). */
export interface NewMessage {
  /** `user`, `assistant`, `tool`, `system`… */
  role: string;
  /** Text, or multimodal parts (stored behind the `"\u0000json:"` prefix). */
  content?: MessageContent | null;
  /** The tool that produced a tool result. */
  toolName?: string | null;
  /**
   * The assistant's tool calls (stored as JSON; empty → NULL), as the
   * OpenAI message holds them: an array of `{ id, type, function }`. A
   * string is stored as a JSON string, not parsed, and comes back as that
   * string (as in Python); it counts as one tool call.
   */
  toolCalls?: JsonValue | null;
  /** The call a tool result answers. */
  toolCallId?: string | null;
  /** Tokens of this message. */
  tokenCount?: number | null;
  /** Why the model stopped. */
  finishReason?: string | null;
  /** Raw reasoning text. */
  reasoning?: string | null;
  /** Provider reasoning content. */
  reasoningContent?: string | null;
  /** Structured reasoning (JSON). */
  reasoningDetails?: JsonValue | null;
  /** Codex reasoning items (JSON). */
  codexReasoningItems?: JsonValue | null;
  /** Codex message items (JSON). */
  codexMessageItems?: JsonValue | null;
}

/** A message in the OpenAI chat shape (what `getMessagesAsConversation` returns). */
export interface ConversationMessage {
  /** The role. */
  role: string;
  /** Text or multimodal parts. */
  content: MessageContent | null;
  /** The assistant's tool calls. */
  tool_calls?: JsonValue;
  /** The call a tool result answers. */
  tool_call_id?: string;
  /** The tool of a tool result. */
  tool_name?: string;
  /** Why the model stopped. */
  finish_reason?: string;
  /** Reasoning text (assistants only). */
  reasoning?: string;
  /** Provider reasoning content (assistants only). */
  reasoning_content?: string;
  /** Structured reasoning (assistants only). */
  reasoning_details?: JsonValue;
  /** Codex reasoning items (assistants only). */
  codex_reasoning_items?: JsonValue;
  /** Codex message items (assistants only). */
  codex_message_items?: JsonValue;
  /** Keys a newer Hermes may add. */
  [key: string]: unknown;
}

/** One neighbour of a search hit. */
export interface ContextMessage {
  /** The role. */
  role: string;
  /** Its text, cut to 200 characters. */
  content: string;
  /** Keys a newer Hermes may add. */
  [key: string]: unknown;
}

/**
 * One search result (SPEC §5 "Search"). As in a {@linkcode SessionRow}, a
 * time stored as text (`timestamp`, `session_started`) comes back as that text.
 */
export interface SearchHit {
  /** The matching message. */
  id: number;
  /** Its session. */
  session_id: string;
  /** Its role. */
  role: string;
  /**
   * The match in context: marked `>>>like this<<<` for full-text hits; for
   * substring (short CJK) hits, 120 characters of content around the match,
   * unmarked, and `null` when the content is NULL.
   */
  snippet: string | null;
  /** When the message was appended. */
  timestamp: number;
  /** Its tool, for a tool result. */
  tool_name: string | null;
  /** The session's source. */
  source: string;
  /** The session's model. */
  model: string | null;
  /** When the session started. */
  session_started: number;
  /** The previous, matching and next message of the session. */
  context: ContextMessage[];
  /** Keys a newer Hermes may add. */
  [key: string]: unknown;
}

/**
 * A session row with the time of its last activity, by which the session
 * list and exports order sessions: what `searchSessions` returns.
 */
export interface SessionRowWithActivity extends SessionRow {
  /**
   * When the session was last active, in Unix seconds: the newest
   * `timestamp` among its message rows (every row, the rewound and
   * compacted ones of a newer Hermes too), else `started_at` when it has no
   * message. Computed when read, not a column of `sessions`: an export
   * carries it, and `importSession` ignores it.
   */
  last_active: number;
}

/** A session in a listing, with its preview and last activity. */
export interface RichSessionRow extends SessionRowWithActivity {
  /** The first user message, one line, 60 characters plus `...`. */
  preview: string;
  /** For a projected compression chain: the root's id. */
  _lineage_root_id?: string;
}

/**
 * A session with its messages: one line of a JSONL export. Every value is
 * exact: an integer beyond 2^53 (a count, a message id) comes as a
 * `bigint`, which `JSON.stringify` refuses (write such a record with a
 * replacer that writes its digits), whatever the `number` of its field says.
 */
export interface SessionExport extends SessionRow {
  /** Every message, in order. */
  messages: MessageRow[];
}

/**
 * A session with its messages and its last activity: what `exportAll` and
 * `iterateExport` give (`exportSession` gives a {@linkcode SessionExport}).
 */
export interface SessionExportWithActivity extends SessionExport, SessionRowWithActivity {}

/** Tokens and cost of the sessions of one model. */
export interface ModelUsage {
  /** The model. */
  model: string;
  /** Its sessions. */
  session_count: number;
  /** Their prompt tokens. */
  total_input: number;
  /** Their completion tokens. */
  total_output: number;
  /** Their estimated cost in US dollars. */
  total_cost: number | null;
}

/** A session ranked by tokens. */
export interface SessionTokens {
  /** The session. */
  id: string;
  /** Its title. */
  title: string | null;
  /** Its model. */
  model: string | null;
  /** Input plus output tokens. */
  total_tokens: number;
  /** Its estimated cost. */
  estimated_cost_usd: number | null;
}
