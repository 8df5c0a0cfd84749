/**
 * Exports as a byte stream for a download: JSON Lines, Markdown or one
 * standalone HTML file, one session at a time so memory stays flat. The
 * JSON Lines are those `hermes-state export` writes, every value exact.
 *
 * @module
 */
import { withCompressionChains } from "./compression_chains.ts";
import { jsonLineTexts, markdownTexts, type SessionTexts } from "../render/export_texts.ts";
import {
  type ExportPiece,
  type ExportPiecesOptions,
  type ExportSelection,
  readExportPieces,
} from "../core/export_pieces.ts";
import type { SessionStore } from "../core/session_store.ts";
import type { SessionRow } from "../core/types.ts";
import { htmlDocumentEnd, htmlDocumentStart } from "./html_transcript.ts";
import { htmlTexts } from "./html_texts.ts";

/** The export formats. */
export type ExportFormat = "jsonl" | "md" | "html";

/** The media type of each format. */
export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  jsonl: "application/x-ndjson; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  html: "text/html; charset=utf-8",
};

/** One text of an export, and whether it ends a session. */
export interface ExportText {
  /** The text. */
  readonly text: string;
  /** The text ends a session (the count of sessions written goes up). */
  readonly sessionEnd: boolean;
}

/**
 * The texts of a session in `format`, each in pieces: an HTML transcript
 * holds a message whose tool calls wait for their results, within a bound
 * (`htmlTexts`).
 */
function sessionTexts(format: ExportFormat): SessionTexts {
  if (format === "jsonl") return jsonLineTexts();
  if (format === "md") return markdownTexts();
  return htmlTexts();
}

/**
 * The text of an export read in pieces (`readExportPieces`), piece by
 * piece: a session's row, then a chunk of messages at a time, so no text
 * holds more than one chunk (an HTML transcript, which draws each tool call
 * with its result, holds a message whose calls wait for their results,
 * within a bound: `htmlTexts`). Joined, the texts are those of the whole
 * records (for HTML, but in the rare cases `htmlTexts` lists).
 *
 * @param pieces The pieces, in order.
 * @param format The format.
 * @param title The HTML document title.
 * @returns The texts, in order; empty ones left out.
 *
 * @example
 * ```ts
 * import { exportTexts } from "./export_stream.ts";
 * const texts: string[] = [];
 * const pieces = [{ session: { id: "s" } as never }, { messages: [] }];
 * for await (const { text } of exportTexts(pieces, "jsonl", "none")) texts.push(text);
 * console.assert(texts.join("") === '{"id":"s","messages":[]}\n');
 * ```
 */
export async function* exportTexts(
  pieces: AsyncIterable<ExportPiece> | Iterable<ExportPiece>,
  format: ExportFormat,
  title: string,
): AsyncGenerator<ExportText> {
  const texts = sessionTexts(format);
  let count = 0;
  let open = false;
  if (format === "html") yield { text: htmlDocumentStart(title), sessionEnd: false };
  for await (const piece of pieces) {
    if ("session" in piece) {
      if (open) yield { text: texts.tail(), sessionEnd: true };
      const head = texts.head(piece.session);
      // Markdown transcripts are parted by a rule.
      const text = format === "md" && count > 0 ? `\n---\n\n${head}` : head;
      count++;
      open = true;
      if (text !== "") yield { text, sessionEnd: false };
    } else if (open) {
      const text = texts.messages(piece.messages);
      if (text !== "") yield { text, sessionEnd: false };
    }
  }
  if (open) yield { text: texts.tail(), sessionEnd: true };
  if (format === "html") yield { text: htmlDocumentEnd(), sessionEnd: false };
}

/**
 * `items` with its first read already: `first` is what reading it gave.
 * Ends (returns) `rest` when the stream stops early.
 *
 * @param first What the first `next()` gave.
 * @param rest The iterator it came from.
 * @returns Every item, the first again.
 */
export async function* replayed<T>(
  first: IteratorResult<T>,
  rest: AsyncIterator<T> | Iterator<T>,
): AsyncGenerator<T> {
  try {
    for (let next = first; next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}

/**
 * Texts as a stream of UTF-8 bytes, pulled as the client reads; `rest` (the
 * reader the texts come from) is ended when the client goes away.
 */
function byteStream(
  texts: AsyncGenerator<string>,
  rest: AsyncIterator<unknown> | Iterator<unknown>,
  onFailure: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<string>;
      try {
        next = await texts.next();
      } catch (error) {
        onFailure(error);
        controller.error(error);
        return;
      }
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await texts.return(undefined);
      // Cancelled before the texts began (a HEAD request): the sessions' reader is ended here.
      await rest.return?.();
    },
  });
}

/**
 * An export of `store` as a stream of UTF-8 bytes, read from the store a
 * chunk of messages at a time ({@linkcode readExportPieces}), so that a
 * session of any size is downloaded with memory bounded by one chunk (and,
 * for HTML, the messages held for their tool results: `htmlTexts`). A
 * session asked for by id that is not found gives `undefined`.
 *
 * The first piece is read before the stream is given: a store that refuses
 * the export outright (a session whose id is not valid UTF-8 text, which it
 * checks for every session before the first) fails this call, so that the
 * server answers with a clear error instead of cutting a download it has
 * begun. When reading fails midway (the file went away), the stream
 * errors, so that the server cuts the connection and the client sees a
 * failed download rather than a short file that looks whole.
 *
 * @param store The store.
 * @param selection One session, or the sessions of a filter.
 * @param format The format.
 * @param title The HTML document title, or how it is made of the first
 *   session's row (`title || id` for one session, as its page names it).
 * @param onFailure Told the error before the stream errors with it.
 * @param options The chunk size, whether each session is one held snapshot
 *   (not by default: a server's connection stays free for its writes), and which sessions
 *   are kept (`keep`, asked of each row before its messages are read).
 * @param chains For the sessions of a filter: each compression chain whole, the sessions that
 *   continue a compressed one of them after them (`compression_chains.ts`), `keep` or not.
 * @returns The stream, or `undefined` when the session asked for is not found.
 * @throws {Error} What reading the first piece threw (`UnexportableIdError`…).
 */
export async function exportStoreStream(
  store: SessionStore,
  selection: ExportSelection,
  format: ExportFormat,
  title: string | ((first: SessionRow) => string),
  onFailure: (error: unknown) => void = () => {},
  options: ExportPiecesOptions = {},
  chains = false,
): Promise<ReadableStream<Uint8Array> | undefined> {
  const pieces = readExportPieces(store, selection, options);
  const rest = chains && !("id" in selection)
    ? withCompressionChains(
      store,
      pieces,
      (id) => readExportPieces(store, { id }, { ...options, keep: undefined }),
    )
    : pieces;
  const first = await rest.next();
  if (first.done === true && "id" in selection) return undefined;
  let heading = typeof title === "string" ? title : "";
  if (typeof title === "function" && first.done !== true && "session" in first.value) {
    heading = title(first.value.session);
  }
  const texts = async function* () {
    for await (const { text } of exportTexts(replayed(first, rest), format, heading)) yield text;
  };
  return byteStream(texts(), rest, onFailure);
}
