/**
 * The pieces of Python 3 `re` semantics the search code must reproduce
 * beyond whitespace (which is `PYTHON_WHITESPACE` in `../python_text.ts`):
 * Unicode `\w` and `\b`. JavaScript's `\w` and `\b` are ASCII-only, so
 * these are spelled out.
 *
 * @module
 */

/**
 * Python's `\w` on `str` (letters, numbers and `_`), as the body of a
 * character class for a `u`-flag regex.
 */
export const PY_WORD = "\\p{L}\\p{N}_";

/** Python's `\b` on `str`, as a `u`-flag regex fragment. */
export const PY_BOUNDARY =
  `(?:(?<=[${PY_WORD}])(?![${PY_WORD}])|(?<![${PY_WORD}])(?=[${PY_WORD}]))`;
