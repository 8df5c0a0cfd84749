/**
 * How far the lineage reads go: a family is followed at most this many
 * generations up (`getAncestors`) and down (`getDescendants`), so that a
 * cycle or an endless chain cannot make a read endless. The CLI's
 * `lineage` says where a tree it draws is cut by it.
 *
 * @module
 */

/** Generations `getAncestors` and `getDescendants` follow at most. */
export const MAX_LINEAGE_DEPTH = 1000;
