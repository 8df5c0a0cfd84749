/// <reference lib="dom" />
// The session browser over a PostgreSQL store that `sync` fills, in a real chromium, while
// things stop under it: the database server (a relay cut between the web server and
// PostgreSQL) and the web server itself. Each time the page says what is wrong in words, and
// draws its view again by itself once what stopped is back.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { copyFixture } from "../_helpers.ts";
import { V11 } from "../_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
  redrawn,
} from "./_browser.ts";
import { type PgRelay, startPgRelay } from "./_pg_relay.ts";
import { slowed } from "./_served.ts";

const skip = PG_SKIP || pageBehaviourSkip();

/** What the page shows: its view, the alert, the live mark and the transcript's title. */
function shown(page: Page) {
  return page.evaluate(() => ({
    view: document.body.getAttribute("data-view"),
    alert: document.querySelector(".error[role=alert]")?.textContent ?? null,
    live: document.getElementById("live")!.className,
    title: document.getElementById("session-title")?.textContent ?? null,
    rows: document.querySelectorAll("#rows .row").length,
  }));
}

/** Waits until the live mark has `name` among its classes (`on`, `failed`) or, with `!`, not. */
async function liveMark(page: Page, name: string): Promise<void> {
  await page.waitForFunction(
    (want: string) => {
      const classes = document.getElementById("live")!.classList;
      return want.startsWith("!") ? !classes.contains(want.slice(1)) : classes.contains(want);
    },
    { timeout: 15_000 },
    name,
  );
}

describe("the session browser over PostgreSQL when something stops", { skip }, () => {
  let relay: PgRelay;
  let store: SessionStore;
  let handler: Handler;
  let server: Listening;
  let origin: string;
  let browser: Browser;
  const tip = `web-a/${V11.compressionTip}`;
  const kitchen = `web-b/${V11.kitchenSink}`;

  before(async () => {
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    try {
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "a.example", origin: "web-a" });
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "b.example", origin: "web-b" });
    } finally {
      await client.close();
    }
    relay = await startPgRelay();
    store = await openStore(`${relay.url}?schema=${schema}`, { readonly: true });
    handler = slowed(createHandler(store, { pollMs: 100 }));
    server = await listen(handler, { host: "127.0.0.1", port: 0 });
    origin = `http://127.0.0.1:${server.port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await store?.close();
    await relay?.close();
  });

  test("the database server stops: its error in words, the view drawn again once it is back", async () => {
    const page = await openPage(browser, `${origin}/#/?origin=web-a`);
    await liveMark(page, "on");
    await relay.stop();
    try {
      await liveMark(page, "failed");
      await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, tip));
      const down = await shown(page);
      assert.equal(down.alert, "The PostgreSQL server cannot be reached now; try again");
      assert.equal(down.title, null);
    } finally {
      await relay.start();
    }
    await page.waitForSelector("#session-title", { timeout: 15_000 });
    const back = await shown(page);
    assert.equal(back.alert, null);
    assert.equal(back.title, "my project #3");
    await liveMark(page, "on");
    await closePage(page);
  });

  test("the web server stops: said in words, and the view comes back with the server", async () => {
    const page = await openPage(browser, `${origin}/#/?origin=web-b`);
    await liveMark(page, "on");
    assert.ok((await shown(page)).rows > 0);
    await server.close();
    await liveMark(page, "!on");
    await redrawn(page, () => page.evaluate((id: string) => location.hash = `#/s/${id}`, kitchen));
    const down = await shown(page);
    assert.match(
      down.alert ?? "",
      /^The server cannot be reached: is hermes-state serve still running\?/,
    );
    // The same port again, as an operator restarts it; the data did not change meanwhile.
    server = await listen(handler, { host: "127.0.0.1", port: server.port });
    await page.waitForSelector("#session-title", { timeout: 15_000 });
    const back = await shown(page);
    assert.equal(back.alert, null);
    assert.match(back.title ?? "", /^kitchen sink: reasoning \+ multimodal 🧪/);
    await liveMark(page, "on");
    await closePage(page);
  });
});
