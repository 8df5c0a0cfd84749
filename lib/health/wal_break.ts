/**
 * Commits a `-wal` holds past a broken frame. SQLite reads a `-wal` up to
 * the first frame whose checksum fails and ignores every frame after it,
 * committed or not; the next checkpoint that empties the `-wal`, or the
 * next write (which goes on from the last frame it honoured), discards
 * them for good. A torn tail (the last transaction cut off by a crash)
 * leaves no commit after the break; a frame damaged in the middle leaves
 * the later commits whole on the disk, each frame's checksum still right
 * against the one before it. Those are worth a copy before anything
 * writes the file.
 *
 * @module
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import {
  FRAME_HEADER,
  judgeFrames,
  readAt,
  readWalHeader,
  sameBytes,
  WAL_HEADER,
} from "../sqlite/wal_commits.ts";

/** Commits after the first frame SQLite stops at. */
export interface WalBreak {
  /** The frame SQLite stops at (1 for the first frame). */
  readonly frame: number;
  /** Commit frames after it whose own checksum holds against the frame before. */
  readonly commits: number;
}

/**
 * Finds commits SQLite ignores in the `-wal` at `walPath`, read frame by
 * frame through a descriptor of its own (never the database's).
 *
 * @param walPath The `-wal` file (only read).
 * @returns Where SQLite stops and how many commits follow, or `undefined`
 *   when no commit follows a broken frame (no `-wal`, a sound one, or a
 *   torn tail), or when a writer kept writing the `-wal` through every try
 *   (what it holds cannot be told then).
 *
 * @example No `-wal`
 * ```ts
 * import { walCommitsPastBreak } from "./wal_break.ts";
 * console.assert(walCommitsPastBreak("/nonexistent/state.db-wal") === undefined);
 * ```
 */
export function walCommitsPastBreak(walPath: string): WalBreak | undefined {
  let fd: number;
  try {
    fd = openSync(walPath, "r");
  } catch {
    return undefined;
  }
  try {
    // A -wal a writer is writing meanwhile cannot be judged: a frame read half written (its
    // header new, its page not yet) fails, and the frames written after it hold, so a commit
    // under way would look like one past a break; a writer that starts the -wal over leaves old
    // frames behind new ones. A finding is taken only from two scans in a row that agree, over a
    // -wal whose header, size and time of change stayed the same throughout.
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const before = stateOf(fd);
      if (before === undefined) return undefined;
      const first = scan(fd, before.header);
      const second = scan(fd, before.header);
      const after = stateOf(fd);
      if (after === undefined) return undefined;
      if (sameState(before, after) && sameBreak(first, second)) return first;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Tries at a -wal that does not keep still; after them, nothing is reported. */
const ATTEMPTS = 5;

/** What tells a -wal that changed: its header, its size, its time of change. */
interface WalState {
  readonly header: Uint8Array;
  readonly size: number;
  readonly changedNs: bigint;
}

function stateOf(fd: number): WalState | undefined {
  const header = headerOf(fd);
  if (header === undefined) return undefined;
  const stat = fstatSync(fd, { bigint: true });
  return { header, size: Number(stat.size), changedNs: stat.mtimeNs };
}

function sameState(a: WalState, b: WalState): boolean {
  return a.size === b.size && a.changedNs === b.changedNs && sameBytes(a.header, b.header);
}

function sameBreak(a: WalBreak | undefined, b: WalBreak | undefined): boolean {
  return a?.frame === b?.frame && a?.commits === b?.commits;
}

function headerOf(fd: number): Uint8Array | undefined {
  const bytes = new Uint8Array(WAL_HEADER);
  return readAt(fd, bytes, 0) ? bytes : undefined;
}

/** One pass over the frames, judged against the header read before it. */
function scan(fd: number, headerBytes: Uint8Array): WalBreak | undefined {
  const header = readWalHeader(headerBytes);
  if (header === undefined) return undefined;
  const frameSize = FRAME_HEADER + header.pageSize;
  const frames = Math.floor((fstatSync(fd).size - WAL_HEADER) / frameSize);
  const frame = new Uint8Array(frameSize);
  const frameAt = (i: number) => readAt(fd, frame, WAL_HEADER + i * frameSize) ? frame : undefined;
  let broken: number | undefined;
  let commits = 0;
  for (const judged of judgeFrames(header, frames, frameAt)) {
    if (!judged.valid && broken === undefined) broken = judged.number;
    if (broken !== undefined && judged.number > broken && judged.valid && judged.dbSize > 0) {
      commits++;
    }
  }
  return broken === undefined || commits === 0 ? undefined : { frame: broken, commits };
}
