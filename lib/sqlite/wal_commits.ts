/**
 * What a `-wal` holds, read frame by frame without SQLite: the frames
 * SQLite itself would honour (the salts of the header, an unbroken
 * checksum chain), grouped into commits. `damaged_file.ts` compares this
 * with the main file to tell a `-wal` that belongs to another database.
 *
 * Reading the `-wal` through a descriptor of our own is safe while
 * connections of this process hold the database: SQLite keeps its locks on
 * the main file and the `-shm`, never on the `-wal`.
 *
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** Bytes of the `-wal` header, and of each frame's header. */
export const WAL_HEADER = 32;
export const FRAME_HEADER = 24;

/** What a valid `-wal` header says. */
export interface WalHeader {
  /** Its checksums are big-endian (magic `0x377f0683`). */
  readonly bigEndian: boolean;
  /** Bytes per page. */
  readonly pageSize: number;
  /** Salt-1 and salt-2 (they change when SQLite restarts the `-wal`). */
  readonly salts: readonly [number, number];
  /** The header's checksum: the start of the frames' checksum chain. */
  readonly checksum: readonly [number, number];
}

/**
 * Reads a `-wal` header as SQLite checks it: its magic, a page size of a
 * power of two from 512 to 65536, and its checksum.
 *
 * @param header At least the header's 32 bytes.
 * @returns What it says, or `undefined` when SQLite would ignore the file.
 */
export function readWalHeader(header: Uint8Array): WalHeader | undefined {
  if (header.length < WAL_HEADER) return undefined;
  const view = new DataView(header.buffer, header.byteOffset, WAL_HEADER);
  const magic = view.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return undefined;
  const bigEndian = magic === 0x377f0683;
  const pageSize = view.getUint32(8) === 1 ? 65536 : view.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const checksum = walChecksum(header.subarray(0, 24), bigEndian, [0, 0]);
  if (checksum[0] !== view.getUint32(24) || checksum[1] !== view.getUint32(28)) return undefined;
  return { bigEndian, pageSize, salts: [view.getUint32(16), view.getUint32(20)], checksum };
}

/**
 * Checks one frame (its 24-byte header, then its page) as SQLite does:
 * the header's salts, and the checksum chain continued from `sum`.
 *
 * @param frame The frame's bytes.
 * @param header The `-wal`'s header.
 * @param sum The chain after the frame before (the header's for the first).
 * @returns The chain after this frame, or `undefined` where SQLite stops reading.
 */
export function checkedFrame(
  frame: Uint8Array,
  header: WalHeader,
  sum: readonly [number, number],
): [number, number] | undefined {
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_HEADER);
  if (view.getUint32(8) !== header.salts[0] || view.getUint32(12) !== header.salts[1]) {
    return undefined;
  }
  let next = walChecksum(frame.subarray(0, 8), header.bigEndian, sum);
  next = walChecksum(
    frame.subarray(FRAME_HEADER, FRAME_HEADER + header.pageSize),
    header.bigEndian,
    next,
  );
  return next[0] === view.getUint32(16) && next[1] === view.getUint32(20) ? next : undefined;
}

/** A frame of a `-wal`, as a scan that goes on past a broken frame judges it. */
export interface JudgedFrame {
  /** Its number, 1 for the first frame. */
  readonly number: number;
  /** The page it carries, as its own header says. */
  readonly page: number;
  /** For a commit frame, the database's size in pages after it; else 0. */
  readonly dbSize: number;
  /** Whether its salts and checksum hold against the sums the frame before it stored. */
  readonly valid: boolean;
}

/**
 * Judges every frame of a `-wal`, past the first broken one too: each frame
 * is checked against the sums the frame before it stored (right or not),
 * so a frame after a break is judged on its own, where SQLite stops at the
 * break. What tells the commits SQLite ignores (`wal_break.ts`) and what
 * salvages them (`wal_salvage.ts`).
 *
 * @param header The `-wal`'s header.
 * @param frames How many whole frames the `-wal` holds.
 * @param frameAt The bytes of frame `index` (0 for the first), or
 *   `undefined` to stop; a buffer may be reused from one frame to the next.
 * @returns The frames, in order.
 */
export function* judgeFrames(
  header: WalHeader,
  frames: number,
  frameAt: (index: number) => Uint8Array | undefined,
): Generator<JudgedFrame> {
  let sum: readonly [number, number] = header.checksum;
  for (let i = 0; i < frames; i++) {
    const frame = frameAt(i);
    if (frame === undefined) return;
    const view = new DataView(frame.buffer, frame.byteOffset, FRAME_HEADER);
    const valid = checkedFrame(frame, header, sum) !== undefined;
    sum = [view.getUint32(16), view.getUint32(20)];
    yield { number: i + 1, page: view.getUint32(0), dbSize: view.getUint32(4), valid };
  }
}

/** The header fields of a page-1 image a commit wrote. */
export interface PageOneFields {
  /** File change counter (bytes 24–27). */
  readonly changeCounter: number;
  /** Pages in the database, as the header says (bytes 28–31). */
  readonly pageCount: number;
  /** Schema cookie (bytes 40–43). */
  readonly schemaCookie: number;
}

/** One committed transaction of a `-wal`. */
export interface WalCommit {
  /** Pages in the database after it (its commit frame's size field). */
  readonly pageCount: number;
  /** The header of page 1 as it wrote it; `undefined` when it did not write page 1. */
  readonly pageOne: PageOneFields | undefined;
}

/** The committed content of a `-wal`. */
export interface WalCommits {
  /** Bytes per page, from the `-wal` header. */
  readonly pageSize: number;
  /** Salt-1 and salt-2 of the header (they change when SQLite restarts the `-wal`). */
  readonly salts: readonly [number, number];
  /** The commits, oldest first (frames after the last commit are left out). */
  readonly commits: readonly WalCommit[];
}

/**
 * SQLite's `-wal` checksum of `bytes` (a multiple of 8 long), continuing
 * from `s`.
 *
 * @param bytes The bytes summed.
 * @param bigEndian True for the magic number ending in 3.
 * @param s The running sums.
 * @returns The new sums.
 *
 * @example Checksum of a header
 * ```ts
 * import { walChecksum } from "./wal_commits.ts";
 * const sums = walChecksum(new Uint8Array(24), true, [0, 0]);
 * console.assert(sums[0] === 0 && sums[1] === 0);
 * ```
 */
export function walChecksum(
  bytes: Uint8Array,
  bigEndian: boolean,
  s: readonly [number, number],
): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let [s0, s1] = s;
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * Fills `bytes` from the file at `position`, however many reads it takes.
 *
 * @param fd An open descriptor.
 * @param bytes Where the bytes go (all of it).
 * @param position The offset to read from.
 * @returns `false` when the file ends first.
 */
export function readAt(fd: number, bytes: Uint8Array, position: number): boolean {
  let done = 0;
  while (done < bytes.length) {
    const n = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (n === 0) return false;
    done += n;
  }
  return true;
}

function pageOneFields(page: Uint8Array): PageOneFields {
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  return {
    changeCounter: view.getUint32(24),
    pageCount: view.getUint32(28),
    schemaCookie: view.getUint32(40),
  };
}

/**
 * Where an earlier read of a `-wal` stopped: after its last commit. SQLite
 * never changes a committed frame until it starts the `-wal` over, which
 * writes a new header (new salts), so a `-wal` with the same header, on the
 * same inode, holds the same commits up to there and a read may resume.
 */
interface ReadSoFar {
  readonly dev: number;
  readonly ino: number;
  readonly header: Uint8Array;
  /** The byte after the last commit's frame. */
  readonly end: number;
  /** The checksum chain there. */
  readonly sum: readonly [number, number];
  readonly commits: readonly WalCommit[];
}

/** The `-wal` files read lately, by path (a few: one per database this process opens). */
const READ_SO_FAR = new Map<string, ReadSoFar>();
const READ_SO_FAR_KEPT = 8;

/**
 * Whether two byte arrays hold the same bytes.
 *
 * @param a One.
 * @param b The other.
 * @returns True when they are equal, byte for byte.
 */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Reads the committed transactions of the `-wal` at `walPath`, one frame
 * at a time (a `-wal` may be far larger than memory should hold). A `-wal`
 * read before by this process, and only grown since, is read from where
 * that read stopped (each open of a file beside a `-wal` reads it, and a
 * `-wal` that checkpoints cannot empty grows to gigabytes).
 *
 * @param walPath The `-wal` file (only read).
 * @returns Its commits; `undefined` when it is missing or its header is not
 *   a valid `-wal` header (SQLite ignores such a file).
 *
 * @example A database without a `-wal`
 * ```ts
 * import { readWalCommits } from "./wal_commits.ts";
 * console.assert(readWalCommits("/nonexistent/state.db-wal") === undefined);
 * ```
 */
export function readWalCommits(walPath: string): WalCommits | undefined {
  let fd: number;
  try {
    fd = openSync(walPath, "r");
  } catch {
    return undefined;
  }
  try {
    const bytes = new Uint8Array(WAL_HEADER);
    if (!readAt(fd, bytes, 0)) return undefined;
    const header = readWalHeader(bytes);
    if (header === undefined) return undefined;
    const { dev, ino } = fstatSync(fd);
    const { pageSize, salts } = header;
    const before = READ_SO_FAR.get(walPath);
    const resume = before !== undefined && before.dev === dev && before.ino === ino &&
      sameBytes(before.header, bytes);
    let sum: readonly [number, number] = resume ? before.sum : header.checksum;
    const commits: WalCommit[] = resume ? before.commits.slice() : [];
    let end = resume ? before.end : WAL_HEADER;
    let endSum = sum;
    const frame = new Uint8Array(FRAME_HEADER + pageSize);
    const frameView = new DataView(frame.buffer);
    let pageOne: PageOneFields | undefined;
    for (let at = end; readAt(fd, frame, at); at += frame.length) {
      const next = checkedFrame(frame, header, sum);
      if (next === undefined) break;
      sum = next;
      if (frameView.getUint32(0) === 1) pageOne = pageOneFields(frame.subarray(FRAME_HEADER));
      const pageCount = frameView.getUint32(4);
      if (pageCount > 0) {
        commits.push({ pageCount, pageOne });
        pageOne = undefined;
        end = at + frame.length;
        endSum = sum;
      }
    }
    READ_SO_FAR.delete(walPath);
    READ_SO_FAR.set(walPath, { dev, ino, header: bytes, end, sum: endSum, commits });
    if (READ_SO_FAR.size > READ_SO_FAR_KEPT) READ_SO_FAR.delete(READ_SO_FAR.keys().next().value!);
    return { pageSize, salts, commits };
  } finally {
    closeSync(fd);
  }
}
