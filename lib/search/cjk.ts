/**
 * Detecting Chinese, Japanese and Korean text.
 *
 * @module
 */
import { todo } from "../_todo.ts";

export function containsCjk(_text: string): boolean {
  return todo("containsCjk");
}
