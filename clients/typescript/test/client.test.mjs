// Every method of the client round-trips against a real `kenning serve` (development mode, no key).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  AbortError, ConnectionError, ConnectionLost, EmptyText, InputError, KenningError, Memory, MemoryNoMatch,
  MemoryToolError, NotFound, TextTooLarge, TimeoutError,
} from "../dist/index.js";
import { startServer } from "./server.mjs";

let server;
let memory;
before(async () => {
  server = await startServer();
  memory = new Memory(server.url);
});
after(async () => { await server?.stop(); });

describe("facts", () => {
  test("add, supersede, list now / as of / history, entities, status, delete", async () => {
    const first = await memory.add({ text: "I live in Berlin.", dataset: "sam", at: "2026-07-01T10:00:00Z", messageId: "m1", chat: "c1" });
    assert.equal(first.status, "stored");
    assert.equal(first.candidates_stored, 1);
    const moved = await memory.add({ text: "I moved to Lisbon last month.", dataset: "sam", at: new Date("2026-09-03T10:00:00Z"), messageId: "m2", chat: "c1" });
    assert.equal(moved.candidates_updated, 1);
    assert.deepEqual((await memory.listFacts("sam")).facts.map((f) => f.object), ["lisbon"]);
    assert.deepEqual((await memory.listFacts("sam", { asOf: "2026-07-15T00:00:00Z" })).facts.map((f) => f.object), ["berlin"]);
    const history = await memory.listFacts("sam", { includeInvalidated: true, order: "slot" });
    assert.equal(history.total, 2);
    assert.deepEqual((await memory.listFacts("sam", { messageId: "m2", includeInvalidated: true })).facts.map((f) => f.object), ["lisbon"]);
    assert.deepEqual((await memory.listFacts("sam", { entityType: "PLACE", includeInvalidated: true })).total, 2);
    assert.deepEqual((await memory.listEntities("sam", { type: "place" })).map((e) => e.name).sort(), ["berlin", "lisbon"]);
    const lisbon = history.facts.find((f) => f.object === "lisbon");
    const state = await memory.status({ memoryId: lisbon.fact_id });
    assert.equal(state.live, true);
    await memory.deleteFact("sam", lisbon.fact_id);
    assert.equal((await memory.listFacts("sam")).total, 0);
    assert.equal((await memory.status({ memoryId: lisbon.fact_id })).live, false);
  });

  test("a bare date is a time (midnight UTC) in a body and a query; each fact says its state", async () => {
    await memory.add({ text: "I live in Berlin.", dataset: "dates", at: "2026-07-01" });
    await memory.add({ text: "I moved to Lisbon.", dataset: "dates", at: "2026-09-03T10:00:00Z" });
    const on = async (asOf) => (await memory.listFacts("dates", { asOf })).facts.map((f) => [f.object, f.state]);
    assert.deepEqual(await on("2026-07-15"), [["berlin", "live"]]);
    assert.deepEqual(await on("2026-09-03"), [["berlin", "live"]]);               // midnight, before the move at 10:00
    assert.deepEqual(await on("2026-09-04"), [["lisbon", "live"]]);
    assert.deepEqual(await on("2026-06-30"), []);
    const history = await memory.listFacts("dates", { includeInvalidated: true });
    assert.deepEqual(history.facts.map((f) => [f.object, f.state]).sort(), [["berlin", "superseded"], ["lisbon", "live"]]);
    assert.match(history.facts.find((f) => f.object === "berlin").valid_at, /^2026-07-01T00:00:00/);
    const then = await memory.recall({ query: "Where does the user live?", dataset: "dates", asOf: "2026-08-01" });
    assert.deepEqual(then.facts.map((f) => f.object), ["berlin"]);
  });

  test("idempotent add, skipped assistant turns, and recall", async () => {
    const once = await memory.add({ text: "I play the cello.", dataset: "ada", clientRef: "r1" });
    const again = await memory.add({ text: "I play the cello.", dataset: "ada", clientRef: "r1" });
    assert.equal(again.reason, "already_ingested");
    assert.deepEqual(again.memory_ids, once.memory_ids);
    assert.equal((await memory.add({ text: "Lovely!", dataset: "ada", role: "assistant" })).reason, "skipped_non_user_turn");
    const found = await memory.recall({ query: "What instrument does the user play?", dataset: "ada", limit: 5 });
    assert.match(found.context, /cello/);
    assert.ok(found.items.some((i) => i.kind === "fact" && /cello/.test(i.text)), JSON.stringify(found.items));
  });

  test("remine mines the kept messages no fact cites, or the ones named", async () => {
    await memory.add({ text: "I play the viola.", dataset: "rem", messageId: "r1" });
    await memory.add({ text: "thanks!", dataset: "rem", messageId: "r2" });
    assert.deepEqual((await memory.remine("rem")).map((r) => r.episode_id), ["r2"]);
    const named = await memory.remine("rem", { messageIds: ["r1"] });
    assert.equal(named[0].candidates_deduped, 1);
    assert.deepEqual((await memory.remine("rem", { allMessages: true })).map((r) => r.episode_id), ["r1", "r2"]);
  });
});

describe("the queue", () => {
  test("addTurn returns at once; status and flush follow it to done", async () => {
    const receipt = await memory.addTurn({ dataset: "queue", role: "user", content: "I work at Acme.", thread: "t1", clientRef: "q1" });
    assert.equal(receipt.status, "processing");
    assert.ok(receipt.request_id);
    await memory.flush({ timeoutMs: 60_000 });
    const done = await memory.status(receipt.request_id);
    assert.equal(done.processing_status, "done");
    assert.deepEqual((await memory.listFacts("queue")).facts.map((f) => f.object), ["acme"]);
    const jobs = await memory.jobs({ dataset: "queue" });
    assert.equal(jobs[0].status, "done");
    assert.equal(await memory.retryFailed("queue"), 0);
    assert.equal(typeof (await memory.embedPending()), "number");
    const page = await memory.datasets({ q: "que" });
    assert.deepEqual(page.datasets.map((d) => d.dataset), ["queue"]);
  });
});

describe("messages and notes", () => {
  test("index, get, chats, thread, search", async () => {
    await memory.add({ text: "I love hiking.", dataset: "msg", chat: "c1", messageId: "u1", at: "2026-09-01T10:00:00Z" });
    await memory.messages.index("msg", "Remember to book the Kyoto trip.", { role: "assistant", chat: "c1", messageId: "a1", at: "2026-09-01T10:01:00Z" });
    assert.equal(await memory.messages.index("msg", "temporary", { temporary: true }), null);
    assert.equal((await memory.messages.get("msg", "a1")).role, "assistant");
    const chats = await memory.messages.chats("msg");
    assert.deepEqual(chats.chats.map((c) => [c.chat, c.messages, c.user_turns]), [["c1", 2, 1]]);
    const thread = await memory.messages.thread("msg", "c1");
    assert.deepEqual(thread.messages.map((m) => m.episode_id), ["u1", "a1"]);
    assert.equal((await memory.messages.thread("msg", null)).total, 0);
    const hits = await memory.messages.search("msg", "Kyoto travel", { limit: 3 });
    assert.equal(hits[0].message_id, "a1");
    assert.deepEqual(await memory.messages.search("msg", "Kyoto travel", { excludeChat: "c1" }), []);
  });

  test("delete, deleteChat", async () => {
    await memory.add({ text: "I live in Porto.", dataset: "gone", chat: "c1", messageId: "u1", at: "2026-09-01T10:00:00Z" });
    await memory.messages.index("gone", "Nice!", { role: "assistant", chat: "c1", messageId: "a1", at: "2026-09-01T10:01:00Z" });
    assert.deepEqual(await memory.messages.delete("gone", "u1"), { messages: 1, facts: 1, entities: 1, jobs: 0, restored: 0 });
    assert.deepEqual((await memory.listFacts("gone")).facts, []);
    await assert.rejects(memory.messages.delete("gone", "u1"), NotFound);
    assert.equal((await memory.messages.deleteChat("gone", "c1")).messages, 1);
    assert.equal((await memory.messages.thread("gone", "c1")).total, 0);
  });

  test("save, saveExtracted, search, list, forget", async () => {
    const note = await memory.notes.save("notes", "Works in the Lisbon office");
    assert.equal((await memory.notes.save("notes", "Works in the Lisbon office")).note_id, note.note_id);
    const saved = await memory.notes.saveExtracted("notes", ["Prefers morning meetings", "Works in the Lisbon office."]);
    assert.deepEqual(saved.map((n) => n.text), ["Prefers morning meetings"]);
    assert.equal((await memory.notes.search("notes", "where do they work", { limit: 1 }))[0].note.note_id, note.note_id);
    await memory.notes.forget("notes", note.note_id);
    assert.deepEqual((await memory.notes.list("notes")).map((n) => n.text), ["Prefers morning meetings"]);
    assert.equal((await memory.notes.list("notes", { includeForgotten: true })).length, 2);
  });
});

describe("core memory and documents", () => {
  test("the memory tool and every core method", async () => {
    assert.match(await memory.memoryTool("core", { command: "create", path: "/memories/profile.md", file_text: "Name: Sam\n" }), /created/i);
    await assert.rejects(memory.memoryTool("core", { command: "create", path: "/memories/profile.md", file_text: "x" }), MemoryToolError);
    assert.match(await memory.core.view("core"), /profile\.md/);
    const file = await memory.core.read("core", "/memories/profile.md");
    assert.equal(file.version, 1);
    const replaced = await memory.core.strReplace("core", "/memories/profile.md", "Sam", "Samuel", { expectedVersion: 1 });
    assert.equal(replaced.content, "Name: Samuel\n");
    await assert.rejects(memory.core.strReplace("core", "/memories/profile.md", "Nobody", "x"), MemoryNoMatch);
    const inserted = await memory.core.insert("core", "/memories/profile.md", 1, "City: Lisbon\n");
    assert.equal(inserted.content, "Name: Samuel\nCity: Lisbon\n");
    const written = await memory.core.write("core", "/memories/prefs.md", "tea\n", { expectedVersion: 0 });
    assert.equal(written.version, 1);
    assert.deepEqual((await memory.core.list("core")).map((f) => f.path).sort(), ["/memories/prefs.md", "/memories/profile.md"]);
    assert.deepEqual((await memory.core.history("core", "/memories/profile.md", { newestFirst: true })).map((v) => v.version), [3, 2, 1]);
    await memory.core.rename("core", "/memories/prefs.md", "/memories/likes.md");
    assert.match(await memory.core.render("core"), /City: Lisbon/);
    await memory.core.remove("core", "/memories/likes.md");
    assert.deepEqual((await memory.core.list("core")).map((f) => f.path), ["/memories/profile.md"]);
    assert.equal(await memory.core.memoryTool("core", { command: "view", path: "/memories/profile.md" }) !== "", true);
  });

  test("documents: write, read, list, delete, purge", async () => {
    const doc = await memory.documents.write("run-7", "plan/steps.md", "step 1");
    assert.equal(doc.version, 1);
    await memory.documents.write("run-7", "plan/steps.md", "step 2", { expectedVersion: 1 });
    assert.equal((await memory.documents.read("run-7", "plan/steps.md")).text, "step 2");
    assert.deepEqual((await memory.documents.list("run-7", { prefix: "plan/" })).map((d) => d.path), ["plan/steps.md"]);
    await memory.documents.delete("run-7", "plan/steps.md");
    await assert.rejects(memory.documents.read("run-7", "plan/steps.md"), NotFound);
    assert.equal(typeof (await memory.documents.purge()), "number");
  });
});

describe("export, import and erasing a dataset", () => {
  test("an export streams lines that another server imports", async () => {
    await memory.add({ text: "I have a beagle called Rufus.", dataset: "move", at: "2026-08-01T10:00:00Z" });
    const lines = [];
    for await (const line of await memory.export({ dataset: "move" })) lines.push(line);
    assert.ok(lines.length >= 2 && lines.every((l) => l.endsWith("\n") && JSON.parse(l)));
    for await (const line of await memory.export()) { assert.ok(line); break; }   // stopping early releases it
    assert.equal((await memory.health()).status, "ok");
    const other = await startServer();
    try {
      const target = new Memory(other.url);
      const counts = await target.import(lines);
      assert.ok(counts.fact >= 1, JSON.stringify(counts));
      const again = await target.import(lines.join(""));                          // the export's text as one string
      assert.equal(again.fact ?? 0, 0, JSON.stringify(again));                    // nothing twice
      assert.deepEqual((await target.listFacts("move")).facts.map((f) => f.object), (await memory.listFacts("move")).facts.map((f) => f.object));
      const erased = await target.deleteDataset("move");
      assert.ok(erased.facts >= 1, JSON.stringify(erased));
      assert.equal((await target.listFacts("move")).total, 0);
    } finally {
      await other.stop();
    }
  });
});

describe("errors, timeouts and aborts", () => {
  test("an abort mid-export, with the caller's reason, or by AbortSignal.timeout is one of the SDK's errors", async () => {
    await memory.add({ text: "I have a beagle called Rufus. I play the oboe.", dataset: "stream" });
    const controller = new AbortController();
    const reason = new Error("the user closed the tab");
    const lines = [];
    await assert.rejects(async () => {
      for await (const line of await memory.export({ dataset: "stream", signal: controller.signal })) {
        lines.push(line);
        controller.abort(reason);
      }
    }, (e) => e instanceof AbortError && e.cause === reason && /the user closed the tab/.test(e.message));
    assert.equal(lines.length, 1);
    const timeout = AbortSignal.timeout(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(memory.health({ signal: timeout }),
      (e) => e instanceof TimeoutError && e.cause?.name === "TimeoutError");
    await assert.rejects(memory.flush({ signal: timeout }), TimeoutError);          // its wait between polls too
  });

  test("an answer the connection cut short, streamed or not, is ConnectionLost", async () => {
    // a server that starts each answer and drops the connection midway, as a crashed server or a proxy would
    const cutting = createServer((request, response) => {
      const json = !request.url.startsWith("/v1/export");
      response.writeHead(200, json ? { "content-type": "application/json", "content-length": "1000" }
        : { "content-type": "application/x-ndjson" });                           // chunked
      response.write(json ? '{"facts": [' : '{"kind": "fact", "fact_id": "f1"}\n');
      setTimeout(() => response.socket.destroy(), 30);
    });
    await new Promise((resolve) => cutting.listen(0, "127.0.0.1", resolve));
    try {
      const client = new Memory(`http://127.0.0.1:${cutting.address().port}`, { timeoutMs: 5_000 });
      const lines = [];
      await assert.rejects(async () => { for await (const line of await client.export()) lines.push(line); },
        (e) => e instanceof ConnectionLost && e instanceof ConnectionError && e instanceof KenningError
          && e.cause instanceof Error && /broke off/.test(e.message));
      assert.deepEqual(lines, ['{"kind": "fact", "fact_id": "f1"}\n']);      // what came before the cut
      await assert.rejects(client.listFacts("sam"), (e) => e instanceof ConnectionLost && e.cause instanceof Error);
    } finally {
      cutting.closeAllConnections();
      await new Promise((resolve) => cutting.close(resolve));
    }
  });

  test("the server's refusals arrive as the error tree", async () => {
    await assert.rejects(memory.messages.get("sam", "nope"), (e) => e instanceof NotFound && e.status === 404 && e.code === "NOT_FOUND");
    await assert.rejects(memory.add({ text: "x".repeat(100_001), dataset: "sam" }), (e) => e instanceof TextTooLarge && e instanceof InputError);
    await assert.rejects(memory.add({ text: "   ", dataset: "sam" }), EmptyText);
    await assert.rejects(memory.listFacts("sam", { limit: 0 }), InputError);
    await assert.rejects(memory.listFacts("bad name"), (e) => e instanceof InputError && e.code === "INVALID_SCOPE");
  });

  test("an AbortSignal stops a call, a timeout is a TimeoutError, an absent server a ConnectionError", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(memory.recall({ query: "anything", dataset: "sam", signal: controller.signal }),
      (e) => e instanceof AbortError && e instanceof KenningError && e.name === "AbortError" && e.code === "ABORTED"
        && e.cause === controller.signal.reason);
    await assert.rejects(memory.recall({ query: "where do I live", dataset: "sam", timeoutMs: 1 }), TimeoutError);
    const nowhere = new Memory("http://127.0.0.1:9", { timeoutMs: 5_000 });
    await assert.rejects(nowhere.health(), (e) => e instanceof ConnectionError && e instanceof KenningError);
    assert.throws(() => new Memory("localhost:8420"), KenningError);
    const unset = new Memory(server.url, { timeoutMs: undefined, maxRetries: undefined });   // the defaults stay
    assert.equal((await unset.health()).status, "ok");
    assert.equal((await new Memory(server.url, { timeoutMs: 0 }).health()).status, "ok");      // 0: no limit
  });
});
