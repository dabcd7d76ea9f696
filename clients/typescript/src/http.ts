/**
 * Sending one call: the credential and environment headers, a timeout and the caller's AbortSignal, waiting
 * out short 429/503 answers (their Retry-After), and turning error bodies into the error tree.
 */
import {
  AbortError, ConnectionError, ConnectionLost, InputError, KenningError, RateLimited, TimeoutError, errorFromResponse,
} from "./errors.js";

export interface ClientOptions {
  /** A service, admin or member API key, or a user token (`ut_…`); none in development mode. */
  apiKey?: string | undefined;
  /** The environment every call addresses unless it names its own (`X-Kenning-Environment`); default `default`. */
  environment?: string | undefined;
  /** Milliseconds a call may take, retries included (default 30,000; 0 or Infinity: no limit). */
  timeoutMs?: number | undefined;
  /** How often a 429 or 503 is sent again after waiting (default 3). */
  maxRetries?: number | undefined;
  /** A longer Retry-After than this (ms, default 10,000) is not waited out: the error reaches the caller. */
  maxRetryWaitMs?: number | undefined;
  /** Told before each retry (for logs and tests). */
  onRetry?: ((info: { attempt: number; status: number; waitMs: number; path: string }) => void) | undefined;
  /** Another fetch (a proxy's, a test's); the platform's by default. */
  fetch?: typeof fetch | undefined;
}

/** What every method also takes. */
export interface CallOptions {
  /** Abort the call (and any wait before a retry). */
  signal?: AbortSignal | undefined;
  /** This call's own timeout in ms. */
  timeoutMs?: number | undefined;
  /** This call's environment. */
  environment?: string | undefined;
}

export type Query = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export interface Request {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Query | undefined;
  json?: unknown;
  ndjson?: string | undefined;
  /** How to read a successful answer: parsed JSON (default), text, a line stream, or nothing. */
  read?: "json" | "text" | "lines" | "none" | undefined;
}

const RETRIED = new Set([429, 503]);
const MAX_TIMER = 2 ** 31 - 1;   // setTimeout's limit: a longer delay would fire at once
const MIN_WAIT_MS = 50;          // a Retry-After of 0 still gets a breath before the next try

export class Http {
  readonly url: string;
  readonly options: Readonly<ClientOptions>;

  constructor(url: string, options: ClientOptions = {}) {
    if (!/^https?:\/\//.test(url)) throw new KenningError(`the server URL must start with http:// or https://, not ${JSON.stringify(url)}`, { code: "CONFIG_ERROR" });
    this.url = url.replace(/\/+$/, "");
    // each default on its own: an option passed as undefined keeps the default instead of erasing it
    this.options = { ...options, timeoutMs: options.timeoutMs ?? 30_000, maxRetries: options.maxRetries ?? 3,
      maxRetryWaitMs: options.maxRetryWaitMs ?? 10_000 };
  }

  async send<T>(request: Request, call: CallOptions = {}): Promise<T> {
    checkPath(request.path);
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs!;
    const limited = Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER;
    const deadline = limited ? Date.now() + timeoutMs : Infinity;
    const timer = new AbortController();
    const timeout = limited
      ? setTimeout(() => timer.abort(new TimeoutError(`no answer from ${this.url} within ${timeoutMs} ms`)), timeoutMs)
      : undefined;
    const signal = call.signal ? either(call.signal, timer.signal) : timer.signal;
    let streaming = false;
    try {
      const response = await this.exchange(request, call, signal, deadline);
      if (request.read === "lines") {
        streaming = true;
        clearTimeout(timeout);   // a long export streams for as long as it needs; the caller's signal still stops it
        return lines(response, signal, this.url + request.path) as T;
      }
      if (request.read === "none" || response.status === 204) return undefined as T;
      const body = await read(response.text(), signal, this.url + request.path);
      if (request.read === "text") return body as T;
      try {
        return (body ? JSON.parse(body) : undefined) as T;
      } catch (error) {
        throw new KenningError(`the answer from ${this.url}${request.path} is not JSON (a proxy's page?): ${body.slice(0, 200)}`, { status: response.status, cause: error });
      }
    } catch (error) {
      throw settle(error, signal);
    } finally {
      if (!streaming) clearTimeout(timeout);
    }
  }

  private async exchange(request: Request, call: CallOptions, signal: AbortSignal, deadline: number): Promise<Response> {
    const fetcher = this.options.fetch ?? fetch;
    const url = this.url + request.path + queryString(request.query);
    const headers: Record<string, string> = { accept: request.read === "lines" ? "application/x-ndjson" : "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const environment = call.environment ?? this.options.environment;
    if (environment) headers["x-kenning-environment"] = environment;
    let body: string | undefined;
    if (request.ndjson !== undefined) {
      headers["content-type"] = "application/x-ndjson";
      body = request.ndjson;
    } else if (request.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.json);
    }
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetcher(url, { method: request.method, headers, body, signal });
      } catch (error) {
        if (signal.aborted) throw abortError(signal.reason);
        throw new ConnectionError(`cannot reach the kenning server at ${this.url}: ${describe(error)}`, { cause: error });
      }
      if (response.ok) return response;
      const retryAfter = retryAfterSeconds(response.headers.get("retry-after"));
      const waitMs = RETRIED.has(response.status) ? waitFor(response.status, retryAfter, attempt) : undefined;
      // not retried: not a busy answer, too long a wait, out of tries, or a wait the call's deadline would cut off
      if (waitMs === undefined || waitMs > this.options.maxRetryWaitMs! || attempt >= this.options.maxRetries!
          || Date.now() + waitMs >= deadline) {
        const error = errorFromResponse(response.status, await read(response.text(), signal, url), retryAfter);
        if (error instanceof RateLimited && error.retryAfter === undefined) error.retryAfter = 1;
        throw error;
      }
      await response.body?.cancel();
      this.options.onRetry?.({ attempt: attempt + 1, status: response.status, waitMs, path: request.path });
      await sleep(waitMs, signal);
    }
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(key, Array.isArray(value) ? value.join(",") : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** How long to wait before sending again: the server's Retry-After, else a short backoff (a 503 without one). */
function waitFor(status: number, retryAfter: number | undefined, attempt: number): number {
  if (retryAfter !== undefined) return Math.max(MIN_WAIT_MS, retryAfter * 1000);
  return status === 503 ? 250 * 2 ** attempt : 1000;
}

/** A signal that aborts when either does, with that one's reason (AbortSignal.any, which Node has from 20.3 only). */
function either(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (a.aborted) return a;
  if (b.aborted) return b;
  const both = new AbortController();
  const onA = () => { both.abort(a.reason); b.removeEventListener("abort", onB); };
  const onB = () => { both.abort(b.reason); a.removeEventListener("abort", onA); };
  a.addEventListener("abort", onA, { once: true });
  b.addEventListener("abort", onB, { once: true });
  return both.signal;
}

/** Wait `ms`; an abort meanwhile rejects with the error it stands for (abortError). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal.reason));
    const done = () => { signal?.removeEventListener("abort", stop); resolve(); };
    const timer = setTimeout(done, ms);
    const stop = () => { clearTimeout(timer); reject(abortError(signal!.reason)); };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** The error an aborted signal's reason stands for: our own timer's TimeoutError as it is, an
 * `AbortSignal.timeout()` a TimeoutError, anything else the caller's AbortError; the reason kept as `cause`. */
export function abortError(reason: unknown): KenningError {
  if (reason instanceof KenningError) return reason;
  const name = (reason as { name?: unknown } | null)?.name;
  const words = reason instanceof Error && reason.message ? `: ${reason.message}` : "";
  if (name === "TimeoutError") return new TimeoutError(`the call's AbortSignal timed out${words}`, { cause: reason });
  return new AbortError(`the call was aborted${words}`, { cause: reason });
}

/** What a failed call throws: an error of the tree as it is; anything else, once the signal has fired, the
 * abort it stands for (the platform's bare AbortError never reaches the caller). */
function settle(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof KenningError) return error;
  return signal.aborted ? abortError(signal.reason) : error;
}

/** Reading an answer's body: a connection that breaks off midway (undici's `TypeError: terminated`) is
 * ConnectionLost, an abort meanwhile the abort's error. */
async function read<T>(reading: Promise<T>, signal: AbortSignal, where: string): Promise<T> {
  try {
    return await reading;
  } catch (error) {
    if (error instanceof KenningError) throw error;
    if (signal.aborted) throw abortError(signal.reason);
    throw new ConnectionLost(`the answer from ${where} broke off before its end: ${describe(error)}`, { cause: error });
  }
}

/** The platform's words for a network failure: its cause's message (`connect ECONNREFUSED …`, `other side
 * closed`), else its code, else its own message. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const own = error instanceof Error ? error.message : String(error);
  return cause?.message || cause?.code || own;
}

/** The body's lines as they arrive (each with its newline), for exports of any size. */
async function* lines(response: Response, signal: AbortSignal, where: string): AsyncGenerator<string> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await read(reader.read(), signal, where);
      if (done) { finished = true; break; }
      rest += value;
      let end: number;
      while ((end = rest.indexOf("\n")) >= 0) {
        if (signal.aborted) throw abortError(signal.reason);   // lines already read stop with the abort too
        yield rest.slice(0, end + 1);
        rest = rest.slice(end + 1);
      }
    }
    if (rest) yield rest + "\n";
  } finally {
    // a consumer that stops early (break) releases the connection instead of leaving the server streaming
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}


/** Every URL the client builds, refused before it is sent when a segment is empty (but inside a document's path), "."
 * or ".." (fetch would resolve `/v1/datasets/victim/facts/..` to `/v1/datasets/victim`, and `%2e%2e` too), or an id
 * or name holds "/" (`%2F`). */
function checkPath(path: string): void {
  const segments = (path.split("?")[0] ?? "").split("/").slice(1);
  // a document's path (after /v1/documents/<scope>/) may hold empty parts ("/docs/a.md"), never a dot part
  const documentPart = segments[0] === "v1" && segments[1] === "documents" ? 3 : Infinity;
  for (const [i, segment] of segments.entries()) {
    let plain: string;
    try {
      plain = decodeURIComponent(segment);
    } catch {
      plain = segment;
    }
    const emptyAllowed = i >= documentPart && i < segments.length - 1;
    if ((plain === "" && !emptyAllowed) || plain === "." || plain === ".." || plain.includes("/")) {
      throw new InputError(`${path} cannot be sent: an id or name in it is empty, '.' or '..', or holds '/'`);
    }
  }
}
