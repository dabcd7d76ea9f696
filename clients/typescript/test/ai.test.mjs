// The AI SDK tools inside generateText, with the AI SDK's own mock language model issuing the tool calls,
// against a real kenning server.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { anthropic } from "@ai-sdk/anthropic";
import { convertToModelMessages, generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { AbortError, ConnectionError, InputError, Memory } from "../dist/index.js";
import { kenningTools, lastUserText, turnRecorder, withCoreMemory } from "../dist/ai.js";
import { startServer } from "./server.mjs";

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 } };
const finish = (unified) => ({ unified, raw: unified });

/** A model that plays back `steps`: each a list of tool calls, or a final text. It keeps what it was sent. */
function scripted(steps) {
  const prompts = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options);
      const step = steps[prompts.length - 1];
      if (typeof step === "string") return { content: [{ type: "text", text: step }], finishReason: finish("stop"), usage, warnings: [] };
      return {
        content: step.map(([toolName, input], i) => ({ type: "tool-call", toolCallId: `call-${prompts.length}-${i}`, toolName, input: JSON.stringify(input) })),
        finishReason: finish("tool-calls"), usage, warnings: [],
      };
    },
  });
  return { model, prompts };
}

let server;
let memory;
before(async () => {
  server = await startServer();
  memory = new Memory(server.url);
  await memory.add({ text: "I moved to Lisbon last month. My sister Maya lives in Porto.", dataset: "sam", at: "2026-09-03T10:00:00Z" });
});
after(async () => { await server?.stop(); });

test("recall, remember and Claude's memory tool run inside generateText", async () => {
  const { model, prompts } = scripted([
    [["recall", { query: "Where does the user live?" }],
      ["remember", { text: "Prefers answers in Portuguese" }],
      ["memory", { command: "create", path: "/memories/travel.md", file_text: "Planning a trip to Kyoto\n" }]],
    [["memory", { command: "view", path: "/memories" }],
      ["memory", { command: "str_replace", path: "/memories/nope.md", old_str: "a", new_str: "b" }]],
    "You live in Lisbon, and I noted that you prefer Portuguese.",
  ]);
  const system = await withCoreMemory(memory, "sam", "You are a helpful assistant.");
  const result = await generateText({
    model, system, tools: kenningTools(memory, "sam", { anthropic }), stopWhen: stepCountIs(5),
    prompt: "Where do I live? Also, remember that I prefer Portuguese.",
  });
  assert.equal(result.text, "You live in Lisbon, and I noted that you prefer Portuguese.");
  const results = result.steps.flatMap((s) => s.content.filter((p) => p.type === "tool-result" || p.type === "tool-error"));
  const [recalled, remembered, created, viewed, failed] = results;
  assert.match(recalled.output, /lives in: lisbon/);
  assert.equal(remembered.output.saved, true);
  assert.match(created.output, /created/i);
  assert.match(viewed.output, /travel\.md/);
  assert.equal(failed.type, "tool-error");                                     // sent back to the model as an error
  assert.match(String(failed.error?.message ?? failed.error), /does not exist/);
  // what the tools did is on the server
  assert.deepEqual((await memory.notes.list("sam")).map((n) => n.text), ["Prefers answers in Portuguese"]);
  assert.equal((await memory.core.read("sam", "/memories/travel.md")).content, "Planning a trip to Kyoto\n");
  // the model was offered the three tools, Claude's memory tool as Anthropic's provider tool
  const offered = prompts[0].tools.map((t) => [t.name, t.type, t.id ?? null]);
  assert.deepEqual(offered.sort(), [["memory", "provider", "anthropic.memory_20250818"], ["recall", "function", null], ["remember", "function", null]]);
  for (const [i, step] of result.steps.entries()) {
    for (const part of step.content) {
      if (part.type === "tool-call") console.log(`step ${i + 1} → ${part.toolName}(${JSON.stringify(part.input)})`);
      if (part.type === "tool-result") console.log(`step ${i + 1} ← ${part.toolName}: ${JSON.stringify(part.output).slice(0, 120)}`);
      if (part.type === "tool-error") console.log(`step ${i + 1} ← ${part.toolName} error: ${String(part.error?.message ?? part.error).slice(0, 120)}`);
      if (part.type === "text") console.log(`step ${i + 1}: ${part.text}`);
    }
  }
});

test("core memory goes into the instructions the model receives", async () => {
  await memory.core.write("sam", "/memories/profile.md", "Name: Sam\nPrefers short answers\n");
  const { model, prompts } = scripted(["Hi Sam."]);
  await generateText({ model, system: await withCoreMemory(memory, "sam", "You are a helpful assistant."), prompt: "hi" });
  const system = prompts[0].prompt.find((m) => m.role === "system").content;
  assert.match(system, /^You are a helpful assistant\./);
  assert.match(system, /Prefers short answers/);
});

test("finished turns go to addTurn off the response path and are mined", async () => {
  const turns = turnRecorder(memory, { dataset: "ada", thread: "t1" });
  const messages = [{ role: "user", content: [{ type: "text", text: "I started learning the cello." }] }];
  assert.equal(lastUserText(messages), "I started learning the cello.");
  turns.user(messages);
  const { model } = scripted(["How exciting! How long have you been playing?"]);
  const result = await generateText({ model, messages, onFinish: turns.onFinish });
  assert.match(result.text, /exciting/);
  await turns.settled();
  await memory.flush({ timeoutMs: 60_000 });
  const thread = await memory.messages.thread("ada", "t1");
  assert.deepEqual(thread.messages.map((m) => m.role), ["user", "assistant"]);
  assert.ok((await memory.listFacts("ada")).facts.some((f) => f.object === "cello"));
  const errors = [];
  const failing = turnRecorder(new Memory("http://127.0.0.1:9"), { dataset: "ada",
    onError: (e) => { errors.push(e); throw new Error("a handler that fails too"); } });
  failing.user("I live in Rome.");
  failing.onFinish({ text: "Rome is lovely." });
  await failing.settled();
  assert.equal(errors.length, 2);               // each reported, none thrown at the answer, none stopping the next
});

test("with the server down, withCoreMemory answers without the memory and reports why", async () => {
  const down = new Memory("http://127.0.0.1:9", { timeoutMs: 5_000 });
  const errors = [];
  const system = await withCoreMemory(down, "sam", "You are a helpful assistant.", { onError: (e) => errors.push(e) });
  assert.equal(system, "You are a helpful assistant.");
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof ConnectionError, String(errors[0]));
  const { model, prompts } = scripted(["Hello!"]);
  const result = await generateText({ model, system: await withCoreMemory(down, "sam", "Be brief.",
    { onError: () => { throw new Error("a handler that fails too"); } }), prompt: "hi" });
  assert.equal(result.text, "Hello!");                                             // the answer, without the memory
  assert.equal(prompts[0].prompt.find((m) => m.role === "system").content, "Be brief.");
  const stopped = new AbortController();
  stopped.abort();
  await assert.rejects(withCoreMemory(memory, "sam", "x", { signal: stopped.signal, onError: () => assert.fail("reported") }),
    AbortError);                                                                    // the caller's own abort is thrown
});

test("turns.user takes the AI SDK's UIMessages as well as ModelMessages, and never throws", async () => {
  const errors = [];
  const turns = turnRecorder(memory, { dataset: "ui", thread: "t1", onError: (e) => errors.push(e) });
  const uiMessages = [
    { id: "m1", role: "user", parts: [{ type: "text", text: "Hi!" }] },
    { id: "m2", role: "assistant", parts: [{ type: "text", text: "Hello! How can I help?" }] },
    { id: "m3", role: "user", parts: [{ type: "step-start" }, { type: "text", text: "I adopted a dog called Rex." }] },
  ];
  assert.equal(lastUserText(uiMessages), "I adopted a dog called Rex.");
  turns.user(uiMessages);
  const { model } = scripted(["What a lovely name."]);
  await generateText({ model, messages: await convertToModelMessages(uiMessages), onFinish: turns.onFinish });
  for (const bad of [undefined, null, 42, { role: "user" }, [{ role: "user" }], [{ role: "user", content: 7 }]]) {
    assert.doesNotThrow(() => turns.user(bad));                                    // plain JavaScript may pass anything
  }
  assert.doesNotThrow(() => turns.onFinish(undefined));
  await turns.settled();
  assert.equal(errors.length, 7, errors.map(String).join("\n"));                  // each reported, none thrown
  assert.ok(errors.every((e) => e instanceof InputError), errors.map(String).join("\n"));
  await memory.flush({ timeoutMs: 60_000 });
  const thread = await memory.messages.thread("ui", "t1");
  assert.deepEqual(thread.messages.map((m) => [m.role, m.content]),
    [["user", "I adopted a dog called Rex."], ["assistant", "What a lovely name."]]);
});
