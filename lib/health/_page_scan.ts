/**
 * Reading a SQLite file page by page, without SQLite: every table-leaf
 * page that still parses gives its records (overflow chains followed),
 * whatever happened to the pages above it. `recover` uses this for the
 * rows SQLite itself cannot reach (a damaged interior page, a zeroed
 * header page). Each record is handed to a visitor as it is read, never
 * collected here: a file of gigabytes holds more records than memory.
 *
 * The file is read through its own descriptor, so this must only run on a
 * file that no connection of this process holds (closing any descriptor
 * on a file drops every POSIX lock the process holds on it).
 *
 * @module
 */
import { checkedFrame, FRAME_HEADER, readWalHeader, WAL_HEADER } from "../sqlite/wal_commits.ts";
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import type { SqlValue } from "../sqlite/driver/types.ts";

/** One record of a table-leaf page. */
export interface RawRecord {
  /** The page it was read from. */
  readonly page: number;
  /** The cell's rowid (a `bigint` beyond 2^53, where a number would round it). */
  readonly rowid: number | bigint;
  /** The record's values, in column order. */
  readonly values: SqlValue[];
  /**
   * The bytes of its text values that are not valid UTF-8, by column index
   * (`values` holds them decoded, U+FFFD in place of each bad sequence).
   */
  readonly rawTexts?: Map<number, Uint8Array>;
}

/** Receives each record of a scan, in page order. */
export type RecordVisitor = (record: RawRecord) => void;

/** What {@linkcode scanPages} found, besides the records it handed out. */
export interface PageScan {
  /** Bytes per page (from the header, else guessed from the pages). */
  readonly pageSize: number;
  /** Whole pages in the file. */
  readonly pages: number;
  /** True when the 100-byte header was intact. */
  readonly headerIntact: boolean;
  /**
   * Pages after the first that are neither b-tree pages, nor overflow pages
   * of a record read, nor free pages: what they held is unknown (damaged
   * pages, or free pages when the header is lost).
   */
  readonly unexplainedPages: number;
  /** Cells of table-leaf pages that did not parse: the rows they held are unknown. */
  readonly brokenCells: number;
  /** Pages the header counts that the file no longer holds (a file cut short). */
  readonly missingPages: number;
}

const MAGIC = "SQLite format 3\u0000";
const TABLE_LEAF = 13;
const PAGE_TYPES = new Set([2, 5, 10, 13]);

/** Where the pages come from: the file through its descriptor, or bytes in memory. */
type Bytes = { readonly fd: number } | { readonly image: Uint8Array };

class PageFile {
  readonly #from: Bytes;
  readonly size: number;
  pageSize = 4096;
  usable = 4096;
  /** The overflow pages of the records read. */
  readonly overflow = new Set<number>();
  /** Cells of table-leaf pages that did not parse. */
  brokenCells = 0;

  constructor(from: Bytes) {
    this.#from = from;
    this.size = "fd" in from ? fstatSync(from.fd).size : from.image.length;
  }

  read(position: number, length: number): Uint8Array {
    if ("image" in this.#from) {
      return this.#from.image.slice(position, Math.min(position + length, this.size));
    }
    const bytes = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.#from.fd, bytes, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done === length ? bytes : bytes.subarray(0, done);
  }

  page(n: number): Uint8Array | undefined {
    if (n < 1 || n * this.pageSize > this.size) return undefined;
    return this.read((n - 1) * this.pageSize, this.pageSize);
  }

  close(): void {
    if ("fd" in this.#from) closeSync(this.#from.fd);
  }
}

function u16(b: Uint8Array, at: number): number {
  return (b[at] << 8) | b[at + 1];
}

function u32(b: Uint8Array, at: number): number {
  return ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
}

/** A SQLite varint at `at`: its value and its length; `undefined` past the end. */
function varint(b: Uint8Array, at: number, end = b.length): [number, number] | undefined {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    if (at + i >= end) return undefined;
    const byte = b[at + i];
    if (i === 8) return [value * 256 + byte, 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  return undefined;
}

/** A plausible b-tree page header at `h` for a page of `size` bytes. */
function plausible(page: Uint8Array, h: number, size: number): boolean {
  if (!PAGE_TYPES.has(page[h])) return false;
  const cells = u16(page, h + 3);
  const content = u16(page, h + 5) || 65536;
  const header = page[h] === 2 || page[h] === 5 ? 12 : 8;
  return h + header + cells * 2 <= content && content <= size;
}

function headerPageSize(header: Uint8Array): number | undefined {
  if (new TextDecoder().decode(header.subarray(0, 16)) !== MAGIC) return undefined;
  const raw = u16(header, 16);
  const size = raw === 1 ? 65536 : raw;
  return size >= 512 && size <= 65536 && (size & (size - 1)) === 0 ? size : undefined;
}

/**
 * Guesses the page size from how many pages look like b-tree pages. Every
 * multiple of the true size scores about as well as the true size (its
 * pages start where true pages start), every smaller size clearly worse
 * (most of its "pages" start mid-page): the smallest size that scores near
 * the best is the one.
 */
function guessPageSize(file: PageFile): number {
  const sizes = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];
  const scores = sizes.map((size) => {
    let score = 0;
    const pages = Math.min(200, Math.floor(file.size / size));
    for (let n = 2; n <= pages; n++) {
      const page = file.read((n - 1) * size, size);
      if (page.length === size && plausible(page, 0, size)) score++;
    }
    return pages >= 2 ? score / (pages - 1) : 0;
  });
  let best = 0;
  for (const score of scores) best = Math.max(best, score);
  if (best === 0) return 4096;
  return sizes[scores.findIndex((score) => score >= best * 0.8)];
}

/** The trunk and leaf pages of the free list (deleted data lives there). */
function freePages(file: PageFile, header: Uint8Array): Set<number> {
  const free = new Set<number>();
  let trunk = u32(header, 32);
  const total = file.size / file.pageSize;
  while (trunk > 0 && trunk <= total && !free.has(trunk)) {
    free.add(trunk);
    const page = file.page(trunk);
    if (page === undefined) break;
    const count = Math.min(u32(page, 4), (file.usable - 8) / 4);
    for (let i = 0; i < count; i++) {
      const leaf = u32(page, 8 + i * 4);
      if (leaf > 0 && leaf <= total) free.add(leaf);
    }
    trunk = u32(page, 0);
  }
  return free;
}

/**
 * The payload of a cell: local bytes plus its overflow chain; `undefined`
 * when broken. `size` comes from the page, damaged or not: it is checked
 * against the page and the file (a chain no longer than the file's pages,
 * each page in it once) before anything of that size is made.
 */
function payload(
  file: PageFile,
  page: Uint8Array,
  at: number,
  size: number,
): Uint8Array | undefined {
  if (!Number.isSafeInteger(size) || size < 0) return undefined;
  const u = file.usable;
  const x = u - 35;
  let local = size;
  if (size > x) {
    const m = Math.floor(((u - 12) * 32) / 255) - 23;
    const k = m + ((size - m) % (u - 4));
    local = k <= x ? k : m;
  }
  if (at + local > u) return undefined;
  const chain: Uint8Array[] = [];
  if (local < size) {
    if (at + local + 4 > u) return undefined;
    const needed = Math.ceil((size - local) / (u - 4));
    if (needed > file.size / file.pageSize) return undefined;
    let next = u32(page, at + local);
    const seen = new Set<number>();
    while (chain.length < needed) {
      if (next === 0 || seen.has(next)) return undefined;
      seen.add(next);
      const overflow = file.page(next);
      if (overflow === undefined) return undefined;
      chain.push(overflow);
      next = u32(overflow, 0);
    }
    for (const n of seen) file.overflow.add(n);
  }
  const out = new Uint8Array(size);
  out.set(page.subarray(at, at + local), 0);
  let done = local;
  for (const overflow of chain) {
    const take = Math.min(size - done, u - 4);
    out.set(overflow.subarray(4, 4 + take), done);
    done += take;
  }
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/**
 * Decodes a record; `undefined` when its header and body do not fit together.
 *
 * @param bytes The record.
 * @param rawTexts Receives the bytes of text values that are not valid UTF-8, by column index.
 */
export function decodeRecord(
  bytes: Uint8Array,
  rawTexts?: Map<number, Uint8Array>,
): SqlValue[] | undefined {
  const head = varint(bytes, 0);
  if (head === undefined || head[0] > bytes.length || head[0] < head[1]) return undefined;
  const types: number[] = [];
  let at = head[1];
  while (at < head[0]) {
    const type = varint(bytes, at, head[0]);
    if (type === undefined) return undefined;
    types.push(type[0]);
    at += type[1];
  }
  const values: SqlValue[] = [];
  let body = head[0];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const type of types) {
    const width = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0][type] ??
      (type >= 12 ? Math.floor((type - 12) / 2) : -1);
    if (width < 0 || body + width > bytes.length) return undefined;
    if (type === 0) values.push(null);
    else if (type === 8 || type === 9) values.push(type - 8);
    else if (type === 7) values.push(view.getFloat64(body));
    else if (type <= 6) {
      let value = BigInt(0);
      for (let i = 0; i < width; i++) value = (value << BigInt(8)) | BigInt(bytes[body + i]);
      const bits = BigInt(width * 8);
      if (value >= BigInt(1) << (bits - BigInt(1))) value -= BigInt(1) << bits;
      const small = Number(value);
      values.push(Number.isSafeInteger(small) ? small : value);
    } else if (type % 2 === 0) values.push(bytes.slice(body, body + width));
    else {
      const text = bytes.subarray(body, body + width);
      try {
        values.push(utf8.decode(text));
      } catch {
        rawTexts?.set(values.length, text.slice());
        values.push(lenientUtf8.decode(text));
      }
    }
    body += width;
  }
  return body === bytes.length ? values : undefined;
}

/**
 * The rowid whose varint is `read` at `at`, exact: the number when it is
 * one exactly, else a `bigint` (a varint is a 64-bit two's-complement value:
 * negative rowids take 9 bytes).
 */
function exactRowid(page: Uint8Array, at: number, read: [number, number]): number | bigint {
  if (Number.isSafeInteger(read[0])) return read[0];
  let value = BigInt(0);
  for (let i = 0; i < read[1]; i++) {
    const byte = BigInt(page[at + i]);
    value = i === 8 ? (value << BigInt(8)) | byte : (value << BigInt(7)) | (byte & BigInt(0x7f));
  }
  const signed = BigInt.asIntN(64, value);
  return Number.isSafeInteger(Number(signed)) ? Number(signed) : signed;
}

function leafRecords(file: PageFile, n: number, page: Uint8Array, visit: RecordVisitor): void {
  const h = n === 1 ? 100 : 0;
  if (page[h] !== TABLE_LEAF || !plausible(page, h, file.pageSize)) return;
  const cells = u16(page, h + 3);
  for (let i = 0; i < cells; i++) {
    const at = u16(page, h + 8 + i * 2);
    if (at < h + 8 + cells * 2 || at >= file.usable) {
      file.brokenCells++;
      continue;
    }
    const size = varint(page, at, file.usable);
    const rowid = size === undefined ? undefined : varint(page, at + size[1], file.usable);
    const bytes = size === undefined || rowid === undefined
      ? undefined
      : payload(file, page, at + size[1] + rowid[1], size[0]);
    const rawTexts = new Map<number, Uint8Array>();
    const values = bytes === undefined ? undefined : decodeRecord(bytes, rawTexts);
    if (size === undefined || rowid === undefined || values === undefined) {
      file.brokenCells++;
      continue;
    }
    const record = { page: n, rowid: exactRowid(page, at + size[1], rowid), values };
    visit(rawTexts.size > 0 ? { ...record, rawTexts } : record);
  }
}

/** Hands every record of `file` to `visit`, its page size taken from the header or guessed. */
function scanFile(file: PageFile, visit: RecordVisitor): PageScan {
  const header = file.read(0, 100);
  const fromHeader = header.length === 100 ? headerPageSize(header) : undefined;
  file.pageSize = fromHeader ?? guessPageSize(file);
  file.usable = file.pageSize - (fromHeader !== undefined ? header[20] : 0);
  const free = fromHeader !== undefined ? freePages(file, header) : new Set<number>();
  const pages = Math.floor(file.size / file.pageSize);
  const btree = new Set<number>();
  for (let n = 1; n <= pages; n++) {
    if (free.has(n)) continue;
    const page = file.page(n);
    if (page === undefined) continue;
    if (plausible(page, n === 1 ? 100 : 0, file.pageSize)) btree.add(n);
    leafRecords(file, n, page, visit);
  }
  // The lock-byte page (at 1 GiB) holds nothing, ever.
  const lockByte = Math.floor(0x40000000 / file.pageSize) + 1;
  let unexplainedPages = 0;
  for (let n = 2; n <= pages; n++) {
    if (!btree.has(n) && !free.has(n) && !file.overflow.has(n) && n !== lockByte) {
      unexplainedPages++;
    }
  }
  return {
    pageSize: file.pageSize,
    pages,
    headerIntact: fromHeader !== undefined,
    unexplainedPages,
    brokenCells: file.brokenCells,
    missingPages: fromHeader !== undefined ? Math.max(0, headerPageCount(header) - pages) : 0,
  };
}

/**
 * The page count the header gives, when it is valid (SQLite's rule: its
 * "version valid for" equals its change counter); 0 otherwise.
 */
function headerPageCount(header: Uint8Array): number {
  return u32(header, 92) === u32(header, 24) ? u32(header, 28) : 0;
}

/**
 * Reads every table-leaf record of the file at `path`, handing each to
 * `visit` as it is read.
 *
 * @param path A database file that no connection of this process holds.
 * @param visit Receives each record.
 * @returns The page size, the page count and what could not be read.
 */
export function scanPages(path: string, visit: RecordVisitor): PageScan {
  const file = new PageFile({ fd: openSync(path, "r") });
  try {
    return scanFile(file, visit);
  } finally {
    file.close();
  }
}

/**
 * The database image a `-wal` holds on its own (its main file lost): the
 * last committed version of each page its valid frames carry, in a file
 * as long as the last commit says; pages it never held are zeros.
 *
 * @param wal The `-wal` file's bytes.
 * @returns The image, or `undefined` when it holds no valid commit.
 */
export function walImage(wal: Uint8Array): Uint8Array | undefined {
  const header = readWalHeader(wal);
  if (header === undefined) return undefined;
  const { pageSize } = header;
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  let sum: readonly [number, number] = header.checksum;
  const committed = new Map<number, number>(); // page → offset of its data
  const pending = new Map<number, number>();
  let pages = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length;) {
    const next = checkedFrame(wal.subarray(at, at + FRAME_HEADER + pageSize), header, sum);
    if (next === undefined) break;
    sum = next;
    pending.set(view.getUint32(at), at + FRAME_HEADER);
    const dbSize = view.getUint32(at + 4);
    if (dbSize > 0) {
      for (const [page, offset] of pending) committed.set(page, offset);
      pending.clear();
      pages = dbSize;
    }
    at += FRAME_HEADER + pageSize;
  }
  if (pages === 0) return undefined;
  const image = new Uint8Array(pages * pageSize);
  for (const [page, offset] of committed) {
    if (page >= 1 && page <= pages) {
      image.set(wal.subarray(offset, offset + pageSize), (page - 1) * pageSize);
    }
  }
  return image;
}

/**
 * Reads every table-leaf record of the database a `-wal` holds on its own
 * (its main file is empty or lost), through {@linkcode walImage}, handing
 * each to `visit`.
 *
 * @param walPath The `-wal` file (read, never written).
 * @param visit Receives each record; none when the `-wal` holds no valid commit.
 * @returns The page size, the page count and what could not be read.
 */
export function scanWal(walPath: string, visit: RecordVisitor): PageScan {
  const image = walImage(readFileSync(walPath));
  if (image === undefined) {
    return {
      pageSize: 0,
      pages: 0,
      headerIntact: false,
      unexplainedPages: 0,
      brokenCells: 0,
      missingPages: 0,
    };
  }
  return scanFile(new PageFile({ image }), visit);
}
