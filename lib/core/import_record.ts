/**
 * An import record (a session with its messages, as `export` writes it)
 * checked the same way by every engine before it writes anything.
 *
 * @module
 */

/** Keys an export adds that are no column: they are never reported as dropped. */
const NOT_COLUMNS = new Set(["messages", "last_active", "id", "session_id"]);

/**
 * The columns of a record (session ones, then `messages.` ones) that the
 * target's tables have no place for; shared by every engine.
 *
 * @param row The session record.
 * @param messages Its messages.
 * @param columns The target's column names of `sessions` and of `messages`.
 * @returns The dropped column names.
 */
export function unknownColumns(
  row: Record<string, unknown>,
  messages: readonly Record<string, unknown>[],
  columns: { sessions: ReadonlySet<string>; messages: ReadonlySet<string> },
): string[] {
  const dropped = Object.keys(row).filter((key) =>
    !NOT_COLUMNS.has(key) && !columns.sessions.has(key)
  );
  const messageKeys = new Set(messages.flatMap((message) => Object.keys(message)));
  for (const key of messageKeys) {
    if (!NOT_COLUMNS.has(key) && !columns.messages.has(key)) dropped.push(`messages.${key}`);
  }
  return dropped;
}
