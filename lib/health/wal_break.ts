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
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { checkedFrame, FRAME_HEADER, readWalHeader, WAL_HEADER } from "../sqlite/wal_commits.ts";

/** Commits after the first frame SQLite stops at. */
export interface WalBreak {
  /** The frame SQLite stops at (1 for the first frame). */
  readonly frame: number;
  /** Commit frames after it whose own checksum holds against the frame before. */
  readonly commits: number;
}

function readAt(fd: number, bytes: Uint8Array, position: number): boolean {
  let done = 0;
  while (done < bytes.length) {
    const n = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (n === 0) return false;
    done += n;
  }
  return true;
}

/**
 * Finds commits SQLite ignores in the `-wal` at `walPath`, read frame by
 * frame through a descriptor of its own (never the database's).
 *
 * @param walPath The `-wal` file (only read).
 * @returns Where SQLite stops and how many commits follow, or `undefined`
 *   when no commit follows a broken frame (no `-wal`, a sound one, or a
 *   torn tail).
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
    // A writer that starts the -wal over (new salts, from its first frame) while it is read
    // leaves the old frames behind the new ones: read so, the old ones would look like commits
    // past a break. A scan is taken only when the header is the same after it as before.
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = headerOf(fd);
      if (before === undefined) return undefined;
      const found = scan(fd, before);
      const after = headerOf(fd);
      if (after !== undefined && after.every((byte, i) => byte === before[i])) return found;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
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
  let sum: readonly [number, number] = header.checksum;
  let broken: number | undefined;
  let commits = 0;
  for (let i = 0; i < frames; i++) {
    if (!readAt(fd, frame, WAL_HEADER + i * frameSize)) break;
    const view = new DataView(frame.buffer, 0, FRAME_HEADER);
    const next = checkedFrame(frame, header, sum);
    if (next === undefined && broken === undefined) broken = i + 1;
    if (broken !== undefined && i + 1 > broken && next !== undefined && view.getUint32(4) > 0) {
      commits++;
    }
    // Each frame is checked against the sums the frame before it stored, so a frame after
    // the break is judged on its own.
    sum = [view.getUint32(16), view.getUint32(20)];
  }
  return broken === undefined || commits === 0 ? undefined : { frame: broken, commits };
}
