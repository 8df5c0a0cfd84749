/**
 * The SQLite library imports no npm package: walking the static imports of
 * `mod.ts` (as `deno info --json` reports them) reaches neither an `npm:`
 * module nor the PostgreSQL engine, which `openStore` loads only by dynamic
 * import when a `postgres://` target is opened.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../_helpers.ts";

interface Dependency {
  code?: { specifier?: string };
  isDynamic?: boolean;
}

interface InfoModule {
  specifier: string;
  dependencies?: Dependency[];
}

function denoInfo(): { roots: string[]; modules: InfoModule[] } | undefined {
  try {
    const out = execFileSync("deno", ["info", "--json", join(ROOT, "mod.ts")], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(out);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
}

const info = denoInfo();

test("mod.ts's static import graph has no npm package and not the PostgreSQL engine", {
  skip: info === undefined && process.env.CI !== "true" ? "deno is not on PATH" : false,
}, () => {
  assert.ok(info, "deno info --json mod.ts ran");
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...info.roots];
  let dynamicToPostgres = false;
  while (stack.length > 0) {
    const specifier = stack.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      const target = dep.code?.specifier;
      if (target === undefined) continue;
      if (dep.isDynamic) {
        if (target.includes("/lib/postgres/")) dynamicToPostgres = true;
        continue;
      }
      stack.push(target);
    }
  }
  assert.ok(seen.size > 20, `walked ${seen.size} modules`);
  const npm = [...seen].filter((s) => s.startsWith("npm:") || s.includes("/node_modules/"));
  assert.deepEqual(npm, [], "no npm module is imported statically");
  const postgres = [...seen].filter((s) => s.includes("/lib/postgres/"));
  assert.deepEqual(postgres, [], "the PostgreSQL engine is not imported statically");
  assert.ok(dynamicToPostgres, "openStore reaches the PostgreSQL engine by dynamic import");
});
