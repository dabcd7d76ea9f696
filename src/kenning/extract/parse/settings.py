"""Requests about how the assistant should answer: units, time format, language, tone, format, length.

Each setting is a one-value slot ``prefers <slot>``, so a later request replaces an earlier one
("use metric" → "switch to feet and inches"); "drop the bullet points" ends the live one.
"""
from __future__ import annotations

import re

from .. import lexicon as lx
from .facts import make

# value words → slot; the words are general vocabulary of each setting, matched on whole words
SLOTS = [
    ("units", r"metric|imperial|celsius|fahrenheit|kilometres|kilometers|kilograms|kilos|feet|inches|pounds|"
              r"miles|metres|meters|centimetres|centimeters|us units|uk units"),
    ("theme", r"dark mode|light mode|dark theme|light theme|night mode|high contrast"),
    ("time format", r"24h|24-hour|24 hour|12h|12-hour|12 hour|am/pm|a\.m\./p\.m\.|military time"),
    ("answer format", r"bullet points|bullets|bullet lists|lists|paragraphs|prose|tables|numbered lists|"
                      r"headings|markdown|plain text"),
    ("answer length", r"short|shorter|brief|concise|long|longer|detailed|in depth|one sentence|succinct"),
    ("tone", r"formal|informal|casual|academic|professional|friendly|technical|simply|simple|plain english|"
             r"jargon|normally|blunt|gentle"),
    ("servings", r"for \d+|for (?:one|two|three|four|five|six|seven|eight) (?:people|persons|servings)?|"
                 r"\d+ (?:people|servings|portions)"),
]
_COMPILED = [(slot, re.compile(rf"\b(?:{rx})\b", re.I)) for slot, rx in SLOTS]
_LANG = re.compile(r"\b(?:in|to|into) (" + "|".join(sorted(lx.LANGUAGES, key=len, reverse=True)) + r")\b", re.I)
_REQUEST_VERB = re.compile(r"\b(?:use|give|keep|make|write|reply|replying|answer|respond|talk|switch|explain|"
                           r"stick|be|get|go|show|put|format|list|drop|stop|skip|ditch|lose|quit|avoid|"
                           r"change|set|speak|convert|like|prefer|rather|want)\b", re.I)
_DROP = re.compile(r"\b(?:drop|stop using|skip|ditch|lose|no more|quit|without|don't use|do not use|avoid)\b", re.I)
_UNIT_VALUE = {"metric": "metric", "celsius": "metric", "kilometres": "metric", "kilometers": "metric",
               "kilograms": "metric", "kilos": "metric", "metres": "metric", "meters": "metric",
               "centimetres": "metric", "centimeters": "metric", "imperial": "imperial",
               "fahrenheit": "imperial", "feet": "imperial", "inches": "imperial", "pounds": "imperial",
               "miles": "imperial", "us units": "imperial", "uk units": "metric"}


def requests(text: str, is_request: bool) -> list:
    """Settings asked for in ``text`` (one sentence). ``is_request``: the parse saw an imperative,
    a "could you …" or a "you can …" addressed to the assistant."""
    if not is_request or not _REQUEST_VERB.search(text):
        return []
    out = []
    dropping = bool(_DROP.search(text))
    lang = _LANG.search(text)
    if lang and not dropping:
        value = lang.group(1).lower()
        out.append(make("preference", "prefers language", value, None, text=f"user prefers replies in {value}"))
    for slot, rx in _COMPILED:
        found = [m.group(0).lower() for m in rx.finditer(text)]
        if not found:
            continue
        if slot == "units":
            kinds = {_UNIT_VALUE.get(f, f) for f in found}
            value = "imperial" if "imperial" in kinds and ("metric" not in kinds or text.lower().rfind("metric")
                                                           < max(text.lower().rfind(f) for f in found
                                                                 if _UNIT_VALUE.get(f) == "imperial")) else "metric"
            shown = ", ".join(dict.fromkeys(found))
            out.append(make("preference", "prefers units", f"{value} units", None,
                            text=f"user prefers {value} units ({shown})"))
            continue
        if slot == "time format":
            value = "24-hour" if any(f.startswith("24") or f == "military time" for f in found) else "12-hour"
            shown = "am/pm" if value == "12-hour" else "24h"
            out.append(make("preference", "prefers time format", f"{value} time", None,
                            text=f"user prefers {value} time ({shown})"))
            continue
        if slot == "servings":
            n = re.search(r"\d+|one|two|three|four|five|six|seven|eight", found[-1]).group(0)
            out.append(make("preference", "prefers servings", f"for {n}", None,
                            text=f"user prefers recipes for {n} people"))
            continue
        value = found[-1]
        if slot == "tone" and value in ("simply",):
            value = "simple"
        if slot == "tone" and value == "normally":
            value = "casual"
        if dropping and slot in ("answer format", "tone"):
            later = _after_drop(text, rx)
            if later is None:
                out.append(make("preference", f"prefers {slot}", found[0], None, ends=True,
                                text=f"user prefers {found[0]}"))
                continue
            value = "casual" if later == "normally" else later
        out.append(make("preference", f"prefers {slot}", value, None, text=f"user prefers {value}"))
    return out


def _after_drop(text: str, rx) -> str | None:
    """"drop the bullet points, just write normal paragraphs": the value named after the dropped one."""
    m = _DROP.search(text)
    after = [x.group(0).lower() for x in rx.finditer(text[m.end():])]
    if len(after) >= 2 and after[-1] != after[0]:
        return after[-1]
    return None


def slot_of(value: str) -> str | None:
    """The setting a preferred value fills ("dark mode" → theme), or None."""
    for slot, rx in _COMPILED:
        if slot not in ("answer length", "servings", "tone") and rx.search(value):
            return slot
    return None
