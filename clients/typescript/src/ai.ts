/**
 * kenning for the Vercel AI SDK (`ai`, with `@ai-sdk/anthropic` for Claude's memory tool): give the model
 * the memory tool, a recall tool and a remember tool, put core memory in its instructions, and send each
 * finished turn to `addTurn` off the response path, where kenning's workers mine it for facts. Nothing here
 * throws into the answer: without a server the instructions go out without core memory, and a turn that cannot
 * be recorded is reported to `onError`.
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
import { jsonSchema, tool, type ModelMessage, type Tool, type UIMessage } from "ai";
import type { Memory, MemoryCommand, Role } from "./client.js";
import { InputError } from "./errors.js";

/**
 * What `anthropic.tools.memory_20250818` needs of a provider: `@ai-sdk/anthropic`'s `anthropic`, or one made by
 * `createAnthropic`. The tool it makes is taken as any object: `@ai-sdk/anthropic` may bring its own copy of
 * `@ai-sdk/provider-utils`, whose `Tool` type TypeScript tells apart from `ai`'s though the objects are the same.
 */
export interface AnthropicTools {
  tools: { memory_20250818: (options: { execute: (input: MemoryCommand, options: { abortSignal?: AbortSignal | undefined })
    => Promise<string> }) => object };
}

/** The `recall` tool: a query in, the context block out. */
export type RecallTool = Tool<{ query: string }, string>;
/** The `remember` tool: a sentence in, the note it was kept as out. */
export type RememberTool = Tool<{ text: string }, { saved: true; note_id: string; text: string }>;
/** Claude's memory tool: a memory_20250818 command in, the text Claude sees out. */
export type MemoryTool = Tool<MemoryCommand, string>;
/** What `kenningTools` returns without `anthropic` (a type, not an interface, so it is a `ToolSet`). */
export type KenningTools = { recall: RecallTool; remember: RememberTool };
/** What `kenningTools` returns with `anthropic`. */
export type KenningToolsWithMemory = KenningTools & { memory: MemoryTool };

export interface KenningToolsOptions {
  /** `@ai-sdk/anthropic`'s provider: adds `memory`, Claude's memory tool. */
  anthropic?: AnthropicTools | undefined;
  /** The namespace notes and core files are kept in (default `user`). */
  namespace?: string | undefined;
  /** Items in the recall tool's ranked list. */
  limit?: number | undefined;
  /** The recall tool's context block size cap. */
  budget?: number | undefined;
}

/**
 * Claude's memory tool (memory_20250818) backed by kenning: files under /memories live in the dataset's core
 * memory, versioned, with the SDK's own command semantics. A failed command throws with the text Claude
 * should see, which the AI SDK sends back as an error result.
 */
export function memoryTool(memory: Memory, dataset: string, options: { anthropic: AnthropicTools;
  namespace?: string | undefined }): MemoryTool {
  return options.anthropic.tools.memory_20250818({
    execute: (command: MemoryCommand, { abortSignal }: { abortSignal?: AbortSignal | undefined }) =>
      memory.memoryTool(dataset, command, { namespace: options.namespace, signal: abortSignal }),
  }) as MemoryTool;   // the provider's Tool<MemoryCommand, string>, in `ai`'s type
}

/** A `recall` tool for any model: the context block of what is remembered that bears on the query. */
export function recallTool(memory: Memory, dataset: string, options: { limit?: number | undefined;
  budget?: number | undefined } = {}): RecallTool {
  return tool({
    description: "Recall what is remembered about the user that bears on a question: facts (with when they held), "
      + "notes and earlier messages. Use it before answering anything personal.",
    inputSchema: jsonSchema<{ query: string }>({
      type: "object",
      properties: { query: { type: "string", minLength: 1, description: "the question, or the user's message" } },
      required: ["query"],
      additionalProperties: false,
    }),
    execute: async ({ query }: { query: string }, { abortSignal }: { abortSignal?: AbortSignal | undefined }) => {
      const found = await memory.recall({ query, dataset, limit: options.limit, budget: options.budget, signal: abortSignal });
      return found.context || "Nothing is remembered about that.";
    },
  });
}

/** A `remember` tool for any model: keep a note the user asked to be remembered (a repeat returns the same note). */
export function rememberTool(memory: Memory, dataset: string, options: { namespace?: string | undefined } = {}): RememberTool {
  return tool({
    description: "Save something to long-term memory about the user, as a sentence that stands on its own "
      + "(\"Prefers replies in Portuguese\").",
    inputSchema: jsonSchema<{ text: string }>({
      type: "object",
      properties: { text: { type: "string", minLength: 1, description: "what to keep" } },
      required: ["text"],
      additionalProperties: false,
    }),
    execute: async ({ text }: { text: string }, { abortSignal }: { abortSignal?: AbortSignal | undefined }) => {
      const note = await memory.notes.save(dataset, text, { namespace: options.namespace, signal: abortSignal });
      return { saved: true as const, note_id: note.note_id, text: note.text };
    },
  });
}

/**
 * `recall` and `remember`, plus `memory` (Claude's memory tool) when given `anthropic`. Each tool is typed with
 * its input and output, so `generateText`'s tool calls and results are typed by tool name.
 */
export function kenningTools(memory: Memory, dataset: string, options: KenningToolsOptions & { anthropic: AnthropicTools }): KenningToolsWithMemory;
export function kenningTools(memory: Memory, dataset: string, options?: KenningToolsOptions): KenningTools;
export function kenningTools(memory: Memory, dataset: string, options: KenningToolsOptions = {}): KenningTools | KenningToolsWithMemory {
  const tools: KenningTools = {
    recall: recallTool(memory, dataset, { limit: options.limit, budget: options.budget }),
    remember: rememberTool(memory, dataset, { namespace: options.namespace }),
  };
  if (!options.anthropic) return tools;
  return { ...tools, memory: memoryTool(memory, dataset, { anthropic: options.anthropic, namespace: options.namespace }) };
}

/** Failures the AI SDK helpers report instead of throwing into the answer; default: console.error. */
export type OnError = (error: unknown) => void;

/** Calls `handler` with `error`; a handler that throws is ignored, so it cannot break the answer either. */
function reporter(handler: OnError | undefined, what: string): OnError {
  const report = handler ?? ((error: unknown) => console.error(`kenning: ${what}:`, error));
  return (error) => {
    try { report(error); } catch { /* a failing handler must not take the answer, or the turns after it */ }
  };
}

/**
 * `system` followed by the dataset's core memory (`core.render`), for the model's instructions. When the core
 * memory cannot be read (the server is down, slow past `timeoutMs`, refuses the key), the answer goes on
 * without it: the error goes to `onError` (default: console.error) and `system` alone comes back. Only the
 * caller's own abort (`signal`) is thrown.
 */
export async function withCoreMemory(memory: Memory, dataset: string, system = "", options: {
  namespaces?: string[] | undefined; maxRender?: number | undefined; signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined; onError?: OnError | undefined } = {}): Promise<string> {
  let core = "";
  try {
    core = await memory.core.render(dataset, { namespaces: options.namespaces, maxRender: options.maxRender,
      signal: options.signal, timeoutMs: options.timeoutMs });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    reporter(options.onError, "core memory was left out of the instructions")(error);
  }
  return [system, core].filter((part) => part.trim()).join("\n\n");
}

/** A message of a prompt: the AI SDK's `ModelMessage` (with `content`) or `UIMessage` (with `parts`). */
export type PromptMessage = ModelMessage | UIMessage;

/** The text of the last user message (its text parts joined), from ModelMessages or UIMessages. */
export function lastUserText(messages: readonly PromptMessage[]): string | undefined {
  if (!Array.isArray(messages)) {
    throw new InputError(`expected a string, ModelMessage[] or UIMessage[], not ${describe(messages)}`);
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!message || typeof message !== "object" || (message as { role?: unknown }).role !== "user") continue;
    const { parts, content } = message as { parts?: unknown; content?: unknown };
    if (Array.isArray(parts)) return textParts(parts);               // a UIMessage
    if (typeof content === "string") return content;                  // a ModelMessage
    if (Array.isArray(content)) return textParts(content);
    throw new InputError(`a user message has neither content (ModelMessage) nor parts (UIMessage): ${describe(message)}`);
  }
  return undefined;
}

function textParts(parts: readonly unknown[]): string {
  return parts.flatMap((part) => {
    const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
    return type === "text" && typeof text === "string" ? [text] : [];
  }).join("\n");
}

function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return String(value);
  try { return JSON.stringify(value).slice(0, 120); } catch { return Object.prototype.toString.call(value); }
}

export interface TurnRecorder {
  /** Queue the user's turn: a string, or the prompt's messages (`ModelMessage[]` or `UIMessage[]`: the last user
   * message is taken). Never throws: what cannot be read goes to `onError`. */
  user(content: string | readonly PromptMessage[]): void;
  /** Queue the assistant's answer; pass as `onFinish` to `generateText` or `streamText`. */
  onFinish(result: { text: string }): void;
  /** Resolves when every turn queued so far has reached the server (for tests and shutdown). */
  settled(): Promise<void>;
}

/**
 * Sends each finished turn to `addTurn` without making the response wait: the calls run in the background,
 * and a failure goes to `onError` (default: console.error) instead of the user's answer, whether the server
 * refused the turn or the turn could not be read. The server keeps the turn durably and mines user turns for
 * facts; `memory.status(requestId)` tells when they are searchable.
 */
export function turnRecorder(memory: Memory, options: { dataset: string; thread?: string | undefined;
  chat?: string | undefined; onError?: OnError | undefined }): TurnRecorder {
  const onError = reporter(options.onError, "a turn was not recorded");
  // Turns are stamped when they happen and sent one after another, so the server keeps them in the order
  // they were said even when the answer finishes before the user's turn has been sent.
  let last = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const send = (role: Role, content: () => string | undefined) => {
    let text: string | undefined;
    try {
      text = content();
      if (text !== undefined && typeof text !== "string") throw new InputError(`a turn's text is ${describe(text)}, not a string`);
    } catch (error) {
      onError(error);
      return;
    }
    if (!text || !text.trim()) return;
    last = Math.max(Date.now(), last + 1);
    const at = new Date(last);
    chain = chain.then(() => memory.addTurn({ dataset: options.dataset, role, content: text, thread: options.thread,
      chat: options.chat, at })).catch(onError);
  };
  return {
    user: (content) => send("user", () => (typeof content === "string" ? content : lastUserText(content))),
    onFinish: (result) => send("assistant", () => {
      if (!result || typeof result !== "object") throw new InputError(`onFinish takes the AI SDK's result, not ${describe(result)}`);
      return result.text;
    }),
    settled: async () => { await chain; },
  };
}
