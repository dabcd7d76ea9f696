"""What every part of a ``Memory`` shares, built once and handed to each part.

``Memory`` wires the store, embedder, extractor, settings and the read and write pipelines into one
``Services``; the resource groups (messages, notes, core files, documents), the queue workers, the
user principal, the HTTP app, the dashboard and the MCP server receive it instead of reaching back
into ``Memory``. Argument checks that several parts make live here too, so each is written once.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .config import Settings
from .embed.base import Embedder
from .errors import InputError, InvalidScope, TextTooLarge
from .extract.base import Extractor
from .model import ENTITY_TYPES, FACT_KINDS, SCOPE_NAME, Scope
from .predicates import PredicateRegistry
from .recall import Recaller
from .store.base import Store
from .write import WritePipeline

@dataclass(eq=False)
class Services:
    settings: Settings
    store: Store
    embedder: Embedder | None
    extractor: Extractor
    registry: PredicateRegistry
    writer: WritePipeline
    reader: Recaller
    job_done: threading.Event = field(default_factory=threading.Event)   # set by a worker after each batch

    def tenant(self, project: str | None = None, environment: str | None = None) -> tuple[str, str]:
        """The project and environment a call means: its own, or the settings' defaults."""
        return project or self.settings.project, environment or self.settings.environment

    def scope(self, dataset: str, project: str | None = None, environment: str | None = None) -> Scope:
        """A checked Scope: every name is 1-128 safe characters, so no scope is ever ambiguous."""
        scope = Scope(*self.tenant(project, environment), dataset)
        for name, value in zip(Scope._fields, scope):
            if not isinstance(value, str) or not SCOPE_NAME.fullmatch(value):
                raise InvalidScope(f"{name} {value!r} is not a valid name: use 1-128 letters, digits "
                                   "and _ . : @ - (starting with a letter or digit)")
        return scope


def check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise InputError(f"limit must be an integer from 1 to 100, not {limit!r}")


MAX_QUERY_CHARS = 100_000   # a question, or a whole message (as long as a message may be) to recall for


def check_query(query: str, limit: int) -> None:
    """A search needs words (at most MAX_QUERY_CHARS) and a limit the API allows."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("query is empty; pass the question or the user's message")
    if len(query) > MAX_QUERY_CHARS:
        raise TextTooLarge(f"query is {len(query):,} characters; recall takes at most {MAX_QUERY_CHARS:,} (the "
                           "question, or the last message)")
    check_limit(limit)


def fact_filters(kind: str | None, entity_type: str | None, message_id: str | None, order: str) -> dict:
    """The optional narrowings of a fact listing, checked: an unknown kind, type or order is an error, never
    an empty page that looks like an answer."""
    if kind is not None and kind not in FACT_KINDS:
        raise InputError(f"kind must be one of {', '.join(map(repr, FACT_KINDS))}, not {kind!r}")
    if entity_type is not None:
        if not isinstance(entity_type, str) or entity_type.upper() not in ENTITY_TYPES:
            raise InputError(f"entity_type must be one of {', '.join(map(repr, ENTITY_TYPES))}, not {entity_type!r}")
        entity_type = entity_type.upper()
    if order not in FACT_ORDERS:
        raise InputError(f"order must be one of {', '.join(map(repr, FACT_ORDERS))}, not {order!r}")
    if message_id is not None and (not isinstance(message_id, str) or not message_id.strip()):
        raise InputError(f"message_id must be a non-empty string, not {message_id!r}")
    return {"kind": kind, "entity_type": entity_type, "message_id": message_id, "order": order}


FACT_ORDERS = ("time", "anchor", "slot")


def check_page(limit: int, offset: int) -> None:
    """A page of a listing: 1-100 rows from a non-negative offset that fits the stores' integers."""
    check_limit(limit)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 2**63:
        raise InputError(f"offset must be a non-negative integer below 2**63, not {offset!r}")
