/**
 * The store's own query parameters of a server URL (`?schema=` and
 * `?pool_size=`), taken off before the URL reaches the client, and the
 * checks of a schema name and of the pool settings made before any
 * connection is.
 *
 * @module
 */
import { OpenError } from "../core/errors.ts";
import { quotedValue } from "../core/shown_value.ts";
import type { PgConnectOptions } from "./_client_types.ts";
import { maskPassword, uriParameters } from "./_url.ts";

/** A plain identifier, as the store quotes none of its own. */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;
/** PostgreSQL's longest identifier, in bytes (ASCII here: characters). */
const MAX_IDENTIFIER = 63;
/** The server's own schemas: no store can be made there (`pg_` is refused by the server). */
const SYSTEM_SCHEMA = /^(pg_|information_schema$)/;

/** Why `schema` cannot hold a store, or `undefined` when it can. */
function schemaNameProblem(schema: string): string | undefined {
  if (typeof schema !== "string" || !PLAIN_IDENTIFIER.test(schema)) {
    return "the schema must be a plain identifier (letters, digits, _ and $)";
  }
  if (schema.length > MAX_IDENTIFIER) {
    return "the schema name must be at most 63 characters (PostgreSQL's limit)";
  }
  if (SYSTEM_SCHEMA.test(schema)) return "the schema must not be one of the server's own";
  return undefined;
}

/**
 * Refuses a schema name that cannot hold a store, naming it.
 *
 * @param url The URL errors name (its password masked).
 * @param schema The schema name.
 * @throws {OpenError} When it is not a plain identifier of at most 63
 *   characters, or is one of the server's own.
 */
export function checkSchemaName(url: string, schema: string): void {
  const problem = schemaNameProblem(schema);
  if (problem === undefined) return;
  throw new OpenError(
    maskPassword(url),
    `${problem}: current value is ${quotedValue(schema)}`,
    { kind: "other" },
  );
}

/**
 * Refuses a pool size or a number of attempts that is not a positive
 * integer, naming it, before any connection is made: the client took `0`
 * as a pool that never connects (a 30 s wait, then "the server did not
 * accept the connection") and `NaN` or `1.5` with "Invalid array length".
 *
 * @param options The pool settings of an open.
 * @throws {RangeError} When `max` or `maxAttempts` is not a positive integer.
 */
export function checkPoolSettings(options: PgConnectOptions): void {
  for (const [name, value] of [["max", options.max], ["maxAttempts", options.maxAttempts]]) {
    if (value === undefined || (Number.isInteger(value) && (value as number) >= 1)) continue;
    throw new RangeError(
      `Cannot open database: ${name} must be a positive integer: current value is ${
        quotedValue(value)
      }`,
    );
  }
}

/** The most connections `?pool_size=` may ask for. */
const MAX_POOL_SIZE = 1000;

/** The query parameters the store reads itself, not sent to the server. */
const STORE_PARAMETERS = new Set(["schema", "pool_size"]);

/** A server URL with the store's own parameters taken off. */
export interface ParsedPostgresUrl {
  /** The URL without `?schema=` and `?pool_size=`, its other parameters as written. */
  readonly url: string;
  /** `?schema=`: `hermes` when absent. */
  readonly schema: string;
  /** `?pool_size=`: the connections of the pool, when given. */
  readonly poolSize?: number;
}

/** The single value of the store's parameter `name` in `params`, refusing it twice. */
function singleParameter(
  url: string,
  params: URLSearchParams,
  name: string,
): string | undefined {
  const given = params.getAll(name);
  if (given.length > 1) {
    throw new OpenError(
      maskPassword(url),
      `the URL gives ?${name}= ${given.length} times: current values are ${
        given.map(quotedValue).join(", ")
      }`,
      { kind: "other" },
    );
  }
  return given[0];
}

/** `?pool_size=`'s value as a number of connections, refusing any other text, naming it. */
function poolSizeOf(url: string, text: string): number {
  const size = Number(text);
  if (!/^\d{1,4}$/.test(text) || size < 1 || size > MAX_POOL_SIZE) {
    throw new OpenError(
      maskPassword(url),
      `?pool_size= must be a whole number of connections from 1 to ${MAX_POOL_SIZE}: current value is ${
        quotedValue(text)
      }`,
      { kind: "other" },
    );
  }
  return size;
}

/**
 * Splits the store's own query parameters off a server URL: `?schema=` (the
 * PostgreSQL schema holding the tables) and `?pool_size=` (the connections
 * of the pool; 4 by default: a role with a lower `CONNECTION LIMIT`, or a
 * server with few connections to share, can ask for fewer).
 *
 * @param url A `postgres://` URL, maybe with `?schema=NAME` and `?pool_size=N`.
 * @returns The URL without them, the schema (`hermes` by default) and the pool size if given.
 * @throws {OpenError} When the schema is not a plain identifier of at most
 *   63 characters, is one of the server's own (`pg_…`, `information_schema`),
 *   or either parameter is given twice, or the pool size is not a whole
 *   number from 1 to 1000.
 */
export function parsePostgresUrl(url: string): ParsedPostgresUrl {
  const at = url.indexOf("?");
  if (at === -1) return { url, schema: "hermes" };
  const params = uriParameters(url.slice(at + 1).split("#")[0], true);
  const schema = singleParameter(url, params, "schema") ?? "hermes";
  checkSchemaName(url, schema);
  const poolText = singleParameter(url, params, "pool_size");
  // The other parameters as written (re-encoding them would change what errors show).
  const rest = url.slice(at + 1).split("&").filter((part) =>
    part !== "" && !STORE_PARAMETERS.has(uriParameters(part, true).keys().next().value ?? "")
  );
  return {
    url: url.slice(0, at) + (rest.length > 0 ? `?${rest.join("&")}` : ""),
    schema,
    ...(poolText === undefined ? {} : { poolSize: poolSizeOf(url, poolText) }),
  };
}
