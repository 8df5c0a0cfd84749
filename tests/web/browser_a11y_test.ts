/// <reference lib="dom" />
// The session browser in a real chromium, used with the keyboard alone and read by a screen
// reader: where the focus goes when a view opens and on Back, what is announced, and hostile
// names (markup, a direction override, hundreds of characters without a space, RTL, CJK, emoji)
// in the places that show a source, a model, a tool or an end reason.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  pageText,
  redrawn,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

/** Right-to-left override: everything after it on its line is drawn reversed. */
const RLO = "\u202E";
const LONG = "w".repeat(400);
const SOURCE = `<img src=x onerror="window.__pwned='source'">tele${RLO}gram${LONG}`;
const MODEL = `<b>mo${RLO}del</b>${LONG}`;
const TOOL = `<i>to${RLO}ol</i>${LONG}`;
const PARENT = "a11y_parent";
const CHILD = "a11y_child";
const TITLE = "<script>window.__pwned='title'</script> שלום عربي 東京 😀";

let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = copyFixture("hermes-v11.db");
  {
    let tick = 1777900000;
    await using writer = await openStore(path, { clock: () => tick++ });
    await writer.createSession(PARENT, SOURCE, { model: MODEL });
    await writer.setSessionTitle(PARENT, TITLE);
    await writer.appendMessages(PARENT, [
      { role: "user", content: "zebraword hello שלום 😀 東京" },
      {
        role: "assistant",
        content: "calling",
        toolCalls: [{ id: "c1", type: "function", function: { name: TOOL, arguments: "{}" } }],
      },
      { role: "tool", toolCallId: "c1", toolName: TOOL, content: "zebraword done" },
    ]);
    await writer.endSession(PARENT, `compression${RLO}end`);
    await writer.createSession(CHILD, SOURCE, { model: MODEL, parentSessionId: PARENT });
    await writer.appendMessages(CHILD, [{ role: "user", content: "the child" }]);
  }
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** What has the focus: its tag, id and href. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const at = document.activeElement as HTMLElement | null;
    return at === null ? "none" : `${at.tagName}#${at.id}[${at.getAttribute("href") ?? ""}]`;
  });
}

/** Presses Tab until `selector` has the focus (at most `limit` times). */
async function tabTo(page: Page, selector: string, limit = 60): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s: string) => document.activeElement?.matches(s), selector)) return;
  }
  assert.fail(`Tab never reached ${selector}; the focus is on ${await focused(page)}`);
}

describe("the page with the keyboard and a screen reader", { skip }, () => {
  test("names hundreds of characters without a space keep every view inside the window", async () => {
    for (const width of [1280, 375]) {
      for (const hash of ["#/", "#/search?q=zebraword", `#/s/${CHILD}`]) {
        const page = await openPage(browser, `${served.origin}/${hash}`, { width });
        const sizes = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
        assert.ok(sizes[0] <= sizes[1], `${hash} at ${width} px: ${sizes[0]} px wide`);
        assert.equal(await page.evaluate(() => "__pwned" in window), false);
        await closePage(page);
      }
    }
  });

  test("a direction override in a source, model, tool or end reason is shown as a mark", async () => {
    const texts: string[] = [];
    let page = await openPage(browser, `${served.origin}/#/`);
    texts.push(
      await page.$eval(`a[href="#/s/${PARENT}"] .row-meta`, (n: HTMLElement) => n.innerText),
    );
    await closePage(page);
    page = await openPage(browser, `${served.origin}/#/search?q=zebraword`);
    texts.push(
      ...await page.$$eval(".hit .row-meta", (all: HTMLElement[]) => all.map((n) => n.innerText)),
    );
    await closePage(page);
    page = await openPage(browser, `${served.origin}/#/s/${CHILD}`);
    texts.push(
      ...await page.$$eval(".lineage .muted", (all: HTMLElement[]) => all.map((n) => n.innerText)),
    );
    await closePage(page);
    assert.equal(texts.length, 5, texts.join("\n"));
    for (const text of texts) {
      assert.ok(!text.includes(RLO), `a raw override in ${JSON.stringify(text.slice(0, 60))}`);
      assert.match(text, /\u27e6U\+202E\u27e7/);
    }
    assert.ok(
      texts.some((text) => text.includes("compression\u27e6U+202E\u27e7end")),
      "end reason",
    );
  });

  test("the view is not one live region: a short status line says what was drawn", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    assert.equal(await page.$eval("#app", (n: Element) => n.getAttribute("aria-live")), null);
    const status = () => page.$eval("[role=status]", (n: HTMLElement) => n.textContent);
    assert.match(await status(), /^\d+ sessions/);
    await redrawn(page, () => page.evaluate(() => location.hash = "#/search?q=zebraword"));
    assert.equal(await status(), "2 results for zebraword");
    await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, PARENT));
    assert.match(await status(), /^Session .*東京 😀, 3 messages$/);
    await closePage(page);
  });

  test("Enter on a row opens its session with the focus on its title; Back puts it on the row", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    const row = `a.row-link[href="#/s/${PARENT}"]`;
    await tabTo(page, row);
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await focused(page), "H1#session-title[]");
    assert.equal(await pageText(page, "#session-title"), TITLE);
    await redrawn(page, () => page.goBack());
    assert.equal(await focused(page), `A#[#/s/${PARENT}]`);
    await closePage(page);
  });

  test("the transcript's Back link, reached with Tab, goes back to the listing as it was", async () => {
    const page = await openPage(browser, `${served.origin}/#/?order=started`);
    const length = await page.evaluate(() => history.length);
    await tabTo(page, `a.row-link[href="#/s/${PARENT}"]`);
    await redrawn(page, () => page.keyboard.press("Enter"));
    await tabTo(page, "#app a.back");
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await page.evaluate(() => location.hash), "#/?order=started");
    assert.equal(await page.evaluate(() => history.length), length + 1, "back, not a new entry");
    assert.equal(await focused(page), `A#[#/s/${PARENT}]`);
    await closePage(page);
  });

  test("a lineage link is reached with Tab and opened with Enter", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${PARENT}`);
    await tabTo(page, `.lineage a[href="#/s/${CHILD}"]`);
    await redrawn(page, () => page.keyboard.press("Enter"));
    assert.equal(await page.evaluate(() => location.hash), `#/s/${CHILD}`);
    assert.equal(await focused(page), "H1#session-title[]");
    await closePage(page);
  });

  test("a filter changed with the arrow keys keeps the focus, for the next key to change it again", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await tabTo(page, "select[name=order]");
    await redrawn(page, () => page.keyboard.press("ArrowDown"));
    assert.equal(await page.evaluate(() => location.hash), "#/?order=started");
    assert.equal(await focused(page), "SELECT#[]");
    assert.equal(
      await page.evaluate(() => (document.activeElement as HTMLSelectElement).name),
      "order",
    );
    await redrawn(page, () => page.keyboard.press("ArrowUp"));
    assert.equal(await page.evaluate(() => location.hash), "#/");
    await tabTo(page, "#f-children");
    await redrawn(page, () => page.keyboard.press("Space"));
    assert.equal(await page.evaluate(() => location.hash), "#/?children=1");
    assert.equal(await focused(page), "INPUT#f-children[]");
    await closePage(page);
  });

  test("a live update of the listing leaves the focus on the row the reader had reached", async () => {
    const page = await openPage(browser, `${served.origin}/#/`);
    await tabTo(page, `a.row-link[href="#/s/${PARENT}"]`);
    // Written before the page's live stream is open (its answer late), the change would be in
    // the version the stream starts from: no news to draw.
    await page.waitForSelector("#live.on");
    await redrawn(
      page,
      () => served.store.appendMessages(PARENT, [{ role: "user", content: "more" }]),
    );
    assert.equal(await focused(page), `A#[#/s/${PARENT}]`);
    await closePage(page);
  });

  test("a live update of a transcript leaves the focus on its Back link", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${CHILD}`);
    await tabTo(page, "#app a.back");
    await page.waitForSelector("#live.on");
    await redrawn(
      page,
      () => served.store.appendMessages(CHILD, [{ role: "user", content: "again" }]),
    );
    assert.equal(await focused(page), "A#[#/]");
    await closePage(page);
  });

  test("Enter on a search hit opens the transcript with the focus on the message found", async () => {
    const page = await openPage(browser, `${served.origin}/#/search?q=zebraword`);
    await tabTo(page, `.hit a.row-link[href^="#/s/${PARENT}?m="]`);
    const href = await page.evaluate(() => document.activeElement!.getAttribute("href"));
    await redrawn(page, () => page.keyboard.press("Enter"));
    const id = await page.evaluate(() => document.activeElement!.id);
    assert.equal(id, `m-${href.split("?m=")[1]}`);
    assert.equal(
      await page.evaluate(() => document.activeElement!.classList.contains("target")),
      true,
    );
    await closePage(page);
  });
});
