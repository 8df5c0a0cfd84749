import { test } from "node:test";
import assert from "node:assert/strict";
import {
  contentText,
  contextText,
  decodeContent,
  decodeJson,
  encodeContent,
  encodeJson,
  isFalsyLikePython,
  MULTIMODAL_PREFIX,
  NotTextError,
  pythonJson,
} from "../lib/core/content.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";

// Expected texts below were produced by CPython 3 `json.dumps(value)`.

test("pythonJson() writes Python's separators and \\uXXXX escapes for astral characters", () => {
  const value = [
    { type: "text", text: "What breed is this dog? \u{1F415}" },
    { type: "image_url", image_url: { url: "https://x/y.jpg" } },
  ];
  assert.equal(
    pythonJson(value),
    '[{"type": "text", "text": "What breed is this dog? \\ud83d\\udc15"}, ' +
      '{"type": "image_url", "image_url": {"url": "https://x/y.jpg"}}]',
  );
});

test("pythonJson() writes floats as Python's repr does", () => {
  const value = {
    a: 1,
    b: [1.5, 0.1, 0.00001, 1.5e-7, 0.0001, 123456.789, -2.5e-10],
    c: null,
    d: true,
    e: false,
  };
  assert.equal(
    pythonJson(value),
    '{"a": 1, "b": [1.5, 0.1, 1e-05, 1.5e-07, 0.0001, 123456.789, -2.5e-10], ' +
      '"c": null, "d": true, "e": false}',
  );
});

test("pythonJson() escapes controls, DEL and non-ASCII like Python's ensure_ascii", () => {
  const text = 'tab\there "quoted" back\\slash \u0000\u0001\u001f\u007f é 中 \u2028';
  assert.equal(
    pythonJson(text),
    '"tab\\there \\"quoted\\" back\\\\slash \\u0000\\u0001\\u001f\\u007f \\u00e9 \\u4e2d \\u2028"',
  );
  assert.equal(JSON.parse(pythonJson(text)), text);
});

test("pythonJson() writes empty containers and big integers as Python does", () => {
  assert.equal(pythonJson([]), "[]");
  assert.equal(pythonJson({}), "{}");
  assert.equal(pythonJson([[]]), "[[]]");
  assert.equal(pythonJson({ k: {} }), '{"k": {}}');
  assert.equal(pythonJson(1e21), "1000000000000000000000");
  assert.equal(pythonJson(12345678901234567890n), "12345678901234567890");
  assert.equal(pythonJson(-0), "0");
});

test("pythonJson() writes an array's holes as null, as JSON.stringify does", () => {
  // deno-lint-ignore no-sparse-arrays -- the holes are what is tested
  const sparse = [1, , 3];
  assert.equal(pythonJson(sparse), "[1, null, 3]");
  assert.deepEqual(JSON.parse(pythonJson({ calls: new Array(2) })), { calls: [null, null] });
});

test("pythonJson() follows JSON.stringify for undefined, toJSON and non-finite numbers", () => {
  assert.equal(pythonJson({ a: undefined, b: 1 }), '{"b": 1}');
  assert.equal(pythonJson([undefined, () => 1]), "[null, null]");
  assert.equal(pythonJson(undefined), "null");
  assert.equal(pythonJson([NaN, Infinity]), "[null, null]");
  assert.equal(pythonJson({ when: new Date(0) }), '{"when": "1970-01-01T00:00:00.000Z"}');
});

test("pythonJson() throws a TypeError on a circular value", () => {
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  assert.throws(() => pythonJson(loop), {
    name: "TypeError",
    message: "Cannot serialize JSON: the value contains a circular reference",
  });
  const shared = { x: 1 };
  assert.equal(pythonJson([shared, shared]), '[{"x": 1}, {"x": 1}]');
});

test("pythonJson() reproduces every JSON text Python wrote into the v11 fixture", async () => {
  using db = await rawOpen(copyFixture("hermes-v11.db"), true);
  const texts: string[] = [];
  for (const column of ["tool_calls", "reasoning_details", "codex_reasoning_items"]) {
    for (
      const row of db.prepare(`SELECT ${column} AS v FROM messages WHERE ${column} IS NOT NULL`)
        .all()
    ) {
      texts.push(row.v as string);
    }
  }
  for (
    const row of db.prepare(
      "SELECT codex_message_items AS v FROM messages WHERE codex_message_items IS NOT NULL",
    ).all()
  ) {
    texts.push(row.v as string);
  }
  for (
    const row of db.prepare("SELECT model_config AS v FROM sessions WHERE model_config IS NOT NULL")
      .all()
  ) {
    texts.push(row.v as string);
  }
  const multimodal = db.prepare(
    "SELECT content AS v FROM messages WHERE substr(CAST(content AS BLOB), 1, 6) = X'006A736F6E3A'",
  ).all().map((row) => row.v as string);
  db.close();
  assert.ok(texts.length > 40, `only ${texts.length} JSON texts found`);
  assert.equal(multimodal.length, 3);
  for (const text of texts) assert.equal(pythonJson(JSON.parse(text)), text);
  for (const stored of multimodal) assert.equal(encodeContent(decodeContent(stored)), stored);
});

test("encodeContent() keeps strings and prefixes parts with \\u0000json:", () => {
  assert.equal(encodeContent("plain \u0000 text"), "plain \u0000 text");
  assert.equal(encodeContent(null), null);
  assert.equal(encodeContent(undefined), null);
  assert.equal(encodeContent(""), "");
  assert.equal(
    encodeContent({ type: "text", text: "é" }),
    MULTIMODAL_PREFIX + '{"type": "text", "text": "\\u00e9"}',
  );
});

test("decodeContent() reads Python's and compact JSON and returns bad JSON raw", () => {
  assert.deepEqual(decodeContent('\u0000json:[{"a": 1}]'), [{ a: 1 }]);
  assert.deepEqual(decodeContent('\u0000json:[{"a":1}]'), [{ a: 1 }]);
  assert.equal(decodeContent("\u0000json:{bad"), "\u0000json:{bad");
  assert.equal(decodeContent("json:[1]"), "json:[1]");
  assert.equal(decodeContent(null), null);
});

test("isFalsyLikePython() follows Python truthiness", () => {
  for (const value of [null, undefined, false, 0, "", [], {}, 0n]) {
    assert.equal(isFalsyLikePython(value), true, String(value));
  }
  for (const value of ["0", [0], { a: 0 }, 1, true, " ", new Date(0)]) {
    assert.equal(isFalsyLikePython(value), false, String(value));
  }
});

test("encodeJson() stores empty values as NULL and the rest as Python JSON", () => {
  assert.equal(encodeJson([]), null);
  assert.equal(encodeJson({}), null);
  assert.equal(encodeJson(""), null);
  assert.equal(encodeJson(null), null);
  assert.equal(encodeJson([{ id: "c1", n: 2 }]), '[{"id": "c1", "n": 2}]');
  assert.equal(encodeJson("x"), '"x"');
});

test("decodeJson() degrades bad JSON to the fallback instead of throwing", () => {
  assert.deepEqual(decodeJson('[{"id": "c1"}]', []), [{ id: "c1" }]);
  assert.deepEqual(decodeJson("[oops", []), []);
  assert.equal(decodeJson("[oops", null), null);
  assert.equal(decodeJson(null, []), null);
});

test("contentText() in search rendering reads as Python's search context", () => {
  assert.equal(contentText("abc"), "abc");
  assert.equal(contentText(null), "");
  assert.equal(contentText({ type: "text", text: "one" }), "", "one part object is not a list");
  assert.equal(
    contentText([{ type: "text", text: " a" }, { type: "image_url" }, { type: "text", text: "" }, {
      type: "text",
      text: "b ",
    }, { text: "no type" }]),
    "a b",
  );
  assert.equal(contentText([{ type: "image_url", image_url: "x.png" }]), "[multimodal content]");
  assert.throws(() => contentText([{ type: "text", text: 5 }]), NotTextError);
  assert.equal(contentText([{ type: "text", text: 0 }]), "[multimodal content]", "falsy: skipped");
});

test("contextText() renders a stored value, cut to its length, and nothing for a non-text one", () => {
  assert.equal(contextText(encodeContent([{ type: "text", text: "记忆断裂" }]), 2), "记忆");
  assert.equal(contextText(`${MULTIMODAL_PREFIX}[oops`, 100), `${MULTIMODAL_PREFIX}[oops`);
  assert.equal(contextText(`${MULTIMODAL_PREFIX}"quoted"`, 100), "quoted");
  assert.equal(contextText(42, 100), "");
  assert.equal(contextText(null, 100), "");
});
