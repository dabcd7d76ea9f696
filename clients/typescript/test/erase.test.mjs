// Erasure against a real `kenning serve` with keys: dry runs, a message, a fact, everything holding a text, a
// whole dataset; user tokens in their own dataset only; the erasure log keeps ids, counts and hashes, never text.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { InputError, Memory, NotFound, PermissionDenied } from "../dist/index.js";
import { startServer } from "./server.mjs";

let server;
let service;
before(async () => {
  server = await startServer({ keys: true });
  service = new Memory(server.url, { apiKey: server.keys.service });
});
after(async () => { await server?.stop(); });

const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");

/** What the read paths give back about a dataset for these queries, as one lower-cased text. */
async function everything(memory, dataset, queries) {
  const out = [];
  for (const query of queries) {
    const found = await memory.recall({ query, dataset, limit: 20 });
    out.push(found.context, JSON.stringify(found.facts), JSON.stringify(found.messages), JSON.stringify(found.notes));
    out.push(JSON.stringify(await memory.messages.search(dataset, query, { limit: 50 })));
    out.push(JSON.stringify(await memory.notes.search(dataset, query, { limit: 50 })));
  }
  out.push(JSON.stringify(await memory.listFacts(dataset, { includeInvalidated: true, limit: 100 })));
  out.push(JSON.stringify(await memory.listEntities(dataset)));
  for (const chat of (await memory.messages.chats(dataset)).chats) {
    out.push(JSON.stringify(await memory.messages.thread(dataset, chat.chat, { limit: 100 })));
  }
  out.push(JSON.stringify(await memory.notes.list(dataset, { includeForgotten: true })));
  out.push(await memory.core.render(dataset));
  return out.join("\n").toLowerCase();
}

describe("erase", () => {
  test("a dry run says what would go and erases nothing, nor logs it", async () => {
    await service.add({ text: "I live in Porto.", dataset: "dry", chat: "c1", messageId: "m1" });
    const facts = (await service.listFacts("dry")).facts;
    const preview = await service.erase.message("dry", "m1", { dryRun: true });
    assert.equal(preview.dry_run, true);
    assert.equal(preview.erasure_id, null);
    assert.equal(preview.kind, "message");
    assert.equal(preview.physical, "none");
    assert.deepEqual(preview.ids.messages, ["m1"]);
    assert.deepEqual(preview.ids.facts, facts.map((f) => f.fact_id));
    const fact = await service.erase.fact("dry", facts[0].fact_id, { dryRun: true });
    assert.deepEqual([fact.dry_run, fact.ids.facts], [true, [facts[0].fact_id]]);
    const content = await service.erase.content("dry", "porto", { dryRun: true });
    assert.deepEqual(content.ids.messages, ["m1"]);
    const whole = await service.erase.dataset("dry", { dryRun: true });
    assert.equal(whole.removed.messages, 1);
    assert.equal((await service.messages.get("dry", "m1")).content, "I live in Porto.");
    assert.deepEqual((await service.listFacts("dry")).facts, facts);
    assert.match(await everything(service, "dry", ["Where do I live?"]), /porto/);
    assert.equal((await service.erase.log("dry")).total, 0);
  });

  test("an erased message's words come back from no recall or search; the value it superseded is live again", async () => {
    await service.add({ text: "I live in Berlin.", dataset: "sam", chat: "c1", messageId: "m1", at: "2026-07-01T10:00:00Z" });
    await service.add({ text: "I moved to Xochimilcan and I love the Ptarmiganfest there.", dataset: "sam", chat: "c1",
      messageId: "m2", at: "2026-08-01T10:00:00Z" });
    await service.add({ text: "It was a long drive.", dataset: "sam", chat: "c1", messageId: "m3", at: "2026-08-01T10:05:00Z" });
    assert.match(await everything(service, "sam", ["Where do I live?", "xochimilcan"]), /xochimilcan/);
    const receipt = await service.erase.message("sam", "m2");
    assert.match(receipt.erasure_id, /^er_/);
    assert.equal(receipt.dry_run, false);
    assert.equal(receipt.physical, "done");
    assert.deepEqual(receipt.ids.messages, ["m2"]);
    assert.equal(receipt.removed.messages, 1);
    assert.ok(receipt.removed.facts >= 1 && receipt.restored.length >= 1, JSON.stringify(receipt));
    const seen = await everything(service, "sam", ["Where do I live?", "xochimilcan", "Ptarmiganfest festival", "drive"]);
    assert.doesNotMatch(seen, /xochimilcan|ptarmiganfest/);
    assert.match(seen, /long drive/);                                                  // the rest of the chat stays
    assert.deepEqual((await service.listFacts("sam")).facts.filter((f) => f.predicate === "lives in").map((f) => f.object),
      ["berlin"]);
    assert.deepEqual(await service.messages.search("sam", "Xochimilcan"), []);
    await assert.rejects(service.messages.get("sam", "m2"), NotFound);
    await assert.rejects(service.erase.message("sam", "m2"), NotFound);
  });

  test("erase a fact: its words leave the message they came from, the rest stays", async () => {
    await service.add({ text: "I play the theremin. I work at Brightwave.", dataset: "work", messageId: "w1" });
    const work = (await service.listFacts("work")).facts.find((f) => f.object === "brightwave");
    const receipt = await service.erase.fact("work", work.fact_id);
    assert.deepEqual([receipt.kind, receipt.ids.facts, receipt.redacted], ["fact", [work.fact_id], ["w1"]]);
    const message = await service.messages.get("work", "w1");
    assert.doesNotMatch(message.content, /brightwave/i);
    assert.equal(message.content, "I play the theremin. [erased]");
    assert.deepEqual((await service.listFacts("work")).facts.map((f) => f.object), ["theremin"]);
    assert.doesNotMatch(await everything(service, "work", ["Where do I work?", "brightwave"]), /brightwave/);
    await assert.rejects(service.erase.fact("work", work.fact_id), NotFound);
  });

  test("erase by content: the dry run's counts are the erasure's, and the text is gone from every place", async () => {
    await service.add({ text: "I adopted a greyhound called Zorblax from the Quillington shelter.", dataset: "pets",
      chat: "c1", messageId: "p1" });
    await service.add({ text: "I live in Porto.", dataset: "pets", chat: "c1", messageId: "p2" });
    await service.notes.save("pets", "Zorblax is afraid of thunderstorms.");
    await service.notes.save("pets", "Prefers short answers.");
    await service.core.write("pets", "/memories/pets.md", "Dog: Zorblax (greyhound)\nLikes long walks\n");
    await service.documents.write("pets-run", "vet.md", "ZORBLAX sees the vet on Friday.");
    await service.documents.write("pets-run", "other.md", "Nothing here.");
    await service.add({ text: "My dog is called Zorblax too.", dataset: "ana", messageId: "a1" });

    const preview = await service.erase.content("pets", "zorblax", { dryRun: true, documentScopes: ["pets-run"] });
    assert.equal(preview.erasure_id, null);
    assert.deepEqual([preview.removed.messages, preview.removed.notes, preview.removed.core_files, preview.removed.documents],
      [1, 1, 1, 1], JSON.stringify(preview));
    assert.deepEqual(preview.ids.messages, ["p1"]);
    assert.deepEqual(preview.ids.documents, ["pets-run:vet.md"]);
    assert.deepEqual(preview.ids.core_files, ["user:/memories/pets.md"]);
    assert.equal((await service.notes.list("pets")).length, 2);                         // nothing went yet

    const receipt = await service.erase.content("pets", "zorblax", { documentScopes: ["pets-run"] });
    assert.equal(receipt.kind, "content");
    for (const kind of ["messages", "notes", "core_files", "documents", "facts"]) {
      assert.equal(receipt.removed[kind], preview.removed[kind], kind);
      assert.deepEqual([...(receipt.ids[kind] ?? [])].sort(), [...(preview.ids[kind] ?? [])].sort(), kind);
    }
    const seen = await everything(service, "pets", ["zorblax", "greyhound", "Quillington shelter", "Where do I live?"]);
    assert.doesNotMatch(seen, /zorblax|quillington/);
    assert.match(seen, /porto/);
    assert.match(seen, /likes long walks/);                                            // the core file's other line
    assert.match(seen, /prefers short answers/);
    await assert.rejects(service.documents.read("pets-run", "vet.md"), NotFound);
    assert.equal((await service.documents.read("pets-run", "other.md")).text, "Nothing here.");
    assert.match((await service.messages.get("ana", "a1")).content, /Zorblax/);          // another dataset's stays
    await assert.rejects(service.erase.content("pets", " "), InputError);                 // too short to erase by
  });

  test("a user token erases in its own dataset only; documents and compaction are the service's", async () => {
    await service.add({ text: "I live in Lyon.", dataset: "lee", messageId: "l1" });
    await service.add({ text: "I live in Quito.", dataset: "kim", messageId: "k1" });
    const [own] = (await service.listFacts("lee")).facts;
    const [theirs] = (await service.listFacts("kim")).facts;
    const lee = await service.asUser("lee");
    await assert.rejects(lee.erase.fact("kim", theirs.fact_id), (e) => e instanceof PermissionDenied && e.status === 403);
    await assert.rejects(lee.erase.fact("kim", theirs.fact_id, { dryRun: true }), PermissionDenied);
    await assert.rejects(lee.erase.message("kim", "k1"), PermissionDenied);
    await assert.rejects(lee.erase.dataset("kim"), PermissionDenied);
    await assert.rejects(lee.erase.log("kim"), PermissionDenied);
    await assert.rejects(lee.erase.content("lee", "lyon", { documentScopes: ["pets-run"] }), PermissionDenied);
    await assert.rejects(lee.erase.log(), PermissionDenied);
    await assert.rejects(lee.erase.compact(), PermissionDenied);
    assert.deepEqual((await service.listFacts("kim")).facts.map((f) => f.fact_id), [theirs.fact_id]);
    const receipt = await lee.erase.fact("lee", own.fact_id);
    assert.deepEqual(receipt.ids.facts, [own.fact_id]);
    assert.equal((await lee.listFacts("lee")).total, 0);
    const [entry] = (await lee.erase.log("lee")).erasures;
    assert.equal(entry.erasure_id, receipt.erasure_id);
    assert.match(entry.by, /^user:lee/);
    const member = new Memory(server.url, { apiKey: server.keys.member });             // reads, never erases
    await assert.rejects(member.erase.fact("kim", theirs.fact_id), PermissionDenied);
    assert.equal((await lee.erase.dataset("lee")).kind, "dataset");
  });

  test("the log lists each erasure with ids, counts and hashes, never its text; compact", async () => {
    await service.add({ text: "I play the Vexmoor bagpipes.", dataset: "log", chat: "c1", messageId: "g1" });
    await service.notes.save("log", "Vexmoor tuning on Sundays.");
    await service.add({ text: "I live in Oslo.", dataset: "log", chat: "c1", messageId: "g2" });
    const first = await service.erase.content("log", "Vexmoor");
    const second = await service.erase.message("log", "g2");
    const page = await service.erase.log("log");
    assert.deepEqual([page.total, page.limit, page.offset], [2, 50, 0]);
    assert.deepEqual(page.erasures.map((e) => [e.erasure_id, e.kind]), [[second.erasure_id, "message"], [first.erasure_id, "content"]]);
    const [message, content] = page.erasures;
    assert.deepEqual(message.ids.messages, ["g2"]);
    assert.equal(message.removed.messages, 1);
    assert.equal(message.hashes["message:g2"], sha256("I live in Oslo."));
    assert.equal(content.hashes.query, sha256("vexmoor"));
    assert.deepEqual(content.removed.notes, 1);
    assert.match(content.by, /^key:/);
    assert.doesNotMatch(JSON.stringify(page), /vexmoor|oslo|bagpipes/i);
    assert.deepEqual((await service.erase.log("log", { limit: 1, offset: 1 })).erasures.map((e) => e.erasure_id), [first.erasure_id]);
    const all = await service.erase.log();
    assert.ok(all.erasures.some((e) => e.erasure_id === first.erasure_id && e.dataset === "log"), JSON.stringify(all));
    assert.equal((await service.erase.log(null)).total, all.total);
    assert.equal(await service.erase.compact(), true);
  });

  test("erase a dataset: every row goes, the log keeps the entry", async () => {
    await service.add({ text: "I live in Turin.", dataset: "gone", chat: "c1", messageId: "t1" });
    await service.notes.save("gone", "Likes espresso.");
    const preview = await service.erase.dataset("gone", { dryRun: true });
    const receipt = await service.erase.dataset("gone");
    assert.deepEqual(receipt.removed, preview.removed);
    assert.equal(receipt.removed.messages, 1);
    assert.equal((await service.listFacts("gone")).total, 0);
    assert.deepEqual(await service.notes.list("gone"), []);
    const [entry] = (await service.erase.log("gone")).erasures;
    assert.deepEqual([entry.erasure_id, entry.kind, entry.removed], [receipt.erasure_id, "dataset", receipt.removed]);
  });
});
