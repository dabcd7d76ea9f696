"""The extractor contract: text in, candidate facts out.

Every extractor (rules, OpenAI-compatible, Anthropic) returns the same
:class:`Candidate`; the write path normalises and enforces them, so an
extractor never decides what gets stored.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime

from pydantic import BaseModel, Field


class Candidate(BaseModel):
    kind: str = "attribute"
    subject: str = "user"
    predicate: str
    object: str
    object_is_entity: bool = False
    entity_type: str | None = None
    text: str = ""
    confidence: float = 0.8
    source_quote: str = ""
    valid_at: datetime | None = None      # None: the message time
    valid_until: datetime | None = None
    ends: bool = False                    # "I no longer …": ends the matching live fact
    needs_known_entity: bool = False      # only an opinion about something already known
    notes: list[str] = Field(default_factory=list)
    rejected: str | None = None           # set by an extractor for output it could not use (counted, never stored)


class Extractor(ABC):
    name: str = "extractor"
    wants_context: bool = False   # True: the write path hands it the thread and the known entity names

    @abstractmethod
    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        """Candidates for durable facts about the user in ``text`` said at ``at``.

        ``context``: the previous messages of the thread, oldest first. ``known_entities``: names
        of entities this dataset already holds, so a model can correct typos towards them.
        Raises :class:`~kenning.errors.ExtractionError` when it cannot produce an answer at all.
        """
