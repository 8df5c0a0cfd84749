/**
 * The real browser for the web tests: Debian's chromium (or
 * `HERMES_TEST_CHROMIUM`) driven by puppeteer-core, imported only here.
 * Without a browser the tests skip, except under `CI=true`, where a missing
 * browser is a failure.
 */
import { accessSync, constants, mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import process from "node:process";
import { ROOT } from "../_helpers.ts";

/** Where screenshots go (git-ignored). */
export const SCREENSHOTS = join(ROOT, "tests", "out");

/** The chromium executable: `HERMES_TEST_CHROMIUM`, else `chromium` on PATH. */
export function chromiumPath(): string | undefined {
  const given = process.env.HERMES_TEST_CHROMIUM;
  if (given) return runnable(given) ? given : undefined;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of ["chromium", "chromium-browser"]) {
      if (runnable(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the browser tests cannot run (a skip message), or `undefined` when they can.
 *
 * @throws {Error} Under `CI=true` when there is no browser.
 */
export function browserSkip(): string | undefined {
  if (chromiumPath() !== undefined) return undefined;
  if (process.env.CI === "true") {
    throw new Error("No chromium for the browser tests (CI=true): run scripts/chromium.sh");
  }
  const given = process.env.HERMES_TEST_CHROMIUM;
  return given
    ? `HERMES_TEST_CHROMIUM=${given} is not an executable`
    : "no chromium found (set HERMES_TEST_CHROMIUM or install chromium)";
}

/** The part of puppeteer's API the tests use. */
// deno-lint-ignore no-explicit-any
export type Browser = any;

/** Starts headless chromium. */
export async function launchBrowser(): Promise<Browser> {
  const specifier = "Deno" in globalThis ? "npm:puppeteer-core@25.16.0" : "puppeteer-core";
  const puppeteer = (await import(specifier)).default;
  mkdirSync(SCREENSHOTS, { recursive: true });
  return await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--font-render-hinting=none",
    ],
  });
}
