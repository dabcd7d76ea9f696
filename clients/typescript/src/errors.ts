/**
 * One error tree, as the Python library's: every failure the server reports arrives as the class named by
 * its stable `code` (`{"error": {"code", "message"}}`), so callers catch `MemoryConflict` or `NotFound`
 * instead of parsing messages. Network trouble, a connection cut mid-answer, timeouts and aborts are errors of
 * this tree too (`ConnectionError`, `ConnectionLost`, `TimeoutError`, `AbortError`), each keeping the platform's
 * error as `cause`.
 */

export class KenningError extends Error {
  static readonly code: string = "KENNING_ERROR";
  /** The server's error code (`MEMORY_CONFLICT`, `NOT_FOUND`, …). */
  readonly code: string;
  /** The HTTP status, when the error came from the server. */
  readonly status?: number;

  constructor(message: string, options: { code?: string | undefined; status?: number | undefined; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? (new.target as typeof KenningError).code;
    if (options.status !== undefined) this.status = options.status;
  }
}

export class InputError extends KenningError { static override readonly code: string = "INVALID_INPUT"; }
export class TextTooLarge extends InputError { static override readonly code: string = "TOO_LARGE"; }
export class EmptyText extends InputError { static override readonly code: string = "EMPTY_TEXT"; }
export class InvalidTime extends InputError { static override readonly code: string = "INVALID_TIME"; }
export class InvalidScope extends InputError { static override readonly code: string = "INVALID_SCOPE"; }
export class UnsupportedMediaType extends InputError { static override readonly code: string = "UNSUPPORTED_MEDIA_TYPE"; }
export class EmbeddingError extends KenningError { static override readonly code: string = "EMBEDDING_ERROR"; }
export class DimensionMismatch extends EmbeddingError { static override readonly code: string = "DIMENSION_MISMATCH"; }
export class NonFiniteVector extends EmbeddingError { static override readonly code: string = "NON_FINITE_VECTOR"; }
export class NotFound extends KenningError { static override readonly code: string = "NOT_FOUND"; }
export class Conflict extends KenningError { static override readonly code: string = "CONFLICT"; }
/** A core file changed since the version the caller read (`expectedVersion`). */
export class MemoryConflict extends Conflict { static override readonly code: string = "MEMORY_CONFLICT"; }
/** A document exists, or changed, where the caller expected another version. */
export class DocumentConflict extends Conflict { static override readonly code: string = "MEMORY_DOCUMENT_CONFLICT"; }
export class MemoryNoMatch extends KenningError { static override readonly code: string = "MEMORY_NO_MATCH"; }
export class MemoryAmbiguous extends KenningError { static override readonly code: string = "MEMORY_AMBIGUOUS"; }
/** A memory-tool command failed; `message` is the text to send back to the model (with is_error). */
export class MemoryToolError extends KenningError { static override readonly code: string = "MEMORY_TOOL_ERROR"; }
export class PermissionDenied extends KenningError { static override readonly code: string = "PERMISSION_DENIED"; }
export class Unauthorized extends KenningError { static override readonly code: string = "UNAUTHORIZED"; }
/** Refused for the request rate; `retryAfter` is in seconds (the client already waited out short ones). */
export class RateLimited extends KenningError {
  static override readonly code: string = "RATE_LIMITED";
  retryAfter?: number;
}
export class QuotaExceeded extends KenningError { static override readonly code: string = "QUOTA_EXCEEDED"; }
export class ExtractionError extends KenningError { static override readonly code: string = "EXTRACTION_FAILED"; }
export class ConfigError extends KenningError { static override readonly code: string = "CONFIG_ERROR"; }
export class StoreError extends KenningError { static override readonly code: string = "STORE_ERROR"; }
export class MigrationError extends StoreError { static override readonly code: string = "MIGRATION_FAILED"; }
export class LeaseLost extends StoreError { static override readonly code: string = "LEASE_LOST"; }
export class DuplicateFact extends StoreError { static override readonly code: string = "DUPLICATE_FACT"; }
/** The server could not be reached (refused, reset, DNS). */
export class ConnectionError extends KenningError { static override readonly code: string = "CONNECTION_ERROR"; }
/** The connection broke before the whole answer arrived (a server stopped mid-export, a proxy cut it off): the
 * lines an export yielded before it are all there is. `cause` is the platform's error. */
export class ConnectionLost extends ConnectionError { static override readonly code: string = "CONNECTION_LOST"; }
/** No answer within the call's timeout (the client's `timeoutMs`, or an `AbortSignal.timeout()` the caller passed). */
export class TimeoutError extends KenningError { static override readonly code: string = "TIMEOUT"; }
/** The caller's AbortSignal stopped the call, a wait before a retry, or an export's stream; `cause` is the
 * signal's reason. Named `AbortError`, as the platform's is, so code that checks `error.name` keeps working. */
export class AbortError extends KenningError { static override readonly code: string = "ABORTED"; }

const CLASSES = [
  InputError, TextTooLarge, EmptyText, InvalidTime, InvalidScope, UnsupportedMediaType, EmbeddingError,
  DimensionMismatch, NonFiniteVector, NotFound, Conflict, MemoryConflict, DocumentConflict, MemoryNoMatch,
  MemoryAmbiguous, MemoryToolError, PermissionDenied, Unauthorized, RateLimited, QuotaExceeded, ExtractionError,
  ConfigError, StoreError, MigrationError, LeaseLost, DuplicateFact, ConnectionError, ConnectionLost, TimeoutError,
  AbortError,
];

/** Error classes by the server's error code. */
export const ERRORS: Readonly<Record<string, typeof KenningError>> = Object.freeze(
  Object.fromEntries([[KenningError.code, KenningError], ...CLASSES.map((c) => [c.code, c])]),
);

/** For an error body that is not ours (a proxy's page): the class its status means. */
const BY_STATUS: Readonly<Record<number, typeof KenningError>> = {
  400: InputError, 401: Unauthorized, 403: PermissionDenied, 404: NotFound, 409: Conflict, 413: TextTooLarge,
  415: UnsupportedMediaType, 422: InputError, 429: RateLimited,
};

/** The error a failed HTTP answer stands for: its code's class, or KenningError for a body that is not ours. */
export function errorFromResponse(status: number, body: string, retryAfter: number | undefined): KenningError {
  let code: string | undefined;
  let message = `HTTP ${status} from the kenning server: ${body.slice(0, 200)}`;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    if (parsed.error && typeof parsed.error.code === "string" && typeof parsed.error.message === "string") {
      code = parsed.error.code;
      message = parsed.error.message;
    }
  } catch {
    // not JSON: a proxy's page, say; keep the generic message
  }
  const Class = (code && ERRORS[code]) || BY_STATUS[status] || KenningError;
  const error = new Class(message, { code: code ?? Class.code, status });
  if (error instanceof RateLimited && retryAfter !== undefined) error.retryAfter = retryAfter;
  return error;
}
