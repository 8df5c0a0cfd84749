/**
 * The real browser for the web tests: Debian's chromium (or
 * `HERMES_TEST_CHROMIUM`) driven by puppeteer-core, imported only here.
 * Without a browser the tests skip, except under `CI=true`, where a missing
 * browser is a failure.
 */
import { accessSync, constants, mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import process from "node:process";
import assert from "node:assert/strict";
import { ROOT } from "../_helpers.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { runsDenoOnlyTests, runtimeBinary } from "../reliability/_runtimes.ts";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";

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

/**
 * The `skip` of a browser test of one behaviour of the page: {@linkcode browserSkip}, and under
 * Bun and Node also a skip when a Deno binary is found. What such a test checks is the page's
 * script, the same whatever runtime serves it, so the suite's run under Deno runs it (any runner
 * does when no Deno binary is found, so it always runs somewhere). The page over each runtime's
 * own server (`Bun.serve` on Bun, `node:http` on Deno and Node) is driven by `browser_test.ts`,
 * which runs under all three, and every answer of that server is tested over HTTP under all three.
 */
export function pageBehaviourSkip(): string | undefined {
  const missing = browserSkip();
  if (missing !== undefined) return missing;
  if (runsDenoOnlyTests()) return undefined;
  return "a behaviour of the page's script, the same on any server: the run under Deno runs it";
}

/**
 * The `skip` of a test of one behaviour of the page in `browser_test.ts`, the file that drives the
 * page over each runtime's own server: {@linkcode browserSkip}, and a skip under every runner but
 * `runtime`. The page's script is the same whatever serves it (the other browser files run such
 * tests under Deno alone, {@linkcode pageBehaviourSkip}); here they are shared between Bun and
 * Node, so that Deno, the longest run of the suite, serves only the file's tests of the serving
 * itself (the listing, the live stream, an export, a write, the token and Host guards), which run
 * under all three. Where `runtime`'s binary is not found, the run under Deno takes the test (or
 * every runner, when no Deno binary is found either), so it always runs somewhere.
 */
export function pageCheckSkip(runtime: "bun" | "node"): string | undefined {
  const missing = browserSkip();
  if (missing !== undefined) return missing;
  if (runtimeName() === runtime) return undefined;
  if (runtimeBinary(runtime) === undefined && runsDenoOnlyTests()) return undefined;
  return `a behaviour of the page's script, the same on any server: the run under ${
    runtime === "bun" ? "Bun" : "Node"
  } runs it`;
}

/** The part of puppeteer's API the tests use. */
// deno-lint-ignore no-explicit-any
export type Browser = any;

/** Browsers this process launched and has not seen close. */
const launched = new Set<Browser>();

// Deno 2.9 runs no top-level `after` hook in a test file with a skipped test
// (`browser_test.ts` skips its PostgreSQL suite without a server), so the hook
// that closes the file's browser never ran and Chromium outlived the run. The
// `unload` event still comes: whatever is still open is killed there.
if ("Deno" in globalThis) {
  globalThis.addEventListener("unload", () => {
    for (const browser of launched) browser.process()?.kill("SIGKILL");
  });
}

/** Starts headless chromium. */
export async function launchBrowser(): Promise<Browser> {
  const specifier = "Deno" in globalThis ? "npm:puppeteer-core@25.16.0" : "puppeteer-core";
  const puppeteer = (await import(specifier)).default;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--font-render-hinting=none",
    ],
  });
  launched.add(browser);
  browser.once("disconnected", () => launched.delete(browser));
  return browser;
}

/** A page of the tests: puppeteer's, with the script errors it met. */
// deno-lint-ignore no-explicit-any
export type Page = any;

/** How {@linkcode openPage} sets a page up. */
export interface PageOptions {
  /** Viewport width (375: a phone's height too). @default {1280} */
  readonly width?: number;
  /** `prefers-color-scheme: dark`. */
  readonly dark?: boolean;
  /** The page's time zone. */
  readonly timeZone?: string;
  /** Script run before the page's own. */
  readonly script?: string;
}

/**
 * A new page at `url` that records its script errors (see {@linkcode closePage}),
 * once the page has drawn its first view (`body[data-ready]`).
 */
export async function openPage(
  browser: Browser,
  url: string,
  options: PageOptions = {},
): Promise<Page> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error: Error) => errors.push(error.message));
  page.errors = errors;
  await page.setViewport({
    width: options.width ?? 1280,
    height: options.width === 375 ? 780 : 860,
  });
  if (options.dark !== undefined) {
    await page.emulateMediaFeatures([
      { name: "prefers-color-scheme", value: options.dark ? "dark" : "light" },
    ]);
  }
  if (options.timeZone) await page.emulateTimezone(options.timeZone);
  if (options.script) await page.evaluateOnNewDocument(options.script);
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready]");
  return page;
}

/** Closes a page of {@linkcode openPage}, asserting that no script of it failed. */
export async function closePage(page: Page): Promise<void> {
  assert.deepEqual(page.errors, [], "no script error on the page");
  await page.close();
}

/**
 * Waits until the view has been drawn again after `action`: a change of the hash, a click, Back,
 * a form's change, a live update. Also when `action` loads a new document (Back to an entry of a
 * page since reloaded): its `data-ready` is missing until its first view is drawn. The draw waited
 * for is one of the address the page is at once `action` is done (`body[data-drawn]`): a live
 * update that drew the old view meanwhile (a PostgreSQL store's change marker moves on any commit
 * of the server, so other tests' writes wake the page) does not end the wait.
 */
export async function redrawn(page: Page, action: () => Promise<unknown>): Promise<void> {
  const before = await page.evaluate(() => document.body.getAttribute("data-ready"));
  await action();
  await page.waitForFunction(
    (old: string | null) => {
      const now = document.body?.getAttribute("data-ready") ?? null;
      return now !== null && now !== old &&
        document.body.getAttribute("data-drawn") === location.hash;
    },
    { timeout: 10_000 },
    before,
  );
}

/**
 * The text `node` shows once painted, run in the page: its `innerText` after two animation
 * frames. A transcript's messages are `content-visibility: auto`, and Chromium leaves their
 * text out of `innerText` until a frame has found which of them are on screen: read in the
 * moment the view is drawn, a transcript's text held its head and none of its messages.
 */
export function paintedText(node: Element): Promise<string> {
  return new Promise((resolve) =>
    requestAnimationFrame(() =>
      requestAnimationFrame(() => resolve((node as HTMLElement).innerText))
    )
  );
}

/** The text the page shows in `selector`, once painted (see {@linkcode paintedText}). */
export async function pageText(page: Page, selector = "#app"): Promise<string> {
  return await page.$eval(selector, paintedText);
}

/** Saves a screenshot as `tests/out/NAME.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/**
 * `store` whose change marker fails while `broken.now` is true, with the
 * error `failure` makes: the handler reads it first for every request, so
 * they all fail as with a file gone, and the live stream says so.
 */
export function withBreakableMarker(
  store: SessionStore,
  broken: { now: boolean },
  failure: () => Error,
): SessionStore {
  return new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        broken.now && name === "dataVersion"
          ? Promise.reject(failure())
          : value.apply(target, args);
    },
  });
}

/** The ids of the messages the transcript shows (its `#m-ID` articles), in order. */
export async function shownMessageIds(page: Page): Promise<number[]> {
  return await page.$$eval(
    "#messages > article",
    (nodes: Element[]) => nodes.map((node) => Number(node.id.slice(2))),
  );
}
