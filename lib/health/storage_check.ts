/**
 * Storage: the WAL's size against the database, whether a checkpoint can
 * run, free pages, and the mode (0600) and owner of `state.db`, `-wal` and
 * `-shm`.
 *
 * @module
 */
import { dirname } from "node:path";
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { databaseFiles, type FileStat } from "./file_stats.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { mayWrite } from "../files/may_write.ts";
import { groupedCount, groupedInteger } from "../core/grouped_digits.ts";
import { walCommitsPastBreak } from "./wal_break.ts";

/** A WAL larger than the database and than this is reported. */
const WAL_WARN_BYTES = 64 * 1024 * 1024;
/** Free pages over this share of the file (and over 1 MiB) are reported. */
const FREE_SHARE = 0.25;

function formatMiB(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The result of `PRAGMA wal_checkpoint`, when one ran. */
export interface CheckpointResult {
  /** 1 when a reader or writer kept it from finishing. */
  readonly busy: number;
  /** Frames in the WAL after it (0 when a TRUNCATE checkpoint finished; -1 without a WAL). */
  readonly log: number;
  /** Frames copied into the database, counted as `log` is (0 when a TRUNCATE finished). */
  readonly checkpointed: number;
  /**
   * Frames of commits the WAL held before it: all of them are in the
   * database file once a TRUNCATE checkpoint finished (-1 without a WAL).
   */
  readonly walFrames: number;
}

/**
 * The `wal` finding.
 *
 * @param path The database file.
 * @param checkpoint What a checkpoint run by `--fix` answered, if one ran.
 * @returns ok, a warning, or a problem when the `-wal` holds commits SQLite ignores.
 */
export function checkWal(path: string, checkpoint?: CheckpointResult): HealthCheck {
  const files = databaseFiles(path);
  const db = files.find((f) => f.path === path)?.size ?? 0;
  const walPath = `${sqliteFilePath(path)}-wal`;
  const wal = files.find((f) => f.path === walPath)?.size ?? 0;
  const size = `WAL ${formatMiB(wal)} beside a ${formatMiB(db)} database`;
  const fix = "hermes-state doctor --fix (runs wal_checkpoint(TRUNCATE))";
  const broken = wal > 0 ? walCommitsPastBreak(walPath) : undefined;
  if (broken !== undefined) {
    const commits = groupedCount(broken.commits, "commit", "commits");
    return finding(
      "wal",
      "problem",
      `${size}: its frame ${groupedInteger(broken.frame)} fails its checksum, and SQLite ` +
        `ignores the ${commits} after it; the next checkpoint or write discards them`,
      {
        fix: `keep a copy of ${walPath} before anything writes the file (doctor --fix ` +
          `does not write to it): no SQLite reads those commits, and only it holds them`,
      },
    );
  }
  if (checkpoint !== undefined && checkpoint.busy !== 0) {
    return finding("wal", "warning", `${size}; a checkpoint could not finish: a reader holds it`, {
      fix: "let long readers finish (or stop the gateway), then run doctor --fix again",
    });
  }
  const folder = dirname(sqliteFilePath(path));
  const writable = mayWrite(folder) && files.every((f) => mayWrite(f.path));
  if (!writable) {
    return finding(
      "wal",
      "warning",
      `${size}; no checkpoint can run: a file or the folder is read-only`,
      {
        fix: `make ${folder} and the state.db files writable by the gateway's user`,
      },
    );
  }
  if (wal > WAL_WARN_BYTES && wal > db) {
    return finding("wal", "warning", `${size}: it grows and is not checkpointed`, {
      fix,
      fixable: true,
    });
  }
  const how = checkpoint === undefined
    ? "a checkpoint can run (files and folder writable)"
    : "checkpointed";
  return finding("wal", "ok", `${size}; ${how}`);
}

/**
 * The `free_pages` finding.
 *
 * @param db The connection.
 * @returns ok, or a warning that `--vacuum` reclaims the space.
 */
export function checkFreePages(db: SqliteConnection): HealthCheck {
  const number = (sql: string) => Number(Object.values(db.prepare(sql).get() ?? {})[0] ?? 0);
  const pages = number("PRAGMA page_count");
  const free = number("PRAGMA freelist_count");
  const bytes = free * number("PRAGMA page_size");
  const summary = `${groupedInteger(free)} of ${groupedInteger(pages)} pages free (${
    formatMiB(bytes)
  })`;
  if (pages > 0 && free / pages > FREE_SHARE && bytes > 1024 * 1024) {
    return finding("free_pages", "warning", summary, {
      fix: "hermes-state doctor --fix --vacuum (rewrites the file; holds the lock while it runs)",
      fixable: true,
    });
  }
  return finding("free_pages", "ok", summary);
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}

/**
 * The `files` finding: mode 0600 and one owner for the three files.
 *
 * @param path The database file.
 * @param existedBefore The companions there before the checking connection
 *   opened the file; the others are its own (it created them, with the
 *   file's mode, and removes them when it closes) and are not judged.
 * @returns ok, a fixable warning (modes), or a problem (owners differ).
 */
export function checkFiles(path: string, existedBefore?: ReadonlySet<string>): HealthCheck {
  const files = databaseFiles(path).filter((f, i) =>
    i === 0 || existedBefore === undefined || existedBefore.has(f.path)
  );
  const main = files[0] as FileStat | undefined;
  if (main === undefined) return finding("files", "problem", `${path} does not exist`);
  const open = files.filter((f) => (f.mode & 0o077) !== 0);
  const strangers = files.filter((f) => f.uid !== main.uid);
  const details = files.map((f) => `${f.path}: mode ${octal(f.mode)}, owner ${f.uid}:${f.gid}`);
  if (strangers.length > 0) {
    return finding(
      "files",
      "problem",
      `${
        strangers.map((f) => f.path).join(", ")
      } not owned by the owner of state.db (uid ${main.uid}): ` +
        "the gateway may be unable to write",
      {
        fix: `chown ${main.uid}:${main.gid} ${strangers.map((f) => f.path).join(" ")}` +
          " (doctor --fix does it when run as root)",
        fixable: true,
        details,
      },
    );
  }
  if (open.length > 0) {
    return finding(
      "files",
      "warning",
      `${
        open.map((f) => `${f.path} is ${octal(f.mode)}`).join(", ")
      }: others may read the sessions`,
      { fix: "hermes-state doctor --fix (sets mode 0600)", fixable: true, details },
    );
  }
  return finding("files", "ok", `mode 0600, one owner (uid ${main.uid})`, { details });
}
