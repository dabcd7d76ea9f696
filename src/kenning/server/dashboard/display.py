"""How the dashboard shows stored values to people: original casing, readable dates, whole listings."""
from __future__ import annotations

import re
from datetime import datetime, timezone

from ...model import UNKNOWN_START, Fact

MOST_FACTS = 2_000     # the facts a whole-dataset view (time line, graph, transcript) reads at most
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\s*$")


def original_case(value: str, quote: str) -> str:
    """``value`` as the person wrote it in ``quote`` (facts store objects lower-cased: "lisbon" was
    "Lisbon"). A capital only because the word starts a sentence is not kept; no match leaves it as is."""
    words = value.split()
    if not words or not quote:
        return value
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
    found = re.search(pattern, quote, re.IGNORECASE)
    if found is None:
        return value
    said = " ".join(found.group(0).split())
    if said[1:] == said[1:].lower() and _SENTENCE_START.search(quote[:found.start()]):
        return value                # "Hiking is fun": a sentence's capital, not the word's own
    return said


def shown(fact: Fact) -> str:
    """A fact's value as the dashboard prints it."""
    return original_case(fact.object, fact.source_quote)


def anchor_shown(fact: Fact) -> str:
    return shown(fact) if fact.object_is_entity else fact.anchor


UNSAID = "an unknown date"   # a start nobody said (model.UNKNOWN_START)


def day(value: datetime | None) -> str:
    """A readable day that never wraps badly: 3 Aug 2026."""
    if value is None:
        return ""
    if value <= UNKNOWN_START:
        return UNSAID
    t = value.astimezone(timezone.utc)
    return f"{t.day} {t:%b %Y}"


def moment(value: datetime | None) -> str:
    """A readable instant: 3 Aug 2026, 10:00 UTC."""
    if value is None:
        return ""
    if value <= UNKNOWN_START:
        return UNSAID
    t = value.astimezone(timezone.utc)
    return f"{t.day} {t:%b %Y, %H:%M} UTC"


def every_fact(m, dataset: str, kw: dict, *, include_invalidated: bool = True, as_of=None,
               most: int = MOST_FACTS) -> tuple[list[Fact], int]:
    """A dataset's facts in time order, read a page at a time up to ``most``; and how many there are."""
    facts: list[Fact] = []
    total = 0
    while len(facts) < most:
        page = m.list_facts(dataset, limit=100, offset=len(facts), include_invalidated=include_invalidated,
                            as_of=as_of, **kw)
        facts += page.facts
        total = page.total
        if not page.facts or len(facts) >= total:
            break
    return facts[:most], total
