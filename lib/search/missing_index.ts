/**
 * Searching a file written by an older Hermes as it is: a v1–v9 file has no
 * trigram index (and a v1 file may have no full-text index at all). A read
 * never creates one, so a plan that needs a missing index is answered by
 * substring matching over the same words instead.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { pythonSplit } from "../python_text.ts";
import type { SearchPlan } from "./plan.ts";
import { sanitizeFts5Query } from "./sanitize.ts";

const OPERATORS = new Set(["AND", "OR", "NOT"]);

/**
 * The substring plan for `query`: every word must be present, unless the
 * query says `OR` or `NOT` (then any word will do, as Python's substring
 * path matches).
 */
function substringPlan(query: string): SearchPlan {
  const words = pythonSplit(sanitizeFts5Query(query).replaceAll('"', " "))
    .map((word) => word.replace(/\*+$/, ""));
  const terms = words.filter((word) => word !== "" && !OPERATORS.has(word));
  if (terms.length === 0) return { kind: "nothing" };
  const any = words.some((word) => word === "OR" || word === "NOT");
  return { kind: "substring", terms, all: !any };
}

/**
 * `plan`, or a substring plan when the full-text table it needs is not in
 * this file.
 *
 * @param store The open store.
 * @param plan The plan of `query`.
 * @param query What the user typed.
 * @returns A plan this file can answer.
 */
export function withIndexesPresent(store: Store, plan: SearchPlan, query: string): SearchPlan {
  if (plan.kind !== "ranked" || store.hasTable(plan.table)) return plan;
  return substringPlan(query);
}
