/**
 * A name read from a file (a column, a trigger) written into SQL text as an
 * identifier: double quotes around it, each quote inside doubled.
 *
 * @module
 */

/**
 * `name` quoted as an SQL identifier.
 *
 * @param name The column, table or trigger name.
 * @returns The quoted identifier.
 *
 * @example
 * ```ts
 * import { quoteIdentifier } from "./sql_identifier.ts";
 * console.assert(quoteIdentifier('odd "name"') === '"odd ""name"""');
 * ```
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
