/**
 * The version `hermes-state --version` prints. Kept equal to `deno.json`'s
 * `version` (a test checks it), so the compiled executable needs no file.
 *
 * @module
 */

/** The package version. */
export const VERSION = "0.1.0";
