/**
 * A progress line on standard error for long runs: shown only when standard
 * error is a terminal that can erase a line (not `TERM=dumb`) and the run
 * has lasted more than a second, redrawn at most ten times a second, erased
 * at the end.
 *
 * @module
 */
import { formatCount } from "../render/format.ts";
import type { Io } from "./io.ts";
import { dumbTerminal } from "./style.ts";

/** Seconds a run lasts before its progress shows. */
const SHOW_AFTER = 1;
/** Seconds between two redraws. */
const REDRAW_EVERY = 0.1;

/**
 * Whether standard error is a terminal where a status line can be drawn and
 * erased (`\r` and ESC `[K`): not when it is a file or a pipe, nor on
 * `TERM=dumb`, which prints the ESC `[K` as it is (Emacs's shell).
 *
 * @param io The streams and environment.
 * @returns True on a capable terminal.
 *
 * @example
 * ```ts
 * import { redrawsLines } from "./progress.ts";
 * const io = { stderrIsTerminal: true, env: (name: string) => (name === "TERM" ? "dumb" : undefined) };
 * console.assert(redrawsLines(io) === false);
 * ```
 */
export function redrawsLines(io: Pick<Io, "stderrIsTerminal" | "env">): boolean {
  return io.stderrIsTerminal && !dumbTerminal(io);
}

/** Reports `<label> <count>…` on standard error while a long run goes on. */
export class Progress {
  readonly #io: Io;
  readonly #label: string;
  readonly #enabled: boolean;
  readonly #started: number;
  #drawnAt = -Infinity;
  #shown = false;

  /**
   * Starts the clock.
   *
   * @param io Where to draw (and the clock).
   * @param label What is counted, e.g. `"Exported"`.
   */
  constructor(io: Io, label: string) {
    this.#io = io;
    this.#label = label;
    this.#enabled = redrawsLines(io);
    this.#started = io.now();
  }

  /**
   * Reports the count so far; draws only when due.
   *
   * @param count Items done.
   * @param unit What the items are.
   */
  update(count: number, unit = "sessions"): void {
    if (!this.#enabled) return;
    const now = this.#io.now();
    if (now - this.#started < SHOW_AFTER || now - this.#drawnAt < REDRAW_EVERY) return;
    this.#drawnAt = now;
    this.#shown = true;
    const noun = count === 1 ? unit.replace(/s$/, "") : unit;
    this.#io.stderr(`\r\x1b[K${this.#label} ${formatCount(count)} ${noun}…`);
  }

  /** Erases the line if it was drawn. */
  done(): void {
    if (this.#shown) this.#io.stderr("\r\x1b[K");
    this.#shown = false;
  }
}

/**
 * Draws `text` as a status line on standard error while a long, silent step
 * runs (a check, a rewrite), on a terminal that can erase it (see
 * {@linkcode redrawsLines}); elsewhere draws nothing.
 *
 * @param io Where to draw.
 * @param text What is going on, e.g. `"Checking state.db, 3.0 GiB…"`.
 * @returns A function that erases the line (does nothing when none was drawn).
 *
 * @example
 * ```ts
 * import { statusLine } from "./progress.ts";
 * let drawn = "";
 * const io = { stderrIsTerminal: true, env: () => undefined, stderr: (s: string) => drawn += s };
 * statusLine(io, "Checking…")();
 * console.assert(drawn === "\r\x1b[KChecking…\r\x1b[K");
 * ```
 */
export function statusLine(
  io: Pick<Io, "stderrIsTerminal" | "env" | "stderr">,
  text: string,
): () => void {
  if (!redrawsLines(io)) return () => {};
  io.stderr(`\r\x1b[K${text}`);
  return () => io.stderr("\r\x1b[K");
}
