/**
 * A `sync` pass's reads of the file with their integers exact: a JS number
 * rounds an integer beyond ±(2^53 - 1) (`9007199254740993` is read as
 * `…992`), so a token count, a newer Hermes's integer column or a message
 * id beyond it would reach the server rounded. Rows are read as usual; only
 * a read that gave such a number (an integer-valued number that is not a
 * safe integer: none within the range is rounded) is read again with the
 * digits of its rounded integers listed (`exactIntegersTerm`), which become
 * `bigint`s. Ordinary rows cost one look at each value: about 0.3 µs a
 * message row (12 ms over 40,000), well under 1% of what shipping it costs.
 *
 * @module
 */
import type { Store } from "../sqlite/store.ts";
import { exactIntegersTerm, putExactIntegers } from "../sqlite/exact_values.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { isRoundedInteger } from "../core/exact_json.ts";

/** A row of the file. */
export type SqlRow = ReturnType<ReturnType<Store["statement"]>["all"]>[number];
/** A value SQLite binds. */
export type SqlValue = SqlRow[string];

/** The alias of the listed exact integers in a read again. */
const EXACT = "hermes_sync_exact_integers";

/**
 * Whether a row holds a number a JS number may have rounded: an integer
 * beyond ±(2^53 - 1) (a REAL there, read again, stays the number it is).
 *
 * @param row A row as the driver returns it.
 * @returns `true` when it should be read again exactly.
 */
export function mayBeRounded(row: SqlRow): boolean {
  return Object.values(row).some(isRoundedInteger);
}

/** A column name of the file quoted for SQLite. */
export const quote: (name: string) => string = quoteIdentifier;

/**
 * A read of `columns` whose rows come back exactly: `sqlOf` builds the
 * statement from a select list (the columns, or the columns and the term
 * that lists their rounded integers).
 */
export class ExactRead {
  readonly #store: Store;
  readonly #columns: readonly string[];
  readonly #plain: string;
  readonly #exact: string;

  /**
   * @param store The file.
   * @param columns The columns read, by name, as the rows key them.
   * @param sqlOf The statement of a select list.
   * @param list The select list, when not the quoted columns (an expression
   *   may stand for a column, named as it).
   */
  constructor(
    store: Store,
    columns: readonly string[],
    sqlOf: (list: string) => string,
    list: string = columns.map(quote).join(", "),
  ) {
    this.#store = store;
    this.#columns = columns;
    this.#plain = sqlOf(list);
    this.#exact = sqlOf(`${list}, ${exactIntegersTerm(columns)} AS ${EXACT}`);
  }

  /**
   * The rows: as usual, or, when any may hold a rounded integer, read again
   * with such integers as `bigint`s.
   *
   * @param params The statement's parameters.
   * @returns The rows.
   */
  all(...params: SqlValue[]): SqlRow[] {
    const rows = this.#store.statement(this.#plain).all(...params);
    if (!rows.some(mayBeRounded)) return rows;
    return this.#store.statement(this.#exact).all(...params).map((row) => this.#exactRow(row));
  }

  /**
   * One row, as {@linkcode ExactRead.all} reads them.
   *
   * @param params The statement's parameters.
   * @returns The row, or `undefined`.
   */
  get(...params: SqlValue[]): SqlRow | undefined {
    const row = this.#store.statement(this.#plain).get(...params);
    if (row === undefined || !mayBeRounded(row)) return row;
    const exact = this.#store.statement(this.#exact).get(...params);
    return exact === undefined ? undefined : this.#exactRow(exact);
  }

  /** A row read with the term, its listed integers put in place. */
  #exactRow(row: SqlRow): SqlRow {
    const values = this.#columns.map((column) => row[column]);
    putExactIntegers(values, row[EXACT]);
    delete row[EXACT];
    this.#columns.forEach((column, i) => row[column] = values[i]);
    return row;
  }
}

/**
 * An integer read from the file or the server, exact: a number within
 * ±(2^53 - 1), a `bigint` beyond (so two equal values are `===`).
 *
 * @param value A number, a `bigint`, or an integer's digits.
 * @returns The number or the `bigint`.
 */
export function exactInteger(value: unknown): number | bigint {
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  }
  if (typeof value === "string" && /^-?\d+$/.test(value)) {
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : BigInt(value);
  }
  return Number(value);
}

/**
 * SQLite's test that a file's column holds a value a number column of the
 * server refuses, as `copy` refuses it: text, a BLOB, or an infinite REAL
 * (`1e999`); NULL passes unless `nullable` is false. True or false, or
 * NULL where it passes (a `sum` counts the rows that fail).
 *
 * @param column The column, quoted if it must be.
 * @param nullable Whether NULL is a value the server keeps.
 * @returns The SQL expression.
 */
export function notAServerNumberSql(column: string, nullable: boolean): string {
  const types = nullable ? "'integer', 'real', 'null'" : "'integer', 'real'";
  // Compared, not abs(): SQLite's abs() of -2^63 fails the whole read ("integer overflow").
  return `(typeof(${column}) NOT IN (${types}) OR ${column} > 1.7976931348623157e308 ` +
    `OR ${column} < -1.7976931348623157e308)`;
}
