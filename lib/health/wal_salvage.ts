/**
 * The commits a `-wal` holds past a broken frame, made into a database
 * image when that is safe. SQLite stops at the first frame that fails its
 * checksum; the commits after it were written on top of the broken
 * frame's transaction, so replaying them without that frame mixes page
 * versions (a later commit's interior page pointing at a leaf only the
 * broken transaction wrote): a file that is malformed, or worse, sound in
 * its pages but missing rows. The one safe case is a broken frame whose
 * page a later commit wrote again: the last committed version of every
 * page is then a frame whose checksum holds, and the image is the
 * database exactly as the last commit left it.
 *
 * So an image is made only when every broken frame before the last
 * commit carries a page a later commit wrote again, and `recover`
 * verifies it before using it (integrity, foreign keys, search indexes, no
 * worse than what SQLite honours): a broken frame's page number is read
 * from its own damaged frame, and the checks are the guard against a
 * wrong one.
 *
 * @module
 */
import { chmodSync, closeSync, copyFileSync, ftruncateSync, openSync, writeSync } from "node:fs";
import {
  FRAME_HEADER,
  type JudgedFrame,
  judgeFrames,
  readWalHeader,
  WAL_HEADER,
} from "../sqlite/wal_commits.ts";

/** The pages of one image: each page's offset in the `-wal`, laid over the main file. */
export interface WalImage {
  /** Page number → offset of its data in the `-wal`. */
  readonly pages: ReadonlyMap<number, number>;
  /** Pages in the database (its last commit's size); 0 keeps the main file's. */
  readonly size: number;
}

/** Two images of the database: what SQLite honours, and the one past the break. */
export interface WalSalvage {
  /** The page size of the `-wal`. */
  readonly pageSize: number;
  /** The file as SQLite reads it: the main file and the commits before the first broken frame. */
  readonly honoured: WalImage;
  /** The file as the last commit left it, every broken frame's page written again later. */
  readonly salvaged: WalImage;
  /** Commits the salvaged image holds past the first broken frame. */
  readonly commits: number;
}

/** Why no salvaged image was made. */
export interface WalSalvageRefusal {
  /** One line, lower case. */
  readonly reason: string;
}

/**
 * Plans both images from the bytes of a `-wal`.
 *
 * @param wal The `-wal`'s bytes.
 * @returns The images, or why the commits past the break cannot be taken
 *   safely (or when there are none).
 */
export function salvageWalImage(wal: Uint8Array): WalSalvage | WalSalvageRefusal {
  const header = readWalHeader(wal.subarray(0, WAL_HEADER));
  if (header === undefined) return { reason: "the -wal's header is damaged" };
  const { pageSize } = header;
  const frameSize = FRAME_HEADER + pageSize;
  const frames = Math.floor((wal.length - WAL_HEADER) / frameSize);
  /** Page → offset of its data, at the last commit seen (and at the last one SQLite honours). */
  const committed = new Map<number, number>();
  let honouredPages: Map<number, number> | undefined;
  let honouredSize = 0;
  let size = 0;
  let pending = new Map<number, number>();
  /** Broken frames, each with its page (as its damaged header says) and its frame number. */
  const broken: { page: number; frame: number }[] = [];
  let commitsPast = 0;
  /** Every frame as judged, and the last commit frame's number. */
  const judged: JudgedFrame[] = [];
  let lastCommitFrame = 0;
  const offsetOf = (n: number) => WAL_HEADER + (n - 1) * frameSize;
  const frameAt = (i: number) => wal.subarray(offsetOf(i + 1), offsetOf(i + 2));
  for (const frame of judgeFrames(header, frames, frameAt)) {
    judged.push(frame);
    if (!frame.valid) {
      if (broken.length === 0) {
        honouredPages = new Map(committed);
        honouredSize = size;
      }
      broken.push({ page: frame.page, frame: frame.number });
      continue;
    }
    pending.set(frame.page, offsetOf(frame.number) + FRAME_HEADER);
    if (frame.dbSize > 0) {
      for (const [p, offset] of pending) committed.set(p, offset);
      pending = new Map();
      size = frame.dbSize;
      lastCommitFrame = frame.number;
      if (broken.length > 0) commitsPast++;
    }
  }
  if (honouredPages === undefined || commitsPast === 0) {
    return { reason: "no commit follows a broken frame" };
  }
  // Broken frames after the last commit are its torn tail: nothing of theirs was committed.
  const inside = broken.filter((b) => b.frame < lastCommitFrame);
  // A later frame whose checksum holds, up to the last commit, carries the same page.
  const writtenAgain = (b: { page: number; frame: number }) =>
    judged.slice(b.frame, lastCommitFrame).some((later) => later.valid && later.page === b.page);
  const lost = inside.filter((b) => b.page === 0 || !writtenAgain(b));
  if (lost.length > 0) {
    const first = lost[0];
    return {
      reason: `frame ${first.frame} (page ${first.page}) is the last version of its page ` +
        "that a commit wrote: the commits after it need it, and it fails its checksum",
    };
  }
  return {
    pageSize,
    honoured: { pages: honouredPages, size: honouredSize },
    salvaged: { pages: committed, size },
    commits: commitsPast,
  };
}

/**
 * Writes an image to `out` (mode 0600): a copy of the main file, the
 * image's pages written over it, cut or lengthened to its size. The main
 * file and the `-wal` are only read; nothing is held in memory but the
 * `-wal` the caller read.
 *
 * @param main The main file.
 * @param wal The `-wal`'s bytes.
 * @param salvage The plan ({@linkcode salvageWalImage}).
 * @param image Which image: `salvage.honoured` or `salvage.salvaged`.
 * @param out The file to write (replaced).
 */
export function writeWalImage(
  main: string,
  wal: Uint8Array,
  salvage: WalSalvage,
  image: WalImage,
  out: string,
): void {
  const { pageSize } = salvage;
  copyFileSync(main, out);
  chmodSync(out, 0o600);
  const fd = openSync(out, "r+");
  try {
    if (image.size > 0) ftruncateSync(fd, image.size * pageSize);
    for (const [page, offset] of image.pages) {
      if (page < 1 || (image.size > 0 && page > image.size)) continue;
      writeSync(fd, wal, offset, pageSize, (page - 1) * pageSize);
    }
  } finally {
    closeSync(fd);
  }
}
