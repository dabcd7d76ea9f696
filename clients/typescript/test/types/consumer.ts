// A consumer's code, as a new project made with `tsc --init` would write it: type-checked by test/types.test.mjs
// with `strict` and `exactOptionalPropertyTypes` against the built package (`kenning`, `kenning/ai`). Never run.
import { anthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs, type LanguageModel, type ModelMessage, type UIMessage } from "ai";
import {
  AbortError, ConnectionError, ConnectionLost, KenningError, Memory, type ClientOptions, type Fact, type FactState,
} from "kenning";
import { kenningTools, recallTool, turnRecorder, withCoreMemory } from "kenning/ai";

declare const model: LanguageModel;
declare const maybe: { number: number | undefined; string: string | undefined; signal: AbortSignal | undefined };

// Every option may be passed as undefined (exactOptionalPropertyTypes): values read from the environment or
// from the caller's own optional options.
const options: ClientOptions = { apiKey: process.env.KENNING_API_KEY, environment: process.env.KENNING_ENVIRONMENT,
  timeoutMs: maybe.number, maxRetries: undefined, maxRetryWaitMs: undefined, onRetry: undefined, fetch: undefined };
const memory = new Memory("http://127.0.0.1:8420", options);
await memory.add({ text: "I live in Berlin.", dataset: "sam", at: maybe.string, clientRef: maybe.string,
  role: undefined, chat: undefined, messageId: undefined, temporary: undefined, signal: maybe.signal,
  timeoutMs: maybe.number, environment: maybe.string });
await memory.addTurn({ dataset: "sam", role: "user", content: "hi", thread: maybe.string, at: new Date() });
await memory.recall({ query: "where", dataset: "sam", limit: maybe.number, budget: undefined, asOf: "2026-07-15" });
const page = await memory.listFacts("sam", { asOf: "2026-07-15", q: maybe.string, limit: maybe.number,
  includeInvalidated: undefined, entity: undefined, kind: undefined, entityType: undefined, order: undefined });
await memory.messages.index("sam", "hello", { role: undefined, at: "2026-07-01", temporary: undefined });
await memory.notes.save("sam", "Prefers tea", { namespace: maybe.string });
await memory.notes.search("sam", "tea", { namespace: undefined, limit: undefined });
await memory.core.write("sam", "/memories/a.md", "x", { expectedVersion: maybe.number, namespace: undefined });
await memory.core.render("sam", { namespaces: undefined, maxRender: undefined });
await memory.documents.write("run", "plan.md", "x", { expectedVersion: undefined, expiresIn: maybe.number });
await memory.erase.content("sam", "Lisbon", { dryRun: undefined, documentScopes: undefined, signal: maybe.signal });
const erasures = await memory.erase.log(maybe.string, { limit: maybe.number, offset: undefined });
const erasedKinds: ("fact" | "message" | "content" | "dataset" | undefined)[] = [erasures.erasures[0]?.kind];
void erasedKinds;
await memory.flush({ pollMs: undefined, timeoutMs: maybe.number });
await memory.asUser("sam", { role: undefined, expiresIn: undefined });
for await (const line of await memory.export({ dataset: maybe.string, includeVectors: undefined })) void line;

// A fact's state is one of five words.
const fact: Fact | undefined = page.facts[0];
const state: FactState | undefined = fact?.state;
const states: ("live" | "future" | "ended" | "superseded" | "deleted" | undefined)[] = [state];
// @ts-expect-error "expired" is no state
const wrong: FactState = "expired";
void states, wrong;

// The SDK's errors: an abort and a cut connection are KenningErrors, with the platform's error as cause.
try {
  await memory.health({ signal: AbortSignal.timeout(1000) });
} catch (error) {
  if (error instanceof AbortError || error instanceof ConnectionLost) console.log(error.code, error.cause);
  const base: KenningError | undefined = error instanceof ConnectionError ? error : undefined;
  void base;
}

// The AI SDK helpers: options may be undefined, UIMessages are taken, the tools are typed by name.
const turns = turnRecorder(memory, { dataset: "sam", thread: maybe.string, chat: undefined, onError: undefined });
declare const uiMessages: UIMessage[];
declare const modelMessages: ModelMessage[];
turns.user(uiMessages);
turns.user(modelMessages);
const system = await withCoreMemory(memory, "sam", "You are helpful.", { signal: maybe.signal, timeoutMs: undefined,
  onError: (error) => console.warn(error) });
const result = await generateText({ model, system, tools: kenningTools(memory, "sam", { anthropic, limit: maybe.number }),
  stopWhen: stepCountIs(5), prompt: "Where do I live?", onFinish: turns.onFinish });
for (const call of result.toolResults) {
  if (call.dynamic) continue;
  switch (call.toolName) {
    case "recall": {
      const context: string = call.output;
      const query: string = call.input.query;
      // @ts-expect-error recall answers a string
      const count: number = call.output;
      void context, query, count;
      break;
    }
    case "remember": {
      const id: string = call.output.note_id;
      const saved: true = call.output.saved;
      void id, saved;
      break;
    }
    case "memory": {
      const text: string = call.output;
      const command: "view" | "create" | "str_replace" | "insert" | "delete" | "rename" = call.input.command;
      void text, command;
      break;
    }
    // @ts-expect-error there is no such tool
    case "forget":
      break;
  }
}
const plain = kenningTools(memory, "sam");
// @ts-expect-error without `anthropic` there is no memory tool
void plain.memory;
const recall = recallTool(memory, "sam", { limit: undefined, budget: maybe.number });
void recall;
