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
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { groupedInteger } from "../core/grouped_digits.ts";
import type { TimedWriter } from "./transaction.ts";

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
 * Raises the message id sequence to the largest id, in one transaction
 * (never lowers it).
 *
 * @param db A writable connection.
 * @param writer Runs the transaction under the kit's lock wait.
 * @returns The sequence before and after.
 */
export async function raiseMessageSequence(
  db: SqliteConnection,
  writer: TimedWriter,
): Promise<{ from: bigint; to: bigint }> {
  const { value } = await writer.runAsync(() => {
    const before = readMessageSequence(db);
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
