// With API keys: user tokens stay in their dataset, roles are obeyed, stale versions conflict, and the client
// waits out a real rate limit (Retry-After) before giving up.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  DocumentConflict, KenningError, Memory, MemoryConflict, NotFound, PermissionDenied, RateLimited, Unauthorized,
} from "../dist/index.js";
import { startServer } from "./server.mjs";

let server;
let service;
before(async () => {
  server = await startServer({ keys: true });
  service = new Memory(server.url, { apiKey: server.keys.service });
});
after(async () => { await server?.stop(); });

describe("keys and user tokens", () => {
  test("a user token reads its own dataset and nothing else", async () => {
    await service.add({ text: "I live in Berlin.", dataset: "sam" });
    await service.add({ text: "I live in Paris.", dataset: "alex" });
    const sam = await service.asUser("sam");
    assert.match(sam.http.options.apiKey, /^ut_/);
    assert.deepEqual((await sam.listFacts("sam")).facts.map((f) => f.object), ["berlin"]);
    await assert.rejects(sam.listFacts("alex"), (e) => e instanceof PermissionDenied && e.status === 403);
    await assert.rejects(sam.recall({ query: "where", dataset: "alex" }), PermissionDenied);
    await assert.rejects(sam.notes.save("alex", "sneaky"), PermissionDenied);
    assert.deepEqual((await sam.datasets()).datasets.map((d) => d.dataset), ["sam"]);
  });

  test("no key, a wrong key, another project's key and a member key are refused as they should be", async () => {
    await assert.rejects(new Memory(server.url).listFacts("sam"), (e) => e instanceof Unauthorized && e.status === 401);
    await assert.rejects(new Memory(server.url, { apiKey: "kn_wrong" }).listFacts("sam"), Unauthorized);
    const other = new Memory(server.url, { apiKey: server.keys.other });
    assert.equal((await other.listFacts("sam")).total, 0);                       // its own project's "sam": empty
    const member = new Memory(server.url, { apiKey: server.keys.member });
    assert.equal((await member.listFacts("sam")).total, 1);
    await assert.rejects(member.add({ text: "I live in Rome.", dataset: "sam" }), PermissionDenied);
  });

  test("a stale expectedVersion raises MemoryConflict, a stale document DocumentConflict", async () => {
    const file = await service.core.write("sam", "/memories/profile.md", "Name: Sam\n", { expectedVersion: 0 });
    await service.core.write("sam", "/memories/profile.md", "Name: Samuel\n", { expectedVersion: file.version });
    await assert.rejects(service.core.write("sam", "/memories/profile.md", "Name: S\n", { expectedVersion: file.version }),
      (e) => e instanceof MemoryConflict && e.status === 409 && /version 2/.test(e.message));
    await assert.rejects(service.core.strReplace("sam", "/memories/profile.md", "Samuel", "Sam", { expectedVersion: 1 }), MemoryConflict);
    assert.equal((await service.core.read("sam", "/memories/profile.md")).content, "Name: Samuel\n");
    await service.documents.write("run", "plan.md", "one");
    await assert.rejects(service.documents.write("run", "plan.md", "two"), DocumentConflict);
  });
});

describe("retries", () => {
  test("a real rate limit: 429s are waited out (Retry-After) and every call succeeds", async () => {
    const limited = await startServer({ keys: true, env: { KENNING_RATE_LIMIT_KEY: "4/second" } });
    try {
      const retries = [];
      const client = new Memory(limited.url, { apiKey: limited.keys.service, onRetry: (r) => retries.push(r) });
      const answers = await Promise.all(Array.from({ length: 10 }, () => client.datasets()));
      assert.equal(answers.length, 10);
      assert.ok(retries.length > 0 && retries.every((r) => r.status === 429 && r.waitMs > 0 && r.waitMs <= 10_000), JSON.stringify(retries));
      const impatient = new Memory(limited.url, { apiKey: limited.keys.service, maxRetries: 0 });
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => impatient.datasets()));
      const refused = outcomes.filter((o) => o.status === "rejected").map((o) => o.reason);
      assert.ok(refused.length > 0 && refused.every((e) => e instanceof RateLimited && e.retryAfter > 0));
    } finally {
      await limited.stop();
    }
  });

  test("a 503 with Retry-After is sent again; an abort stops the wait", async () => {
    // kenning itself answers 503 only when its store is down, so a two-line stand-in plays the busy proxy here.
    let calls = 0;
    const busy = createServer((req, res) => {
      if (req.url === "/v1/datasets/x/facts") { res.writeHead(404, { "content-type": "text/html" }); res.end("<h1>no</h1>"); return; }
      if (req.url === "/v1/datasets") { res.writeHead(200, { "content-type": "text/html" }); res.end("<h1>proxy</h1>"); return; }
      calls += 1;
      if (calls < 3) { res.writeHead(503, { "retry-after": "0.05", "content-type": "text/plain" }); res.end("busy"); return; }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ok", version: "x", store: "x" }));
    });
    await new Promise((resolve) => busy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${busy.address().port}`;
      await assert.rejects(new Memory(url).listFacts("x"), (e) => e instanceof NotFound && e.status === 404);   // by status
      await assert.rejects(new Memory(url).datasets(), (e) => e instanceof KenningError && /not JSON/.test(e.message));
      assert.equal((await new Memory(url).health()).status, "ok");
      assert.equal(calls, 3);
      calls = -100;                                                          // busy for a long while now
      const controller = new AbortController();
      const pending = new Memory(url, { maxRetries: 1000 }).health({ signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      await assert.rejects(pending, { name: "AbortError" });
    } finally {
      busy.close();
    }
  });
});
