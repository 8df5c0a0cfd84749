/**
 * hermes-state: the session store of the Hermes agent. It reads and writes
 * the very `state.db` file the Python Hermes uses (schema version 11), on
 * Deno, Bun and Node, next to a running Python gateway.
 *
 * @example Open, write, search (the same on Deno, Bun and Node)
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { SessionDB } from "./mod.ts";
 * const dir = await mkdtemp(`${tmpdir()}/hermes-`);
 * const db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("20260101_090000_abc123", "cli");
 * db.appendMessage("20260101_090000_abc123", { role: "user", content: "hello docker" });
 * const [hit] = db.searchMessages("docker");
 * assert.equal(hit.session_id, "20260101_090000_abc123");
 * assert.match(hit.snippet!, />>>docker<<</);
 * db.close();
 * ```
 *
 * @module
 */
export { SessionDB, type SessionDBOptions } from "./lib/sqlite/session_db.ts";
export type { SessionStore, StoreEngine } from "./lib/core/session_store.ts";
export { isPostgresTarget, openStore, type OpenStoreOptions } from "./lib/open_store.ts";
export type { SqliteStoreOptions } from "./lib/sqlite/sqlite_store.ts";
export type { PgConnectOptions, PostgresStoreOptions } from "./lib/postgres/postgres_store.ts";
export {
  type RestoredSyncState,
  type SyncedStore,
  syncedStore,
  type SyncOrigin,
  type SyncState,
} from "./lib/core/synced_store.ts";
export type { StoreRetryOptions } from "./lib/sqlite/store_retry.ts";
export type { Synchronous } from "./lib/sqlite/open.ts";
export type {
  DriverKind,
  RunResult,
  SqliteConnection,
  SqliteDriver,
  SqliteDriverOptions,
  SqliteStatement,
  SqlRow,
  SqlValue,
} from "./lib/sqlite/driver/types.ts";
export type { RetryOptions } from "./lib/sqlite/write.ts";
export {
  BackupError,
  NotStateDbError,
  OpenError,
  ReadonlyError,
  RecoverError,
  StorageError,
  type StorageErrorKind,
  TitleError,
  UnexportableIdError,
} from "./lib/core/errors.ts";
export { SqliteError } from "./lib/sqlite/driver/sqlite_error.ts";
export { WriteBusyError } from "./lib/sqlite/write_busy_error.ts";
export { defaultDbPath, hermesHome, type HermesHomeSource } from "./lib/core/paths.ts";
export { FTS_TABLES, type FtsTable, SCHEMA_VERSION } from "./lib/sqlite/schema/schema_sql.ts";
export type { CreateSessionOptions, EnsureSessionOptions } from "./lib/core/session_options.ts";
export type { TokenCountsUpdate } from "./lib/core/session_options.ts";
export type { ConversationOptions } from "./lib/core/session_options.ts";
export type { MessagesOptions } from "./lib/core/session_options.ts";
export type {
  ListSessionsOptions,
  SearchSessionsOptions,
  SessionCountOptions,
} from "./lib/core/listing_options.ts";
export type { SearchOptions, SearchSort } from "./lib/core/search/options.ts";
export { sanitizeFts5Query } from "./lib/core/search/sanitize.ts";
export { containsCjk } from "./lib/core/search/cjk.ts";
export { type PrefixMatches } from "./lib/core/listing_options.ts";
export { sanitizeTitle } from "./lib/core/titles.ts";
export type { ExportOptions } from "./lib/core/transfer_options.ts";
export type { ImportOptions, ImportResult, ParentLink } from "./lib/core/transfer_options.ts";
export type { SessionModelUsage } from "./lib/core/session_model_usage.ts";
export type { DatabaseInfo, InspectOptions } from "./lib/core/database_info.ts";
export type { KnownIssue } from "./lib/core/database_info.ts";
export type { StaleFtsTable } from "./lib/core/database_info.ts";
export type { SourceUsage } from "./lib/core/usage.ts";
export {
  parseSince,
  USAGE_GROUPINGS,
  type UsageGrouping,
  type UsageReportOptions,
  type UsageRow,
} from "./lib/core/usage.ts";
export { doctor, type DoctorOptions, type DoctorReport, type Repair } from "./lib/health/doctor.ts";
export type { CheckStatus, HealthCheck } from "./lib/core/health_report.ts";
export {
  rebuildFtsTable,
  type RebuildOptions,
  type RebuildResult,
} from "./lib/health/fts_rebuild.ts";
export { backupDatabase, type BackupOptions, type BackupResult } from "./lib/health/backup.ts";
export {
  type LostRange,
  type OtherTableReport,
  recoverDatabase,
  type RecoverOptions,
  type RecoverResult,
  type RecoverStage,
  type RetitledSession,
} from "./lib/health/recover.ts";
export type { PruneCandidate, PruneCandidatesOptions } from "./lib/core/prune_options.ts";
export type {
  AutoPruneOptions,
  AutoPruneResult,
  PruneOptions,
  SessionsDirOptions,
} from "./lib/core/prune_options.ts";
export {
  convertScratchpadToThink,
  hasIncompleteScratchpad,
  saveTrajectory,
  type SaveTrajectoryOptions,
} from "./lib/files/trajectory.ts";
export type {
  ContextMessage,
  ConversationMessage,
  JsonValue,
  MessageContent,
  MessageRow,
  ModelUsage,
  NewMessage,
  RichSessionRow,
  SearchHit,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  SessionRowWithActivity,
  SessionTokens,
} from "./lib/core/types.ts";
