/// <reference lib="dom" />
// The live-update race of the session browser: a write that lands after a view's answer was read
// but before the live stream's `hello` is news no `change` event brings. Each read answer names
// the store's change marker it was read at (x-hermes-data-version), and the page draws the view
// again when it differs from the stream's: the write is shown with no further write.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import {
  type Browser,
  closePage,
  launchBrowser,
  openPage,
  type Page,
  pageBehaviourSkip,
} from "./_browser.ts";
import { serve, type Served } from "./_served.ts";
import { openStore } from "../../lib/open_store.ts";
import { createHandler, DATA_VERSION_HEADER, type Handler } from "../../lib/web/handler.ts";

const skip = pageBehaviourSkip();
const TALK = "20260501_090000_live_version";

/** A gate: requests wait at it until it opens. */
class Gate {
  #open!: () => void;
  /** Resolves once the gate opens. */
  readonly opened = new Promise<void>((resolve) => this.#open = resolve);
  /** Lets every waiting request through. */
  open(): void {
    this.#open();
  }
}

/** What the test holds: the live stream before it starts, a route's answer once it is read. */
interface Holds {
  events?: Gate;
  answer?: { path: string; read: Gate; sent: Gate };
}

let holds: Holds = {};
let served: Served;
let browser: Browser;

/** `handler` with the live stream and one route's answer held as `holds` says. */
function held(handler: Handler): Handler {
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/api/events") await holds.events?.opened;
    const answer = holds.answer;
    const response = await handler(request);
    if (answer !== undefined && answer.path === path) {
      answer.read.open();
      await answer.sent.opened;
    }
    return response;
  };
}

before(async () => {
  const path = copyFixture("hermes-v11.db");
  let tick = 1777600000;
  {
    await using writer = await openStore(path, { clock: () => tick++ });
    await writer.createSession(TALK, "cli", { model: "test/live" });
    await writer.setSessionTitle(TALK, "live version talk");
    await writer.appendMessages(TALK, [{ role: "user", content: "first words of the talk" }]);
  }
  served = await serve(path, {}, held);
  if (skip === undefined) browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await served?.close();
});

/** Waits until the page shows `text` in its view, failing after five seconds. */
async function shows(page: Page, text: string, what: string): Promise<void> {
  try {
    await page.waitForFunction(
      (wanted: string) => document.getElementById("app")!.textContent!.includes(wanted),
      { timeout: 5_000 },
      text,
    );
  } catch {
    const shown = await page.$eval("#app", (node: Element) => node.textContent);
    assert.fail(`${what}: the page never showed ${JSON.stringify(text)}: ${shown.slice(0, 300)}`);
  }
}

/**
 * Opens `hash` with the live stream held until `write` has run after the view was drawn, waits
 * until the page is live, and checks it with `check`. In a browser context of its own: pages of
 * one share their live stream, and another page's `change` would hide the race.
 */
async function writeBeforeHello(
  hash: string,
  write: () => Promise<void>,
  check: (page: Page) => Promise<void>,
): Promise<void> {
  const context = await browser.createBrowserContext();
  const events = new Gate();
  holds = { events };
  try {
    const page = await openPage(context, `${served.origin}/${hash}`);
    await write();
    events.open();
    await page.waitForSelector("#live.on", { timeout: 15_000 });
    await check(page);
    await closePage(page);
  } finally {
    events.open();
    holds = {};
    await context.close();
  }
}

describe("a write between a view's answer and the live stream's hello", { skip }, () => {
  test("the listing shows a session started in between", async () => {
    await writeBeforeHello("#/", async () => {
      await served.store.createSession("20260501_091500_between", "cli");
      await served.store.setSessionTitle("20260501_091500_between", "session started in between");
    }, (page) => shows(page, "session started in between", "listing"));
  });

  test("the transcript shows a message written in between", async () => {
    await writeBeforeHello(`#/s/${TALK}`, async () => {
      await served.store.appendMessages(TALK, [{
        role: "assistant",
        content: "answer in between",
      }]);
    }, (page) => shows(page, "answer in between", "transcript"));
  });

  test("the search shows a hit written in between", async () => {
    await writeBeforeHello("#/search?q=zyzzyvaword", async () => {
      await served.store.appendMessages(TALK, [{
        role: "user",
        content: "the zyzzyvaword at last",
      }]);
    }, (page) => shows(page, "the zyzzyvaword at last", "search"));
  });

  test("a transcript answer read before the write and drawn after the hello is drawn again", async () => {
    const events = new Gate();
    const answer = { path: "/api/session", read: new Gate(), sent: new Gate() };
    holds = { events, answer };
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error: Error) => errors.push(error.message));
    page.errors = errors;
    try {
      await page.goto(`${served.origin}/#/s/${TALK}`, { waitUntil: "load" });
      await answer.read.opened;
      await served.store.appendMessages(TALK, [{
        role: "assistant",
        content: "late answer's news",
      }]);
      events.open();
      await page.waitForSelector("#live.on", { timeout: 15_000 });
      answer.sent.open();
      await page.waitForSelector("body[data-ready]");
      await shows(page, "late answer's news", "transcript drawn after hello");
      await closePage(page);
    } finally {
      events.open();
      answer.sent.open();
      holds = {};
      await context.close();
    }
  });
});

test("each read answer names the change marker it was read at", async () => {
  const handle = createHandler(served.store);
  const ask = (path: string) => handle(new Request(`http://127.0.0.1:8787${path}`));
  const before = await served.store.dataVersion();
  for (const path of ["/api/sessions", `/api/session?id=${TALK}`, "/api/search?q=talk"]) {
    const response = await ask(path);
    await response.body?.cancel();
    assert.equal(response.headers.get(DATA_VERSION_HEADER), before, path);
  }
  await served.store.appendMessages(TALK, [{ role: "user", content: "moves the marker" }]);
  const moved = await ask(`/api/session?id=${TALK}`);
  await moved.body?.cancel();
  assert.notEqual(moved.headers.get(DATA_VERSION_HEADER), before);
  assert.equal(moved.headers.get(DATA_VERSION_HEADER), await served.store.dataVersion());
});
