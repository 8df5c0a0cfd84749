/**
 * `node cli.ts` runs the CLI on a Node without `import.meta.main` (24.0 and
 * 24.1; 22.16 and 22.17 with `--experimental-strip-types`): it used to print
 * nothing and exit 0 there. The pinned Node has `import.meta.main`, so a
 * module hook takes it out of `cli.ts`'s source to play such a Node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./_helpers.ts";
import { runtimeBinary } from "./reliability/_runtimes.ts";

/** A hook that reads every `import.meta.main` of `cli.ts` as `undefined`. */
const WITHOUT_MAIN = `
import { registerHooks } from "node:module";
registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (!url.endsWith("/cli.ts")) return loaded;
    const source = String(loaded.source).replaceAll("import.meta.main", "undefined");
    return { ...loaded, source };
  },
});
`;

const node = runtimeBinary("node");

test("node cli.ts runs the CLI where Node has no import.meta.main", {
  skip: node === undefined ? "no Node binary" : false,
}, () => {
  const hook = `data:text/javascript,${encodeURIComponent(WITHOUT_MAIN)}`;
  const run = spawnSync(node!, ["--import", hook, join(ROOT, "cli.ts"), "--version"], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^hermes-state \d+\.\d+\.\d+/);
});

test("importing cli.ts as a module runs nothing", {
  skip: node === undefined ? "no Node binary" : false,
}, () => {
  const script = `await import(${JSON.stringify(join(ROOT, "cli.ts"))}); console.log("imported");`;
  const run = spawnSync(node!, ["--input-type=module", "-e", script, "--", "--version"], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, "imported\n");
});
