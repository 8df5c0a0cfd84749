/**
 * The filters the PostgreSQL engine's listings, counts and exports share:
 * one source, one origin (the sessions `sync` shipped from it) and a range
 * of start times, as WHERE clauses on sessions `s` whose values are bound
 * as `$n` parameters.
 *
 * @module
 */
import type { OptionNames } from "../core/option_names.ts";
import { checkOptionalText } from "../core/session_options.ts";
import { checkStartedRange, type ListSessionsOptions } from "../core/listing_options.ts";
import type { PgValue } from "./_client_types.ts";

/**
 * The filter by origin the PostgreSQL engine adds to `listSessionsRich`,
 * `searchSessions`, `sessionCount`, `searchMessages`, `exportAll` and
 * `iterateExport`: only sessions that `hermes-state sync` shipped from that
 * origin.
 */
export interface OriginFilter {
  /** An origin name (`sync_origins.origin`); all sessions when empty. */
  readonly origin?: string | null;
}

/**
 * `names` and `origin`: the options of a listing, a search, an export or a
 * usage report on this engine, checked by name.
 *
 * @param names The options every engine takes.
 * @returns Them and `origin`.
 */
export function withOrigin<T>(names: OptionNames<T>): OptionNames<T & OriginFilter> {
  return { ...names, origin: true } as OptionNames<T & OriginFilter>;
}

/** Sessions `s` that `sync` shipped from the origin `$n`. */
export const BY_ORIGIN = (n: number) =>
  `s.id IN (SELECT so.session_id FROM sync_sessions so WHERE so.origin = $${n})`;

/**
 * The WHERE of `searchSessions`, `sessionCount` and `iterateExport`: one
 * source and one origin, each when given; their values are appended to
 * `params`.
 *
 * @param options The source and origin asked for (checked as text).
 * @param params The statement's parameters so far; the values are appended.
 * @param action What the caller does, for the error of a bad value.
 * @returns `WHERE …`, or `""` without either.
 */
export function sourceAndOrigin(
  options: { readonly source?: string | null } & OriginFilter,
  params: PgValue[],
  action: string,
): string {
  checkOptionalText(action, "source", options.source);
  checkOptionalText(action, "origin", options.origin);
  const clauses: string[] = [];
  if (options.source) {
    params.push(options.source);
    clauses.push(`s.source = $${params.length}`);
  }
  if (options.origin) {
    params.push(options.origin);
    clauses.push(BY_ORIGIN(params.length));
  }
  return clauses.length ? `WHERE ${clauses.join(" AND ")}` : "";
}

/**
 * The WHERE clauses of a start-time range on sessions `s` (a listing's, an
 * export's), the bounds checked; their values are appended to `params`.
 *
 * @param options The bounds asked for.
 * @param params The statement's parameters so far; the values are appended.
 * @param action What the caller does, for the error of a bad bound.
 * @returns The clauses, none without bounds.
 */
export function startedRangeClauses(
  options: Pick<ListSessionsOptions, "startedAfter" | "startedBefore">,
  params: PgValue[],
  action?: string,
): string[] {
  const range = checkStartedRange(options, action);
  const clauses: string[] = [];
  if (range.after !== null) {
    params.push(range.after);
    clauses.push(`s.started_at >= $${params.length}`);
  }
  if (range.before !== null) {
    params.push(range.before);
    clauses.push(`s.started_at < $${params.length}`);
  }
  return clauses;
}
