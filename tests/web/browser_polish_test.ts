/// <reference lib="dom" />
// Smaller things of the session browser, in a real chromium: a session opened by its id from the
// search box, a source from the address shown chosen, an empty listing or usage period that says
// why, the search box emptied on Back, and rows that show the time they are sorted by.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { V11 } from "../_cli_io.ts";
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
  screenshot,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";

const skip = pageBehaviourSkip();

/** A session whose id is also a word of its messages: the id and the hits both offered. */
const WORD_ID = "zebu";
/** A session started on 1 May 2026 (UTC) whose last message came on 20 May. */
const LATE_ID = "polish_started_early_active_late";
const MAY_1 = Date.UTC(2026, 4, 1) / 1000;
const MAY_20 = Date.UTC(2026, 4, 20) / 1000;
/** A session started at noon on 15 June 1999 (UTC): a day the page sends as Unix seconds of nine digits. */
const OLD_ID = "19990615_120000_old";
const JUNE_15_1999 = Date.UTC(1999, 5, 15, 12) / 1000;

let browser: Browser;
let served: Served;

before(async () => {
  if (skip !== undefined) return;
  const path = copyFixture("hermes-v11.db");
  let now = JUNE_15_1999;
  {
    await using writer = await openStore(path, { clock: () => now });
    await writer.createSession(OLD_ID, "cli");
    now = MAY_1;
    await writer.createSession(LATE_ID, "cli");
    await writer.setSessionTitle(LATE_ID, "Started early, active late");
    await writer.createSession(WORD_ID, "cli");
    await writer.appendMessages(WORD_ID, [
      { role: "user", content: "a zebu grazing" },
      { role: "user", content: "another zebu" },
    ]);
    now = MAY_20;
    await writer.appendMessages(LATE_ID, [{ role: "user", content: "still here on the 20th" }]);
  }
  served = await serve(path);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** A new page in UTC that records script errors, showing `hash`. */
function open(hash: string): Promise<Page> {
  return openPage(browser, `${served.origin}/${hash}`, { timeZone: "UTC" });
}
const close = closePage;
const text = pageText;
const shot = screenshot;

/** The `.row-link` hrefs of the view, in order. */
async function rowLinks(page: Page): Promise<string[]> {
  return await page.$$eval(
    ".row a.row-link",
    (links: Element[]) => links.map((a) => a.getAttribute("href")),
  );
}

describe("session browser polish", { skip }, () => {
  test("typing a tool session's id in the search box offers that session, which the listing leaves out", async () => {
    const page = await open("#/");
    assert.ok(!(await rowLinks(page)).includes(`#/s/${V11.toolPaperclip}`), "not in the listing");
    await page.focus("#q");
    await redrawn(page, () => page.keyboard.type(V11.toolPaperclip));
    await page.waitForFunction(
      (q: string) => document.querySelector(".view-search h2 q")?.textContent === q,
      { timeout: 10_000 },
      V11.toolPaperclip,
    );
    assert.equal(
      await text(page, "#named .row-title"),
      `Session ${V11.toolPaperclip} — Paperclip task #318: verify the docker image for chatsvc bui...`,
    );
    await shot(page, "search-named-1280-light");
    await redrawn(page, () => page.click("#named a"));
    assert.equal(await page.evaluate(() => location.hash), `#/s/${V11.toolPaperclip}`);
    assert.equal(await text(page, "#session-title"), V11.toolPaperclip);
    await close(page);
  });

  test("a unique id prefix offers its session, and an id that is also a word keeps the hits below it", async () => {
    const prefix = await open("#/search?q=20260422_0905");
    assert.deepEqual(await rowLinks(prefix), [`#/s/${V11.toolPaperclip}`]);
    await close(prefix);
    const word = await open(`#/search?q=${WORD_ID}`);
    const links = await rowLinks(word);
    assert.equal(links[0], `#/s/${WORD_ID}`, "the session named first");
    assert.equal(links.length, 3, links.join());
    assert.equal(await word.$$eval(".hit", (hits: Element[]) => hits.length), 2);
    assert.match(await text(word, "#named .row-title"), /^Session zebu — a zebu grazing$/);
    await close(word);
  });

  test("a source from the address that the store has not is shown chosen over the empty list", async () => {
    const listing = await open("#/?source=nosuch");
    const chosen = (page: Page) =>
      page.$eval(
        "select[name=source]",
        (s: HTMLSelectElement) => [s.value, s.selectedOptions[0].text],
      );
    assert.deepEqual(await chosen(listing), ["nosuch", "nosuch"]);
    assert.equal(await text(listing, ".empty"), "No sessions match. Clear the filters");
    await close(listing);
    const search = await open("#/search?q=docker&source=nosuch");
    assert.deepEqual(await chosen(search), ["nosuch", "nosuch"]);
    await close(search);
  });

  test("a To day before the From day says the end is before the start", async () => {
    const page = await open("#/?from=2026-04-25&to=2026-04-20");
    assert.equal(
      await text(page, ".empty"),
      "The end (To 2026-04-20) is before the start (From 2026-04-25): no session can match. Clear the filters",
    );
    await close(page);
    // The same day for both is that whole day, and the sessions it has.
    const day = await open("#/?from=2026-04-25&to=2026-04-25");
    assert.equal(await day.$(".empty"), null);
    assert.ok((await rowLinks(day)).length > 0);
    await close(day);
  });

  test("a day of 1999 picked as From and To, or as To only, holds the session started on it", async () => {
    // The page sent a day before 9 September 2001 (under 10^12 ms) as the date itself, which the
    // server read as UTC midnight: the To day was left out.
    for (const hash of ["#/?from=1999-06-15&to=1999-06-15", "#/?to=1999-06-15"]) {
      const page = await open(hash);
      assert.deepEqual(await rowLinks(page), [`#/s/${OLD_ID}`], hash);
      await close(page);
    }
  });

  test("Back from a search to the listing empties the search box, though it has the focus", async () => {
    const page = await open("#/");
    await page.focus("#q");
    await redrawn(page, () => page.keyboard.type("docker"));
    await page.waitForFunction(
      () => document.querySelector(".view-search h2 q")?.textContent === "docker",
      { timeout: 10_000 },
    );
    await redrawn(page, () => page.goBack());
    assert.equal(await page.evaluate(() => document.body.getAttribute("data-view")), "sessions");
    const box = await page.$eval("#q", (q: HTMLInputElement) => ({
      value: q.value,
      focused: document.activeElement === q,
    }));
    assert.deepEqual(box, { value: "", focused: true });
    await close(page);
  });

  test("sorted by Started, a row shows when its session started, and says so", async () => {
    const meta = async (hash: string) => {
      const page = await open(hash);
      const shown = await page.$eval(
        `a[href="#/s/${LATE_ID}"] .row-meta`,
        (node: Element) => node.textContent,
      );
      await close(page);
      return shown;
    };
    assert.match(await meta("#/?order=started"), / · started 2026-05-01 · /);
    assert.match(await meta("#/"), / · active 2026-05-20 · /);
  });

  test("a usage period without sessions says so instead of drawing empty charts", async () => {
    // The fixture's sessions and those added here all started months before the tests run.
    const page = await open("#/usage?since=7d");
    assert.equal(await text(page, "#usage-none"), "No usage in this period.");
    assert.equal(await page.$("svg.chart"), null);
    assert.doesNotMatch(await text(page), /\$0\.0000/);
    await shot(page, "usage-empty-1280-light");
    await close(page);
  });
});
