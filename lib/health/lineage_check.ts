/**
 * Lineage: parents that do not exist, and cycles of parent links (which
 * would make every lineage walk stop short).
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import type { HealthCheck } from "../core/health_report.ts";
import {
  findLineageFaults,
  type LineageFaults,
  lineageFinding,
  lineageLinkOf,
} from "../core/lineage_faults.ts";

/**
 * Finds broken and circular parent links of a state.db file.
 *
 * @param db The connection.
 * @returns The faults.
 */
export function lineageFaults(db: SqliteConnection): LineageFaults {
  const rows = db.prepare("SELECT id, parent_session_id, started_at FROM sessions").iterate();
  return findLineageFaults(
    (function* () {
      for (const row of rows) yield lineageLinkOf(row);
    })(),
  );
}

/**
 * The `lineage` finding.
 *
 * @param db The connection.
 * @returns ok, or a fixable problem.
 */
export function checkLineage(db: SqliteConnection): HealthCheck {
  return lineageFinding(lineageFaults(db));
}
