"""Relative and partial dates in a sentence, resolved against the message time.

One rule everywhere (the model prompt states the same): "next <month>" is the first such month after
the message's month ("next June" said in April 2026 is June 2026, said in October 2026 June 2027); a
bare or "in" month is the last one for a past clause and the next one for a plan; a season starts on the
first day of its first month in the north (spring 1 March, summer 1 June, autumn 1 September, winter
1 December); "this week/month/year" is the message time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from dateutil.easter import easter
from dateutil.relativedelta import relativedelta

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "several": 3}
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
UNITS = {"day": "days", "week": "weeks", "weekend": "weeks", "month": "months", "year": "years"}

# fixed-date holidays as (month, day); Easter and Thanksgiving move and are computed
HOLIDAYS = {"christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
            "boxing day": (12, 26), "new year's eve": (12, 31), "nye": (12, 31), "new year's day": (1, 1),
            "halloween": (10, 31), "valentine's day": (2, 14), "valentine's": (2, 14),
            "st patrick's day": (3, 17), "fourth of july": (7, 4), "4th of july": (7, 4),
            "bonfire night": (11, 5), "easter": None, "easter sunday": None, "thanksgiving": None}
_HOLIDAY_DAYS = {k.replace("'", ""): v for k, v in HOLIDAYS.items()}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
PATTERNS = [
    ("ago", rf"\b{_NUM} (?P<unit>day|weekend|week|month|year)s? ago\b"),
    ("last", r"\blast (?P<unit>day|week|month|year|weekend)\b"),
    ("next", r"\bnext (?P<unit>day|week|month|year|weekend)\b"),
    ("this", r"\b(?:later|end of) this (?P<unit>week|month|year)\b"),
    ("this_weekend", r"\b(?:this|over the|on the) weekend\b"),
    ("this_now", r"\bthis (?P<unit>week|month|year)\b"),
    ("in_n", rf"\bin {_NUM} (?P<unit>day|week|month|year)s?\b"),
    # "for about six years": an approximate duration dates a start as the exact one does
    ("for_n", rf"\bfor (?:the (?:past|last) )?(?:(?:about|around|roughly|approximately|nearly|almost|over|"
              rf"more than|close to|some|just over|just under) )?{_NUM} (?P<unit>day|week|month|year)s?\b"),
    ("weekday", r"\b(?P<prep>last|next|this|on|since|starting|from) (?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"),
    ("yesterday", r"\b(?:yesterday|last night)\b"),
    ("tomorrow", r"\btomorrow\b"),
    ("today", r"\b(?:today|tonight|this morning|right now)\b"),
    ("since_year", r"\bsince (?P<year>(?:19|20)\d\d)\b"),
    ("month_day", rf"\b(?:(?P<prep>on|in|since|by|until|from) )?{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d\d))?\b"),
    ("day_month", rf"\b(?:(?P<prep>on|since|by|until|from) )?(?:the )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH}(?:,? (?P<year>(?:19|20)\d\d))?\b"),
    ("month", rf"\b(?P<prep>in|since|by|from|this|last|next|until|starting(?: in)?|end of|the end of|mid|early|late) {_MONTH}(?: (?P<year>(?:19|20)\d\d))?\b"),
    ("ordinal", r"\b(?P<prep>on|since|from|by|until) the (?P<day>\d{1,2})(?:st|nd|rd|th)\b"),
    ("year", r"\b(?:in|since|from) (?P<year>(?:19|20)\d\d)\b"),
    ("season", r"\b(?P<prep>last|this|next|in the|over the|during the|in|since) (?P<season>summer|winter|spring|fall|autumn)\b"),
    ("holiday", r"\b(?:(?P<prep>on|since|by|until|from|over|at|for|last|next|this) )?(?P<hol>"
                + "|".join(sorted(HOLIDAYS, key=len, reverse=True)).replace("'", "'?") + r")(?:,? (?P<year>(?:19|20)\d\d))?\b"),
]
_COMPILED = [(name, re.compile(rx, re.I)) for name, rx in PATTERNS]


@dataclass
class DatePhrase:
    text: str
    when: datetime
    direction: str  # "past", "future" or "either": which way a bare month may go
    start: int
    end: int
    kind: str = ""   # which pattern found it ("since_year", "for_n", "ago", …)


_DAY_WORDS = frozenset("today tonight tomorrow yesterday weekend morning evening night week month year".split())


def only_time(text: str) -> bool:
    """Whether ``text`` says nothing but when: "saturday", "january", "last week", "the 14th" (a
    recognizer that took "moved in saturday" for a place gives such an object)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    rest = [w for w in words if w not in ("the", "this", "last", "next", "on", "in", "of", "every")]
    if not rest:
        return False
    plain = all(w in MONTHS or w in WEEKDAYS or w.rstrip("s") in WEEKDAYS or w in _DAY_WORDS
                or re.fullmatch(r"\d{1,4}(?:st|nd|rd|th)?", w) for w in rest)
    return plain or (len(words) > 1 and (found := find(text, datetime(2000, 1, 1))) is not None
                     and found.start == 0 and found.end >= len(text.strip()))


def find(sentence: str, at: datetime, tense: str = "present") -> DatePhrase | None:
    """The first date phrase in ``sentence``; ``tense`` picks the year of a bare month."""
    for name, rx in _COMPILED:
        m = rx.search(sentence)
        if m:
            try:
                when, direction = _resolve(name, m, at, tense)
            except (ValueError, OverflowError):  # "last year" said in the year 1: no such date
                continue
            if when is not None:
                kind = "since" if m.group(0).lower().startswith("since") else name
                return DatePhrase(m.group(0), when, direction, m.start(), m.end(), kind)
    return None


def _num(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _resolve(name: str, m: re.Match, at: datetime, tense: str):
    g = m.groupdict()
    day0 = at.replace(hour=0, minute=0, second=0, microsecond=0)
    if name == "for_n":
        unit = g["unit"].lower()
        return at - relativedelta(**{UNITS[unit]: _num(g["n"])}), "past"
    if name == "weekday":
        wd, prep = WEEKDAYS[g["wd"].lower()], g["prep"].lower()
        back = (day0.weekday() - wd) % 7 or 7
        ahead = (wd - day0.weekday()) % 7 or 7
        if prep in ("last", "since") or (prep == "on" and tense == "past"):
            return day0 - timedelta(days=back), "past"
        if prep == "next":  # the named day of next week
            return day0 + timedelta(days=7 - day0.weekday() + wd), "future"
        return day0 + timedelta(days=ahead), "future"
    if name in ("ago", "last", "next", "in_n"):
        unit = g["unit"].lower()
        if unit == "weekend" and name == "ago":
            unit = "week"
        elif unit == "weekend":
            days = (at.weekday() - 5) % 7 or 7  # the Saturday before (or after)
            return (day0 - timedelta(days=days), "past") if name == "last" else (
                day0 + timedelta(days=(5 - at.weekday()) % 7 or 7), "future")
        n = _num(g.get("n") or "1") if name in ("ago", "in_n") else 1
        delta = relativedelta(**{UNITS[unit]: n})
        return (at - delta, "past") if name in ("ago", "last") else (at + delta, "future")
    if name == "this":   # "later this month": by its end, and after now
        unit = g["unit"].lower()
        end = {"week": at + timedelta(days=6 - at.weekday()), "month": at + relativedelta(day=31),
               "year": at.replace(month=12, day=31)}[unit]
        return max(at, end.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)), "future"
    if name == "this_now":   # "in Paris for a conference this week": the message's own week, month or year
        return at, "either"
    if name == "this_weekend":   # the Saturday ahead, or the one just past when said on a Sunday about it
        ahead = (5 - at.weekday()) % 7
        if at.weekday() == 6 and tense == "past":
            return day0 - timedelta(days=1), "past"
        return day0 + timedelta(days=ahead), "future" if ahead else "either"
    if name == "yesterday":
        return at - timedelta(days=1), "past"
    if name == "tomorrow":
        return at + timedelta(days=1), "future"
    if name == "today":
        return at, "either"
    if name in ("since_year", "year"):
        return at.replace(year=int(g["year"]), month=1, day=1, hour=0, minute=0, second=0, microsecond=0), "past"
    if name == "ordinal":   # "on the 3rd": this month's, or last month's if that is yet to come
        day = int(g["day"])
        when = _safe(at, at.year, at.month, min(day, 28) if day > 28 else day)
        if when > at and tense != "future":
            when = _safe(at, at.year if at.month > 1 else at.year - 1, at.month - 1 or 12, day)
        elif when < day0 and tense == "future":
            when = _safe(at, at.year + (at.month == 12), at.month % 12 + 1, day)
        return when, "past" if when <= at else "future"
    if name == "season":   # a season starts where it starts in the north: Mar, Jun, Sep, Dec
        month = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}[g["season"].lower()]
        prep = g["prep"].lower()
        when = _safe(at, at.year, month, 1)
        if prep in ("last", "since") or (tense == "past" and prep not in ("this", "next")):
            if when > at:
                when = _safe(at, at.year - 1, month, 1)
        elif prep == "next" or when.date() < (at - relativedelta(months=3)).date():
            if when <= at:
                when = _safe(at, at.year + 1, month, 1)
        return when, "past" if when <= at else "future"
    if name == "holiday":
        return _holiday(g["hol"].lower().replace("'", ""), (g.get("prep") or "").lower(), g.get("year"), at, tense)
    month = MONTHS[g["month"].lower().rstrip(".")]
    prep = (g.get("prep") or "").lower()
    day = int(g.get("day") or {"end of": 28, "the end of": 28, "mid": 15, "late": 20}.get(prep, 1))
    if prep in ("end of", "the end of", "mid", "early", "late"):
        prep = "in"
    if g.get("year"):
        year = int(g["year"])
    else:
        want_past = prep in ("since", "last", "from") or (tense == "past" and not prep.startswith("starting"))
        want_future = prep in ("next", "by", "until") or prep.startswith("starting") or tense == "future"
        year = at.year
        candidate = _safe(at, year, month, day)
        if want_past and candidate > at:
            year -= 1
        elif prep == "next" and month <= at.month:
            year += 1  # "next July" said in July
        elif not want_past and candidate.date() < at.date() and (want_future or tense == "present"):
            if (month, day) < (at.month, 1):  # a month already over: next year
                year += 1
    when = _safe(at, year, month, day)
    direction = "past" if when <= at else "future"
    return when, direction


def _holiday_on(key: str, year: int) -> tuple[int, int]:
    fixed = _HOLIDAY_DAYS.get(key)
    if fixed is not None:
        return fixed
    if key.startswith("easter"):
        d = easter(year)
        return d.month, d.day
    first = datetime(year, 11, 1).weekday()      # US Thanksgiving: the fourth Thursday of November
    return 11, 1 + (3 - first) % 7 + 21


def _holiday(key: str, prep: str, year: str | None, at: datetime, tense: str):
    """"on christmas eve" said in a past clause is the last one; in a future clause, the next."""
    if year:
        y = int(year)
    else:
        y = at.year
        when = _safe(at, y, *_holiday_on(key, y))
        if (tense == "past" or prep in ("since", "last", "from")) and when > at:
            y -= 1
        elif tense != "past" and prep not in ("since", "last", "from") and when.date() < at.date():
            y += 1
    when = _safe(at, y, *_holiday_on(key, y))
    return when, "past" if when <= at else "future"


def _safe(at: datetime, year: int, month: int, day: int) -> datetime:
    try:
        return at.replace(year=year, month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
    except ValueError:
        return at.replace(year=year, month=month, day=28, hour=0, minute=0, second=0, microsecond=0)
