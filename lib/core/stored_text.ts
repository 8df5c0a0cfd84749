/**
 * The stored text of the message columns a read parses (`content` behind
 * the multimodal prefix, `tool_calls`), kept on the message it was read
 * into, so that a copy to another store writes the same bytes: parsing
 * JSON and writing it again loses what JavaScript numbers cannot hold
 * (`1.0` becomes `1`, `1152921504606846977` becomes `1152921504606847000`)
 * and the spacing of JSON that another writer made compact.
 *
 * The text is kept under a symbol, not enumerable: a JSON export, a spread
 * or a `structuredClone` of the message never carries it.
 *
 * @module
 */

/** The key of the stored texts on a message read from a store. */
const STORED_TEXT: unique symbol = Symbol("hermes-state.storedText");

/** A message that may carry the stored text of its parsed columns. */
type WithStoredText = { [STORED_TEXT]?: Record<string, string> };

/**
 * Keeps on `message` the text `column` held in the store, before it was parsed.
 *
 * @param message The message read.
 * @param column The parsed column (`content`, `tool_calls`).
 * @param text What the column stored.
 */
export function keepStoredText(message: object, column: string, text: string): void {
  const carrier = message as WithStoredText;
  let texts = carrier[STORED_TEXT];
  if (texts === undefined) {
    texts = {};
    Object.defineProperty(message, STORED_TEXT, { value: texts, enumerable: false });
  }
  texts[column] = text;
}

/**
 * The text `column` held in the store the message was read from, when it
 * was parsed on reading ({@linkcode keepStoredText}).
 *
 * @param message A message, read from a store or not.
 * @param column The column.
 * @returns The stored text, or `undefined` when none was kept.
 */
export function storedTextOf(message: object, column: string): string | undefined {
  return (message as WithStoredText)[STORED_TEXT]?.[column];
}

/**
 * Keeps on `to` every stored text `from` keeps ({@linkcode keepStoredText}):
 * a message made from another by a spread (`{ ...message, session_id }`)
 * loses them, the symbol not being enumerable.
 *
 * @param from The message read from a store.
 * @param to The message made from it.
 * @returns `to`.
 */
export function withStoredTextOf<T extends object>(from: object, to: T): T {
  const texts = (from as WithStoredText)[STORED_TEXT];
  if (texts !== undefined) {
    for (const [column, text] of Object.entries(texts)) keepStoredText(to, column, text);
  }
  return to;
}
