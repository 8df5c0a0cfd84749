/**
 * Trajectory samples for training, one JSON object per line, kept apart from
 * the session database (as `agent/trajectory.py` does), and the helpers for
 * `<REASONING_SCRATCHPAD>` reasoning blocks.
 *
 * @module
 */
import { appendFileSync } from "node:fs";
import { quotedValue } from "../core/shown_value.ts";
import { pythonJson } from "../core/python_json.ts";
import { wallClockSeconds } from "../core/wall_clock.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";

/** Options of `saveTrajectory`. */
export interface SaveTrajectoryOptions {
  /** The model that produced the trajectory. */
  model: string;
  /** True when the task finished; picks the default file. */
  completed: boolean;
  /**
   * The JSON Lines file to append to, relative to the working folder
   * (`null` is taken as left out, as Python's `None`).
   * @default {"trajectory_samples.jsonl" when completed, else "failed_trajectories.jsonl"}
   */
  filename?: string;
  /**
   * Seconds since the epoch, as a float, for the `timestamp` field (tests
   * inject a fixed clock; `null` is taken as left out).
   * @default {wallClockSeconds} (the time to the microsecond)
   */
  clock?: () => number;
}

const OPEN_TAG = "<REASONING_SCRATCHPAD>";
const CLOSE_TAG = "</REASONING_SCRATCHPAD>";

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/**
 * Python's `datetime.now().isoformat()` at `seconds`: local time, no zone,
 * microseconds only when not zero (`2026-05-01T12:34:56.789012`).
 */
function localIsoTimestamp(seconds: number): string {
  const micros = Math.round(seconds * 1e6);
  const fraction = ((micros % 1_000_000) + 1_000_000) % 1_000_000;
  const d = new Date((micros - fraction) / 1000);
  const date = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${date}T${time}${fraction === 0 ? "" : `.${pad(fraction, 6)}`}`;
}

/**
 * Appends one trajectory as a JSON line
 * `{"conversations": …, "timestamp": …, "model": …, "completed": …}`, the
 * format of the Python agent (its separators, non-ASCII text kept as is,
 * the timestamp in local time). Unlike Python, which logs and carries on, a
 * failure to write is thrown.
 *
 * @param trajectory The conversation turns (ShareGPT-style messages).
 * @param options Model, outcome, file and clock.
 * @throws {TypeError} Before anything is written, naming the value: when
 *   `trajectory` is not an array, `options` not an object, `model` not a
 *   string, `completed` not a boolean, `filename` (when given) not a
 *   non-empty string, `clock` (when given) not a function or its time not
 *   a finite number; when `options` holds another option; and when the
 *   trajectory contains a circular reference.
 * @throws {Error} When the file cannot be written (the file system's error).
 *
 * @example Recording a finished task
 * ```ts ignore
 * import { saveTrajectory } from "@hermes/state";
 * saveTrajectory(
 *   [{ from: "human", value: "列出容器" }, { from: "gpt", value: "<think>…</think> done" }],
 *   { model: "anthropic/claude-sonnet-4.5", completed: true },
 * ); // appends to ./trajectory_samples.jsonl
 * ```
 */
export function saveTrajectory(trajectory: unknown[], options: SaveTrajectoryOptions): void {
  checkArguments(trajectory, options);
  const filename = options.filename ??
    (options.completed ? "trajectory_samples.jsonl" : "failed_trajectories.jsonl");
  const seconds = options.clock ? options.clock() : wallClockSeconds();
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) {
    refuse("the clock must return a finite number of seconds", seconds);
  }
  const entry = {
    conversations: trajectory,
    timestamp: localIsoTimestamp(seconds),
    model: options.model,
    completed: options.completed,
  };
  appendFileSync(filename, pythonJson(entry, { ensureAscii: false, allowNan: true }) + "\n", {
    encoding: "utf8",
  });
}

/** The options of `saveTrajectory`, checked by name. */
const SAVE_OPTION_NAMES: OptionNames<SaveTrajectoryOptions> = {
  model: true,
  completed: "boolean",
  filename: true,
  clock: true,
};

/** Throws the TypeError of a bad argument of `saveTrajectory`, naming the value. */
function refuse(what: string, value: unknown): never {
  throw new TypeError(`Cannot save trajectory: ${what}: current value is ${quotedValue(value)}`);
}

/** Checks the arguments of `saveTrajectory` (see its `@throws`). */
function checkArguments(trajectory: unknown, options: unknown): void {
  if (!Array.isArray(trajectory)) refuse("trajectory must be an array", trajectory);
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    refuse("options must be an object", options);
  }
  checkOptionNames("save trajectory", options, SAVE_OPTION_NAMES);
  const { model, completed, filename, clock } = options as Record<string, unknown>;
  if (typeof model !== "string") refuse("model must be a string", model);
  if (typeof completed !== "boolean") refuse("completed must be true or false", completed);
  const given = (value: unknown) => value !== undefined && value !== null;
  if (given(filename) && (typeof filename !== "string" || filename === "")) {
    refuse("filename must be a non-empty string", filename);
  }
  if (given(clock) && typeof clock !== "function") refuse("clock must be a function", clock);
}

/**
 * Turns `<REASONING_SCRATCHPAD>…</REASONING_SCRATCHPAD>` into
 * `<think>…</think>` (the ShareGPT convention). Content without an opening
 * tag comes back unchanged, even if it has a closing one.
 *
 * @param content The message text.
 * @returns The converted text.
 *
 * @example
 * ```ts
 * import { convertScratchpadToThink } from "./trajectory.ts";
 * const out = convertScratchpadToThink("<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD>Done.");
 * console.assert(out === "<think>plan</think>Done.");
 * ```
 */
export function convertScratchpadToThink(content: string): string {
  if (!content || !content.includes(OPEN_TAG)) return content;
  return content.replaceAll(OPEN_TAG, "<think>").replaceAll(CLOSE_TAG, "</think>");
}

/**
 * Tells whether a scratchpad was opened and never closed (a cut-off stream):
 * the text has `<REASONING_SCRATCHPAD>` and no `</REASONING_SCRATCHPAD>`
 * anywhere.
 *
 * @param content The message text.
 * @returns True when the scratchpad is incomplete.
 *
 * @example
 * ```ts
 * import { hasIncompleteScratchpad } from "./trajectory.ts";
 * console.assert(hasIncompleteScratchpad("<REASONING_SCRATCHPAD>thinking…"));
 * console.assert(!hasIncompleteScratchpad("<REASONING_SCRATCHPAD>x</REASONING_SCRATCHPAD>"));
 * ```
 */
export function hasIncompleteScratchpad(content: string): boolean {
  if (!content) return false;
  return content.includes(OPEN_TAG) && !content.includes(CLOSE_TAG);
}
