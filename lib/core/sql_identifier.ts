/**
 * A name written into SQL text as an identifier (a column or trigger read
 * from a SQLite file, a PostgreSQL schema or role): double quotes around it,
 * each quote inside doubled, as standard SQL and both engines read it.
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
