/**
 * kenning for the Vercel AI SDK (`ai`, with `@ai-sdk/anthropic` for Claude's memory tool): give the model
 * the memory tool, a recall tool and a remember tool, put core memory in its instructions, and send each
 * finished turn to `addTurn` off the response path, where kenning's workers mine it for facts.
 *
 * ```ts
 * const memory = new Memory("http://127.0.0.1:8420", { apiKey });
 * const turns = turnRecorder(memory, { dataset: "sam", thread: "t1" });
 * turns.user(prompt);
 * const { text } = await generateText({
 *   model: anthropic("claude-sonnet-4-5"),
 *   system: await withCoreMemory(memory, "sam", "You are a helpful assistant."),
 *   tools: kenningTools(memory, "sam", { anthropic }),
 *   stopWhen: stepCountIs(5),
 *   prompt,
 *   onFinish: turns.onFinish,
 * });
 * ```
 */
import { jsonSchema, tool, type ModelMessage, type Tool } from "ai";
import type { Memory, MemoryCommand, Role } from "./client.js";

/** What `anthropic.tools.memory_20250818` needs of a provider: `@ai-sdk/anthropic`'s `anthropic`, or one made by `createAnthropic`. */
export interface AnthropicTools {
  tools: { memory_20250818: (options: { execute: (input: MemoryCommand, options: { abortSignal?: AbortSignal }) => Promise<string> }) => Tool };
}

/**
 * Claude's memory tool (memory_20250818) backed by kenning: files under /memories live in the dataset's core
 * memory, versioned, with the SDK's own command semantics. A failed command throws with the text Claude
 * should see, which the AI SDK sends back as an error result.
 */
export function memoryTool(memory: Memory, dataset: string, options: { anthropic: AnthropicTools; namespace?: string }): Tool {
  return options.anthropic.tools.memory_20250818({
    execute: (command: MemoryCommand, { abortSignal }: { abortSignal?: AbortSignal }) =>
      memory.memoryTool(dataset, command, { namespace: options.namespace, signal: abortSignal }),
  });
}

/** A `recall` tool for any model: the context block of what is remembered that bears on the query. */
export function recallTool(memory: Memory, dataset: string, options: { limit?: number; budget?: number } = {}) {
  return tool({
    description: "Recall what is remembered about the user that bears on a question: facts (with when they held), "
      + "notes and earlier messages. Use it before answering anything personal.",
    inputSchema: jsonSchema<{ query: string }>({
      type: "object",
      properties: { query: { type: "string", minLength: 1, description: "the question, or the user's message" } },
      required: ["query"],
      additionalProperties: false,
    }),
    execute: async ({ query }: { query: string }, { abortSignal }: { abortSignal?: AbortSignal }) => {
      const found = await memory.recall({ query, dataset, limit: options.limit, budget: options.budget, signal: abortSignal });
      return found.context || "Nothing is remembered about that.";
    },
  });
}

/** A `remember` tool for any model: keep a note the user asked to be remembered (a repeat returns the same note). */
export function rememberTool(memory: Memory, dataset: string, options: { namespace?: string } = {}) {
  return tool({
    description: "Save something to long-term memory about the user, as a sentence that stands on its own "
      + "(\"Prefers replies in Portuguese\").",
    inputSchema: jsonSchema<{ text: string }>({
      type: "object",
      properties: { text: { type: "string", minLength: 1, description: "what to keep" } },
      required: ["text"],
      additionalProperties: false,
    }),
    execute: async ({ text }: { text: string }, { abortSignal }: { abortSignal?: AbortSignal }) => {
      const note = await memory.notes.save(dataset, text, { namespace: options.namespace, signal: abortSignal });
      return { saved: true, note_id: note.note_id, text: note.text };
    },
  });
}

/** `recall` and `remember`, plus `memory` (Claude's memory tool) when given `anthropic`. */
export function kenningTools(memory: Memory, dataset: string, options: { anthropic?: AnthropicTools; namespace?: string;
  limit?: number; budget?: number } = {}): Record<string, Tool> {
  const tools: Record<string, Tool> = {
    recall: recallTool(memory, dataset, { limit: options.limit, budget: options.budget }),
    remember: rememberTool(memory, dataset, { namespace: options.namespace }),
  };
  if (options.anthropic) tools.memory = memoryTool(memory, dataset, { anthropic: options.anthropic, namespace: options.namespace });
  return tools;
}

/** `system` followed by the dataset's core memory (`core.render`), for the model's instructions. */
export async function withCoreMemory(memory: Memory, dataset: string, system = "", options: { namespaces?: string[]; maxRender?: number; signal?: AbortSignal } = {}): Promise<string> {
  const core = await memory.core.render(dataset, options);
  return [system, core].filter((part) => part.trim()).join("\n\n");
}

/** The text of the last user message of a prompt (its text parts joined). */
export function lastUserText(messages: readonly ModelMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
  }
  return undefined;
}

export interface TurnRecorder {
  /** Queue the user's turn (a string, or the prompt's messages: the last user message is taken). */
  user(content: string | readonly ModelMessage[]): void;
  /** Queue the assistant's answer; pass as `onFinish` to `generateText` or `streamText`. */
  onFinish(result: { text: string }): void;
  /** Resolves when every turn queued so far has reached the server (for tests and shutdown). */
  settled(): Promise<void>;
}

/**
 * Sends each finished turn to `addTurn` without making the response wait: the calls run in the background,
 * and a failure goes to `onError` (default: console.error) instead of the user's answer. The server keeps the
 * turn durably and mines user turns for facts; `memory.status(requestId)` tells when they are searchable.
 */
export function turnRecorder(memory: Memory, options: { dataset: string; thread?: string; chat?: string;
  onError?: (error: unknown) => void }): TurnRecorder {
  const report = options.onError ?? ((error: unknown) => console.error("kenning: a turn was not recorded:", error));
  const onError = (error: unknown) => {
    try { report(error); } catch { /* a failing handler must not stop the turns after it */ }
  };
  // Turns are stamped when they happen and sent one after another, so the server keeps them in the order
  // they were said even when the answer finishes before the user's turn has been sent.
  let last = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const send = (role: Role, content: string | undefined) => {
    if (!content || !content.trim()) return;
    last = Math.max(Date.now(), last + 1);
    const at = new Date(last);
    chain = chain.then(() => memory.addTurn({ dataset: options.dataset, role, content, thread: options.thread,
      chat: options.chat, at }).catch(onError));
  };
  return {
    user: (content) => send("user", typeof content === "string" ? content : lastUserText(content)),
    onFinish: (result) => send("assistant", result.text),
    settled: async () => { await chain; },
  };
}
