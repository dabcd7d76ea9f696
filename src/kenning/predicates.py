"""Predicate vocabulary: normal forms, one-value slots, and opposites.

A predicate is the slot key. One-value slots (``lives in``) hold one live value
and a new value supersedes the old; many-value slots (``likes``) accumulate.
The registry is data, extensible through :class:`~kenning.config.Settings`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ONE_VALUE = frozenset({
    "lives in", "works at", "works as", "is named", "is aged", "is from", "was born in",
    "was born on", "studies at", "is married to", "has wife", "has husband", "has partner",
    "has girlfriend", "has boyfriend", "follows diet", "has relationship status", "drives",
    "has pronouns", "is in time zone", "birthday is",
})
NEGATION_PREFIXES = ("does not ", "is not ", "has not ", "never ", "cannot ", "will not ")
SYNONYMS = {
    "resides in": "lives in", "is living in": "lives in", "is based in": "lives in",
    "stays in": "lives in", "live in": "lives in", "lived in": "lives in",
    "works for": "works at", "is employed at": "works at", "is employed by": "works at",
    "work at": "works at", "is working at": "works at",
    "loves": "likes", "enjoys": "likes", "adores": "likes", "is into": "likes",
    "is a fan of": "likes", "really likes": "likes", "like": "likes", "love": "likes",
    "hates": "dislikes", "detests": "dislikes", "cannot stand": "dislikes", "loathes": "dislikes",
    "does not like": "dislikes", "does not enjoy": "dislikes",
    "comes from": "is from", "is originally from": "is from",
    "is called": "is named", "name is": "is named",
    "age is": "is aged", "is age": "is aged",
}
OPPOSITES = {"likes": "dislikes", "dislikes": "likes"}

_PUNCT = re.compile(r"[^\w\s'/+#&-]")
_SPACE = re.compile(r"\s+")


def normalise(predicate: str) -> str:
    """Lower-case, strip punctuation, collapse spaces, map synonyms."""
    p = _SPACE.sub(" ", _PUNCT.sub(" ", predicate.lower())).strip()
    p = re.sub(r"\b(?:do|does) not\b", "does not", p)
    return SYNONYMS.get(p, p)


def is_negated(predicate: str) -> bool:
    return predicate.startswith(NEGATION_PREFIXES) or predicate == "dislikes"


def opposite(predicate: str) -> str | None:
    """The predicate whose live value with the same object this one contradicts."""
    if predicate in OPPOSITES:
        return OPPOSITES[predicate]
    for prefix in NEGATION_PREFIXES:
        if predicate.startswith(prefix):
            rest = predicate[len(prefix):]
            return third_person(rest) if prefix == "does not " else (
                {"is not ": "is ", "has not ": "has "}.get(prefix, "") + rest)
    words = predicate.split(" ", 1)
    if words[0] in ("is", "has"):
        return f"{words[0]} not {words[1]}" if len(words) > 1 else None
    if words[0].endswith("s"):
        return "does not " + base_form(words[0]) + (" " + words[1] if len(words) > 1 else "")
    return None


def third_person(rest: str) -> str:
    words = rest.split(" ", 1)
    verb = words[0]
    if verb == "have":
        verb = "has"
    elif verb.endswith(("s", "sh", "ch", "x", "o")):
        verb += "es"
    elif verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        verb = verb[:-1] + "ies"
    else:
        verb += "s"
    return verb + (" " + words[1] if len(words) > 1 else "")


def base_form(verb: str) -> str:
    if verb == "has":
        return "have"
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "oes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


@dataclass(frozen=True)
class PredicateRegistry:
    """Which predicates are one-value; extra names come from configuration."""

    one_value: frozenset[str] = ONE_VALUE
    many_value: frozenset[str] = field(default_factory=frozenset)

    def extended(self, one_value=(), many_value=()) -> "PredicateRegistry":
        return PredicateRegistry(
            frozenset(self.one_value | {normalise(p) for p in one_value}) - {normalise(p) for p in many_value},
            frozenset(self.many_value | {normalise(p) for p in many_value}),
        )

    def is_one_value(self, predicate: str) -> bool:
        if predicate in self.many_value:
            return False
        if predicate in self.one_value:
            return True
        # "prefers <setting>" and "<attribute> is" ("favorite color is") hold one value.
        return (predicate.startswith("prefers ") and not is_negated(predicate)) or (
            predicate.endswith(" is") and not is_negated(predicate))

    def is_known(self, predicate: str) -> bool:
        return predicate in self.one_value or predicate in self.many_value or predicate in SYNONYMS.values()
