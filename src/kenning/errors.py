"""One exception tree for everything kenning raises.

    KenningError
    ├── InputError                 bad arguments from the caller (ValueError too)
    │   ├── TextTooLarge           text over the size limit; nothing stored
    │   ├── EmptyText              nothing to remember
    │   ├── InvalidTime            a time that cannot be read or lies in the future
    │   └── InvalidScope           project / environment / dataset names
    ├── EmbeddingError             the embedder or a vector is unusable
    │   ├── DimensionMismatch      vector size differs from the store's
    │   └── NonFiniteVector        NaN or infinity in a vector
    ├── NotFound                   an id that does not exist in this dataset (KeyError too)
    ├── Conflict                   the write contradicts what is stored (a reused message id)
    │   ├── MemoryConflict         a core file changed since the expected version
    │   └── DocumentConflict       a document's version is not the expected one
    ├── MemoryNoMatch / MemoryAmbiguous   str_replace found the old text 0 / several times
    ├── MemoryToolError            a memory tool command failed (``text`` is the tool result)
    ├── PermissionDenied           the principal lacks a permission (named)
    ├── ExtractionError            an extractor failed or returned unusable output
    ├── ConfigError                a setting or URL cannot be used
    └── StoreError                 the database failed
        ├── MigrationError         the schema cannot be brought up to date
        ├── DuplicateFact          the live-fact backstop refused a twin
        └── LeaseLost              a worker finished a job another worker had reclaimed

Messages say how to fix the problem, not only what went wrong.
"""
from __future__ import annotations


class KenningError(Exception):
    """Root of every error kenning raises on purpose; ``code`` is the stable machine name."""

    code = "KENNING_ERROR"


class InputError(KenningError, ValueError):
    """The caller passed something kenning cannot use."""
    code = "INVALID_INPUT"


class TextTooLarge(InputError):
    code = "TOO_LARGE"


class EmptyText(InputError):
    code = "EMPTY_TEXT"


class InvalidTime(InputError):
    code = "INVALID_TIME"


class InvalidScope(InputError):
    code = "INVALID_SCOPE"


class EmbeddingError(KenningError):
    code = "EMBEDDING_ERROR"


class DimensionMismatch(EmbeddingError):
    code = "DIMENSION_MISMATCH"


class NonFiniteVector(EmbeddingError):
    code = "NON_FINITE_VECTOR"


class NotFound(KenningError, KeyError):
    code = "NOT_FOUND"

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "not found"


class Conflict(KenningError):
    code = "CONFLICT"


class MemoryConflict(Conflict):
    """A core file changed since the version the caller read."""

    code = "MEMORY_CONFLICT"


class DocumentConflict(Conflict):
    """A document exists (or changed) where the caller expected another version."""

    code = "MEMORY_DOCUMENT_CONFLICT"


class MemoryNoMatch(KenningError, ValueError):
    code = "MEMORY_NO_MATCH"


class MemoryAmbiguous(KenningError, ValueError):
    code = "MEMORY_AMBIGUOUS"


class MemoryToolError(KenningError):
    """A memory tool command failed; ``text`` is the exact result to hand the model with is_error."""

    code = "MEMORY_TOOL_ERROR"

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class PermissionDenied(KenningError):
    """The principal lacks the permission the operation needs (named in ``permission``)."""

    code = "PERMISSION_DENIED"

    def __init__(self, message: str, permission: str):
        super().__init__(message)
        self.permission = permission


class RateLimited(KenningError):
    """Too many requests, or too many turns waiting, for one tenant: retry after ``retry_after`` seconds."""

    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after: float = 1.0):
        super().__init__(message)
        self.retry_after = retry_after


class QuotaExceeded(KenningError):
    """A tenant holds as much of something as this server allows (configurable); delete some first."""

    code = "QUOTA_EXCEEDED"


class ExtractionError(KenningError):
    code = "EXTRACTION_FAILED"


class ConfigError(KenningError):
    code = "CONFIG_ERROR"


class StoreError(KenningError):
    code = "STORE_ERROR"


class MigrationError(StoreError):
    code = "MIGRATION_FAILED"


class LeaseLost(StoreError):
    """The job was reclaimed after this worker's lease ran out; its transaction must roll back."""
    code = "LEASE_LOST"


class DuplicateFact(StoreError):
    """The partial unique index on live facts refused a twin (a racing writer won)."""
    code = "DUPLICATE_FACT"
