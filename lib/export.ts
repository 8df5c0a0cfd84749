/**
 * Sessions with their messages, one at a time or all.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SessionExport } from "./types.ts";
import { todo } from "./_todo.ts";

/** Options of `exportAll` and `iterateExport`. */
export interface ExportOptions {
  source?: string | null;
}

export function exportSession(_store: Store, _id: string): SessionExport | undefined {
  return todo("exportSession");
}

export function exportAll(_store: Store, _options: ExportOptions): SessionExport[] {
  return todo("exportAll");
}

export function iterateExport(_store: Store, _options: ExportOptions): Generator<SessionExport> {
  return todo("iterateExport");
}
