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

/** A row of `sessions`. Columns a newer Hermes added come back too. */
export interface SessionRow {
  id: string;
  source: string;
  user_id: string | null;
  model: string | null;
  model_config: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  tool_call_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  billing_provider: string | null;
  billing_base_url: string | null;
  billing_mode: string | null;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
  cost_status: string | null;
  cost_source: string | null;
  pricing_version: string | null;
  title: string | null;
  api_call_count: number;
  [column: string]: unknown;
}

/** A row of `messages` as `getMessages` returns it: JSON columns parsed, content decoded. */
export interface MessageRow {
  id: number;
  session_id: string;
  role: string;
  content: MessageContent | null;
  tool_call_id: string | null;
  tool_calls: JsonValue | null;
  tool_name: string | null;
  timestamp: number;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: JsonValue | null;
  codex_reasoning_items: JsonValue | null;
  codex_message_items: JsonValue | null;
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
  /** The assistant's tool calls (stored as JSON; empty → NULL). */
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
  role: string;
  content: MessageContent | null;
  tool_calls?: JsonValue;
  tool_call_id?: string;
  tool_name?: string;
  finish_reason?: string;
  reasoning?: string;
  reasoning_content?: string;
  reasoning_details?: JsonValue;
  codex_reasoning_items?: JsonValue;
  codex_message_items?: JsonValue;
  [key: string]: unknown;
}

/** One neighbour of a search hit. */
export interface ContextMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

/** One search result (SPEC §5 "Search"). */
export interface SearchHit {
  id: number;
  session_id: string;
  role: string;
  snippet: string;
  timestamp: number;
  tool_name: string | null;
  source: string;
  model: string | null;
  session_started: number;
  context: ContextMessage[];
  [key: string]: unknown;
}

/** A session in a listing, with its preview and last activity. */
export interface RichSessionRow extends SessionRow {
  preview: string;
  last_active: number;
  _lineage_root_id?: string;
}

/** A session with its messages: one line of a JSONL export. */
export interface SessionExport extends SessionRow {
  messages: MessageRow[];
}

/** Tokens and cost of the sessions of one model. */
export interface ModelUsage {
  model: string;
  session_count: number;
  total_input: number;
  total_output: number;
  total_cost: number | null;
}

/** A session ranked by tokens. */
export interface SessionTokens {
  id: string;
  title: string | null;
  model: string | null;
  total_tokens: number;
  estimated_cost_usd: number | null;
}
