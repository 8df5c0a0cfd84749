/**
 * The changed sessions of a `sync` pass, from the file to the server:
 * which of their messages (and whether their goals) to write, read and
 * batched within a byte budget, the batches written side by side
 * (`WriteLanes`), a session too large for a batch written alone a page at
 * a time, and the counts of what committed.
 *
 * Search vectors are computed here, outside the transactions, so that they
 * hold their locks briefly; while batches are in flight the next one is
 * read and computed.
 *
 * @module
 */
import { WriteLanes } from "../core/write_lanes.ts";
import { extraDigests } from "./_sync_digest.ts";
import {
  type FileMessages,
  type MessageRange,
  storedPages,
  storedValues,
  valuesBytes,
} from "./_sync_messages.ts";
import type { ServerSession, SourceSession } from "./_sync_source.ts";
import { type BatchItem, type Pass, writeBatch, writeStreamed } from "./_sync_write.ts";
import type { PgClient } from "./_client_types.ts";
import { exactInteger } from "./_sync_exact.ts";

/** Messages (and sessions) written per transaction; a session is never split. */
const BATCH_MESSAGES = 2000;
/** Sessions per transaction at most (each is one row of a multi-row upsert; 65,535 parameters a statement). */
const BATCH_SESSIONS = 1000;
/**
 * Bytes of text a transaction's messages hold at most, search vectors
 * included (`valuesBytes`), but for one message larger than that; a
 * session whose new messages exceed it is written alone, read a page of
 * half of it at a time. A pass holds up to {@linkcode LANES} batches in
 * flight and one being read, each two or three times over (the rows read,
 * the statement's parameters the client encodes): about 200 MB at most at
 * 16 MiB, where 2,000 ordinary messages (a few kilobytes each) take a few
 * megabytes, so ordinary batches stay capped by count, and a larger budget
 * would only shave round trips off transactions that already take seconds.
 */
const BATCH_BYTES = 16 * 1024 * 1024;
/**
 * Batches written at once, each in its own transaction on its own
 * connection (on two cores, 7,700 → 11,400 messages/s for a new
 * 200,000-message file with three lanes instead of one).
 */
const LANES = 3;

/** The counts of a `SyncResult` that writing sessions adds to. */
export const COUNTS = ["created", "updated", "appended", "rewritten", "messages", "goals"] as const;

/** Those counts. */
export type Counts = { -readonly [key in typeof COUNTS[number]]: number };

/** Counts of nothing written. */
function noCounts(): Counts {
  return Object.fromEntries(COUNTS.map((key) => [key, 0])) as Counts;
}

/** Adds `counts` to `to` (`sign` -1: takes them off). */
function addCounts(to: Counts, counts: Counts, sign: 1 | -1 = 1): void {
  for (const key of COUNTS) to[key] += sign * counts[key];
}

/** A session of a batch, with what writing it adds to the pass's counts. */
interface CountedItem extends BatchItem {
  /** What writing it adds to the counts. */
  readonly counts: Counts;
}

/** A changed session of the file, as the pass compared it with the server's record. */
export interface ChangedSession {
  /** The session in the file. */
  readonly session: SourceSession;
  /** What the server records of it, if anything. */
  readonly known: ServerSession | undefined;
  /** Its row changed. */
  readonly rowChanged: boolean;
  /** Its messages changed (count, highest id or digest). */
  readonly messagesChanged: boolean;
  /** Its per-session keys (goal) changed: added, changed or removed. */
  readonly metaChanged: boolean;
}

/** The order of two message ids (numbers, or `bigint`s beyond 2^53), compared exactly. */
function compareIds(a: unknown, b: unknown): number {
  const [x, y] = [exactInteger(a), exactInteger(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Which of a changed session's messages a pass writes. */
interface MessagesToWrite {
  /** Any. */
  readonly written: boolean;
  /** They are appended to what the server holds (a new session: to nothing). */
  readonly append: boolean;
  /** Their range in the file. */
  readonly range: MessageRange;
}

/**
 * Which of a changed session's messages a pass writes. Records in the
 * session its newer columns' digest when the server knows it.
 */
function messagesToWrite(messages: FileMessages, change: ChangedSession): MessagesToWrite {
  const { session, known } = change;
  const id = String(session.row.id);
  let append = known !== undefined && session.maxId >= known.maxId &&
    session.count >= known.count;
  if (append && change.messagesChanged) {
    // Appended to, when what the server holds is still in the file as it was.
    const held = messages.held(id, known!.maxId);
    append = held.count === known!.count &&
      (known!.messageDigest === null || held.digest === known!.messageDigest);
  }
  // New sessions have nothing to keep: their messages are all "appended" to nothing.
  if (known === undefined) append = true;
  // Rows the server holds that changed in place (a rewind, a compaction): all rewritten.
  let rewriteAll = false;
  if (messages.hasNewerColumns && known !== undefined) {
    const digests = messages.extraDigests(id, session.maxId, known.maxId);
    rewriteAll = digests.held !== known.extraDigest;
    session.extraDigest = digests.all;
  }
  if (rewriteAll) append = false;
  const after = append && known !== undefined ? known.maxId : 0;
  return {
    written: change.messagesChanged || rewriteAll,
    append,
    range: { session: id, after, upTo: session.maxId },
  };
}

/**
 * A session the server cannot hold as the file has it, found when its
 * messages are measured for writing: nothing of it was written or batched.
 */
export class UnshippableSession extends Error {
  /** @param reason Why, as the pass's report names it. */
  constructor(reason: string) {
    super(reason);
    this.name = "UnshippableSession";
  }
}

/** Adds what writing one session does to `counts`. */
function addSession(
  counts: Counts,
  change: ChangedSession,
  write: MessagesToWrite,
  messages: number,
): void {
  if (change.known === undefined) counts.created++;
  else if (change.rowChanged) counts.updated++;
  if (write.written) {
    if (change.known !== undefined && write.append) counts.appended += messages;
    else if (change.known !== undefined) counts.rewritten++;
    counts.messages += messages;
  }
  if (change.metaChanged) counts.goals++;
}

/**
 * Whether a session's per-session keys are written: when they changed, and
 * for a session new to the records (keys a session of the same server id
 * left behind are replaced).
 */
function writesMeta(change: ChangedSession): boolean {
  return change.metaChanged || change.known === undefined;
}

/** Options of {@linkcode SessionWriter}. */
export interface SessionWriterOptions {
  /** Called after each transaction committed, with the running totals. */
  readonly onProgress?: (counts: Counts) => void;
}

/**
 * Writes a pass's changed sessions: {@linkcode SessionWriter.add} each,
 * then {@linkcode SessionWriter.finish}; {@linkcode SessionWriter.settle}
 * in any case.
 */
export class SessionWriter {
  readonly #client: PgClient;
  readonly #pass: Pass;
  readonly #messages: FileMessages;
  readonly #onProgress?: (counts: Counts) => void;
  readonly #lanes = new WriteLanes(LANES);
  /**
   * What the sessions read so far write, but for those a transaction left
   * out (deleted on the server meanwhile): once every write ended, what the
   * pass wrote.
   */
  readonly totals: Counts = noCounts();
  /** What the committed transactions wrote. */
  readonly #committed: Counts = noCounts();
  /** Sessions to write in the next transaction, with the messages to insert. */
  #batch: CountedItem[] = [];
  #batched = 0;
  #batchedBytes = 0;

  /**
   * @param client The server.
   * @param pass The pass.
   * @param messages The file's messages.
   * @param options Progress.
   */
  constructor(
    client: PgClient,
    pass: Pass,
    messages: FileMessages,
    options: SessionWriterOptions = {},
  ) {
    this.#client = client;
    this.#pass = pass;
    this.#messages = messages;
    this.#onProgress = options.onProgress;
  }

  /**
   * Reads a changed session's messages to write and adds it to the batch
   * (writing the batch when full), or writes it alone when its messages
   * exceed the budget.
   *
   * @param change The session.
   * @throws The first failure of a write.
   */
  async add(change: ChangedSession): Promise<void> {
    const messages = this.#messages;
    const { session, known } = change;
    const write = messagesToWrite(messages, change);
    const size = write.written ? messages.measure(write.range) : undefined;
    if (size !== undefined && size.uncounted > 0) {
      // Shipped as NaN, silently, before: the session is left out and named instead.
      throw new UnshippableSession(
        `${size.uncounted} of the messages to ship hold${
          size.uncounted === 1 ? "s" : ""
        } a token count that is not a number`,
      );
    }
    if (size !== undefined && size.bytes > BATCH_BYTES) {
      if (messages.hasNewerColumns && known === undefined) {
        session.extraDigest = messages.extraDigests(write.range.session, session.maxId, 0).all;
      }
      return await this.#writeAlone(change, write);
    }
    const raw = write.written ? messages.all(write.range) : [];
    if (messages.hasNewerColumns && known === undefined) {
      // A new session: its digest from the rows just read (in time order; the digest's is id).
      const byId = [...raw].sort((a, b) => compareIds(a.id, b.id));
      session.extraDigest = extraDigests(byId, 0).all;
    }
    const rows = raw.map(storedValues);
    let bytes = valuesBytes(Object.values(session.row));
    for (const values of rows) bytes += valuesBytes(values);
    if (this.#batchedBytes + bytes > BATCH_BYTES) await this.#flush();
    // New to the records: whatever the server holds under its id (a session copied there
    // without them) is replaced, never added to.
    const append = (write.append && known !== undefined) || !write.written;
    const counts = noCounts();
    addSession(counts, change, write, rows.length);
    this.#batch.push({
      session,
      append,
      rows,
      meta: writesMeta(change),
      held: known !== undefined && append,
      counts,
    });
    this.#batched += rows.length + 1;
    this.#batchedBytes += bytes;
    addCounts(this.totals, counts);
    if (
      this.#batched >= BATCH_MESSAGES || this.#batch.length >= BATCH_SESSIONS ||
      this.#batchedBytes >= BATCH_BYTES
    ) await this.#flush();
    else await this.#lanes.yieldToIo();
  }

  /**
   * Writes what is batched, and waits for every write.
   *
   * @throws The first failure of a write.
   */
  async finish(): Promise<void> {
    await this.#flush();
    await this.#lanes.drain();
  }

  /** Waits for the writes in flight, their failures left to the caller's error. */
  async settle(): Promise<void> {
    await this.#lanes.drain().catch(() => {});
  }

  /** Hands the batch to a lane. */
  async #flush(): Promise<void> {
    if (this.#batch.length === 0) return;
    const items = this.#batch;
    this.#batch = [];
    this.#batched = 0;
    this.#batchedBytes = 0;
    // Batches commit in any order: progress adds up what each committed one wrote. A session
    // deleted on the server meanwhile was left out: it counts for nothing.
    await this.#lanes.submit(async () => {
      const written = new Set(await writeBatch(this.#client, this.#pass, items));
      for (const item of items) {
        if (written.has(item)) addCounts(this.#committed, item.counts);
        else addCounts(this.totals, item.counts, -1);
      }
      this.#onProgress?.({ ...this.#committed });
    });
  }

  /**
   * Writes a session whose new messages exceed the budget alone, in one
   * transaction, its messages read a page at a time in one snapshot of the
   * file, beside the batches in flight; the next session is read once it is
   * written.
   */
  async #writeAlone(change: ChangedSession, write: MessagesToWrite): Promise<void> {
    await this.#flush();
    const messages = this.#messages;
    const append = write.append && change.known !== undefined;
    const item = {
      session: change.session,
      append,
      pages: () => storedPages(messages.pages(write.range, BATCH_BYTES / 2, BATCH_MESSAGES)),
      meta: writesMeta(change),
      held: append,
    };
    await this.#lanes.submit(async () => {
      const count = await messages.snapshot(() => writeStreamed(this.#client, this.#pass, item));
      // Deleted on the server meanwhile: left out, it counts for nothing.
      if (count === undefined) return;
      const counts = noCounts();
      addSession(counts, change, write, count);
      addCounts(this.totals, counts);
      addCounts(this.#committed, counts);
      this.#onProgress?.({ ...this.#committed });
    });
    await this.#lanes.drain();
  }
}
