/**
 * What `import` and `copy` say of a session they wrote under another title
 * (the record's was another session's in the target).
 *
 * @module
 */
import { visibleInline } from "../render/transcript.ts";

/**
 * Says that a session was written under another title, and which: one
 * printable line, without the command's prefix.
 *
 * @param result What `importSession` answered (its `renamedTo` set).
 * @returns The note.
 */
export function renamedNote(result: { id: string; renamedTo: string | null }): string {
  return visibleInline(
    `session ${result.id} took the title '${result.renamedTo}' ` +
      "(another session has the one it had)",
  );
}
