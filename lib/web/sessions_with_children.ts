/**
 * The sessions of an export's filter that have a child session: what the
 * listing's "Has children" filter shows, so that the export of that
 * listing holds the same sessions.
 *
 * @module
 */
import type { ExportOptions } from "../core/transfer_options.ts";
import type { SessionStore } from "../core/session_store.ts";

/** Sessions read per listing page while the ids are gathered. */
const PAGE = 500;

/**
 * The ids of the sessions that `filter` selects (source, start range,
 * origin) and that have at least one child session (delegates, branches,
 * continuations), children and archived sessions among them, as an export
 * of a set holds them.
 *
 * @param store The store.
 * @param filter The export's filter.
 * @returns The ids.
 */
export async function sessionsWithChildren(
  store: SessionStore,
  filter: ExportOptions & { readonly origin?: string },
): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0;; offset += PAGE) {
    const rows = await store.listSessionsRich({
      ...filter,
      hasChildren: true,
      includeChildren: true,
      includeArchived: true,
      limit: PAGE,
      offset,
    });
    for (const row of rows) ids.add(row.id);
    if (rows.length < PAGE) return ids;
  }
}
