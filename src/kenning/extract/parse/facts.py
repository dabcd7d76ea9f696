"""A small builder for candidates, so every frame words its facts the same way."""
from __future__ import annotations

from ..base import Candidate
from ...predicates import third_person


def third(lemma: str) -> str:
    return third_person(lemma.lower())


def make(kind: str, predicate: str, obj: str, etype: str | None, *, text: str | None = None,
         confidence: float = 0.9, ends: bool = False, valid_at=None, valid_until=None) -> Candidate:
    obj = " ".join(obj.split())
    shown = obj if etype is None else obj.lower()
    return Candidate(kind=kind, predicate=predicate, object=obj.lower() if etype else obj,
                     object_is_entity=etype is not None, entity_type=etype,
                     text=text or f"user {predicate} {shown}".strip(), confidence=confidence, ends=ends,
                     valid_at=valid_at, valid_until=valid_until)
