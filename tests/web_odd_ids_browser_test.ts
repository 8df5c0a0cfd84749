/// <reference lib="dom" />
// The session browser in a real chromium with sessions whose ids and titles are unusual: each
// opens from the listing, again on reload, and Back returns; search hits open it; downloads
// are saved; an export the server refuses says why on the page; no title runs script.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDir } from "./_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  pageText,
  redrawn,
} from "./web/_browser.ts";
import { serve, type Served } from "./web/_served.ts";

const skip = pageBehaviourSkip();

const LONG_ID = "L".repeat(5000);
const ODD_IDS = [
  "odd/slash",
  "odd?q=1",
  "odd#frag",
  "odd%2Fenc",
  "..",
  ".",
  "odd+plus & more",
  `odd"dq'sq`,
  "<script>window.__pwned='id'</script>",
  "odd😀中文",
  "a\u0000b",
  LONG_ID,
];

let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = copyFixture("hermes-v11.db");
  {
    using db = await rawOpen(path);
    const session = db.prepare(
      "INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'odd', ?, ?)",
    );
    const message = db.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
    );
    ODD_IDS.forEach((id, i) => {
      session.run(id, 1766300000 + i * 60, `<img src=x onerror="window.__pwned='${i}'"> ${id}`);
      message.run(id, `zebraquokka question ${i}`, 1766300001 + i * 60);
    });
    db.exec(
      "INSERT INTO sessions (id, source, started_at) VALUES (CAST(X'61FF62' AS TEXT), 'bad', 1)",
    );
  }
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

function sessionHref(id: string): string {
  return `#/s/${encodeURIComponent(id)}`;
}

/** Clicks the page's link to `href` (found by its attribute, whatever its characters). */
async function clickLink(page: Page, href: string): Promise<void> {
  await redrawn(page, async () => {
    const clicked = await page.$$eval(
      "#app a",
      (links: HTMLAnchorElement[], wanted: string) => {
        const link = links.find((one) => one.getAttribute("href") === wanted);
        link?.click();
        return link !== undefined;
      },
      href,
    );
    assert.ok(clicked, `a link to ${href.slice(0, 40)}`);
  });
}

/** Asserts that the transcript shown holds the message of `ODD_IDS[i]`. */
async function showsMessage(page: Page, i: number, name: string): Promise<void> {
  // Its text, not what is painted: a 5,000-character title puts the message below the screen.
  const text = await page.$eval("#app", (node: HTMLElement) => node.textContent);
  assert.match(text, new RegExp(`zebraquokka question ${i}\\b`), `${name}: ${text.slice(0, 200)}`);
}

/** The page's DevTools session, able to save its downloads. */
type Downloads = Awaited<ReturnType<Page["createCDPSession"]>>;

/**
 * The text of the file a download that `start` begins saves as `path`, once
 * Chromium says it is complete (it writes `path.crdownload`, then renames
 * it); a canceled download, or none within ten seconds, fails saying so.
 */
async function downloaded(
  cdp: Downloads,
  path: string,
  start: () => Promise<void>,
): Promise<string> {
  let settle = (_error?: Error) => {};
  const done = new Promise<void>((resolve, reject) => {
    settle = (error) => error === undefined ? resolve() : reject(error);
  });
  const progress = ({ state }: { state: string }) => {
    if (state === "completed") settle();
    else if (state === "canceled") settle(new Error(`the download of ${path} was canceled`));
  };
  const late = setTimeout(() => settle(new Error(`no download of ${path} within 10 s`)), 10_000);
  cdp.on("Browser.downloadProgress", progress);
  try {
    await start();
    await done;
  } finally {
    clearTimeout(late);
    cdp.off("Browser.downloadProgress", progress);
  }
  return readFileSync(path, "utf8");
}

describe("odd session ids in the browser", { skip }, () => {
  test("each opens from the listing and on reload, Back returns, no title runs", async () => {
    const page = await openPage(browser, `${served.origin}/#/?source=odd`);
    for (const [i, id] of ODD_IDS.entries()) {
      const name = JSON.stringify(id.slice(0, 20));
      await clickLink(page, sessionHref(id));
      assert.equal(await page.evaluate(() => location.hash), sessionHref(id), name);
      await showsMessage(page, i, name);
      await page.reload({ waitUntil: "load" });
      await page.waitForSelector("body[data-ready]");
      await showsMessage(page, i, `${name} on reload`);
      await redrawn(page, () => page.goBack());
      assert.equal(await page.evaluate(() => location.hash), "#/?source=odd", name);
    }
    assert.equal(await page.evaluate(() => "__pwned" in window), false);
    await closePage(page);
  });

  test("a search hit of each opens its transcript at the hit", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=zebraquokka&source=odd`);
    for (const [i, id] of ODD_IDS.entries()) {
      if (!page.url().includes("/search")) {
        await redrawn(page, () => page.goBack());
      }
      const href = await page.$$eval(
        ".hit a",
        (links: HTMLAnchorElement[], prefix: string) =>
          links.map((one) => one.getAttribute("href")).find((one) => one?.startsWith(prefix)),
        `${sessionHref(id)}?m=`,
      );
      assert.ok(href, `a hit of ${JSON.stringify(id.slice(0, 20))}`);
      await clickLink(page, href);
      assert.match(await pageText(page), new RegExp(`zebraquokka question ${i}\\b`));
    }
    await closePage(page);
  });

  test('downloads of ".", ".." and a 5,000-character id are saved', async () => {
    const folder = tempDir();
    const page = await openPage(browser, `${served.origin}/#/`);
    const cdp = await page.createCDPSession();
    await cdp.send("Browser.setDownloadBehavior", {
      behavior: "allow",
      downloadPath: folder,
      eventsEnabled: true,
    });
    for (const [id, file] of [[".", "session.md"], [LONG_ID, `${"L".repeat(100)}.md`]]) {
      await redrawn(page, () => page.goto(`${served.origin}/${sessionHref(id)}`));
      const text = await downloaded(
        cdp,
        join(folder, file),
        () => page.click('a[download][href^="/api/export?format=md&"]'),
      );
      assert.match(text, /zebraquokka question/, `${file}: ${JSON.stringify(text.slice(0, 400))}`);
    }
    await closePage(page);
  });

  test("an export the server refuses says why on the page", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await page.click('a[download][href="/api/export?format=jsonl"]');
    await page.waitForSelector(".export-error", { timeout: 10_000 });
    const said = await page.$eval(".export-error", (node: HTMLElement) => node.textContent);
    assert.match(
      said,
      /^The download failed: Cannot export session "a\uFFFDb": its id is not valid/,
    );
    // An export the server makes says nothing.
    // A change of the hash only: goto returns before the listing is drawn again (a CI run
    // clicked the old listing's link, which has no source).
    await redrawn(page, () => page.goto(`${served.origin}/#/?source=odd`, { waitUntil: "load" }));
    type Answer = { url(): string; request(): { method(): string } };
    const head = page.waitForResponse((response: Answer) =>
      response.request().method() === "HEAD" && response.url().endsWith("jsonl&source=odd")
    );
    await page.click('a[download][href="/api/export?format=jsonl&source=odd"]');
    assert.equal((await head).status(), 200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await page.$(".export-error"), null);
    await closePage(page);
  });
});
