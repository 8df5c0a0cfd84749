/**
 * Options checked by name. Where an option the call does not know would be
 * ignored and the call would then do something else than meant (open
 * another file, open it for writing, delete more than asked), it is an
 * error naming it: `{ readOnly: true }` would open the file read-write and
 * upgrade an older one, `{ older_than_days: 365 }` (Python's spelling)
 * would prune everything older than 90 days, and `pruneSessions(365)` the
 * same; a misspelt filter would widen a search, a listing or an export.
 * Every option bag of the stores is checked so (the message objects, which
 * are records, refuse only a column under its other spelling).
 *
 * @module
 */
import { describeValue, quotedValue } from "./shown_value.ts";

/**
 * Every option of `T`, each once: a list the compiler keeps complete. A
 * yes-or-no option is marked `"boolean"`, and its value is checked to be one:
 * `{ absolute: "false" }` was taken as true (set, not add, the token counts).
 */
export type OptionNames<T> = {
  readonly [Name in keyof Required<T>]: Required<T>[Name] extends boolean ? "boolean" : true;
};

/** How far (letters added, removed or changed) a misspelling may be to be guessed. */
const CLOSE_ENOUGH = 2;

/** `name` without case, `_` or `-`: `older_than_days` and `olderThanDays` are one. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, "");
}

/** The edit distance of `a` and `b`, or more than {@linkcode CLOSE_ENOUGH} once it is. */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > CLOSE_ENOUGH) return CLOSE_ENOUGH + 1;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const change = row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      next.push(Math.min(change, row[j] + 1, next[j - 1] + 1));
    }
    row = next;
  }
  return row[b.length];
}

/** The known option `name` was probably meant to be, if one is close. */
function meant(name: string, known: readonly string[]): string | undefined {
  const given = folded(name);
  const same = known.find((option) => folded(option) === given);
  if (same !== undefined) return same;
  const near = known.filter((option) => distance(folded(option), given) <= CLOSE_ENOUGH);
  return near.length === 1 ? near[0] : undefined;
}

/** `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * Checks that `options` is an object holding only options the call knows.
 * `undefined` and `null` pass (no options), and so does any option whose
 * value is `undefined` or `null`: as every option, it counts as not given
 * (an object built from optional values, `{ origin: args.origin }`, may
 * hold a key no engine here reads).
 *
 * @param action What the caller does, for the error ("prune sessions").
 * @param options What the call was given as its options.
 * @param names The options the call takes.
 * @throws {TypeError} When `options` is not an object (`pruneSessions(365)`)
 *   or has an own property that is not one of `names`, naming it, the option
 *   probably meant (same letters without case, `_` or `-`, or one within two
 *   letters) and the options there are; or when an option marked `"boolean"`
 *   holds another value than `true` or `false` (`"false"`), naming it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkOptionNames } from "./option_names.ts";
 * const names = { olderThanDays: true, source: true } as const;
 * checkOptionNames("prune sessions", { olderThanDays: 30 }, names);
 * assert.throws(
 *   () => checkOptionNames("import session", { replace: "false" }, { replace: "boolean" }),
 *   /replace must be true or false: current value is "false"/,
 * );
 * assert.throws(
 *   () => checkOptionNames("prune sessions", { older_than_days: 30 }, names),
 *   /no option "older_than_days" \(did you mean "olderThanDays"\?\)/,
 * );
 * ```
 */
export function checkOptionNames(
  action: string,
  options: unknown,
  names: Readonly<Record<string, true | "boolean">>,
): void {
  if (options === undefined || options === null) return;
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(
      `Cannot ${action}: options must be an object: current value is ${describeValue(options)}`,
    );
  }
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    if (Object.hasOwn(names, name)) {
      if (names[name] === "boolean" && typeof value !== "boolean") {
        throw new TypeError(
          `Cannot ${action}: ${name} must be true or false: current value is ${quotedValue(value)}`,
        );
      }
      continue;
    }
    // Listed only for the error: the call that passes (every call, mostly) builds nothing.
    const known = Object.keys(names);
    const guess = meant(name, known);
    throw new TypeError(
      `Cannot ${action}: no option ${quotedValue(name)}` +
        (guess === undefined ? "" : ` (did you mean ${JSON.stringify(guess)}?)`) +
        `; the options are ${listed(known)}`,
    );
  }
}
