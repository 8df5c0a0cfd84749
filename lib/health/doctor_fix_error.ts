/**
 * The error of a `doctor --fix` that stopped after its checks: the file
 * could not be written, the lock stayed taken, or the run was interrupted.
 * It carries the findings and the repairs already committed, so the caller
 * can still show them and say what is left.
 *
 * @module
 */
import type { HealthCheck, Repair } from "../core/health_report.ts";

/** A `doctor --fix` stopped: its findings, what it repaired, and why it stopped (`cause`). */
export class DoctorFixError extends Error {
  /** The database file. */
  readonly path: string;
  /** The findings of the checks, before any repair. */
  readonly checks: readonly HealthCheck[];
  /** The repairs committed before it stopped. */
  readonly repairs: readonly Repair[];
  /** True when it stopped because it was asked to (the signal), not on a failure. */
  readonly interrupted: boolean;

  /**
   * Creates the error.
   *
   * @param path The database file.
   * @param found The findings and the repairs committed.
   * @param cause Why it stopped.
   *
   * @example
   * ```ts
   * import { DoctorFixError } from "./doctor_fix_error.ts";
   * const error = new DoctorFixError("state.db", { checks: [], repairs: [] }, new Error("locked"));
   * console.assert(error.message === "locked" && !error.interrupted);
   * ```
   */
  constructor(
    path: string,
    found: { checks: readonly HealthCheck[]; repairs: readonly Repair[]; interrupted?: boolean },
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "DoctorFixError";
    this.path = path;
    this.checks = found.checks;
    this.repairs = found.repairs;
    this.interrupted = found.interrupted ?? false;
  }
}
