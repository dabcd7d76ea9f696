"""How the dashboard prints stored values: the person's own casing, readable dates."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kenning.server.dashboard.display import day, moment, original_case


@pytest.mark.parametrize("value, quote, expected", [
    ("lisbon", "I moved to Lisbon last month.", "Lisbon"),
    ("2019 nissan leaf", "I drive a 2019 Nissan  Leaf.", "2019 Nissan Leaf"),     # spacing tidied
    ("hiking", "Hiking is my thing.", "hiking"),                  # a sentence's capital is not the word's
    ("hiking", "I love it. Hiking, mostly.", "hiking"),
    ("ikea", "I work at IKEA now.", "IKEA"),
    ("maya", "my sister maya", "maya"),
    ("art", "I started a new part-time job.", "art"),             # whole words only
    ("cello", "", "cello"),
    ("porto", "We went to Lisbon.", "porto"),                     # not said: as stored
    ("c++", "I write C++ at work.", "C++"),
])
def test_original_case(value, quote, expected):
    assert original_case(value, quote) == expected


def test_readable_dates_are_in_utc():
    t = datetime(2026, 8, 3, 23, 30, tzinfo=timezone.utc)
    assert day(t) == "3 Aug 2026" and moment(t) == "3 Aug 2026, 23:30 UTC" and day(None) == ""
