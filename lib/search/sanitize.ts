/**
 * Turning user text into a query FTS5 accepts.
 *
 * @module
 */
import { todo } from "../_todo.ts";

export function sanitizeFts5Query(_query: string): string {
  return todo("sanitizeFts5Query");
}
