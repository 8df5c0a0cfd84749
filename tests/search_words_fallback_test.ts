/**
 * A words query the word index finds nowhere is searched by substring
 * (`wordsFallback` of plan.ts), on both engines: a Latin word written
 * against CJK text (`用docker部署`) is one word for the unicode61
 * tokenizer, so `docker` found nothing, as in Python. The count agrees with
 * the hits, a page past the last hit is empty, the filters apply, and a
 * query the index does answer keeps Python's hits.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen, tempDbPath } from "./_helpers.ts";
import { openStore } from "../lib/open_store.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import { openPgStore, PG_SKIP } from "./store/_pg.ts";
import { runCli } from "./_cli_io.ts";
import { layOutAsSchema30 } from "./_newer_layout.ts";
import { copyFileSync } from "node:fs";

/** Messages of two sessions: Latin glued to CJK in both, `docker` alone in none. */
async function write(store: SessionStore): Promise<Map<number, string>> {
  const labels = new Map<number, string>();
  const add = async (session: string, label: string, content: string) => {
    labels.set(await store.appendMessage(session, { role: "user", content }), label);
  };
  await store.createSession("cli-1", "cli");
  await store.createSession("tg-1", "telegram");
  await add("cli-1", "zh", "请用Docker部署这个服务");
  await add("cli-1", "ja", "dockerのインストールが終わった");
  await add("tg-1", "ko", "Docker를 다시 시작했습니다");
  await add("tg-1", "plain", "the compose file is ready");
  await add("cli-1", "short", "用go写一个服务");
  await add("cli-1", "alone", "kubernetes is up");
  await add("tg-1", "glued-k8s", "kubernetes的集群已经启动");
  return labels;
}

function checks(open: () => Promise<SessionStore>) {
  let store: SessionStore;
  let labels: Map<number, string>;
  before(async () => {
    store = await open();
    labels = await write(store);
  });
  after(async () => await store?.close());
  const found = async (query: string, options = {}) =>
    (await store.searchMessages(query, { limit: 50, ...options })).map((h) => labels.get(h.id))
      .sort();

  test("a Latin word written against CJK text is found, in every order", async () => {
    for (const sort of ["rank", "newest", "oldest"] as const) {
      assert.deepEqual(await found("docker", { sort }), ["ja", "ko", "zh"], sort);
    }
    assert.deepEqual(await found("DOCKER 服务"), ["zh"]);
    assert.deepEqual(await found("docker NOT インストール"), ["ko", "zh"]);
  });

  test("the count agrees, and a page past the last hit is empty", async () => {
    assert.equal(await store.countSearchHits("docker", {}, 100), 3);
    assert.equal((await store.searchMessages("docker", { offset: 2 })).length, 1);
    assert.deepEqual(await store.searchMessages("docker", { offset: 3 }), []);
    assert.equal(await store.countSearchHits("docker", { sourceFilter: ["telegram"] }, 100), 1);
  });

  test("the filters apply to the substring search", async () => {
    assert.deepEqual(await found("docker", { sourceFilter: ["telegram"] }), ["ko"]);
    assert.deepEqual(await found("docker", { sessionId: "cli-1" }), ["ja", "zh"]);
    assert.deepEqual(await found("docker", { roleFilter: ["assistant"] }), []);
  });

  test("a word the index holds keeps Python's hits; a short word is not searched again", async () => {
    assert.deepEqual(await found("kubernetes"), ["alone"]);
    // Under a filter where the index finds nothing, the substring search answers.
    assert.deepEqual(await found("kubernetes", { sourceFilter: ["telegram"] }), ["glued-k8s"]);
    assert.deepEqual(await found("go"), []);
    assert.deepEqual(await found("nowhere"), []);
  });

  test("a lower-case `or` or `not` stays a word there, as FTS5 reads it", async () => {
    // They were read as operators: `docker or podman` found every docker, `kubernetes not
    // helm` every kubernetes without helm, though no message holds `podman` or `not`.
    assert.deepEqual(await found("docker or podman"), []);
    assert.deepEqual(await found("kubernetes not helm"), []);
    assert.deepEqual(await found("docker OR podman"), ["ja", "ko", "zh"]);
    assert.deepEqual(await found("kubernetes NOT helm"), ["alone"]); // the index answers
    // With CJK text, any case is the operator (Python's reading there).
    assert.deepEqual(await found("docker or 集群"), ["glued-k8s", "ja", "ko", "zh"]);
  });

  test("the snippet of a substring hit holds the word", async () => {
    const [hit] = await store.searchMessages("docker", { sourceFilter: ["telegram"] });
    assert.match(hit.snippet ?? "", /Docker/);
  });
}

describe("a word the index finds nowhere, on SQLite", () => {
  checks(() => openStore(tempDbPath()));

  test("search in the CLI shows the hits with the word marked", async () => {
    const path = tempDbPath();
    {
      await using store = await openStore(path);
      await write(store);
    }
    const run = await runCli(["--db", path, "search", "docker"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /请用>>>Docker<<<部署/);
    assert.match(run.out, /\(3 hits\)/);
  });

  test("a file without the trigram index (v6, read as it is) keeps Python's empty answer", async () => {
    // Without candidates from the trigram index, the substring search would read every message.
    const path = copyFixture("hermes-v6.db");
    {
      using raw = await rawOpen(path);
      const session = raw.prepare("SELECT id FROM sessions LIMIT 1").get()!.id;
      raw.prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 1)",
      ).run(session, "请用Podman部署");
    }
    const run = await runCli(["--db", path, "--json", "search", "podman"]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(JSON.parse(run.out), []);
    const migrated = await runCli(["--db", path, "migrate"]);
    assert.equal(migrated.code, 0, migrated.err);
    const after = await runCli(["--db", path, "--json", "search", "podman"]);
    assert.deepEqual(JSON.parse(after.out).map((hit: { snippet: string }) => hit.snippet), [
      "请用Podman部署",
    ]);
  });
});

describe("a word the index finds nowhere, on PostgreSQL", { skip: PG_SKIP }, () => {
  checks(() => openPgStore());
});

describe("a word the index finds nowhere, on a newer Hermes's file", () => {
  // Its trigram index leaves out tool rows and the messages of cron and subagent sessions; the
  // fallback keeps to what it holds (as that Hermes's own substring search does) rather than read
  // every message for a word found nowhere. Before, it did not run on such a file at all.
  let path: string;
  let ids: Record<string, number>;
  before(async () => {
    path = tempDbPath();
    {
      await using store = await openStore(path);
      await store.createSession("chat", "cli");
      await store.createSession("nightly", "cron");
      const user = await store.appendMessage("chat", { role: "user", content: "请用Docker部署" });
      const tool = await store.appendMessage("chat", {
        role: "tool",
        content: "部署Docker成功",
        toolCallId: "c1",
        toolName: "terminal",
      });
      const cron = await store.appendMessage("nightly", {
        role: "user",
        content: "定时Docker任务",
      });
      const later = await store.appendMessage("chat", {
        role: "assistant",
        content: "Docker的镜像好了",
      });
      ids = { user, tool, cron, later };
    }
    using raw = await rawOpen(path);
    layOutAsSchema30(raw);
  });
  const hitIds = async (query: string, options = {}) => {
    await using store = await openStore(path, { readonly: true });
    return (await store.searchMessages(query, options)).map((hit) => hit.id);
  };

  test("the messages its trigram index holds are found, in every order, counted alike", async () => {
    assert.deepEqual(await hitIds("docker"), [ids.later, ids.user]);
    assert.deepEqual(await hitIds("docker", { sort: "oldest" }), [ids.user, ids.later]);
    assert.deepEqual(await hitIds("docker", { offset: 1 }), [ids.user]);
    assert.deepEqual(await hitIds("docker", { roleFilter: ["user"] }), [ids.user]);
    await using store = await openStore(path, { readonly: true });
    assert.equal(await store.countSearchHits("docker", {}, 10), 2);
    // A CJK search reads every message, tool rows and cron sessions included.
    const cjk = (await store.searchMessages("部署")).map((hit) => hit.id).sort((a, b) => a - b);
    assert.deepEqual(cjk, [ids.user, ids.tool]);
  });

  test("a trigram index marked stale is not asked; while that Hermes refills, every message is read", async () => {
    const marked = async (key: string) => {
      const copy = tempDbPath();
      copyFileSync(path, copy);
      {
        using raw = await rawOpen(copy);
        raw.prepare("INSERT INTO state_meta (key, value) VALUES (?, '1')").run(key);
      }
      await using store = await openStore(copy, { readonly: true });
      return (await store.searchMessages("docker")).map((hit) => hit.id).sort((a, b) => a - b);
    };
    assert.deepEqual(await marked("fts_trigram_stale"), []);
    // The word index misses rows too then: the words themselves are read by substring.
    const every = [ids.user, ids.tool, ids.cron, ids.later];
    assert.deepEqual(await marked("fts_rebuild_high_water"), every);
  });
});
