/**
 * `show --follow`: after a session's transcript, the messages a running
 * gateway goes on writing, printed as they come until Ctrl-C, as `tail -f`
 * does for a log. It says when the session ends (and when it is resumed),
 * goes on into the session that continues a compressed one, shows the whole
 * transcript again when it was rewritten or a rewind took messages back, and
 * stops when the session is deleted. A file that cannot be opened for a
 * while (gone, then put back) is said once and looked for again.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { MessageRow, SessionRow } from "../core/types.ts";
import { newestMessageId } from "../core/message_row.ts";
import { OpenError } from "../core/errors.ts";
import { StorageError } from "../core/storage_error.ts";
import { isPostgresTarget } from "../open_store.ts";
import { compressionContinuation } from "../core/compression_continuation.ts";
import type { Context } from "./command.ts";
import { formatDateTime } from "../render/format.ts";
import { visibleInline } from "../render/transcript.ts";
import { pauseUnless } from "./pause.ts";
import { printTranscript } from "./print_transcript.ts";

/** What {@linkcode followSession} starts from and how it prints. */
export interface FollowStart {
  /** The session shown. */
  readonly session: SessionRow;
  /** The messages read for the transcript just printed (before any filter). */
  readonly messages: readonly MessageRow[];
  /** Seconds between two looks at the store. */
  readonly seconds: number;
  /**
   * Reads a session's messages as the transcript does (`--all` or not): all
   * of them, or those with an id greater than `afterId`.
   */
  readonly read: (id: string, afterId?: number) => Promise<MessageRow[]>;
  /** The transcript of some of those messages (the filter of `show` applied). */
  readonly render: (messages: readonly MessageRow[]) => string;
  /**
   * When `messages` is only the end of the transcript (`--last`): the
   * session's newest message id and how many rows `read` gives up to it, and
   * the last of those rows (`undefined` for none). By default they are read
   * from `messages`.
   */
  readonly tail?: {
    readonly newest: number;
    readonly known: number;
    readonly lastRow: MessageRow | undefined;
  };
  /**
   * What of a transcript read again whole (it was rewritten) is printed
   * again: all of it by default, its end with `--last`.
   */
  readonly reprinted?: (messages: readonly MessageRow[]) => readonly MessageRow[];
}

/**
 * A row of a newer Hermes's file: it carries `active`, which a rewind turns
 * off in place (the rows taken back), where no count of the session moves.
 */
function changesInPlace(message: MessageRow): boolean {
  return "active" in message;
}

/**
 * Whether a look failed because the store could not be reached for now: the
 * file gone or not a database for a moment (`OpenError`), or the server's
 * connection lost (a PostgreSQL store's `StorageError` of kind `io`).
 */
function awayForNow(error: unknown, store: SessionStore): error is Error {
  if (error instanceof OpenError) return true;
  // A file's I/O error is a failing disk, not a file away for a moment: it ends the run.
  return error instanceof StorageError && error.kind === "io" && isPostgresTarget(store.target);
}

/**
 * Follows a session until the run is stopped (Ctrl-C, SIGTERM) or the
 * session is deleted. Every `seconds` it reads the store's change marker
 * and the session's row, and the messages only when either moved.
 *
 * @param store The open store.
 * @param ctx The command's context.
 * @param start The session, what was printed of it, and how to read and print more.
 * @returns The exit code: 0.
 */
export async function followSession(
  store: SessionStore,
  ctx: Context,
  start: FollowStart,
): Promise<number> {
  const { style } = ctx;
  // Each message's block after a blank line, in pieces (a rewritten transcript can be long).
  const print = (messages: readonly MessageRow[]) =>
    printTranscript(ctx.io, messages, start.render);
  const note = async (text: string) => {
    ctx.io.stdout(`\n${style.dim(`── ${text} ──`)}\n`);
    await ctx.io.drain();
  };
  let session = start.session;
  /** The messages printed so far: the newest id, and how many had an id up to it. */
  let newest = start.tail?.newest ?? newestMessageId(start.messages);
  let known = start.tail?.known ?? start.messages.length;
  /** The session row's message count when last read. */
  let rowCount = session.message_count;
  /** The file is a newer Hermes's, whose rewinds change rows in place. */
  let inPlace = start.messages.some(changesInPlace) ||
    (start.tail?.lastRow !== undefined && changesInPlace(start.tail.lastRow));
  let endSaid = session.ended_at !== null;
  // The first look reads the session whatever the marker: it may have ended in a compression.
  let marker = "";
  let stopping = false;
  const unlisten = ctx.io.onInterrupt?.(() => void (stopping = true));
  /** Why the file could not be read at the last look, said once (a restore by `rm` then `cp`). */
  let unreadable: string | undefined;
  const kind = isPostgresTarget(store.target) ? "server" : "file";
  try {
    while (!stopping) {
      await pauseUnless(start.seconds, () => stopping);
      if (stopping) break;
      try {
        // The session's own row too: a server's marker may see an update seconds late (its
        // table statistics), where the row, read by its key, is current.
        const current: SessionRow | undefined = await store.getSession(session.id);
        if (unreadable !== undefined) {
          await note(`the ${kind} can be read again`);
          unreadable = undefined;
        }
        const now = `${await store.dataVersion()} ${
          current === undefined
            ? "deleted"
            : `${current.ended_at} ${current.end_reason} ${current.message_count}`
        }`;
        if (now === marker) continue;
        marker = now;
        if (current === undefined) {
          await note(`session ${visibleInline(session.id)} was deleted`);
          return 0;
        }
        session = current;
        // A newer Hermes's transcript is compared whole on each change (a rewind moves no count).
        const fresh = inPlace ? undefined : await start.read(session.id, newest);
        inPlace ||= fresh?.some(changesInPlace) ?? false;
        if (fresh !== undefined && !inPlace && session.message_count === rowCount + fresh.length) {
          // Appends only, as a running gateway writes: the new rows are all there is to read.
          await print(fresh);
          known += fresh.length;
          newest = Math.max(newest, newestMessageId(fresh));
        } else {
          // Anything else (a rewrite, a rewind, a deletion): the whole transcript, compared.
          const messages = await start.read(session.id);
          const kept = messages.filter((message) => message.id <= newest).length;
          if (kept < known) {
            await note(
              `the transcript changed (messages taken back or rewritten); ${
                start.reprinted ? "its last messages" : "all of it"
              } again`,
            );
            await print(start.reprinted?.(messages) ?? messages);
            // What was shown is what there is now: a backup restored gives the next messages the
            // ids of the ones lost, which the newest id shown before would have kept back.
            newest = newestMessageId(messages);
          } else {
            await print(messages.filter((message) => message.id > newest));
            newest = Math.max(newest, newestMessageId(messages));
          }
          known = messages.length;
        }
        rowCount = session.message_count;
        await ctx.io.drain();
        if (session.ended_at === null) {
          if (endSaid) await note("resumed");
          endSaid = false;
          continue;
        }
        if (!endSaid) {
          const reason = session.end_reason ? ` · ${visibleInline(session.end_reason)}` : "";
          await note(`ended ${formatDateTime(session.ended_at)}${reason}`);
          endSaid = true;
        }
        const next = await compressionContinuation(store, session);
        if (next === undefined) continue;
        // Read before anything of it is said or kept: a failed read leaves the look to be redone.
        const continued = await start.read(next.id);
        await note(`continued in ${visibleInline(next.id)}`);
        session = next;
        await print(continued);
        newest = newestMessageId(continued);
        known = continued.length;
        rowCount = next.message_count;
        // Its end is said at the next look, as any session's (it may have ended already).
        endSaid = false;
        await ctx.io.drain();
      } catch (error) {
        if (!awayForNow(error, store)) throw error;
        // The file gone for a moment or put back, the server restarted: looked for again at
        // each look, as tail -F does; the look after it reads everything anew.
        marker = "";
        if (unreadable !== error.message) {
          await note(`${visibleInline(error.message)}; looking again`);
          unreadable = error.message;
        }
      }
    }
    return 0;
  } finally {
    unlisten?.();
  }
}
