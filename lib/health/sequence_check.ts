/**
 * The message id sequence: `messages` is `AUTOINCREMENT`, so SQLite never
 * hands out an id again, even the newest one deleted, as long as
 * `sqlite_sequence` holds the highest id it gave. A hand edit or a bad
 * restore can leave it behind the largest id there: SQLite then takes the
 * larger of the two, so all is well until the newest messages are deleted
 * (`delete`, `prune`), when their ids are given to the next messages, and
 * whoever keeps "messages after id N" (`sync`, `show --follow`) misses them.
 * The repair raises it to the largest id (what was deleted above it is
 * unknowable).
 *
 * It can also run out: SQLite fails every append once the sequence is
 * 2^63 - 1 ("database or disk is full"), which one imported id of that size
 * did (an import now gives new ids past 2^62). Past 2^62 the check says how
 * many appends are left; when the ids that took it there are gone (their
 * session deleted), the repair lowers it to the largest id.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { groupedInteger } from "../core/grouped_digits.ts";
import type { TimedWriter } from "./transaction.ts";

/** The largest id SQLite gives (2^63 - 1). */
const LARGEST_ID = 2n ** 63n - 1n;

/** The last id with room after it, as an import keeps ids (`lib/sqlite/import.ts`). */
const LAST_ROOMY_ID = 2n ** 62n;

/** The sequence and the largest id, when `messages` is `AUTOINCREMENT`. */
export interface MessageSequence {
  /** `sqlite_sequence`'s value for `messages` (0 when it has no row). */
  readonly sequence: bigint;
  /** The largest message id (0 when there is none). */
  readonly highest: bigint;
}

/**
 * Reads the message id sequence and the largest id.
 *
 * @param db The connection.
 * @returns Both, or `undefined` when `messages` keeps no sequence (a v10
 *   file Python migrated has no `AUTOINCREMENT`; `sqlite_sequence` dropped).
 */
export function readMessageSequence(db: SqliteConnection): MessageSequence | undefined {
  const table = db.prepare(
    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'",
  ).get();
  if (!/\bAUTOINCREMENT\b/i.test(String(table?.sql ?? ""))) return undefined;
  // SQLite makes it with the table; without it (dropped by hand) the schema check speaks.
  const hasSequence = db.prepare(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'",
  ).get() !== undefined;
  if (!hasSequence) return undefined;
  // One statement, so one snapshot: read apart, a writer's append between the two reads made
  // the sequence look behind. As text: an id beyond 2^53 stays exact.
  const row = db.prepare(
    `SELECT (SELECT CAST(seq AS TEXT) FROM sqlite_sequence WHERE name = 'messages') AS seq,
            (SELECT CAST(max(id) AS TEXT) FROM messages) AS id`,
  ).get();
  return {
    sequence: BigInt(String(row?.seq ?? 0)),
    highest: BigInt(String(row?.id ?? 0)),
  };
}

/**
 * The `sequence` finding.
 *
 * @param db The connection.
 * @returns ok, or a fixable warning when the sequence is behind the largest id.
 */
export function checkMessageSequence(db: SqliteConnection): HealthCheck {
  const found = readMessageSequence(db);
  if (found === undefined) {
    return finding(
      "sequence",
      "ok",
      "messages keeps no id sequence (no AUTOINCREMENT or no sqlite_sequence)",
    );
  }
  const { sequence, highest } = found;
  const state = `message id sequence ${groupedInteger(sequence)}, largest id ${
    groupedInteger(highest)
  }`;
  const next = sequence > highest ? sequence : highest;
  if (next > LAST_ROOMY_ID) {
    const left = `${state}: ${groupedInteger(LARGEST_ID - next)} more messages fit before SQLite ` +
      "refuses every append (database or disk is full)";
    // A problem once no append fits: Hermes can record nothing more.
    const status = next >= LARGEST_ID ? "problem" : "warning";
    if (highest <= LAST_ROOMY_ID) {
      return finding("sequence", status, left, {
        fix: "hermes-state doctor --fix (lowers the sequence to the largest id: the messages " +
          "above it are gone)",
        fixable: true,
      });
    }
    return finding("sequence", status, left, {
      fix: "export the sessions and import them into a new file, which gives new ids " +
        "(hermes-state export all.jsonl; hermes-state --db new.db import all.jsonl)",
    });
  }
  if (sequence >= highest) return finding("sequence", "ok", state);
  return finding(
    "sequence",
    "warning",
    `${state}: once the newest messages are deleted, their ids would be given again ` +
      "(sync and show --follow would miss the new messages)",
    { fix: "hermes-state doctor --fix (raises the sequence to the largest id)", fixable: true },
  );
}

/**
 * Sets the message id sequence to the largest id, in one transaction: raised
 * when behind it; lowered only when past 2^62 with every id there gone.
 *
 * @param db A writable connection.
 * @param writer Runs the transaction under the kit's lock wait.
 * @returns The sequence before and after.
 */
export async function mendMessageSequence(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<{ from: bigint; to: bigint }> {
  const { value } = await writer.runAsync(() => {
    const before = readMessageSequence(db);
    if (
      before !== undefined && before.sequence > LAST_ROOMY_ID && before.highest <= LAST_ROOMY_ID
    ) {
      db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'messages'").run(before.highest);
      return { from: before.sequence, to: readMessageSequence(db)?.sequence ?? before.highest };
    }
    if (before === undefined || before.sequence >= before.highest) {
      return { from: before?.sequence ?? 0n, to: before?.sequence ?? 0n };
    }
    const top = before.highest;
    const raised = db.prepare(
      "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'messages' AND seq < ?1",
    ).run(top).changes;
    if (raised === 0) {
      db.prepare(
        `INSERT INTO sqlite_sequence (name, seq) SELECT 'messages', ?1
         WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages')`,
      ).run(top);
    }
    return { from: before.sequence, to: readMessageSequence(db)?.sequence ?? top };
  });
  return value;
}
