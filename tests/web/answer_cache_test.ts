import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerCache } from "../../lib/web/answer_cache.ts";

function answer(text: string, status = 200): Promise<Response> {
  return Promise.resolve(new Response(text, { status, headers: { "content-type": "text/plain" } }));
}

test("AnswerCache keeps a 200 for its version and computes again when the version moves", async () => {
  const cache = new AnswerCache();
  let computed = 0;
  const compute = () => answer(`n${++computed}`);
  assert.equal(await (await cache.answer("v1", "/a", compute)).text(), "n1");
  const hit = await cache.answer("v1", "/a", compute);
  assert.equal(hit.headers.get("x-hermes-cache"), "hit");
  assert.equal(await hit.text(), "n1");
  assert.equal(await (await cache.answer("v2", "/a", compute)).text(), "n2");
  assert.equal(computed, 2);
});

test("AnswerCache shares one computation among identical requests in flight, and keeps no error", async () => {
  const cache = new AnswerCache();
  let computed = 0;
  const slow = () =>
    new Promise<Response>((resolve) =>
      setTimeout(() => resolve(new Response(`n${++computed}`)), 20)
    );
  const texts = await Promise.all(
    [1, 2, 3].map(async () => await (await cache.answer("v", "/s", slow)).text()),
  );
  assert.deepEqual(texts, ["n1", "n1", "n1"]);
  assert.equal(computed, 1);
  await cache.answer("v", "/e", () => answer("bad", 400));
  assert.equal(
    (await cache.answer("v", "/e", () => answer("again", 400))).headers.get("x-hermes-cache"),
    "miss",
  );
});

test("AnswerCache drops the least recently used past its entry and byte limits, and skips big answers", async () => {
  const cache = new AnswerCache({ maxEntries: 2, maxBytes: 10, maxTotalBytes: 12 });
  await cache.answer("v", "/1", () => answer("aaaaa"));
  await cache.answer("v", "/2", () => answer("bbbbb"));
  await cache.answer("v", "/1", () => answer("x")); // /1 is now the most recent
  await cache.answer("v", "/3", () => answer("ccccc"));
  assert.equal(cache.size, 2);
  assert.equal(
    (await cache.answer("v", "/2", () => answer("bbbbb"))).headers.get("x-hermes-cache"),
    "miss",
  );
  await cache.answer("v", "/big", () => answer("0123456789abc"));
  assert.equal(
    (await cache.answer("v", "/big", () => answer("0123456789abc"))).headers.get("x-hermes-cache"),
    "miss",
  );
});
