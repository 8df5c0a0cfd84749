/// <reference lib="dom" />
// The session browser in a real chromium, as an operator meets it: a server started again
// read-only (its settings are read again when the live stream comes back: Rename and Delete go);
// the rows a newer Hermes rewound, compacted or hides, shown on demand and marked as `show --all`
// marks them (a search hit on one opens them shown); a reload of a transcript whose earlier pages
// were loaded brings them back, with the message read at the top.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { V11 } from "../_cli_io.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";
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
import { numberedMessages, serve, type Served, slowed } from "./_served.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";

const skip = pageBehaviourSkip();
const HOST = "127.0.0.1";
/** The v21 fixture's session with two messages taken back by a rewind. */
const REWOUND = "20260501_110000_rew01";
/** The v21 fixture's session with nothing taken back. */
const LIVE = "20260501_090000_live01";
/** The v21 fixture's session compacted in place: three rows folded into a summary. */
const COMPACTED = "20260501_120000_comp01";

let browser: Browser;

before(async () => {
  if (skip === undefined) browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/** The texts of the transcript's buttons. */
function buttons(page: Page): Promise<string[]> {
  return page.$$eval(".actions button", (nodes: Element[]) => nodes.map((n) => n.textContent));
}

describe("a server started again with other settings", { skip }, () => {
  let store: SessionStore;
  let server: Listening | undefined;

  before(async () => {
    store = await openStore(copyFixture("hermes-v11.db"));
  });
  after(async () => {
    await server?.close();
    await store?.close();
  });

  test("started again read-only: Rename and Delete go from the open transcripts once they are live again", async () => {
    const handler = (allowWrites: boolean) =>
      createHandler(store, { host: HOST, pollMs: 200, allowWrites });
    server = await listen(handler(true), { host: HOST, port: 0 });
    const port = server.port;
    const url = `http://${HOST}:${port}/#/s/${V11.kitchenSink}`;
    // Two tabs: one reads the live stream, the other hears of it from the first.
    const pages = [await openPage(browser, url), await openPage(browser, url)];
    for (const page of pages) {
      await page.bringToFront();
      await page.waitForSelector("#live.on");
      assert.deepEqual(await buttons(page), ["Rename", "Delete"]);
    }
    await server.close();
    server = undefined;
    for (const page of pages) {
      await page.bringToFront();
      await page.waitForSelector("#live:not(.on)");
    }
    server = await listen(handler(false), { host: HOST, port });
    for (const page of pages) {
      await page.bringToFront();
      await page.waitForSelector("#live.on", { timeout: 15_000 });
      await page.waitForFunction(
        () => document.querySelectorAll(".actions button").length === 0,
        { timeout: 10_000 },
      );
      assert.match(await pageText(page), /Export HTML/, "the transcript is still shown");
    }
    for (const page of pages) await closePage(page);
  });
});

describe("the rows a newer Hermes took back or hides", { skip }, () => {
  let newer: Served;
  let file: string;
  before(async () => {
    if (skip !== undefined) return;
    file = copyFixture("hermes-v21.db");
    newer = await serve(file);
  });
  after(async () => {
    await newer?.close();
  });

  /** The ids of the messages shown and the marks each has. */
  function marked(page: Page): Promise<string[]> {
    return page.$$eval(
      "#messages > article",
      (nodes: Element[]) =>
        nodes.map((node) =>
          [node.id, ...[...node.querySelectorAll(".mark")].map((m) => m.textContent)].join(" ")
        ),
    );
  }

  test("a box shows them, marked as show --all marks them; the address keeps it, and Back", async () => {
    const page = await openPage(browser, `${newer.origin}/#/s/${REWOUND}`);
    assert.deepEqual(await marked(page), ["m-7", "m-8"]);
    const label = await page.$eval("label.all-toggle", (node: Element) => node.textContent);
    assert.match(label, /Also show the 2 messages Hermes took back or hides/);
    await redrawn(page, () => page.click("#all-messages"));
    assert.equal(await page.evaluate(() => location.hash), `#/s/${REWOUND}?all=1`);
    assert.deepEqual(await marked(page), ["m-7", "m-8", "m-9 [rewound]", "m-10 [rewound]"]);
    assert.equal(await page.$eval("#all-messages", (box: HTMLInputElement) => box.checked), true);
    // A reload (a link) keeps it; Back leaves it.
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("body[data-ready]");
    assert.deepEqual((await marked(page)).length, 4);
    await redrawn(page, () => page.goBack());
    assert.deepEqual(await marked(page), ["m-7", "m-8"]);
    assert.equal(await page.$eval("#all-messages", (box: HTMLInputElement) => box.checked), false);
    await closePage(page);
  });

  test("with every row shown, a rewind while it is read marks the rows it took back", async () => {
    const page = await openPage(browser, `${newer.origin}/#/s/${LIVE}?all=1`);
    assert.deepEqual(await marked(page), ["m-1", "m-2", "m-3", "m-4"]);
    await page.waitForSelector("#live.on");
    {
      using raw = await rawOpen(file);
      raw.exec("UPDATE messages SET active = 0 WHERE id IN (3, 4)");
    }
    await page.waitForFunction(
      () => document.querySelectorAll("#messages .mark").length === 2,
      { timeout: 10_000 },
    );
    assert.deepEqual(await marked(page), ["m-1", "m-2", "m-3 [rewound]", "m-4 [rewound]"]);
    await closePage(page);
  });

  test("a search hit on a compacted message opens the transcript with them shown, at it", async () => {
    const page = await openPage(browser, `${newer.origin}/#/search?q=autovacuum`);
    const href = await page.$eval(".hit a.row-link", (a: Element) => a.getAttribute("href"));
    assert.match(href, /\?m=11$/, "the first hit is a compacted message");
    await redrawn(page, () => page.click(".hit a.row-link"));
    await page.waitForSelector("#m-11.target");
    assert.equal(await page.evaluate(() => location.hash), `#/s/${COMPACTED}?m=11&all=1`);
    assert.deepEqual(await marked(page), [
      "m-11 [compacted]",
      "m-12 [compacted]",
      "m-13 [compacted]",
      "m-14",
      "m-15",
    ]);
    assert.equal(await page.$("#target-missing"), null, "no note: the message is shown");
    // Back to the hits, and a hit on a message shown opens the transcript as it is.
    await redrawn(page, () => page.goBack());
    await redrawn(
      page,
      () => page.evaluate((id: string) => location.hash = `#/s/${id}?m=14`, COMPACTED),
    );
    assert.deepEqual(await marked(page), ["m-14", "m-15"]);
    await closePage(page);
  });
});

describe("a reload of a transcript whose earlier pages were loaded", { skip }, () => {
  const ID = "20260501_130000_reload_pages";
  /** The server's page, small: the mechanism is the same at 5,000. */
  const PAGE = 60;
  let served: Served;
  before(async () => {
    if (skip !== undefined) return;
    served = await serve(copyFixture("hermes-v11.db"), { transcriptPage: PAGE });
    await served.store.createSession(ID, "cli");
    await served.store.appendMessages(ID, numberedMessages(PAGE * 3 + 10));
  });
  after(async () => {
    await served?.close();
  });

  /** The id of the first message whose bottom is in the window. */
  function topMessage(page: Page): Promise<string> {
    return page.$$eval(
      "#messages > article",
      (nodes: Element[]) => nodes.find((node) => node.getBoundingClientRect().bottom > 0)?.id,
    );
  }

  test("brings the pages back, with the message read at the top", async () => {
    const page = await openPage(browser, `${served.origin}/#/s/${ID}`);
    await redrawn(page, () => page.click("#earlier-messages"));
    await redrawn(page, () => page.click("#earlier-messages"));
    const count = await page.$$eval("#messages > article", (nodes: Element[]) => nodes.length);
    assert.equal(count, PAGE * 3);
    // Reading a message of the first page loaded.
    await page.evaluate(() => document.getElementById("messages")!.children[20].scrollIntoView());
    const reading = await topMessage(page);
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("body[data-ready]");
    assert.equal(await topMessage(page), reading);
    assert.equal(
      await page.$$eval("#messages > article", (nodes: Element[]) => nodes.length),
      PAGE * 3,
      "the pages loaded are back",
    );
    assert.equal(
      await page.$eval("#earlier-messages", (node: Element) => node.textContent),
      "Show earlier messages (10 more)",
    );
    await closePage(page);
  });
});

describe(
  "over PostgreSQL, a newer Hermes's file synced from two hosts",
  { skip: PG_SKIP || skip },
  () => {
    let store: SessionStore;
    let server: Listening;
    let origin: string;

    before(async () => {
      const schema = freshSchema();
      const client = await connectSyncTarget(schemaUrl(schema));
      try {
        for (const host of ["a", "b"]) {
          await syncFile(client, copyFixture("hermes-v21.db"), {
            host: `${host}.example`,
            origin: `host-${host}`,
          });
        }
      } finally {
        await client.close();
      }
      store = await openStore(schemaUrl(schema), { readonly: true });
      server = await listen(slowed(createHandler(store, { host: HOST, pollMs: 200 })), {
        host: HOST,
        port: 0,
      });
      origin = `http://${HOST}:${server.port}`;
    });
    after(async () => {
      await server?.close();
      await store?.close();
    });

    test("one host's hit on a compacted message opens its transcript with every row, marked; its export keeps them", async () => {
      const page = await openPage(browser, `${origin}/#/search?q=autovacuum&origin=host-b`);
      await redrawn(page, () => page.click(".hit a.row-link"));
      const id = `host-b/${COMPACTED}`;
      const first = (await store.getMessages(id, { includeInactive: true }))[0].id;
      await page.waitForSelector(`#m-${first}.target`);
      assert.equal(
        await page.evaluate(() => location.hash),
        `#/s/${encodeURIComponent(id)}?m=${first}&all=1`,
      );
      assert.match(
        await page.$eval(`#m-${first} .mark`, (node: Element) => node.textContent),
        /\[compacted\]/,
      );
      assert.match(await pageText(page, ".details-list"), /Origin\s+host-b/);
      // The Markdown export the transcript links to: one file named for the session, marks kept.
      const href = await page.$eval(
        ".actions a[href*='format=md']",
        (a: Element) => a.getAttribute("href"),
      );
      const answer = await fetch(`${origin}${href}`);
      assert.equal(answer.status, 200);
      assert.doesNotMatch(answer.headers.get("content-disposition")!, /filename="[^"]*\//);
      assert.match(await answer.text(), /\[compacted\]/);
      await closePage(page);
    });
  },
);
