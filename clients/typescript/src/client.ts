/**
 * The kenning client: the operations of the Python SDK (`kenning.Memory("http://…")`) in camelCase, over the
 * server's HTTP API. Answers are the API's JSON as typed by the server's OpenAPI document (`openapi.ts`): times
 * are ISO 8601 strings, field names are the API's (snake_case), as every other client of the API sees them.
 */
import type { components } from "./openapi.js";
import { type CallOptions, type ClientOptions, Http, type Query, sleep } from "./http.js";
import { InputError, MemoryToolError, TimeoutError } from "./errors.js";

type Schemas = components["schemas"];
export type AddResult = Schemas["AddResult"];
export type Receipt = Schemas["Receipt"];
export type MemoryStatus = Schemas["MemoryStatus"];
export type RecallResult = Schemas["RecallResult"];
export type RecallItem = Schemas["RecallItem"];
export type Fact = Schemas["Fact"];
/** Where a fact stands as of the listing's `asOf`, the recall's time, or now. */
export type FactState = Fact["state"];
export type FactPage = Schemas["FactPage"];
export type Entity = Schemas["Entity"];
export type Job = Schemas["Job"];
export type DatasetPage = Schemas["DatasetPage"];
export type Episode = Schemas["Episode"];
export type MessageHit = Schemas["MessageHit"];
export type ChatPage = Schemas["ChatPage"];
export type MessagePage = Schemas["MessagePage"];
export type Note = Schemas["Note"];
export type NoteHit = Schemas["NoteHit"];
export type CoreFile = Schemas["CoreFile"];
export type CoreFileVersion = Schemas["CoreFileVersion"];
export type Document = Schemas["Document"];
export type Health = Schemas["Health"];
export type ErasureReceipt = Schemas["ErasureReceipt"];
export type ErasureRecord = Schemas["ErasureRecord"];
export type ErasurePage = Schemas["ErasurePage"];

/** A time: an ISO 8601 string (`2026-07-01T10:00:00Z`), a date (`2026-07-01`: midnight UTC), or a Date. */
export type Time = string | Date;
/** A memory_20250818 tool call's input, as Claude sends it (exactly `@ai-sdk/anthropic`'s type for it). */
export type MemoryCommand =
  | { command: "view"; path: string; view_range?: [number, number] }
  | { command: "create"; path: string; file_text: string }
  | { command: "str_replace"; path: string; old_str: string; new_str: string }
  | { command: "insert"; path: string; insert_line: number; insert_text: string }
  | { command: "delete"; path: string }
  | { command: "rename"; old_path: string; new_path: string };

export type Role = "user" | "assistant" | "system" | "tool";
export type Namespaced = CallOptions & { namespace?: string | undefined };

const q = encodeURIComponent;   // an empty, "." or ".." segment, or an encoded "/", is refused by HttpClient.send
const iso = (t: Time | undefined) => (t instanceof Date ? t.toISOString() : t);
function call(options: CallOptions | undefined): CallOptions {
  const { signal, timeoutMs, environment } = options ?? {};
  return { signal, timeoutMs, environment };
}
/** A request body checked against the server's schema for it (a renamed field fails to compile after
 * `npm run generate`); fields left undefined are not sent, so the server's defaults apply. */
function typed<K extends keyof Schemas>(fields: Schemas[K]): Schemas[K] {
  return fields;
}

/** kenning over HTTP. `new Memory("http://127.0.0.1:8420", { apiKey })`. */
export class Memory {
  readonly url: string;
  readonly messages: Messages;
  readonly notes: Notes;
  readonly core: Core;
  readonly documents: Documents;
  readonly erase: Erase;
  /** @internal */
  readonly http: Http;

  constructor(url: string, options: ClientOptions = {}) {
    this.http = new Http(url, options);
    this.url = this.http.url;
    this.messages = new Messages(this.http);
    this.notes = new Notes(this.http);
    this.core = new Core(this.http);
    this.documents = new Documents(this.http);
    this.erase = new Erase(this.http);
  }

  /** Mine one message now: facts extracted, deduplicated, superseded; the receipt says what happened. */
  add(input: { text: string; dataset: string; at?: Time | undefined; clientRef?: string | undefined;
    role?: Role | undefined; chat?: string | undefined; messageId?: string | undefined; temporary?: boolean | undefined }
    & CallOptions): Promise<AddResult> {
    return this.http.send({ method: "POST", path: "/v1/memory/add", json: typed<"AddBody">({
      text: input.text, dataset: input.dataset, at: iso(input.at), client_ref: input.clientRef, role: input.role,
      chat: input.chat, message_id: input.messageId, temporary: input.temporary }) }, call(input));
  }

  /** Queue a turn and return at once (`status: "processing"`); a worker mines it. */
  addTurn(input: { dataset: string; role: Role; content: string; thread?: string | undefined;
    clientRef?: string | undefined; at?: Time | undefined; chat?: string | undefined; temporary?: boolean | undefined;
    messageId?: string | undefined } & CallOptions): Promise<Receipt> {
    return this.http.send({ method: "POST", path: "/v1/memory/add_turn", json: typed<"AddTurnBody">({
      dataset: input.dataset, role: input.role, content: input.content, thread: input.thread,
      client_ref: input.clientRef, at: iso(input.at), chat: input.chat, temporary: input.temporary,
      message_id: input.messageId }) }, call(input));
  }

  /** A queued turn's progress (`status(requestId)`), or a fact's (`status({ memoryId })`). */
  status(requestId: string, options?: CallOptions): Promise<Receipt>;
  status(which: { memoryId: string } & CallOptions): Promise<MemoryStatus>;
  async status(which: string | ({ memoryId: string } & CallOptions), options?: CallOptions): Promise<Receipt | MemoryStatus> {
    const id = typeof which === "string" ? which : which?.memoryId;
    if (!id) throw new InputError("pass a request id or { memoryId }");
    return this.http.send({ method: "GET", path: `/v1/memory/status/${q(id)}` },
      call(typeof which === "string" ? options : which));
  }

  /** Wait until no queued turn is left (polls `GET /v1/jobs/open`): for scripts and tests. */
  async flush(options: CallOptions & { pollMs?: number | undefined } = {}): Promise<void> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const open = await this.http.send<{ count: number }>({ method: "GET", path: "/v1/jobs/open" },
        { signal: options.signal, environment: options.environment });
      if (open.count === 0) return;
      if (Date.now() > deadline) throw new TimeoutError(`${open.count} job(s) still open after ${options.timeoutMs} ms`);
      await sleep(options.pollMs ?? 50, options.signal);
    }
  }

  /** What is remembered that bears on `query`: ranked facts, notes, messages and a context block. */
  recall(input: { query: string; dataset: string; limit?: number | undefined; budget?: number | undefined;
    asOf?: Time | undefined } & CallOptions): Promise<RecallResult> {
    return this.http.send({ method: "POST", path: "/v1/recall", json: typed<"RecallBody">({
      query: input.query, dataset: input.dataset, limit: input.limit, budget: input.budget, as_of: iso(input.asOf) }) },
    call(input));
  }

  /** Facts live now, live `asOf` a time, or the whole history (`includeInvalidated`). */
  listFacts(dataset: string, options: { q?: string | undefined; limit?: number | undefined;
    offset?: number | undefined; includeInvalidated?: boolean | undefined; asOf?: Time | undefined;
    entity?: string | undefined; kind?: string | undefined; entityType?: string | undefined;
    messageId?: string | undefined; order?: "time" | "anchor" | "slot" | undefined } & CallOptions = {}): Promise<FactPage> {
    const query: Query = { q: options.q, limit: options.limit, offset: options.offset,
      include_invalidated: options.includeInvalidated, as_of: iso(options.asOf), entity: options.entity,
      kind: options.kind, entity_type: options.entityType, message_id: options.messageId, order: options.order };
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/facts`, query }, call(options));
  }

  listEntities(dataset: string, options: { type?: string | undefined } & CallOptions = {}): Promise<Entity[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/entities`, query: { type: options.type } },
      call(options));
  }

  /** Soft delete: the fact leaves every live view and stays in the history. */
  deleteFact(dataset: string, factId: string, options?: CallOptions): Promise<void> {
    return this.http.send({ method: "DELETE", path: `/v1/datasets/${q(dataset)}/facts/${q(factId)}`, read: "none" },
      call(options));
  }

  /** Compute the vectors still missing; the number of facts embedded. */
  async embedPending(options?: CallOptions): Promise<number> {
    return (await this.http.send<{ count: number }>({ method: "POST", path: "/v1/embed_pending" }, call(options))).count;
  }

  /** Queue the failed jobs again (of one dataset, or all); how many. */
  async retryFailed(dataset?: string, options?: CallOptions): Promise<number> {
    return (await this.http.send<{ count: number }>({ method: "POST", path: "/v1/jobs/retry_failed",
      json: typed<"RetryBody">({ dataset: dataset ?? null }) }, call(options))).count;
  }

  jobs(options: { dataset?: string | undefined; status?: "queued" | "distilling" | "done" | "failed" | undefined;
    limit?: number | undefined; offset?: number | undefined } & CallOptions = {}): Promise<Job[]> {
    return this.http.send({ method: "GET", path: "/v1/jobs", query: { dataset: options.dataset, status: options.status,
      limit: options.limit, offset: options.offset } }, call(options));
  }

  /** The end users holding anything, with their counts (`q`: part of the name). */
  datasets(options: { q?: string | undefined; limit?: number | undefined;
    offset?: number | undefined } & CallOptions = {}): Promise<DatasetPage> {
    return this.http.send({ method: "GET", path: "/v1/datasets", query: { q: options.q, limit: options.limit,
      offset: options.offset } }, call(options));
  }

  /** Erase one end user for good (a service key); the rows removed, by kind. */
  /** Mine the dataset's kept user messages again, in the order said: after an extraction failed, or with another
   * extractor. Default: those no fact cites; `messageIds` for some, `allMessages` for every one; at most `limit`
   * (100) per call from `offset`. The service's call. */
  remine(dataset: string, options: { messageIds?: string[] | undefined; allMessages?: boolean | undefined;
    limit?: number | undefined; offset?: number | undefined }
    & CallOptions = {}): Promise<AddResult[]> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/remine`,
      json: typed<"RemineBody">({ message_ids: options.messageIds ?? null, all_messages: options.allMessages ?? false,
        limit: options.limit ?? 100, offset: options.offset ?? 0 }) }, call(options));
  }

  deleteDataset(dataset: string, options?: CallOptions): Promise<Record<string, number>> {
    return this.http.send({ method: "DELETE", path: `/v1/datasets/${q(dataset)}` }, call(options));
  }

  /** Run one memory_20250818 command as Claude sent it; its text, or MemoryToolError with the text to send back. */
  memoryTool(dataset: string, command: MemoryCommand | Record<string, unknown>, options?: Namespaced): Promise<string> {
    return this.core.memoryTool(dataset, command, options);
  }

  /** Every record as JSON lines (`for await (const line of memory.export())`), for `import` elsewhere. */
  export(options: { dataset?: string | undefined;
    includeVectors?: boolean | undefined } & CallOptions = {}): Promise<AsyncIterable<string>> {
    return this.http.send({ method: "GET", path: "/v1/export", read: "lines",
      query: { dataset: options.dataset, include_vectors: options.includeVectors } }, call(options));
  }

  /** Load an export (its text, its lines, or an async stream of them) into the key's project; the rows imported, by kind. */
  async import(lines: string | Iterable<string> | AsyncIterable<string>, options: { embed?: boolean | undefined } & CallOptions = {}): Promise<Record<string, number>> {
    let text = "";
    if (typeof lines === "string") text = lines.endsWith("\n") ? lines : `${lines}\n`;
    else for await (const line of lines) text += line.endsWith("\n") ? line : `${line}\n`;
    return this.http.send({ method: "POST", path: "/v1/import", ndjson: text, query: { embed: options.embed } },
      call(options));
  }

  /** A client acting as one end user: mints a user token (bound to `dataset`) with this client's service key. */
  async asUser(dataset: string, options: { role?: "member" | "admin" | "owner" | undefined;
    expiresIn?: number | undefined } & CallOptions = {}): Promise<Memory> {
    const minted = await this.http.send<{ token: string }>({ method: "POST", path: "/v1/tokens",
      json: typed<"TokenBody">({ dataset, role: options.role ?? "member", expires_in: options.expiresIn }) }, call(options));
    return new Memory(this.url, { ...this.http.options, apiKey: minted.token });
  }

  health(options?: CallOptions): Promise<Health> {
    return this.http.send({ method: "GET", path: "/v1/health" }, call(options));
  }

  /** Nothing to release (fetch keeps no client); here so code written for the Python SDK reads the same. */
  close(): void {}
}

class Part {
  constructor(protected readonly http: Http) {}
}

export class Messages extends Part {
  /** Keep a message searchable without mining it; null for a temporary chat. */
  index(dataset: string, content: string, options: { role?: Role | undefined; chat?: string | undefined;
    messageId?: string | undefined; at?: Time | undefined; temporary?: boolean | undefined } & CallOptions = {}):
    Promise<Episode | null> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/messages`, json: typed<"MessageBody">({ content,
      role: options.role, chat: options.chat, message_id: options.messageId, at: iso(options.at),
      temporary: options.temporary }) }, call(options));
  }

  get(dataset: string, messageId: string, options?: CallOptions): Promise<Episode> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/messages/${q(messageId)}` }, call(options));
  }

  /** The dataset's conversations, latest first, with their counts (`chat: null`: the messages of no chat). */
  chats(dataset: string, options: { limit?: number | undefined;
    offset?: number | undefined } & CallOptions = {}): Promise<ChatPage> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/chats`,
      query: { limit: options.limit, offset: options.offset } }, call(options));
  }

  /** One conversation oldest first (`chat` null: the messages of no chat). */
  thread(dataset: string, chat: string | null, options: { limit?: number | undefined;
    offset?: number | undefined } & CallOptions = {}): Promise<MessagePage> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/thread`,
      query: { chat: chat ?? undefined, limit: options.limit, offset: options.offset } }, call(options));
  }

  search(dataset: string, query: string, options: { excludeChat?: string | undefined;
    limit?: number | undefined } & CallOptions = {}): Promise<MessageHit[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/messages/search`,
      query: { q: query, exclude_chat: options.excludeChat, limit: options.limit } }, call(options));
  }

  /** Remove a message for good with the facts mined from it; a value they superseded is live again.
   * Resolves to the rows removed per kind (`messages`, `facts`, `entities`, `jobs`) and the facts `restored`. */
  delete(dataset: string, messageId: string, options?: CallOptions): Promise<Record<string, number>> {
    return this.http.send({ method: "DELETE", path: `/v1/datasets/${q(dataset)}/messages/${q(messageId)}` },
      call(options));
  }

  /** `delete` for every message of one chat, and its turns still queued. */
  deleteChat(dataset: string, chat: string, options?: CallOptions): Promise<Record<string, number>> {
    return this.http.send({ method: "DELETE", path: `/v1/datasets/${q(dataset)}/chats/${q(chat)}` }, call(options));
  }
}

/** `dryRun`: only say what would be erased; nothing is removed or logged (the receipt's `erasure_id` is null). */
export type EraseOptions = CallOptions & { dryRun?: boolean | undefined };

export class Erase extends Part {
  /** Erase a fact and every version of its value, and cut its quoted words out of the message they came from
   * (unlike `deleteFact`, nothing stays in the history). Resolves to the receipt of what went. */
  fact(dataset: string, factId: string, options: EraseOptions = {}): Promise<ErasureReceipt> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/erase/facts/${q(factId)}`,
      json: typed<"EraseBody">({ dry_run: options.dryRun ?? false }) }, call(options));
  }

  /** Erase a message (its vector and keyword entries too), every fact that cites it, and the turns that carried it. */
  message(dataset: string, messageId: string, options: EraseOptions = {}): Promise<ErasureReceipt> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/erase/messages/${q(messageId)}`,
      json: typed<"EraseBody">({ dry_run: options.dryRun ?? false }) }, call(options));
  }

  /** Erase every fact, message, note, entity, core-file line and turn of the dataset holding `text`
   * (case-insensitively), the documents holding it under `documentScopes` (a service key's), and with
   * `organization` the organization memory's notes and core files (the manage permission). Dry run first. */
  content(dataset: string, text: string,
    options: EraseOptions & { documentScopes?: string[] | undefined; organization?: boolean | undefined } = {}):
    Promise<ErasureReceipt> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/erase/content`,
      json: typed<"EraseContentBody">({ text, dry_run: options.dryRun ?? false,
        document_scopes: options.documentScopes ?? [], organization: options.organization ?? false }) },
      call(options));
  }

  /** Erase everything kept about one end user, as `deleteDataset` does, with a receipt and a log entry; a user
   * token may erase its own dataset. */
  dataset(dataset: string, options: EraseOptions = {}): Promise<ErasureReceipt> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/erase`,
      json: typed<"EraseBody">({ dry_run: options.dryRun ?? false }) }, call(options));
  }

  /** The erasure log, newest first: ids, counts and SHA-256 hashes of what each erasure removed, who asked and
   * when, never the erased text. One dataset's, or (no dataset: a service key) the whole project's. */
  log(dataset?: string | null, options: { limit?: number | undefined;
    offset?: number | undefined } & CallOptions = {}): Promise<ErasurePage> {
    const path = dataset === undefined || dataset === null ? "/v1/erasures" : `/v1/datasets/${q(dataset)}/erasures`;
    return this.http.send({ method: "GET", path, query: { limit: options.limit, offset: options.offset } },
      call(options));
  }

  /** Rewrite what deferred erasures left pending so their bytes leave the store's files (a service key); false
   * when a table's lock was not granted in time (try again). */
  async compact(options?: CallOptions): Promise<boolean> {
    return (await this.http.send<{ compacted: boolean }>({ method: "POST", path: "/v1/erasures/compact" },
      call(options))).compacted;
  }
}

export class Notes extends Part {
  /** Keep a note; saving a text the namespace already holds returns that note. */
  save(dataset: string, text: string, options?: Namespaced): Promise<Note> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/notes`,
      json: typed<"NoteBody">({ text, namespace: options?.namespace ?? "user" }) }, call(options));
  }

  /** Save many, skipping near-duplicates of kept notes. */
  saveExtracted(dataset: string, texts: string[], options: Namespaced & { dedupeThreshold?: number | undefined } = {}): Promise<Note[]> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/notes/extracted`,
      json: typed<"NotesBody">({ texts, namespace: options.namespace ?? "user", dedupe_threshold: options.dedupeThreshold }) }, call(options));
  }

  search(dataset: string, query: string, options: { limit?: number | undefined;
    namespace?: string | string[] | undefined } & CallOptions = {}): Promise<NoteHit[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/notes/search`,
      query: { q: query, limit: options.limit, namespace: options.namespace } }, call(options));
  }

  list(dataset: string, options: { namespace?: string | undefined; includeForgotten?: boolean | undefined;
    limit?: number | undefined; offset?: number | undefined } & CallOptions = {}): Promise<Note[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/notes`, query: {
      namespace: options.namespace, include_forgotten: options.includeForgotten, limit: options.limit,
      offset: options.offset } }, call(options));
  }

  /** Forget a note (it leaves search; kept, marked forgotten), optionally pointing to the note replacing it. */
  forget(dataset: string, noteId: string, options: { supersededBy?: string | undefined } & CallOptions = {}): Promise<void> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/notes/${q(noteId)}/forget`,
      json: typed<"ForgetBody">({ superseded_by: options.supersededBy ?? null }), read: "none" }, call(options));
  }
}

export class Core extends Part {
  async memoryTool(dataset: string, command: MemoryCommand | Record<string, unknown>, options?: Namespaced): Promise<string> {
    const result = await this.http.send<{ content: string; is_error: boolean }>({ method: "POST",
      path: `/v1/datasets/${q(dataset)}/memory_tool`, json: typed<"ToolBody">({ command, namespace: options?.namespace ?? "user" }) },
    call(options));
    if (result.is_error) throw new MemoryToolError(result.content);
    return result.content;
  }

  async view(dataset: string, path = "/memories", options?: Namespaced): Promise<string> {
    return (await this.http.send<{ text: string }>({ method: "GET", path: `/v1/datasets/${q(dataset)}/core/view`,
      query: { path, namespace: options?.namespace ?? "user" } }, call(options))).text;
  }

  read(dataset: string, path: string, options?: Namespaced): Promise<CoreFile> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/core/file`,
      query: { path, namespace: options?.namespace ?? "user" } }, call(options));
  }

  list(dataset: string, options?: Namespaced): Promise<CoreFile[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/core`,
      query: { namespace: options?.namespace ?? "user" } }, call(options));
  }

  /** The kept versions, oldest first unless `newestFirst`. */
  history(dataset: string, path: string, options: Namespaced & { limit?: number | undefined;
    offset?: number | undefined; newestFirst?: boolean | undefined } = {}): Promise<CoreFileVersion[]> {
    return this.http.send({ method: "GET", path: `/v1/datasets/${q(dataset)}/core/history`, query: {
      path, namespace: options.namespace ?? "user", limit: options.limit, offset: options.offset || undefined,
      newest_first: options.newestFirst || undefined } }, call(options));
  }

  /** Create or overwrite; with `expectedVersion`, only if the file is still at it (0: must not exist), else MemoryConflict. */
  write(dataset: string, path: string, text: string, options: Namespaced & { expectedVersion?: number | undefined } = {}): Promise<CoreFile> {
    return this.http.send({ method: "PUT", path: `/v1/datasets/${q(dataset)}/core/file`, json: typed<"CoreWriteBody">({ path, text,
      expected_version: options.expectedVersion ?? null, namespace: options.namespace ?? "user" }) }, call(options));
  }

  strReplace(dataset: string, path: string, old: string, replacement = "", options: Namespaced & { expectedVersion?: number | undefined } = {}): Promise<CoreFile> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/core/str_replace`, json: typed<"ReplaceBody">({ path, old,
      new: replacement, expected_version: options.expectedVersion ?? null, namespace: options.namespace ?? "user" }) },
    call(options));
  }

  insert(dataset: string, path: string, line: number, text: string, options?: Namespaced): Promise<CoreFile> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/core/insert`, json: typed<"InsertBody">({ path, line, text,
      namespace: options?.namespace ?? "user" }) }, call(options));
  }

  remove(dataset: string, path: string, options?: Namespaced): Promise<void> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/core/remove`, json: typed<"PathBody">({ path,
      namespace: options?.namespace ?? "user" }), read: "none" }, call(options));
  }

  rename(dataset: string, oldPath: string, newPath: string, options?: Namespaced): Promise<void> {
    return this.http.send({ method: "POST", path: `/v1/datasets/${q(dataset)}/core/rename`, json: typed<"RenameBody">({ old_path: oldPath,
      new_path: newPath, namespace: options?.namespace ?? "user" }), read: "none" }, call(options));
  }

  /** The core files as one block for the system prompt (the user's and the organization's by default). */
  async render(dataset: string, options: { namespaces?: string[] | undefined;
    maxRender?: number | undefined } & CallOptions = {}): Promise<string> {
    return (await this.http.send<{ text: string }>({ method: "GET", path: `/v1/datasets/${q(dataset)}/core/render`,
      query: { namespaces: options.namespaces?.length ? options.namespaces : undefined, max_render: options.maxRender } },
    call(options))).text;
  }
}

const docPath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

export class Documents extends Part {
  read(scopeKey: string, path: string, options?: CallOptions): Promise<Document> {
    return this.http.send({ method: "GET", path: `/v1/documents/${q(scopeKey)}/${docPath(path)}` }, call(options));
  }

  /** `expectedVersion` undefined: the document must not exist yet; a stale one raises DocumentConflict. */
  write(scopeKey: string, path: string, text: string, options: { expectedVersion?: number | undefined;
    expiresIn?: number | undefined } & CallOptions = {}): Promise<Document> {
    return this.http.send({ method: "PUT", path: `/v1/documents/${q(scopeKey)}/${docPath(path)}`, json: typed<"DocumentBody">({ text,
      expected_version: options.expectedVersion ?? null, expires_in: options.expiresIn ?? null }) }, call(options));
  }

  list(scopeKey: string, options: { prefix?: string | undefined } & CallOptions = {}): Promise<Document[]> {
    return this.http.send({ method: "GET", path: `/v1/documents/${q(scopeKey)}`, query: { prefix: options.prefix ?? "" } },
      call(options));
  }

  delete(scopeKey: string, path: string, options?: CallOptions): Promise<void> {
    return this.http.send({ method: "DELETE", path: `/v1/documents/${q(scopeKey)}/${docPath(path)}`, read: "none" },
      call(options));
  }

  /** Remove expired documents; how many. */
  async purge(options?: CallOptions): Promise<number> {
    return (await this.http.send<{ count: number }>({ method: "POST", path: "/v1/documents_purge" }, call(options))).count;
  }
}
