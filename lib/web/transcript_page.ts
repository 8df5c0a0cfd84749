/**
 * One page of a session's transcript, read a page at a time: the messages
 * the page holds through `getMessages` with a place (`beforeId`, `fromId`)
 * and a count (`limit`, `last`), and how many the session shows before and
 * after them through `countMessages`, so an answer reads its own rows, not
 * the session's (and every row counted only where some can be left out:
 * `left_out.ts`). The answers are those of the whole transcript sliced: the
 * same messages, counts and `newest`, in one state of the store.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { MessagesOptions } from "../core/session_options.ts";
import { newestOf } from "../core/newest_message.ts";
import { transcriptMarks } from "../core/message_row.ts";
import type { MessageRow } from "../core/types.ts";
import { HttpError } from "./respond.ts";
import { EVERY_ROW, leftOutCount } from "./left_out.ts";

/** How many messages a transcript opened at one (`m`) shows above it. */
const ABOVE_TARGET = 20;

/** How often a page is read again when the store changed while it was read. */
const READS = 3;

/** What a transcript shows: the rows a newer Hermes replays, its hidden ones left out. */
const SHOWN_ONLY = { excludeHidden: true } as const satisfies MessagesOptions;

/** The message id parameters that choose a page. */
export type PageParam = "before" | "beyond" | "from" | "m";

/** What the URL asks for. */
export interface PageAsk {
  /** The most messages the page holds; 0 answers only the counts and `newest`. */
  readonly limit: number;
  /** The live path: what the page has read and shows (`after`, `shown`, `first`). */
  readonly since?: {
    readonly after: number;
    readonly shown: number;
    readonly first?: number;
    /** The timestamp of the `after` message when the page read it (`newest_at`). */
    readonly at?: number;
  };
  /** A message id parameter, read (and refused, as a 400) only when the answer needs it. */
  readonly param: (name: PageParam) => number | undefined;
  /**
   * Every row, those a newer Hermes rewound, compacted or hides too, each with its
   * `marks` (`[rewound]`, `[compacted]`, `[hidden]`), as `show --all` prints them.
   * @default {false}
   */
  readonly all?: boolean;
}

/** A message of a page read with `all`: its row, and the marks `show --all` puts on it. */
export type MarkedMessage = MessageRow & { readonly marks: string[] };

/** The page: the answer's transcript fields. */
export interface TranscriptPage {
  readonly messages: MessageRow[] | MarkedMessage[];
  readonly appended: boolean;
  readonly newest: number;
  /** The timestamp of the message of `newest` (`null` for none). */
  readonly newestAt: number | null;
  readonly earlier: number;
  readonly later: number;
  /** How many rows the transcript leaves out (rewound, compacted, hidden): what `all` shows too. */
  readonly leftOut: number;
}

/**
 * The page of session `id`'s transcript that `ask` asks for, read in one
 * state of the store: when the store's change marker moved while it was
 * read (a write came between two reads), it is read again, up to
 * {@linkcode READS} times; a store written faster than that gets the last
 * read, which the page's next live update corrects.
 *
 * @param store The store.
 * @param id The session (known to exist).
 * @param ask The URL's parameters.
 * @returns The page.
 * @throws {HttpError} 409 when the `before` or `beyond` message is not shown (any more);
 *   400 for a bad message id parameter.
 */
export async function transcriptPage(
  store: SessionStore,
  id: string,
  ask: PageAsk,
): Promise<TranscriptPage> {
  for (let read = 1;; read++) {
    const version = await store.dataVersion();
    const page = await readPage(store, id, ask);
    if (read === READS || await store.dataVersion() === version) {
      if (!ask.all) return page;
      const messages = page.messages.map((row) => ({ ...row, marks: transcriptMarks(row) }));
      return { ...page, messages };
    }
  }
}

/** The rows a page selects: those the transcript shows, or every one (`all`). */
function rowsOf(ask: PageAsk): MessagesOptions {
  return ask.all ? EVERY_ROW : SHOWN_ONLY;
}

/**
 * Whether the message `after` the reader's page read is still the one it
 * read: there, at the timestamp `at` (when the page gave it). A backup
 * restored over the file gives new messages the ids of the lost ones, so
 * that the same ids and counts came back with other messages, which the page
 * kept showing.
 */
async function sameMessage(
  store: SessionStore,
  id: string,
  after: number,
  at: number | undefined,
): Promise<boolean> {
  if (at === undefined || after === 0) return true;
  const [row] = await store.getMessages(id, { ...EVERY_ROW, fromId: after, limit: 1 });
  return row?.id === after && row.timestamp === at;
}

/** The page, read with a few small reads and counts. */
async function readPage(store: SessionStore, id: string, ask: PageAsk): Promise<TranscriptPage> {
  const { limit, since } = ask;
  const shown = rowsOf(ask);
  const counted = store.countMessages(id, shown);
  const end = newestOf(store, id, ask.all ? EVERY_ROW : {});
  const [total, { newest, newestAt }, leftOut] = await Promise.all([
    counted,
    end,
    // Without `all` the rows shown are those just counted; with it, counted apart.
    leftOutCount(
      store,
      id,
      end.then((found) => found.last),
      () => ask.all ? store.countMessages(id, SHOWN_ONLY) : counted,
    ),
  ]);
  if (since !== undefined) {
    // One more than the page takes: more than `limit` new messages send the newest page.
    const fresh = await store.getMessages(id, { ...shown, afterId: since.after, limit: limit + 1 });
    const first = since.first === undefined
      ? 0
      : await placeOf(store, id, total, since.first, shown);
    if (
      first >= 0 && fresh.length <= limit && total - fresh.length - first === since.shown &&
      await sameMessage(store, id, since.after, since.at)
    ) {
      // The messages the reader's page shows before these, and none after them.
      return {
        messages: fresh,
        appended: true,
        newest,
        newestAt,
        earlier: first,
        later: 0,
        leftOut,
      };
    }
  }
  const window = await pageWindow(store, id, total, ask);
  return {
    messages: window.messages,
    appended: false,
    newest,
    newestAt,
    earlier: window.start,
    later: total - window.start - window.messages.length,
    leftOut,
  };
}

/**
 * Where message `messageId` is among the `total` messages the session
 * shows (how many are before it), or -1 when it shows no such message.
 */
async function placeOf(
  store: SessionStore,
  id: string,
  total: number,
  messageId: number,
  shown: MessagesOptions,
): Promise<number> {
  const [at] = await store.getMessages(id, { ...shown, fromId: messageId, limit: 1 });
  if (at?.id !== messageId) return -1;
  // Counted from it to the end: a page near the newest counts a page, not the session.
  return total - await store.countMessages(id, { ...shown, fromId: messageId });
}

/** {@linkcode placeOf}, with a 409 naming the message when it is not shown (any more). */
async function shownPlace(
  store: SessionStore,
  id: string,
  total: number,
  messageId: number,
  name: string,
  shown: MessagesOptions,
): Promise<number> {
  const place = await placeOf(store, id, total, messageId, shown);
  if (place < 0) {
    throw new HttpError(
      409,
      `${name}: the transcript shows no message ${messageId} (any more): reload it`,
    );
  }
  return place;
}

/** The messages of a page and where it starts among those the session shows. */
interface Window {
  readonly start: number;
  readonly messages: MessageRow[];
}

/**
 * The page the URL asks for, at most `limit` long: the messages `before`
 * one, `beyond` one, `from` one on, around `m`, else the newest.
 */
async function pageWindow(
  store: SessionStore,
  id: string,
  total: number,
  ask: PageAsk,
): Promise<Window> {
  const { limit } = ask;
  const shown = rowsOf(ask);
  const read = (options: MessagesOptions) => store.getMessages(id, { ...shown, ...options });
  const newestStart = Math.max(0, total - limit);
  const newest = async () => ({ start: newestStart, messages: await read({ last: limit }) });
  const before = ask.param("before");
  if (before !== undefined) {
    const end = await shownPlace(store, id, total, before, "before", shown);
    return {
      start: Math.max(0, end - limit),
      messages: await read({ beforeId: before, last: limit }),
    };
  }
  const beyond = ask.param("beyond");
  if (beyond !== undefined) {
    const start = (await shownPlace(store, id, total, beyond, "beyond", shown)) + 1;
    // From the message itself, which is shown: it is the first row, left out.
    return { start, messages: (await read({ fromId: beyond, limit: limit + 1 })).slice(1) };
  }
  // A window the page shows again (it was opened at an earlier message): from its first one;
  // the newest when that one is gone.
  const from = ask.param("from");
  const at = from ?? ask.param("m");
  const place = at === undefined ? -1 : await placeOf(store, id, total, at, shown);
  if (at === undefined || place < 0 || place >= newestStart) return await newest();
  const start = from !== undefined ? place : Math.max(0, place - ABOVE_TARGET);
  // Those above it (a page smaller than them holds only some of them), then it and those after.
  const above = place - start;
  const [upper, lower] = await Promise.all([
    above === 0 ? [] : read({ beforeId: at, last: above }),
    read({ fromId: at, limit: Math.max(0, limit - above) }),
  ]);
  return { start, messages: [...upper.slice(0, limit), ...lower] };
}
