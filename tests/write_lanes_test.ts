/**
 * WriteLanes (lib/core/write_lanes.ts), which `sync` and `copy` share: at
 * most `lanes` writes at once, and after a failure no write starts, those in
 * flight end, and the first failure is what is thrown.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WriteLanes } from "../lib/core/write_lanes.ts";

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

test("WriteLanes keeps at most `lanes` writes in flight and runs every one", async () => {
  const lanes = new WriteLanes(3);
  let running = 0;
  let most = 0;
  const done: number[] = [];
  for (let n = 0; n < 10; n++) {
    await lanes.submit(async () => {
      most = Math.max(most, ++running);
      await tick();
      running--;
      done.push(n);
    });
  }
  await lanes.drain();
  assert.equal(most, 3);
  assert.deepEqual(done.sort((a, b) => a - b), [...Array(10).keys()]);
});

test("after a failure WriteLanes starts nothing more, lets the others end, and throws the first", async () => {
  const lanes = new WriteLanes(2);
  const started: number[] = [];
  const ended: number[] = [];
  const write = (n: number) => async () => {
    started.push(n);
    if (n === 1) throw new Error("write 1 failed");
    await tick();
    if (n === 2) throw new Error("write 2 failed");
    ended.push(n);
  };
  await lanes.submit(write(0));
  await lanes.submit(write(1));
  await assert.rejects(async () => {
    for (let n = 2; n < 6; n++) await lanes.submit(write(n));
  }, /write 1 failed/);
  await assert.rejects(lanes.drain(), /write 1 failed/);
  assert.deepEqual(started, [0, 1], "nothing starts once the failure is known");
  assert.deepEqual(ended, [0], "the write in flight ran to its end");
});
