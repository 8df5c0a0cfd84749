/**
 * Exports as a byte stream for a download: JSON Lines, Markdown or one
 * standalone HTML file, one session at a time so memory stays flat. The
 * JSON Lines are those `hermes-state export` writes, every value exact.
 *
 * @module
 */
import { jsonLine } from "../render/json_line.ts";
import { exactRecord } from "../core/exact_record.ts";
import { renderMarkdown } from "../render/markdown.ts";
import type { SessionExport } from "../core/types.ts";
import { htmlDocumentEnd, htmlDocumentStart, renderSessionHtml } from "./html_transcript.ts";

/** The export formats. */
export type ExportFormat = "jsonl" | "md" | "html";

/** The media type of each format. */
export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  jsonl: "application/x-ndjson; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  html: "text/html; charset=utf-8",
};

/**
 * The text of an export, piece by piece.
 *
 * @param records The sessions, in order.
 * @param format The format.
 * @param title The HTML document title.
 * @returns The pieces, in order.
 *
 * @example
 * ```ts
 * import { exportPieces } from "./export_stream.ts";
 * const pieces: string[] = [];
 * for await (const piece of exportPieces([], "html", "none")) pieces.push(piece);
 * console.assert(pieces.join("").startsWith("<!doctype html>"));
 * ```
 */
export async function* exportPieces(
  records: AsyncIterable<SessionExport> | Iterable<SessionExport>,
  format: ExportFormat,
  title: string,
): AsyncGenerator<string> {
  let count = 0;
  if (format === "html") yield htmlDocumentStart(title);
  for await (const record of records) {
    if (format === "html") yield renderSessionHtml(record);
    else if (format === "md") yield `${count > 0 ? "\n---\n\n" : ""}${renderMarkdown(record)}`;
    // As `hermes-state export` writes it: numbers inside content and tool_calls exact.
    else yield jsonLine(exactRecord(record));
    count++;
  }
  if (format === "html") yield htmlDocumentEnd();
}

/**
 * `records` with its first session read already: `first` is what reading it
 * gave. Ends (returns) `rest` when the stream stops early.
 */
async function* replayed(
  first: IteratorResult<SessionExport>,
  rest: AsyncIterator<SessionExport> | Iterator<SessionExport>,
): AsyncGenerator<SessionExport> {
  try {
    for (let next = first; next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}

/** The iterator of `records`, sync or async. */
function iteratorOf(
  records: AsyncIterable<SessionExport> | Iterable<SessionExport>,
): AsyncIterator<SessionExport> | Iterator<SessionExport> {
  return Symbol.asyncIterator in records
    ? records[Symbol.asyncIterator]()
    : (records as Iterable<SessionExport>)[Symbol.iterator]();
}

/**
 * {@linkcode exportPieces} as a stream of UTF-8 bytes, pulled as the client reads.
 *
 * The first session is read before the stream is given: a store that
 * refuses the export outright (a session whose id is not valid UTF-8 text,
 * which it checks for every session before the first) fails this call, so
 * that the server answers with a clear error instead of cutting a download
 * it has begun.
 *
 * When reading the sessions fails midway (the file went away), the stream
 * errors, so that the server cuts the connection and the client sees a failed
 * download rather than a short file that looks whole.
 *
 * @param records The sessions.
 * @param format The format.
 * @param title The HTML document title.
 * @param onFailure Told the error before the stream errors with it (the
 *   response's status and headers are long gone: this is where it is logged).
 * @returns The stream.
 * @throws {Error} What reading the first session threw.
 */
export async function exportStream(
  records: AsyncIterable<SessionExport> | Iterable<SessionExport>,
  format: ExportFormat,
  title: string,
  onFailure: (error: unknown) => void = () => {},
): Promise<ReadableStream<Uint8Array>> {
  const rest = iteratorOf(records);
  const first = await rest.next();
  const pieces = exportPieces(replayed(first, rest), format, title);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<string>;
      try {
        next = await pieces.next();
      } catch (error) {
        onFailure(error);
        controller.error(error);
        return;
      }
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await pieces.return(undefined);
      // Cancelled before the pieces began (a HEAD request): the sessions' reader is ended here.
      await rest.return?.();
    },
  });
}
