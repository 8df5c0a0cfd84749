/**
 * The SQLite library imports no npm package: walking the static imports of
 * `mod.ts` (as `deno info --json` reports them) reaches neither an `npm:`
 * module nor the PostgreSQL engine, which `openStore` loads only by dynamic
 * import when a `postgres://` target is opened. And running `cli.ts` downloads
 * nothing: Deno fetches a `package.json`'s dependencies on any run, so the two
 * npm packages are optional ones, which it leaves alone until imported.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, tempDir } from "../_helpers.ts";

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

test(
  "deno run cli.ts with an empty cache fetches at most the PostgreSQL client, never the browser driver",
  {
    skip: info === undefined && process.env.CI !== "true" ? "deno is not on PATH" : false,
  },
  () => {
    // An empty module cache and a registry nobody answers: Deno prints each download attempt on
    // stderr and goes on. The client's import is a literal (so `deno compile` bundles it), which Deno
    // resolves ahead; puppeteer-core and its 25 packages (33 MB) are the tests' alone.
    const run = spawnSync("deno", ["run", "-A", join(ROOT, "cli.ts"), "--version"], {
      cwd: ROOT,
      encoding: "utf8",
      env: {
        ...process.env,
        DENO_DIR: join(tempDir(), "deno-cache"),
        NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
        NO_COLOR: "1",
      },
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^hermes-state \d+\.\d+\.\d+/);
    const fetched = run.stderr.split("\n").filter((line) => line.startsWith("Download "))
      .map((line) => new URL(line.slice("Download ".length)).pathname.split("/")[1]);
    assert.deepEqual([...new Set(fetched)].filter((name) => name !== "postgres"), []);
  },
);
