"""The offline extractors together: the first one's facts, and the second one's where they name
something the first did not.

The two fail differently: the trained extractor hears many wordings and knows a stay from a move and a
plan from an event; the rules know dates, relations and endings in the wordings they were written for.
A candidate of the second whose object the first already stated (the same words, or one inside the
other) is left out, so a fact is never said twice in two vocabularies, and the first one's reading of a
thing (a stay in Paris) is never contradicted by the second's (a home in Paris).
"""
from __future__ import annotations

import re
from datetime import datetime

from .base import Candidate, Extractor

_ARTICLES = re.compile(r"\b(?:a|an|the|my|our|his|her|their)\b")


def _words(text: str) -> str:
    return " ".join(_ARTICLES.sub(" ", text.lower()).replace("'s", "").split())


def same_thing(a: str, b: str) -> bool:
    """Whether two objects name one thing: equal once articles go, or one inside the other as whole words."""
    x, y = _words(a), _words(b)
    return bool(x and y) and (x == y or f" {x} " in f" {y} " or f" {y} " in f" {x} ")


class CombinedExtractor(Extractor):
    name = "combined"

    def __init__(self, first: Extractor, then: Extractor):
        self.first, self.then = first, then
        self.name = f"combined:{first.name}+{then.name}"
        self.wants_context = first.wants_context or then.wants_context

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        first = self.first.extract(text, at=at, context=context, known_entities=known_entities)
        then = self.then.extract(text, at=at, context=context, known_entities=known_entities)
        return _merge(first, then)

    def extract_many(self, texts: list[str], *, at: list[datetime]) -> list[list[Candidate]]:
        """A batch through each extractor (one parser batch, one encoder batch), merged message by message."""
        firsts, thens = (_many(ex, texts, at) for ex in (self.first, self.then))
        return [_merge(f, t) for f, t in zip(firsts, thens)]


def _many(extractor: Extractor, texts: list[str], at: list[datetime]) -> list[list[Candidate]]:
    if hasattr(extractor, "extract_many"):
        return extractor.extract_many(texts, at=at)
    return [extractor.extract(text, at=when) for text, when in zip(texts, at)]


def _merge(first: list[Candidate], then: list[Candidate]) -> list[Candidate]:
    """The first's candidates, then the second's that name something new (or were rejected, to be counted)."""
    said = [c.object for c in first if not c.rejected and c.object]
    return first + [c for c in then if c.rejected or not any(same_thing(c.object, s) for s in said)]
