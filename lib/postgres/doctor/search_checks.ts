/**
 * The PostgreSQL doctor's checks of what search reads, with their repairs:
 *
 * - `search_rows`: one `message_words` row per message (that table has no
 *   foreign key: a message deleted by hand leaves its row behind, one
 *   inserted by hand has none and is never found), holding the message's
 *   own session, role, timestamp and `search_hidden`;
 * - `search_vectors`: each message's word and gram vectors are the ones this
 *   version computes from its text (`text_search.ts`): text changed by hand,
 *   or written by a version that tokenized differently, is found by words it
 *   no longer holds. Above `sampleAbove` messages only the newest are read,
 *   unless `full`. The stored vectors are read as text and compared in the
 *   client; the server compares again only those that differ there.
 *
 * @module
 */
import type { PgQuery, PgRow } from "../_client_types.ts";
import { gramsVector, searchDocument, vectorPrintedAs, wordsVector } from "../text_search.ts";
import { finding, type HealthCheck } from "../../core/health_report.ts";

/** Messages read per round trip while the vectors are compared or rewritten. */
const PAGE = 1_000;

/** `1 message has`, `2 messages have`. */
function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The count and the first ids of a query's rows (`SELECT id FROM … WHERE …`). */
async function countAndIds(
  query: PgQuery,
  idsSql: string,
): Promise<{ count: number; ids: number[] }> {
  const [row] = await query(`SELECT count(*) AS n FROM (${idsSql}) AS found`);
  const count = Number(row?.n ?? 0);
  if (count === 0) return { count, ids: [] };
  const rows = await query(`${idsSql} ORDER BY id LIMIT 20`);
  return { count, ids: rows.map((r) => Number(r.id)) };
}

const MISSING_FROM = `FROM messages m
  WHERE NOT EXISTS (SELECT 1 FROM message_words w WHERE w.id = m.id)`;
const MISSING_SQL = `SELECT m.id ${MISSING_FROM}`;
const ORPHAN_SQL = `SELECT w.id FROM message_words w
  WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = w.id)`;
const COPIED = "(session_id, role, timestamp, search_hidden)";
const STALE_COPY_SQL = `SELECT w.id FROM message_words w JOIN messages m ON m.id = w.id
  WHERE (w.session_id, w.role, w.timestamp, w.search_hidden)
    IS DISTINCT FROM (m.session_id, m.role, m.timestamp, m.search_hidden)`;

/**
 * The `search_rows` finding.
 *
 * @param query Runs a statement (in the checks' snapshot).
 * @returns ok, or a fixable problem naming the messages.
 */
export async function checkSearchRows(query: PgQuery): Promise<HealthCheck> {
  const missing = await countAndIds(query, MISSING_SQL);
  const orphans = await countAndIds(query, ORPHAN_SQL);
  const stale = await countAndIds(query, STALE_COPY_SQL);
  if (missing.count + orphans.count + stale.count === 0) {
    return finding("search_rows", "ok", "every message has its one message_words row");
  }
  const parts = [
    missing.count > 0
      ? `${counted(missing.count, "message has", "messages have")} no message_words row ` +
        "(search misses them)"
      : "",
    orphans.count > 0
      ? `${counted(orphans.count, "message_words row belongs", "message_words rows belong")} ` +
        "to no message"
      : "",
    stale.count > 0
      ? `${counted(stale.count, "message_words row differs", "message_words rows differ")} ` +
        `from their message ${COPIED}`
      : "",
  ].filter((part) => part !== "");
  return finding("search_rows", "problem", parts.join("; "), {
    fix:
      "hermes-state doctor --fix (writes the missing rows, deletes the others, copies the columns)",
    fixable: true,
    details: [
      ...missing.ids.map((id) => `message ${id}: no message_words row`),
      ...orphans.ids.map((id) => `message_words ${id}: no such message`),
      ...stale.ids.map((id) => `message_words ${id}: differs from message ${id}`),
    ],
  });
}

/**
 * Writes the missing `message_words` rows, deletes those of no message, and
 * copies the columns of those that differ: each in statements a concurrent
 * writer cannot interleave badly (a message and its row are inserted and
 * deleted by one statement).
 *
 * @param transaction Runs a function in one transaction.
 * @param onProgress Called with the rows written so far.
 * @returns What was done, in one line.
 */
export async function repairSearchRows(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  onProgress?: (done: number) => void,
): Promise<string> {
  let written = 0;
  for (;;) {
    const added = await transaction(async (query) => {
      // Locked, so that the text the vector is computed from is the text stored.
      const rows = await query(
        `SELECT m.id, m.content, m.tool_name, m.tool_calls ${MISSING_FROM}
         ORDER BY m.id LIMIT ${PAGE} FOR UPDATE OF m`,
      );
      if (rows.length === 0) return 0;
      const texts = rows.map(textOf);
      const inserted = await query(
        `INSERT INTO message_words (id, session_id, role, timestamp, search_hidden, search_words)
         SELECT m.id, m.session_id, m.role, m.timestamp, m.search_hidden, v.words::tsvector
         FROM jsonb_to_recordset($1::text::jsonb) AS v(id bigint, words text)
         JOIN messages m ON m.id = v.id
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [JSON.stringify(texts.map((t) => ({ id: t.id, words: wordsVector(t.document) })))],
      );
      return inserted.length === 0 ? -1 : inserted.length;
    });
    if (added <= 0) break;
    written += added;
    onProgress?.(written);
  }
  const [deleted] = await transaction((query) =>
    query(`WITH gone AS (DELETE FROM message_words WHERE id IN (${ORPHAN_SQL}) RETURNING 1)
           SELECT count(*) AS n FROM gone`)
  );
  const copied = await transaction((query) =>
    query(
      `UPDATE message_words w SET ${COPIED} = (m.session_id, m.role, m.timestamp, m.search_hidden)
       FROM messages m WHERE w.id IN (${STALE_COPY_SQL}) AND m.id = w.id RETURNING w.id`,
    )
  );
  return `wrote ${written} missing message_words rows, deleted ${
    Number(deleted?.n ?? 0)
  } of no message, copied the columns of ${copied.length}`;
}

/** A message's id and the text search sees. */
interface MessageText {
  readonly id: number;
  readonly document: string;
}

/** The texts of `ids`, each message locked until the transaction ends. */
async function lockTexts(query: PgQuery, ids: readonly number[]): Promise<MessageText[]> {
  const rows = await query(
    `SELECT id, content, tool_name, tool_calls FROM messages
     WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)::bigint) ORDER BY id FOR UPDATE`,
    [JSON.stringify(ids)],
  );
  return rows.map(textOf);
}

function textOf(row: PgRow): MessageText {
  return {
    id: Number(row.id),
    document: searchDocument(
      row.content as string | null,
      row.tool_name as string | null,
      row.tool_calls as string | null,
    ),
  };
}

/** The vectors a write computes for each text, as JSON for `jsonb_to_recordset`. */
function vectorsJson(texts: readonly MessageText[]): string {
  return JSON.stringify(texts.map((t) => ({
    id: t.id,
    words: wordsVector(t.document),
    grams: gramsVector(t.document),
  })));
}

/**
 * Messages whose stored vectors differ from the ones their text gives,
 * among those compared: the server parses each computed literal and
 * compares the vectors.
 */
async function staleVectors(query: PgQuery, texts: readonly MessageText[]): Promise<number[]> {
  if (texts.length === 0) return [];
  const rows = await query(
    `SELECT v.id FROM jsonb_to_recordset($1::text::jsonb) AS v(id bigint, words text, grams text)
     JOIN messages m ON m.id = v.id JOIN message_words w ON w.id = v.id
     WHERE w.search_words <> v.words::tsvector OR m.search_grams <> v.grams::tsvector
     ORDER BY v.id`,
    [vectorsJson(texts)],
  );
  return rows.map((row) => Number(row.id));
}

/**
 * Whether a message's stored vectors, as the server prints them, are the
 * ones its text gives ({@linkcode vectorPrintedAs}). A message with no
 * `message_words` row is `search_rows`' finding, not this one's.
 */
function printedAlike(row: PgRow, text: MessageText): boolean {
  if (row.words === null) return true;
  return vectorPrintedAs(wordsVector(text.document), String(row.words)) &&
    vectorPrintedAs(gramsVector(text.document), String(row.grams));
}

/** A page of messages below `below` (newest first), with their stored vectors as text. */
function messagesBelow(query: PgQuery, below: number | null, limit: number): Promise<PgRow[]> {
  return query(
    `SELECT m.id, m.content, m.tool_name, m.tool_calls,
       w.search_words::text AS words, m.search_grams::text AS grams
     FROM messages m LEFT JOIN message_words w ON w.id = m.id
     ${below === null ? "" : `WHERE m.id < ${below}`} ORDER BY m.id DESC LIMIT ${limit}`,
    [],
    { custom: true },
  );
}

/** Options of {@linkcode checkSearchVectors}. */
export interface VectorCheckOptions {
  /** Every message, however many. */
  readonly full: boolean;
  /** Above this many messages, only the newest this many are compared. */
  readonly sampleAbove: number;
  /** Called with the messages compared so far and how many will be. */
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * The `search_vectors` finding: computes each message's vectors from its
 * text, as a write does, and compares them with the stored ones.
 *
 * @param query Runs a statement (in the checks' snapshot).
 * @param options `full`, `sampleAbove`, progress.
 * @returns The finding, and every stale message id (for the repair).
 */
export async function checkSearchVectors(
  query: PgQuery,
  options: VectorCheckOptions,
): Promise<{ check: HealthCheck; stale: number[] }> {
  const [counted] = await query("SELECT count(*) AS n FROM messages");
  const total = Number(counted?.n ?? 0);
  const sampled = !options.full && total > options.sampleAbove;
  const toRead = sampled ? options.sampleAbove : total;
  // Newest first (descending ids), so that a sample is the newest messages. Each page's
  // vectors are compared here, as the server prints them, while it reads the next page; the
  // few that differ are compared again by the server itself (the literal parsed as a write
  // parses it), so that only a real difference is reported.
  let read = 0;
  let differing: MessageText[] = [];
  const stale: number[] = [];
  const confirm = async () => {
    stale.push(...await staleVectors(query, differing));
    differing = [];
  };
  let next: Promise<PgRow[]> | undefined = messagesBelow(query, null, Math.min(PAGE, toRead));
  while (next !== undefined) {
    const rows: PgRow[] = await next;
    next = undefined;
    if (rows.length === 0) break;
    read += rows.length;
    if (read < toRead && rows.length === PAGE) {
      next = messagesBelow(query, Number(rows[rows.length - 1].id), Math.min(PAGE, toRead - read));
      // Awaited on the next turn; until then, a failure must not go unhandled.
      next.catch(() => {});
    }
    for (const row of rows) {
      const text = textOf(row);
      if (!printedAlike(row, text)) differing.push(text);
    }
    if (differing.length >= PAGE) await confirm();
    options.onProgress?.(read, toRead);
  }
  await confirm();
  stale.sort((a, b) => a - b);
  const scope = sampled
    ? `the newest ${read} of ${total} messages (--full: all)`
    : `${read} messages`;
  if (stale.length === 0) {
    return {
      check: finding("search_vectors", "ok", `search vectors match the text of ${scope}`),
      stale,
    };
  }
  return {
    check: finding(
      "search_vectors",
      "problem",
      `${stale.length} of ${scope} ${
        stale.length === 1 ? "has" : "have"
      } search vectors that differ from their text (search finds them by the wrong words)`,
      {
        fix: "hermes-state doctor --fix (computes them again)",
        fixable: true,
        details: stale.map((id) => `message ${id}: vectors differ from its text`),
      },
    ),
    stale,
  };
}

/**
 * Computes the vectors of `ids` again from their text and stores them, a
 * page per transaction, each message locked while its vectors are written.
 *
 * @param transaction Runs a function in one transaction.
 * @param ids The messages.
 * @param onProgress Called with the messages done so far.
 * @returns What was done, in one line.
 */
export async function repairSearchVectors(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  ids: readonly number[],
  onProgress?: (done: number) => void,
): Promise<string> {
  let rewritten = 0;
  for (let at = 0; at < ids.length; at += PAGE) {
    const page = ids.slice(at, at + PAGE);
    rewritten += await transaction(async (query) => {
      const vectors = vectorsJson(await lockTexts(query, page));
      const words = await query(
        `UPDATE message_words w SET search_words = v.words::tsvector
         FROM jsonb_to_recordset($1::text::jsonb) AS v(id bigint, words text)
         WHERE w.id = v.id AND w.search_words <> v.words::tsvector RETURNING w.id`,
        [vectors],
      );
      const grams = await query(
        `UPDATE messages m SET search_grams = v.grams::tsvector
         FROM jsonb_to_recordset($1::text::jsonb) AS v(id bigint, grams text)
         WHERE m.id = v.id AND m.search_grams <> v.grams::tsvector RETURNING m.id`,
        [vectors],
      );
      return new Set([...words, ...grams].map((row) => Number(row.id))).size;
    });
    onProgress?.(Math.min(at + PAGE, ids.length));
  }
  return `computed the search vectors of ${rewritten} messages again`;
}
