"""One mapping from the exception tree to HTTP: stable JSON bodies, no stack traces."""
from __future__ import annotations

from ..errors import (Conflict, ConfigError, EmbeddingError, ExtractionError, InputError, KenningError, MemoryAmbiguous,
                      MemoryNoMatch, MemoryToolError, NotFound, PermissionDenied, QuotaExceeded, RateLimited,
                      TextTooLarge)


class Unauthorized(KenningError):
    code = "UNAUTHORIZED"


class UnsupportedMediaType(InputError):
    """A body of a type the route does not take (the HTTP layer's own refusal)."""
    code = "UNSUPPORTED_MEDIA_TYPE"


STATUS = [  # most specific first
    (Unauthorized, 401),
    (PermissionDenied, 403),
    (NotFound, 404),
    (Conflict, 409),
    (MemoryNoMatch, 409),      # a well-formed edit the file's current text does not allow
    (MemoryAmbiguous, 409),
    (TextTooLarge, 413),
    (RateLimited, 429),
    (QuotaExceeded, 507),
    (UnsupportedMediaType, 415),
    (InputError, 422),
    (EmbeddingError, 422),
    (MemoryToolError, 422),
    (ExtractionError, 502),
    (ConfigError, 500),
    (KenningError, 500),
]


def status_of(exc: KenningError) -> int:
    return next(code for cls, code in STATUS if isinstance(exc, cls))


def body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}
