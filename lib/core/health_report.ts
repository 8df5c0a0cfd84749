/**
 * The vocabulary of a health check: each finding is ok, a warning or a
 * problem, with one line of explanation and the fix; the repairs made and
 * the whole report, whichever engine's store was checked.
 *
 * @module
 */

/** How a check came out: a problem makes `doctor` exit 1; a warning does not. */
export type CheckStatus = "ok" | "warning" | "problem";

/** One finding of {@linkcode doctor} (and of `info`'s integrity line). */
export interface HealthCheck {
  /** What was checked: `integrity`, `fts:messages_fts`, `counters`, `files`… */
  readonly name: string;
  /** The verdict. */
  readonly status: CheckStatus;
  /** One line: what was found. */
  readonly summary: string;
  /** One line: how to fix it (absent when nothing is to be done). */
  readonly fix?: string;
  /** True when `doctor --fix` repairs it. */
  readonly fixable: boolean;
  /** Up to {@linkcode MAX_DETAILS} examples (ids, messages of SQLite). */
  readonly details: readonly string[];
}

/** Examples kept per finding. */
export const MAX_DETAILS = 20;

/** A finding, with `details` cut to {@linkcode MAX_DETAILS}. */
export function finding(
  name: string,
  status: CheckStatus,
  summary: string,
  more: { fix?: string; fixable?: boolean; details?: readonly string[] } = {},
): HealthCheck {
  const check: HealthCheck = {
    name,
    status,
    summary,
    fixable: status !== "ok" && (more.fixable ?? false),
    details: (more.details ?? []).slice(0, MAX_DETAILS),
  };
  return more.fix === undefined || status === "ok" ? check : { ...check, fix: more.fix };
}

/** True when no finding is a problem. */
export function isHealthy(checks: readonly HealthCheck[]): boolean {
  return checks.every((check) => check.status !== "problem");
}

/** One repair `doctor --fix` made. */
export interface Repair {
  /** The finding it answers (`fts:messages_fts`, `counters`…). */
  readonly name: string;
  /** What was done, in one line. */
  readonly summary: string;
  /**
   * Its longest hold of the write lock, in milliseconds (on PostgreSQL, its
   * longest transaction).
   */
  readonly longestLockMs: number;
}

/** The answer of `doctor`. */
export interface DoctorReport {
  /** The file checked (on PostgreSQL, the URL, its password masked). */
  readonly path: string;
  /** The SQLite library that checked it (on PostgreSQL, the server's version: `PostgreSQL 15.18`). */
  readonly sqliteVersion: string;
  /** The findings before any repair. */
  readonly checks: HealthCheck[];
  /** The repairs made (empty without `fix`). */
  readonly repairs: Repair[];
  /** The findings after the repairs; `undefined` without `fix`. */
  readonly after: HealthCheck[] | undefined;
  /** True when the last findings hold no problem (warnings allowed). */
  readonly healthy: boolean;
  /** The longest hold of the write lock by any repair, in milliseconds (0 without `fix`). */
  readonly longestLockMs: number;
}
