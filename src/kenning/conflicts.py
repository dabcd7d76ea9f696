"""Facts that cannot both be live, however they were worded: endings and diets.

An ending ("I gave up the cello", "we broke up", "Milo passed away", "I sold my Jeep") names a
thing; it ends the live facts about that thing whatever their predicate ("is learning · cello",
"plays · cello"). A diet rules out foods: "is vegetarian" ends "eats fish", "eats chicken" ends
"is vegetarian".
"""
from __future__ import annotations

from . import predicates as preds
from .model import Fact

from .vocabulary import load as _vocabulary

_PARTNER = _vocabulary().row("partner")
_OTHER_SLOTS = {p for row in _vocabulary().rows if row is not _PARTNER for p in row.slot}
# the partner slot's predicates, and the related wordings that are no other row's slot ("is dating")
PARTNER_PREDICATES = frozenset(_PARTNER.slot) | (frozenset(_PARTNER.related) - _OTHER_SLOTS)
DIET_EXCLUDES = _vocabulary().diet_excludes
STOP = frozenset("""the a an my our your his her their of to in on at for with and or from up off out
 user has have does is am are was were be been being not no some any this that these those""".split())


def stem(word: str) -> str:
    """A crude stem, enough to match "smoking" / "smokes" / "smoke" and "running" / "runs"."""
    w = word.lower().strip(".,!?'\"")
    for suffix in ("ing", "ers", "er", "es", "ed", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def stems(text: str) -> set[str]:
    return {stem(x) for x in text.replace("-", " ").split() if x.lower() not in STOP and len(x) > 2}


def ended_by(predicate: str, obj: str, fact: Fact) -> bool:
    """Whether an ending said as ``predicate · obj`` ends the live ``fact``."""
    if preds.is_negated(fact.predicate):
        return False          # "stopped eating meat" never ends "does not eat meat"
    if predicate in PARTNER_PREDICATES or predicate == "has partner":
        if fact.predicate not in PARTNER_PREDICATES:
            return False
        return not obj or obj.lower() in fact.object.lower()
    if not obj:
        return fact.predicate == predicate
    if fact.object.lower() == obj.lower():
        return True
    mine = stems(obj)
    if predicate.startswith("prefers "):
        return fact.predicate == predicate and bool(mine & stems(fact.object + " " + fact.text))
    if fact.predicate.startswith("prefers "):
        return False
    return bool(mine & stems(f"{fact.predicate} {fact.object}"))


def diet_conflict(predicate: str, obj: str, fact: Fact) -> bool:
    """Whether a new ``predicate · obj`` rules out the live ``fact`` by diet."""
    if predicate == "follows diet" and obj in DIET_EXCLUDES:
        return fact.predicate in ("eats", "likes") and bool(
            {stem(x) for x in fact.object.split()} & {stem(x) for x in DIET_EXCLUDES[obj]})
    if predicate == "eats" and fact.predicate == "follows diet" and fact.object in DIET_EXCLUDES:
        return bool({stem(x) for x in obj.split()} & {stem(x) for x in DIET_EXCLUDES[fact.object]})
    return False


def partner_upgrade(predicate: str, obj: str, fact: Fact) -> bool:
    """"is married to · kenji" ends "has boyfriend · kenji": one partner, a new word for them."""
    return (predicate in PARTNER_PREDICATES and fact.predicate in PARTNER_PREDICATES
            and fact.predicate != predicate and fact.object.lower() == obj.lower()
            and predicate not in ("lives with",) and fact.predicate not in ("lives with",))


def rival_slots(predicate: str) -> list[str]:
    """The slots whose live facts a new ``predicate`` fact may end by diet or by a new partner word."""
    if predicate == "follows diet":
        return ["eats", "likes"]
    if predicate == "eats":
        return ["follows diet"]
    if predicate in PARTNER_PREDICATES:
        return sorted(PARTNER_PREDICATES - {predicate})
    return []
