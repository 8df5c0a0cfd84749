// `hermes-state serve` hardening: the live stream and HEAD. A client that opens the live
// stream and never reads it holds a few events, not one more each poll while a gateway writes
// (memory grew for as long as it stayed open), and still gets the latest change when it reads
// again. A HEAD of a streamed route (the live stream, an export) answers its headers at once
// and holds no live-stream place (over `node:http`, on Node and Deno, it sent nothing and held
// its place until the client went away). On a copy of the v11 fixture, over real sockets.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { liveEvents } from "../../lib/web/live.ts";
import { HOSTILE_ID, hostileDb, serve } from "./_served.ts";
import { rawConnection } from "./_serve_hardening_raw.ts";

const path = await hostileDb();
const store = await openStore(path);
const writer = await openStore(path);
after(async () => {
  await writer.close();
  await store.close();
});

/** The chunks `reader` holds now (those it gets within `ms` of each other). */
async function queued(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): Promise<string[]> {
  const texts: string[] = [];
  while (true) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((ok) => timer = setTimeout(() => ok(null), ms)),
    ]);
    clearTimeout(timer);
    if (next === null || next.done) return texts;
    texts.push(new TextDecoder().decode(next.value));
  }
}

describe("the live stream of a client that does not read", () => {
  test("holds a few events while the file changes, then tells the latest change", async () => {
    const stream = liveEvents(store, { pollMs: 5, heartbeatMs: 60_000 });
    // Forty commits, each seen by a poll, while nobody reads.
    for (let i = 0; i < 40; i++) {
      await writer.setSessionTitle(HOSTILE_ID, `unread change ${i}`);
      await new Promise((ok) => setTimeout(ok, 15));
    }
    const reader = stream.getReader();
    try {
      const held = await queued(reader, 100);
      assert.ok(held.length <= 6, `${held.length} events were held for a client that did not read`);
      assert.match(held[0], /event: hello/);
      const latest = await store.dataVersion();
      // The latest change reaches the client once it reads again, if not held already.
      let said = held.join("");
      for (let i = 0; i < 20 && !said.includes(JSON.stringify({ version: latest })); i++) {
        said += (await queued(reader, 50)).join("");
      }
      assert.ok(
        said.includes(`event: change\ndata: ${JSON.stringify({ version: latest })}`),
        `the latest change (${latest}) was not told: ${said.slice(-300)}`,
      );
    } finally {
      await reader.cancel();
    }
  });
});

describe("HEAD of a streamed route over a socket", () => {
  test("answers the live stream's and an export's headers at once and holds no live place", async () => {
    const served = await serve(path, { maxLiveStreams: 1 });
    const port = Number(new URL(served.origin).port);
    const host = `Host: 127.0.0.1:${port}\r\n`;
    const connections = [];
    try {
      for (const route of ["/api/events", "/api/export?format=html"]) {
        // Kept open, as a client that sent HEAD and waits for the next answer.
        const connection = rawConnection(port, `HEAD ${route} HTTP/1.1\r\n${host}\r\n`);
        connections.push(connection);
        const answer = await connection.answer(3000);
        assert.equal(answer.status, 200, `HEAD ${route}: nothing came back in 3 s`);
        assert.match(answer.headers.get("content-security-policy") ?? "", /default-src 'none'/);
        assert.equal(answer.body, "", `HEAD ${route} sent a body`);
      }
      assert.match(
        (await connections[0].answer(0)).headers.get("content-type") ?? "",
        /^text\/event-stream/,
      );
      // The one live place is free: the page's own stream opens.
      const live = await fetch(`${served.origin}/api/events`);
      assert.equal(live.status, 200, "the HEAD held the only live-stream place");
      await live.body?.cancel();
      // HEAD of a JSON route says GET's length.
      const head = await fetch(`${served.origin}/api/sessions?limit=2`, { method: "HEAD" });
      const get = await fetch(`${served.origin}/api/sessions?limit=2`);
      const bytes = (await get.arrayBuffer()).byteLength;
      assert.equal(head.status, 200);
      assert.equal(head.headers.get("content-length"), String(bytes));
    } finally {
      for (const connection of connections) connection.socket.destroy();
      await served.close();
    }
  });
});
