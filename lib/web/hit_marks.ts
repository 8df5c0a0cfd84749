/**
 * The marks a transcript puts on a search hit's message (`[compacted]`,
 * `[rewound]`, `[hidden]`), so a hit on a row the transcript leaves out
 * says so in the hits as it does in the transcript opened with every row.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { SearchHit } from "../core/types.ts";
import { transcriptMarks } from "../core/message_row.ts";
import { mayLeaveRowsOut } from "./left_out.ts";

/**
 * The marks of each hit's message, by hit (in the order of `hits`): `[]`
 * for a message the transcript shows. Each message is read by its session
 * and id (one indexed row); after the first, none is read on a file whose
 * schema has no column that leaves a row out ({@linkcode mayLeaveRowsOut},
 * asked of that first row).
 *
 * @param store The store.
 * @param hits The hits of one answer.
 * @returns The marks of each hit, in order.
 */
export async function hitMarks(
  store: SessionStore,
  hits: readonly SearchHit[],
): Promise<string[][]> {
  const marks: string[][] = [];
  for (const hit of hits) {
    const [row] = await store.getMessages(hit.session_id, {
      includeInactive: true,
      fromId: hit.id,
      limit: 1,
    });
    // Gone since the search (or never a row of that session): nothing to mark.
    marks.push(row?.id === hit.id ? transcriptMarks(row) : []);
    if (row !== undefined && !mayLeaveRowsOut(store, row)) break;
  }
  while (marks.length < hits.length) marks.push([]);
  return marks;
}
