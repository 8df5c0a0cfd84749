/// <reference lib="dom" />
// The session browser over a PostgreSQL store that `sync` fills from two hosts holding the
// same sessions (two copies of one state.db): in a real chromium, the listing's and the
// search's rows of the two hosts' copies of a session are told apart by their origin, the
// origin filter keeps one host's, and a host's own session id (as its log shows it) typed in
// the search box names the session shipped from each host that holds it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { copyFixture, tempDbPath } from "../_helpers.ts";
import { V11 } from "../_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
} from "./_browser.ts";
import { slowed } from "./_served.ts";

const skip = PG_SKIP || pageBehaviourSkip();

/** The id of a session that only the third host's file holds. */
const ONLY_ON_C = "20260501_120000_c0ffee";

/** The rows the view shows: each one's title and its meta line. */
function rows(page: Page): Promise<{ title: string; meta: string }[]> {
  return page.$$eval("#rows .row", (nodes: Element[]) =>
    nodes.map((node) => ({
      title: node.querySelector(".row-title")!.textContent!,
      meta: node.querySelector(".row-meta")!.textContent!,
    })));
}

describe("the session browser over PostgreSQL, two hosts with the same sessions", { skip }, () => {
  let store: SessionStore;
  let server: Listening;
  let origin: string;
  let browser: Browser;

  before(async () => {
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    try {
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "a.example", origin: "host-a" });
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "b.example", origin: "host-b" });
      const third = tempDbPath();
      {
        await using writer = await openStore(third);
        await writer.createSession(ONLY_ON_C, "cli");
        await writer.appendMessage(ONLY_ON_C, {
          role: "user",
          content: "a session host c alone has",
        });
      }
      await syncFile(client, third, { host: "c.example", origin: "host-c" });
    } finally {
      await client.close();
    }
    store = await openStore(schemaUrl(schema), { readonly: true });
    server = await listen(slowed(createHandler(store, { pollMs: 200 })), {
      host: "127.0.0.1",
      port: 0,
    });
    origin = `http://127.0.0.1:${server.port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await store?.close();
  });

  test("each listing row names its origin: the two hosts' copies of a session differ", async () => {
    const page = await openPage(browser, `${origin}/#/`);
    const shown = await rows(page);
    assert.ok(shown.length > 10);
    const lines = shown.map((row) => `${row.title} | ${row.meta}`);
    assert.equal(new Set(lines).size, lines.length, `rows alike:\n${lines.join("\n")}`);
    assert.ok(shown.every((row) => /^host-[abc] · /.test(row.meta)), lines.join("\n"));
    // One host's rows only, under the origin filter.
    await page.select("select[name=origin]", "host-b");
    await page.waitForFunction(() => location.hash === "#/?origin=host-b");
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#rows .row-meta")].every((m) =>
        m.textContent!.startsWith("host-b · ")
      )
    );
    await closePage(page);
  });

  test("each search hit names its origin, beside its source", async () => {
    const page = await openPage(browser, `${origin}/#/search?q=docker`);
    const shown = await rows(page);
    assert.ok(shown.length > 0);
    const metas = shown.map((row) => row.meta);
    assert.ok(metas.every((meta) => / · host-[ab] · /.test(meta)), metas.join("\n"));
    assert.ok(
      metas.some((meta) => meta.includes("host-a")) && metas.some((m) => m.includes("host-b")),
    );
    await closePage(page);
  });

  test("a host's own session id in the search box names the session of each host holding it", async () => {
    const named = async (typed: string) => {
      const page = await openPage(browser, `${origin}/#/search?q=${encodeURIComponent(typed)}`);
      const ids = await page.$$eval(
        "#named .row .mono",
        (nodes: Element[]) => nodes.map((node) => node.textContent),
      );
      await closePage(page);
      return ids;
    };
    assert.deepEqual(await named(V11.toolPaperclip), [
      `host-a/${V11.toolPaperclip}`,
      `host-b/${V11.toolPaperclip}`,
    ]);
    // One host's session, by its id or a unique prefix of it, as on that host's own file.
    assert.deepEqual(await named(ONLY_ON_C), [`host-c/${ONLY_ON_C}`]);
    assert.deepEqual(await named("20260501_120000_c0f"), [`host-c/${ONLY_ON_C}`]);
    // The store's own id still names one; a prefix of several hosts' ids names none.
    assert.deepEqual(await named(`host-b/${V11.kitchenSink}`), [`host-b/${V11.kitchenSink}`]);
    assert.deepEqual(await named("20260422_09"), []);
  });
});
