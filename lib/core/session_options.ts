/**
 * The options of the session and message methods of `SessionStore`
 * (create, ensure, token counts, reading messages and the conversation).
 *
 * @module
 */
import type { JsonValue } from "./types.ts";
import { type StoredValue, textValue } from "./message_values.ts";
import { encodeJson } from "./content.ts";
import { quotedValue } from "./shown_value.ts";
import { checkOptionNames, type OptionNames } from "./option_names.ts";
import type { SearchOptions } from "./search/options.ts";

/** Options of `createSession`. */
export interface CreateSessionOptions {
  /** The model name. */
  model?: string | null;
  /** Model settings, stored as JSON (empty → NULL). */
  modelConfig?: JsonValue | null;
  /** The assembled system prompt. */
  systemPrompt?: string | null;
  /** The platform user. */
  userId?: string | null;
  /** The session this one continues; must exist. */
  parentSessionId?: string | null;
}

/** Options of `ensureSession`. */
export interface EnsureSessionOptions {
  /** The model name. */
  model?: string | null;
}

/** Options of `updateTokenCounts` (SPEC §4, §5 "Token counts"). */
export interface TokenCountsUpdate {
  /** Prompt tokens. @default {0} */
  inputTokens?: number;
  /** Completion tokens. @default {0} */
  outputTokens?: number;
  /** Tokens read from the prompt cache. @default {0} */
  cacheReadTokens?: number;
  /** Tokens written to the prompt cache. @default {0} */
  cacheWriteTokens?: number;
  /** Reasoning tokens. @default {0} */
  reasoningTokens?: number;
  /** The model; stored only while the session has none. */
  model?: string | null;
  /** Estimated cost in US dollars; a missing one counts as 0. */
  estimatedCostUsd?: number | null;
  /** Actual cost in US dollars; a missing one leaves the column as it is. */
  actualCostUsd?: number | null;
  /** Cost status, e.g. `estimated` or `actual` (latest non-null wins). */
  costStatus?: string | null;
  /** Where the cost came from (latest non-null wins). */
  costSource?: string | null;
  /** Pricing table version (latest non-null wins). */
  pricingVersion?: string | null;
  /** Who bills the calls (first non-null wins). */
  billingProvider?: string | null;
  /** The API base URL (first non-null wins). */
  billingBaseUrl?: string | null;
  /** The billing mode (first non-null wins). */
  billingMode?: string | null;
  /** API calls made. @default {0} */
  apiCallCount?: number | null;
  /** Set the values (cumulative totals) instead of adding them. @default {false} */
  absolute?: boolean;
}

/**
 * The options of `createSession`, `ensureSession` and the fields of
 * `updateTokenCounts`, checked by name: a misspelt one (Python's
 * `system_prompt`, `input_tokens`) would be dropped without a word, and a
 * misspelt `absolute` would add cumulative totals instead of setting them.
 */
const CREATE_SESSION_OPTION_NAMES: OptionNames<CreateSessionOptions> = {
  model: true,
  modelConfig: true,
  systemPrompt: true,
  userId: true,
  parentSessionId: true,
};
const ENSURE_SESSION_OPTION_NAMES: OptionNames<EnsureSessionOptions> = { model: true };
const TOKEN_COUNT_OPTION_NAMES: OptionNames<TokenCountsUpdate> = {
  inputTokens: true,
  outputTokens: true,
  cacheReadTokens: true,
  cacheWriteTokens: true,
  reasoningTokens: true,
  model: true,
  estimatedCostUsd: true,
  actualCostUsd: true,
  costStatus: true,
  costSource: true,
  pricingVersion: true,
  billingProvider: true,
  billingBaseUrl: true,
  billingMode: true,
  apiCallCount: true,
  absolute: "boolean",
};

const TOKEN_COUNT_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "apiCallCount",
] as const;
const COST_FIELDS = ["estimatedCostUsd", "actualCostUsd"] as const;
const TEXT_FIELDS = [
  "model",
  "costStatus",
  "costSource",
  "pricingVersion",
  "billingProvider",
  "billingBaseUrl",
  "billingMode",
] as const;

/**
 * Checks a text argument that a row is keyed by (a session id, a source, a
 * meta key): SQLite would store a NULL key, or a number as its own text.
 *
 * @param action What the caller does, for the error ("create session").
 * @param field The argument's name.
 * @param value The value given.
 * @throws {TypeError} When it is not a string, naming the value.
 *
 * @example
 * ```ts
 * import { checkKeyText } from "./session_options.ts";
 * checkKeyText("create session", "id", "20260501_090000_a1b2c3");
 * ```
 */
export function checkKeyText(action: string, field: string, value: unknown): void {
  if (typeof value !== "string") {
    throw new TypeError(
      `Cannot ${action}: ${field} must be a string: current value is ${quotedValue(value)}`,
    );
  }
}

/**
 * Checks a {@linkcode TokenCountsUpdate} before anything is written: a
 * `NaN` added to a counter would make it NULL for good (and every later
 * addition with it), a string would be added as a number.
 *
 * @param update The update as given.
 * @throws {TypeError} When it is not an object, a count is not a finite
 *   number (or a bigint within 64 bits), a cost not a finite number,
 *   or a text field not a string; the error names the field and its value.
 *   Also when it holds a field that is not one of {@linkcode TokenCountsUpdate}'s,
 *   naming it.
 *
 * @example
 * ```ts
 * import { checkTokenCounts } from "./session_options.ts";
 * checkTokenCounts({ inputTokens: 1200, estimatedCostUsd: 0.0042, model: "m" });
 * let refused = false;
 * try {
 *   checkTokenCounts({ inputTokens: NaN });
 * } catch {
 *   refused = true;
 * }
 * console.assert(refused);
 * ```
 */
export function checkTokenCounts(update: unknown): void {
  const fail = (what: string, value: unknown): never => {
    throw new TypeError(
      `Cannot update token counts: ${what}: current value is ${quotedValue(value)}`,
    );
  };
  if (update === undefined) return;
  if (update === null || typeof update !== "object" || Array.isArray(update)) {
    fail("the update must be an object", update);
  }
  checkOptionNames("update token counts", update, TOKEN_COUNT_OPTION_NAMES);
  const given = update as Record<string, unknown>;
  for (const field of TOKEN_COUNT_FIELDS) {
    const value = given[field];
    if (value === undefined || value === null) continue;
    // A fraction is let through: a file written by Python may hold a REAL there (SQLite's
    // type affinity keeps 1.5 in an INTEGER column), and copy and sync carry it as it is.
    const finite = typeof value === "bigint"
      ? BigInt.asIntN(64, value) === value
      : typeof value === "number" && Number.isFinite(value);
    if (!finite) fail(`${field} must be a finite number`, value);
  }
  for (const field of COST_FIELDS) {
    const value = given[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isFinite(value)) {
      fail(`${field} must be a finite number of dollars`, value);
    }
  }
  for (const field of TEXT_FIELDS) {
    const value = given[field];
    if (value !== undefined && value !== null && typeof value !== "string") {
      fail(`${field} must be a string`, value);
    }
  }
}

/**
 * Options of {@linkcode getMessages} (and `countMessages`, which counts what
 * it returns). An option that is `null` counts as not given, as in the
 * options of every other method.
 */
export interface MessagesOptions {
  /**
   * In a file from a newer Hermes (with `messages.active`), also return the
   * inactive rows: those a rewind took back and those compacted into a
   * summary. That Hermes, and by default this one, leaves them out.
   * @default {false}
   */
  includeInactive?: boolean;
  /**
   * Only the messages whose id is greater than this one: what a reader that
   * follows a live session has not seen yet (ids grow with every insert, so
   * a message written later has a greater id). A finite number.
   * @default {undefined} every message
   */
  afterId?: number;
  /**
   * Only the messages that come before this one in the order they are
   * returned in (`timestamp, id`): a page before a message the reader has.
   * It may be any message of the session, one the options leave out too (an
   * inactive or hidden one); none when the session has no message with this
   * id. A finite number.
   * @default {undefined} every message
   */
  beforeId?: number;
  /**
   * Only this message and those after it in the order they are returned in
   * (`timestamp, id`): a page from a message on. It may be any message of
   * the session, one the options leave out too; none when the session has
   * no message with this id. Unlike `afterId`, a place in the order, not a
   * comparison of ids. A finite number.
   * @default {undefined} every message
   */
  fromId?: number;
  /**
   * At most this many messages: the first ones of those the other options
   * select. A whole number from 0; not with `last`.
   * @default {undefined} all of them
   */
  limit?: number;
  /**
   * At most this many messages: the last (newest) ones of those the other
   * options select, still returned oldest first. A whole number from 0; not
   * with `limit`.
   * @default {undefined} all of them
   */
  last?: number;
  /**
   * Leave out the rows a transcript hides: those a newer Hermes marks
   * `display_kind = 'hidden'` (`isShownInTranscript` is false). A file
   * without that column hides none.
   * @default {false}
   */
  excludeHidden?: boolean;
}

/** The {@linkcode MessagesOptions} that choose rows, checked ({@linkcode checkedMessagesOptions}). */
export interface CheckedMessagesOptions {
  /** `includeInactive`, as a boolean. */
  readonly includeInactive: boolean;
  /** `excludeHidden`, as a boolean. */
  readonly excludeHidden: boolean;
  /** `afterId`, when given. */
  readonly afterId?: number;
  /** `beforeId`, when given. */
  readonly beforeId?: number;
  /** `fromId`, when given. */
  readonly fromId?: number;
  /** `limit` or `last`, when either is given: how many, and from which end. */
  readonly take?: { readonly count: number; readonly newest: boolean };
}

/**
 * The `afterId` of {@linkcode MessagesOptions}, checked.
 *
 * @param afterId The option as given.
 * @returns It, or `undefined` when it is not given.
 * @throws {TypeError} When it is given and is not a finite number, naming the value.
 *
 * @example
 * ```ts
 * import { checkedAfterId } from "./session_options.ts";
 * console.assert(checkedAfterId(41) === 41);
 * console.assert(checkedAfterId(undefined) === undefined);
 * ```
 */
export function checkedAfterId(afterId: unknown): number | undefined {
  return checkedMessageId("read messages", "afterId", afterId);
}

/** A message id option, checked: `undefined` (absent or `null`), or a finite number. */
function checkedMessageId(action: string, name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TypeError(
      `Cannot ${action}: ${name} must be a finite number: current value is ${quotedValue(value)}`,
    );
  }
  return value;
}

/** A count option, checked: `undefined` (absent or `null`), or a whole number from 0. */
function checkedCount(action: string, name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(
      `Cannot ${action}: ${name} must be a whole number from 0: current value is ${
        quotedValue(value)
      }`,
    );
  }
  // -0 as 0: a count of it would come back as -0.
  return value === 0 ? 0 : value;
}

/**
 * The {@linkcode MessagesOptions} of `getMessages` and `countMessages`,
 * checked, for every engine alike.
 *
 * @param action What the caller does, for the error ("read messages").
 * @param options The options as given (`null` is none, and so is an option that is `null`).
 * @returns Them, checked.
 * @throws {TypeError} When `afterId`, `beforeId` or `fromId` is given and is
 *   not a finite number, when `limit` or `last` is given and is not a whole
 *   number from 0, or when both are given, naming the value; when an option
 *   is not one of {@linkcode MessagesOptions}'s, naming it.
 *
 * @example
 * ```ts
 * import { checkedMessagesOptions } from "./session_options.ts";
 * const checked = checkedMessagesOptions("read messages", { beforeId: 41, last: 20 });
 * console.assert(checked.beforeId === 41 && checked.take?.newest === true);
 * ```
 */
export function checkedMessagesOptions(
  action: string,
  options: MessagesOptions | null | undefined,
): CheckedMessagesOptions {
  checkOptionNames(action, options, MESSAGES_OPTION_NAMES);
  const given = options ?? {};
  const limit = checkedCount(action, "limit", given.limit);
  const last = checkedCount(action, "last", given.last);
  if (limit !== undefined && last !== undefined) {
    throw new TypeError(
      `Cannot ${action}: limit and last cannot both be given (the first or the last ones): ` +
        `current values are ${limit} and ${last}`,
    );
  }
  const count = limit ?? last;
  return {
    includeInactive: Boolean(given.includeInactive),
    excludeHidden: Boolean(given.excludeHidden),
    afterId: checkedMessageId(action, "afterId", given.afterId),
    beforeId: checkedMessageId(action, "beforeId", given.beforeId),
    fromId: checkedMessageId(action, "fromId", given.fromId),
    take: count === undefined ? undefined : { count, newest: last !== undefined },
  };
}

/** Options of `getMessagesAsConversation`. */
export interface ConversationOptions {
  /**
   * Prepend the transcripts of the ancestors (root first), dropping a user
   * prompt that a continuation replayed.
   * @default {false}
   */
  includeAncestors?: boolean;
}

/**
 * Checks an optional text argument or option (a parent id, a source
 * filter, a session id filter): absent and `null` pass, anything else must
 * be a string. The drivers would otherwise read an object or an array as
 * named parameters and bind nothing (a silent `NULL`), or fail with an
 * error that names neither the field nor the value.
 *
 * @param action What the caller does, for the error ("list sessions").
 * @param field The argument's or option's name.
 * @param value The value given.
 * @throws {TypeError} When it is neither absent, `null` nor a string, naming the value.
 *
 * @example
 * ```ts
 * import { checkOptionalText } from "./session_options.ts";
 * checkOptionalText("list sessions", "source", "cli");
 * checkOptionalText("list sessions", "source", null);
 * ```
 */
export function checkOptionalText(action: string, field: string, value: unknown): void {
  if (value !== undefined && value !== null) checkKeyText(action, field, value);
}

/**
 * Checks an optional list of texts (`excludeSources`, `sourceFilter`,
 * `roleFilter`): absent and `null` pass, anything else must be an array of
 * strings.
 *
 * @param action What the caller does, for the error ("search messages").
 * @param field The option's name.
 * @param value The value given.
 * @throws {TypeError} When it is not an array of strings, naming the value.
 *
 * @example
 * ```ts
 * import { checkTextList } from "./session_options.ts";
 * checkTextList("search messages", "sourceFilter", ["cli", "telegram"]);
 * ```
 */
export function checkTextList(action: string, field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new TypeError(
      `Cannot ${action}: ${field} must be an array of strings: current value is ${
        quotedValue(value)
      }`,
    );
  }
}

/**
 * The options of `searchMessages` and `countSearchHits`, checked by name: a
 * misspelt filter would widen the search without a word (a `session_id`
 * meant to keep an agent's search to its own conversation would search every
 * one). The PostgreSQL store adds its `origin`.
 */
export const SEARCH_OPTION_NAMES: OptionNames<SearchOptions> = {
  sourceFilter: true,
  excludeSources: true,
  roleFilter: true,
  sessionId: true,
  since: true,
  until: true,
  limit: true,
  offset: true,
  includeInactive: "boolean",
  sort: true,
};

/** The options of `getMessages` and `countMessages`, checked by name. */
const MESSAGES_OPTION_NAMES: OptionNames<MessagesOptions> = {
  includeInactive: "boolean",
  excludeHidden: "boolean",
  afterId: true,
  beforeId: true,
  fromId: true,
  limit: true,
  last: true,
};

/** The options of `getMessagesAsConversation`, checked by name. */
export const CONVERSATION_OPTION_NAMES: OptionNames<ConversationOptions> = {
  includeAncestors: "boolean",
};

/**
 * Checks the text filters of a message search before the query runs:
 * `sessionId` a string, `sourceFilter`, `excludeSources` and `roleFilter`
 * arrays of strings (each may be absent or `null`).
 *
 * @param options The search options as given.
 * @param names The options the engine takes: {@linkcode SEARCH_OPTION_NAMES}, or more.
 * @throws {TypeError} When a filter has another type, naming it and its value;
 *   when `options` is not an object or holds an option that is not one of
 *   `names`, naming it.
 *
 * @example
 * ```ts
 * import { checkSearchFilters } from "./session_options.ts";
 * checkSearchFilters({ sessionId: "s1", roleFilter: ["user"] });
 * ```
 */
export function checkSearchFilters(
  options: {
    readonly sessionId?: unknown;
    readonly sourceFilter?: unknown;
    readonly excludeSources?: unknown;
    readonly roleFilter?: unknown;
  },
  names: Readonly<Record<string, true | "boolean">> = SEARCH_OPTION_NAMES,
): void {
  checkOptionNames("search messages", options, names);
  checkOptionalText("search messages", "sessionId", options.sessionId);
  for (const field of ["sourceFilter", "excludeSources", "roleFilter"] as const) {
    checkTextList("search messages", field, options[field]);
  }
}

/** The checked values of a new session's row, as {@linkcode newSessionValues} gives them. */
export interface NewSessionValues {
  /** `user_id`: text, a number as Python binds it, or `null`. */
  readonly userId: StoredValue;
  /** `model`. */
  readonly model: StoredValue;
  /** `system_prompt`. */
  readonly systemPrompt: StoredValue;
  /** `model_config`, as JSON text or `null`. */
  readonly modelConfig: string | null;
  /** `parent_session_id`. */
  readonly parentSessionId: string | null;
}

/**
 * Checks what `createSession` is given and returns the values its row
 * stores, before anything is written: every engine checks the same way.
 *
 * @param id The session id.
 * @param source The source.
 * @param options The options as given (`null` reads as none).
 * @returns The row's values besides the id, source and start.
 * @throws {TypeError} When the id, source, parent id or a text option is of
 *   the wrong type, naming the value, or an option is not one of
 *   {@linkcode CreateSessionOptions}'s, naming it.
 *
 * @example
 * ```ts
 * import { newSessionValues } from "./session_options.ts";
 * console.assert(newSessionValues("s1", "cli", { model: "m" }).model === "m");
 * ```
 */
export function newSessionValues(
  id: unknown,
  source: unknown,
  options: CreateSessionOptions | null | undefined,
): NewSessionValues {
  const action = "create session";
  checkKeyText(action, "id", id);
  checkKeyText(action, "source", source);
  checkOptionNames(action, options, CREATE_SESSION_OPTION_NAMES);
  const given = options ?? {};
  checkOptionalText(action, "parentSessionId", given.parentSessionId);
  // A session of its own parent leaves every listing (it is no root, and no root's child).
  if (given.parentSessionId === id) {
    throw new TypeError(
      `Cannot create session: parentSessionId names the session itself: current value is ${
        quotedValue(id)
      }`,
    );
  }
  return {
    userId: textValue(given.userId, "userId", action),
    model: textValue(given.model, "model", action),
    systemPrompt: textValue(given.systemPrompt, "systemPrompt", action),
    modelConfig: encodeJson(given.modelConfig),
    parentSessionId: given.parentSessionId ?? null,
  };
}

/**
 * The model `ensureSession` is given, its options checked by name first.
 *
 * @param options The options as given (`null` reads as none).
 * @returns The model, as given.
 * @throws {TypeError} When an option is not `model`, naming it.
 *
 * @example
 * ```ts
 * import { ensureSessionModel } from "./session_options.ts";
 * console.assert(ensureSessionModel({ model: "m" }) === "m");
 * ```
 */
export function ensureSessionModel(
  options: EnsureSessionOptions | null | undefined,
): string | null | undefined {
  checkOptionNames("ensure session", options, ENSURE_SESSION_OPTION_NAMES);
  return (options ?? {}).model;
}
