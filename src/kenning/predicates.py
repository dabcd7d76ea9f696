"""Predicates: normal forms, one-value slots, plans and opposites, read from the fact vocabulary.

A predicate is the slot key. One-value slots (``lives in``) hold one live value
and a new value supersedes the old; many-value slots (``likes``) accumulate.
The registry is data, extensible through :class:`~kenning.config.Settings`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from .vocabulary import load as _vocabulary

_V = _vocabulary()
ONE_VALUE = _V.one_value      # every one-value row's predicate and aliases (kenning/vocabulary/facts.toml)
NEGATION_PREFIXES = ("does not ", "is not ", "has not ", "never ", "cannot ", "will not ")
SYNONYMS = _V.synonyms
DIETS = frozenset(_V.diets)

# The people (and pets) of a user's life, as the first word of a predicate about them ("mother lives in",
# "sister ana works as"). Those a person has one of at a time make such a predicate one-value without a name.
RELATIONS = _V.people
UNIQUE_RELATIONS = _V.one_at_a_time

# What a plan for a slot is called while it is only intended: "lives in · portland" from 1 March is
# "plans to move to · portland" until then. A state predicate (a slot that holds until it changes) takes
# its future value from the plan's date; any other plan is a one-off occurrence with a window.
INTENTIONS = _V.intentions
STATE_KINDS = {**_V.state_kinds, **{p: r.state_kind for r in _V.rows if r.cardinality == "one" for p in r.slot}}
# Verbs of a one-off occurrence (a trip, a visit, a race, a wedding, an appointment): a plan of one of them
# happens over a window that ends, where a plan of another verb starts something that lasts.
OCCURRENCE_VERBS = frozenset("""fly visit travel attend run race stay go see meet celebrate host throw perform
 compete sit hike cruise tour camp present speak interview holiday vacation honeymoon trip ski surf swim
 cycle ride walk sail play watch have take get marry wed graduate give fight audition""".split())


def is_occurrence(predicate: str) -> bool:
    """Whether a plan's predicate names a one-off occurrence ("is flying to", "is running", "attends")."""
    words = predicate.split()
    if words and words[0] in ("is", "are", "am", "will", "plans") and len(words) > 1:
        verb = words[1]
        if verb == "to" and len(words) > 2:
            verb = words[2]
        verb = ungerund(verb) if verb.endswith("ing") and len(verb) > 4 else verb
    else:
        verb = base_form(words[0]) if words else ""
    return verb in OCCURRENCE_VERBS


# Events whose occurrence starts a state: "got married to · sofia" makes "is married to · sofia" true.
STATE_AFTER_EVENT = {"got married to": "is married to", "married": "is married to", "got engaged to": "has fiance",
                     "moved to": "lives in", "adopted": "has pet", "retired from": "is retired from"}

OPPOSITES = _V.opposites

_PUNCT = re.compile(r"[^\w\s'/+#&-]")
_SPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower case without accents: "Fiancée" and "fiancee" are one word."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalise(predicate: str) -> str:
    """Lower-case, fold accents, strip punctuation, collapse spaces, map synonyms."""
    p = _SPACE.sub(" ", _PUNCT.sub(" ", fold(predicate))).strip()
    p = re.sub(r"\b(?:do|does|doesn't|don't) not\b|\b(?:doesn't|don't)\b", "does not", p)
    p = re.sub(r"\b(?:is|am|are)n't\b", "is not", p)
    return SYNONYMS.get(p, p)


def relation_detail(predicate: str) -> tuple[str, str, str] | None:
    """A predicate about one of the user's people, split: "sister ana works as" → ("sister", "ana",
    "works as"); "mother lives in" → ("mother", "", "lives in"). None for a predicate about the user."""
    words = predicate.split()
    if len(words) < 2 or words[0] not in RELATIONS:
        return None
    for i in range(1, len(words)):
        tail = " ".join(words[i:])
        if words[i] in ("is", "are", "has", "have", "does", "was", "were", "lives", "works", "likes", "owns",
                        "studies", "goes", "plays", "speaks", "loves", "hates", "dislikes") or \
                SYNONYMS.get(tail, tail) in ONE_VALUE:
            return words[0], " ".join(words[1:i]), tail
    return None


INTENDING = ("plans to", "is planning to", "intends to", "wants to", "hopes to", "is going to", "aims to")


def intention(predicate: str) -> str:
    """The label of a plan while it is only intended: "lives in" → "plans to move to"; otherwise "plans
    to " and the verb in its base form ("is visiting" → "plans to visit", "runs" → "plans to run")."""
    if predicate in INTENTIONS:
        return INTENTIONS[predicate]
    if predicate.startswith(INTENDING):
        rest = predicate.split(" to", 1)[1].strip()
        return f"plans to {rest}".strip()
    words = predicate.split()
    if words[0] in ("is", "are", "am") and len(words) > 1 and words[1].endswith("ing") and len(words[1]) > 4:
        return " ".join(["plans to", ungerund(words[1]), *words[2:]])
    if words[0] in ("is", "are", "am", "was"):
        return " ".join(["plans to be", *words[1:]])
    if words[0] == "has":
        return " ".join(["plans to have", *words[1:]])
    if words[0] == "will" and len(words) > 1:
        return " ".join(["plans to", *words[1:]])
    return " ".join(["plans to", base_form(words[0]), *words[1:]])


def ungerund(word: str) -> str:
    """ "visiting" → "visit", "running" → "run", "moving" → "move" (a label, not a lemmatiser)."""
    stem = word[:-3]
    vowels = re.findall(r"[aeiouy]+", stem)
    if len(stem) >= 3 and stem[-1] == stem[-2] and (stem[-1] not in "aeioulsz" or (stem[-1] == "l" and len(vowels) >= 2)):
        return stem[:-1]   # "running" → "run", "travelling" → "travel"; "calling" stays "call"
    if stem.endswith(("v", "c", "z", "ur", "ir", "dg")) or (stem.endswith("at") and len(vowels) >= 2) or (
            len(vowels) == 1 and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", stem)):
        return stem + "e"
    return stem


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
        planned = next((state for state, label in INTENTIONS.items() if label == predicate), None)
        if planned is not None:
            return planned in self.one_value
        detail = relation_detail(predicate)
        if detail is not None:   # "mother lives in", "son leo is aged": one person, one value
            who, name, tail = detail
            tail = SYNONYMS.get(tail, tail)
            return (bool(name) or who in UNIQUE_RELATIONS) and (tail in self.one_value or tail in ("is", "is aged",
                                                                                                 "are aged"))
        # "prefers <setting>" and "<attribute> is" ("favorite color is") hold one value.
        return (predicate.startswith("prefers ") and not is_negated(predicate)) or (
            predicate.endswith(" is") and not is_negated(predicate))

    def is_known(self, predicate: str) -> bool:
        return predicate in self.one_value or predicate in self.many_value or predicate in SYNONYMS.values()


NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|one) ")


def names_nobody(obj: str) -> bool:
    """Whether an object only counts or calls someone by their relation ("kids", "2 boys", "my
    brother", "1"): a fact that says the person exists, not who they are; a name says more."""
    words = re.findall(r"\w+", fold(obj))
    return bool(words) and all(w.isdigit() or w in NUMBER_WORDS or w in RELATIONS or w.rstrip("s") in RELATIONS
                               or w in ("the", "my", "our", "boy", "boys", "girl", "girls") for w in words)


def canonical_pair(predicate: str, obj: str, is_entity: bool, raw: str = "") -> tuple[str, str, bool]:
    """A fact's predicate and object in the vocabulary's one way of saying them, whoever wrote them:
    a diet is ``follows diet · vegetarian`` (however worded: "is vegetarian", "is · vegan"); the user's
    name and nickname are plain values, never entities; a nameless relation counts ("has brother ·
    brother" is ``has brother · 1``, "has kids · two kids" is ``has kids · 2``)."""
    value = fold(obj).strip()
    if predicate in ("follows diet", "is", "has diet") or (predicate.startswith("is ") and value in DIETS):
        said = fold(raw).strip()
        diet = value if value in DIETS else next((d for d in DIETS if said.endswith(" " + d)), None)
        if diet is not None:
            return "follows diet", diet, False
    if predicate in ("is named", "goes by"):
        return predicate, obj, False
    m = re.fullmatch(r"has (\w+)", predicate)
    if m and (m.group(1) in RELATIONS):
        relation = m.group(1)
        bare = _ARTICLE.sub("", value)
        words = bare.split()
        if bare in (relation, relation + "s", relation.rstrip("s")) and not relation.endswith("s"):
            return predicate, "1", False
        if words and (words[0].isdigit() or words[0] in NUMBER_WORDS) and (
                len(words) == 1 or words[1].rstrip("s") in (relation.rstrip("s"), "kid", "child")
                or words[1] in ("children", "kids")):
            return predicate, str(NUMBER_WORDS.get(words[0], words[0])), False
    return predicate, obj, is_entity
