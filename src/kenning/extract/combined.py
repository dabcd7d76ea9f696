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

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        first = self.first.extract(text, at=at, context=context, known_entities=known_entities)
        said = [c.object for c in first if not c.rejected and c.object]
        extra = [c for c in self.then.extract(text, at=at, context=context, known_entities=known_entities)
                 if c.rejected or not any(same_thing(c.object, s) for s in said)]
        return first + extra
