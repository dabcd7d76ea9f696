"""Time in questions and in what was said: does a question ask *when*, does a message say when
something happened, and which stretch of time does a question name ("last May", "in 2023").

Deterministic and English only, like the offline extractor. Windows resolve against the time the
question is asked (``now``, or the ``as_of`` of a point-in-time recall), the way the write path
resolves "last month" against the time a message was said.
"""
from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .timeutil import MONTHS

_MONTH = "|".join(MONTHS + [m[:3] for m in MONTHS if len(m) > 3] + ["sept"])
_WHEN = re.compile(
    r"^\s*(?:and\s+|so\s+)?when\b|\bwhat\s+(?:date|day|month|year|time|week|weekend)\b|\bwhich\s+(?:date|day|month|"
    r"year|week|weekend)\b|\bhow\s+long\b|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bsince\s+when\b|"
    r"\bon\s+what\s+occasion\b|\bwhat\s+(?:age|time\s+of\s+year)\b", re.I)
# What a message says about when: a date, a weekday, a relative day, a span ago, a season.
_TIME_EXPRESSION = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|last\s+(?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    rf"time|monday|tuesday|wednesday|thursday|friday|saturday|sunday|{_MONTH})|next\s+(?:week|weekend|month|year|"
    rf"summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|this\s+(?:morning|"
    rf"afternoon|evening|week|weekend|month|year|summer|winter|spring|fall|autumn)|(?:a|an|one|two|three|four|five|six|"
    rf"seven|eight|nine|ten|few|couple\s+of|\d+)\s+(?:days?|weeks?|months?|years?)\s+(?:ago|back|before|earlier|later)|"
    rf"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|(?:in|since|until|by)\s+(?:19|20)\d\d|"
    rf"(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b|"
    rf"(?:in|since|until|by|last|early|late|mid)\s+(?:{_MONTH})\b|\d{{4}}-\d\d-\d\d|(?:19|20)\d\d|"
    rf"on\s+the\s+\d{{1,2}}(?:st|nd|rd|th)\b|(?:christmas|new\s+year'?s?|easter|thanksgiving|halloween|valentine'?s?)(?:\s+"
    rf"(?:eve|day))?|tonight|this\s+past\s+(?:week|weekend|month)|recently|the\s+other\s+day|just\s+got\s+back)", re.I)


def asks_when(query: str) -> bool:
    """The question asks for a time: "When did she…", "What year…", "How long ago…"."""
    return bool(_WHEN.search(query))


@functools.lru_cache(maxsize=8192)   # the same messages come back query after query
def says_when(text: str) -> bool:
    """The text carries a time expression ("last Saturday", "two weeks ago", "in May 2023")."""
    return bool(_TIME_EXPRESSION.search(text))


@dataclass(frozen=True)
class Window:
    """A stretch of time a question names: [start, end)."""

    start: datetime
    end: datetime

    def holds(self, t: datetime) -> bool:
        return self.start <= t < self.end

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        return start < self.end and (end is None or end > self.start)


def _month(year: int, month: int) -> Window:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    return Window(start, start + timedelta(days=calendar.monthrange(year, month)[1]))


def _year(year: int) -> Window:
    return Window(datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc))


def _month_number(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(word[:3]))


_YEAR = r"((?:19|20)\d\d)"
_RULES: list[tuple[re.Pattern, object]] = []


def _rule(pattern: str):
    def add(fn):
        _RULES.append((re.compile(pattern, re.I), fn))
        return fn
    return add


@_rule(rf"\b(?:in|during|of|on)?\s*(?:early\s+|late\s+|mid-?)?({_MONTH})\.?\s+(?:of\s+)?{_YEAR}\b")
def _month_year(m, now):
    return _month(int(m.group(2)), _month_number(m.group(1)))


@_rule(rf"\blast\s+({_MONTH})\b")
def _last_month_name(m, now):
    month = _month_number(m.group(1))
    return _month(now.year if month < now.month else now.year - 1, month)


@_rule(rf"\bin\s+({_MONTH})\b(?!\s*\d)")
def _in_month(m, now):  # the latest such month not after now
    month = _month_number(m.group(1))
    return _month(now.year if month <= now.month else now.year - 1, month)


@_rule(rf"\b(?:in|during|of|since|before|after)\s+{_YEAR}\b|^\s*{_YEAR}\b")
def _in_year(m, now):
    return _year(int(m.group(1) or m.group(2)))


@_rule(r"\blast\s+month\b")
def _last_month(m, now):
    first = now.replace(day=1)
    before = first - timedelta(days=1)
    return _month(before.year, before.month)


@_rule(r"\bthis\s+month\b")
def _this_month(m, now):
    return _month(now.year, now.month)


@_rule(r"\blast\s+year\b")
def _last_year(m, now):
    return _year(now.year - 1)


@_rule(r"\bthis\s+year\b")
def _this_year(m, now):
    return _year(now.year)


@_rule(r"\blast\s+week(?:end)?\b|\bpast\s+week\b")
def _last_week(m, now):
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return Window(day - timedelta(days=7), day)


@_rule(r"\byesterday\b")
def _yesterday(m, now):
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return Window(day - timedelta(days=1), day)


def time_window(query: str, now: datetime) -> Window | None:
    """The stretch of time the question names, resolved against ``now``; None when it names none."""
    for pattern, fn in _RULES:
        m = pattern.search(query)
        if m:
            return fn(m, now)  # type: ignore[operator]
    return None


_RELATIVE = re.compile(r"\b(before|after|since|until|prior\s+to)\s+(.{3,}?)[\s?.!]*$", re.I)
EARLIEST = datetime(1, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9999, 12, 31, tzinfo=timezone.utc)


def relative_to_event(query: str) -> tuple[str, str] | None:
    """("before", "she moved to Edinburgh") for "Where did she work before she moved to Edinburgh?":
    a window bounded by an event the memory has to date. None when the bound is itself a time
    ("before May 2023" is a named window, see ``time_window``)."""
    m = _RELATIVE.search(query)
    if not m or time_window(m.group(2), datetime.now(timezone.utc)) is not None or says_when(m.group(2)):
        return None
    side = "before" if m.group(1).lower() in ("before", "until") or m.group(1).lower().startswith("prior") else "after"
    return side, m.group(2)


def around(side: str, t: datetime) -> Window:
    """The window on one side of an event's time."""
    return Window(EARLIEST, t) if side == "before" else Window(t, LATEST)
