/**
 * The layering of docs/architecture.md, checked: every import statement of
 * `lib/` (static, re-export or dynamic) goes to a layer its own layer may
 * use, or is in the allow list with the reason it must cross.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { ROOT } from "./_helpers.ts";

/** The layer of a `lib/` file: its folder, or `open_store` for `lib/open_store.ts`. */
function layerOf(file: string): string {
  const [, first] = file.split("/");
  return first.endsWith(".ts") ? first.slice(0, -3) : first;
}

/**
 * The layers each layer may import (its own always). `core` is the bottom;
 * the engines sit on it; `health` is the tooling of SQLite files; the faces
 * (`render`, `cli`, `web`) use the seam: `core` and `open_store`.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: [],
  files: ["core"],
  sqlite: ["core", "files"],
  postgres: ["core", "files"],
  health: ["core", "files", "sqlite"],
  open_store: ["core"],
  render: ["core"],
  web: ["core", "render", "open_store", "files"],
  cli: ["core", "render", "open_store", "files", "health", "web"],
};

/** Each import across the rules, `from → to`, with why it must cross. */
const ALLOWED: Readonly<Record<string, string>> = {
  "lib/open_store.ts → lib/sqlite/sqlite_store.ts": "openStore picks the engine: the SQLite entry",
  "lib/open_store.ts → lib/postgres/postgres_store.ts":
    "openStore picks the engine: the PostgreSQL entry (a dynamic import, a type only statically)",
  "lib/postgres/sync.ts → lib/sqlite/session_db.ts":
    "sync reads a SQLite state.db into PostgreSQL: it opens the file with the SQLite engine",
  "lib/postgres/_sync_source.ts → lib/sqlite/store.ts":
    "sync reads the SQLite file's sessions and message counts",
  "lib/postgres/_sync_messages.ts → lib/sqlite/store.ts":
    "sync reads the SQLite file's rows in pages",
  "lib/postgres/_sync_shown.ts → lib/sqlite/store.ts":
    "sync reads the SQLite file's visibility columns (active, compacted, display_kind) per session",
  "lib/postgres/_sync_source.ts → lib/sqlite/session_model_usage.ts":
    "sync reads the per-model usage rows of the sessions it writes as getModelUsage does",
  "lib/postgres/_sync_model_usage.ts → lib/sqlite/session_model_usage.ts":
    "sync asks whether the file's per-model usage table can be read as getModelUsage asks",
  "lib/postgres/_sync_model_usage.ts → lib/sqlite/store.ts":
    "sync reads a newer Hermes's per-model usage rows from the SQLite file",
  "lib/postgres/_sync_exact.ts → lib/sqlite/store.ts":
    "sync reads again, exactly, the SQLite file's rows that hold an integer beyond 2^53",
  "lib/postgres/_sync_exact.ts → lib/sqlite/exact_values.ts":
    "sync lists the SQLite file's integers beyond 2^53 as copy and export do (exactIntegersTerm)",
  "lib/cli/commands/sync.ts → lib/postgres/sync.ts":
    "sync is a command between the two engines, not a SessionStore method",
  "lib/cli/commands/doctor.ts → lib/postgres/doctor/doctor.ts":
    "doctor on a URL checks the server's own tables and indexes: no SessionStore method (a dynamic import)",
  "lib/cli/commands/migrate.ts → lib/postgres/postgres_store.ts":
    "migrate on a URL runs the server's migration steps and reports them: no SessionStore method",
  "lib/cli/commands/copy.ts → lib/postgres/store_url.ts":
    "copy refuses two URLs of one server and schema before it opens either, read as the store reads a URL (a dynamic import)",
  "lib/cli/commands/copy.ts → lib/sqlite/batches.ts":
    "copy into a SQLite file paces its write transactions so the agent is never kept waiting",
  "lib/cli/commands/import.ts → lib/sqlite/batches.ts":
    "import into a SQLite file paces its write transactions so the agent is never kept waiting",
  "lib/cli/commands/copy.ts → lib/sqlite/disk_space.ts":
    "copy says how much room a SQLite file needed when the disk is full",
  "lib/cli/commands/import.ts → lib/sqlite/disk_space.ts":
    "import says how much room a SQLite file needed when the disk is full",
  "lib/cli/context.ts → lib/sqlite/durability.ts":
    "the CLI warns once when the linked SQLite library has the WAL-reset bug",
  "lib/cli/commands/search.ts → lib/sqlite/fts_stale.ts":
    "search warns that a SQLite file's full-text index is stale (a state_meta key)",
  "lib/cli/commands/search.ts → lib/sqlite/schema/fts_backfill.ts":
    "search warns that a SQLite file's full-text index is still filling (a state_meta key)",
  "lib/cli/commands/search.ts → lib/sqlite/schema/fts_layout.ts":
    "search warns that a newer Hermes marked its own full-text index stale (state_meta keys)",
  "lib/cli/commands/search.ts → lib/sqlite/schema/schema_sql.ts":
    "search names the SQLite full-text tables whose state it reports",
  "lib/cli/commands/info.ts → lib/sqlite/schema/schema_sql.ts":
    "info compares a SQLite file's schema version with this library's",
  "lib/cli/commands/migrate.ts → lib/sqlite/schema/schema_sql.ts":
    "migrate reports the SQLite schema version it upgrades to",
  "lib/cli/main.ts → lib/sqlite/read_access.ts":
    "the CLI words damage met reading another user's file without locks as a likely torn read",
  "lib/cli/locked_file.ts → lib/sqlite/write_busy_error.ts":
    "the CLI words a SQLite write that gave up on the lock as one line (--db, import, copy)",
};

/** Comments removed (block and line), so that an example in JSDoc is not an import. */
function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

const STATIC_IMPORT = /^\s*(?:import|export)\b[^;"'`]*?["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/**
 * The relative imports of one source file, resolved to repository paths.
 *
 * @param file The file's repository path (`lib/…`).
 * @param code Its text.
 */
function importsOf(file: string, code: string): string[] {
  const bare = withoutComments(code);
  const specifiers = [
    ...[...bare.matchAll(STATIC_IMPORT)].map((m) => m[1]),
    ...[...bare.matchAll(DYNAMIC_IMPORT)].map((m) => m[1]),
  ];
  return specifiers.filter((s) => s.startsWith(".")).map((s) =>
    normalize(join(dirname(file), s)).replaceAll("\\", "/")
  );
}

/** The imports among `files` that break the rules, as `from → to`. */
function violations(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, code] of files) {
    const from = layerOf(file);
    for (const target of importsOf(file, code)) {
      if (!target.startsWith("lib/")) continue;
      const to = layerOf(target);
      if (to === from || MAY_IMPORT[from]?.includes(to)) continue;
      found.push(`${file} → ${target}`);
    }
  }
  return [...new Set(found)].sort();
}

function libFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return libFiles(rel);
    return entry.name.endsWith(".ts") ? [rel] : [];
  });
}

const LIB = new Map(libFiles("lib").map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));

test("every lib/ folder is a layer with rules", () => {
  const layers = new Set([...LIB.keys()].map(layerOf));
  assert.deepEqual([...layers].filter((layer) => !(layer in MAY_IMPORT)), []);
});

test("no lib/ module imports a layer its layer may not, except the allow list's reasons", () => {
  const crossing = violations(LIB);
  assert.deepEqual(
    crossing.filter((edge) => !(edge in ALLOWED)),
    [],
    "an import across the layers: move the neutral part down to lib/core, or list it in ALLOWED with its reason",
  );
  assert.deepEqual(
    Object.keys(ALLOWED).filter((edge) => !crossing.includes(edge)),
    [],
    "an allow-list entry no import needs any more: remove it",
  );
});

test("the layer check sees a core module that imports the SQLite engine, in each import form", () => {
  const files = new Map([
    ["lib/core/a.ts", 'import type { X } from "../sqlite/x.ts";\n'],
    ["lib/core/b.ts", 'export {\n  Y,\n} from "../sqlite/y.ts";\n'],
    ["lib/core/c.ts", 'const m = await import("../postgres/z.ts");\n'],
    [
      "lib/core/d.ts",
      '/**\n * import { W } from "../sqlite/w.ts";\n */\nimport { V } from "./v.ts";\n',
    ],
    ["lib/render/e.ts", 'import { S } from "../cli/style.ts";\n'],
  ]);
  assert.deepEqual(violations(files), [
    "lib/core/a.ts → lib/sqlite/x.ts",
    "lib/core/b.ts → lib/sqlite/y.ts",
    "lib/core/c.ts → lib/postgres/z.ts",
    "lib/render/e.ts → lib/cli/style.ts",
  ]);
});
