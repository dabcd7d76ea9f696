"""kenning: long-term memory for AI assistants.

``Memory`` loads on first use, so ``import kenning.client`` (the HTTP SDK) brings in the result types
and errors, not the stores, the ranking engine or the models.
"""
from typing import TYPE_CHECKING

from .config import Settings
from .embed.base import Embedder
from .errors import (Conflict, ConfigError, DocumentConflict, MemoryAmbiguous, MemoryConflict, MemoryNoMatch,
                     MemoryToolError, PermissionDenied, DimensionMismatch, DuplicateFact, EmbeddingError, EmptyText, ExtractionError,
                     InputError, InvalidScope, InvalidTime, KenningError, MigrationError, NonFiniteVector,
                     LeaseLost, NotFound, QuotaExceeded, RateLimited, StoreError, TextTooLarge)
from .extract.base import Candidate, Extractor
from .model import (AddResult, ChatPage, ChatSummary, Entity, Episode, Fact, FactPage, Job, MemoryStatus, MessageHit, Note, NoteHit, Receipt,
                    MessagePage, RecallItem, RecallResult, Scope)

if TYPE_CHECKING:
    from .memory import Memory

__version__ = "0.1.0"
__all__ = [
    "Memory", "Settings", "Fact", "Entity", "Episode", "AddResult", "FactPage", "Scope", "RecallResult",
    "Note", "NoteHit", "MessageHit", "ChatSummary", "ChatPage", "MessagePage",
    "RecallItem", "Candidate", "Extractor", "Embedder", "KenningError", "InputError", "TextTooLarge",
    "EmptyText", "InvalidTime", "InvalidScope", "EmbeddingError", "DimensionMismatch", "NonFiniteVector",
    "NotFound", "Conflict", "ExtractionError", "ConfigError", "StoreError", "MigrationError", "DuplicateFact", "LeaseLost", "Job", "Receipt", "MemoryStatus",
    "DocumentConflict", "MemoryAmbiguous", "MemoryConflict", "MemoryNoMatch", "MemoryToolError", "PermissionDenied",
    "RateLimited", "QuotaExceeded",
]


def __getattr__(name: str):
    if name == "Memory":
        from .memory import Memory

        return Memory
    raise AttributeError(f"module 'kenning' has no attribute {name!r}")
