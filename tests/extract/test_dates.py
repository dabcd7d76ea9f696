"""Relative and partial dates resolved against the message time (kenning.extract.dates.find)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kenning.extract.dates import find, only_time

AT = datetime(2026, 7, 10, 9, 30, tzinfo=timezone.utc)  # a Friday


def d(y, m, day, h=0, mi=0):
    return datetime(y, m, day, h, mi, tzinfo=timezone.utc)


@pytest.mark.parametrize("phrase, when", [
    ("last month", d(2026, 6, 10, 9, 30)),
    ("last week", d(2026, 7, 3, 9, 30)),
    ("last year", d(2025, 7, 10, 9, 30)),
    ("3 days ago", d(2026, 7, 7, 9, 30)),
    ("three weeks ago", d(2026, 6, 19, 9, 30)),
    ("a couple of days ago", d(2026, 7, 8, 9, 30)),
    ("2 years ago", d(2024, 7, 10, 9, 30)),
    ("yesterday", d(2026, 7, 9, 9, 30)),
    ("since 2019", d(2019, 1, 1)),
    ("for about six years", d(2020, 7, 10, 9, 30)),
    ("for almost 3 months", d(2026, 4, 10, 9, 30)),
    ("in 2019", d(2019, 1, 1)),
    ("since March", d(2026, 3, 1)),
    ("last weekend", d(2026, 7, 4)),
    ("March 5, 2024", d(2024, 3, 5)),
])
def test_past_phrases(phrase, when):
    for tense in ("present", "past", "future"):
        p = find(f"I did it {phrase}.", AT, tense)
        assert p is not None, phrase
        assert p.when == when, (phrase, tense)
        assert p.direction == "past"
        assert p.text.lower() == phrase.lower()


@pytest.mark.parametrize("phrase, when", [
    ("next year", d(2027, 7, 10, 9, 30)),
    ("next month", d(2026, 8, 10, 9, 30)),
    ("next week", d(2026, 7, 17, 9, 30)),
    ("in 3 days", d(2026, 7, 13, 9, 30)),
    ("in two months", d(2026, 9, 10, 9, 30)),
    ("tomorrow", d(2026, 7, 11, 9, 30)),
])
def test_future_phrases(phrase, when):
    p = find(f"It happens {phrase}.", AT, "present")
    assert p.when == when and p.direction == "future", phrase


def test_a_bare_month_goes_by_tense():
    future = find("I pick up my car in September.", AT, "future")
    present = find("I run a marathon in September.", AT, "present")
    past = find("I moved here in September.", AT, "past")
    assert future.when == present.when == d(2026, 9, 1) and future.direction == "future"
    assert past.when == d(2025, 9, 1) and past.direction == "past"


def test_a_month_already_over_is_next_year_in_the_present_tense():
    assert find("The half marathon is in March.", AT, "present").when == d(2027, 3, 1)
    assert find("I started in March.", AT, "past").when == d(2026, 3, 1)


def test_month_with_a_year_is_that_month():
    assert find("I moved in September 2021.", AT, "present").when == d(2021, 9, 1)


def test_prepositions_fix_the_direction_of_a_month():
    assert find("It is due by March.", AT, "past").when == d(2026, 3, 1)  # tense wins over "by" in the past
    assert find("It is due by March.", AT, "present").when == d(2027, 3, 1)
    assert find("I've been here since May.", AT, "future").when == d(2026, 5, 1)
    assert find("Next March I retire.", AT, "present").when == d(2027, 3, 1)


def test_day_that_does_not_exist_in_that_year_is_clamped():
    assert find("It was on February 29th.", AT, "past").when == d(2026, 2, 28)


def test_today_is_the_message_time():
    p = find("I got a dog today.", AT)
    assert p.when == AT and p.direction == "either"


def test_phrase_position_lets_callers_cut_it_out():
    sentence = "I moved to Lisbon last month."
    p = find(sentence, AT, "past")
    assert sentence[p.start:p.end] == "last month"
    assert (sentence[:p.start] + sentence[p.end:]).strip() == "I moved to Lisbon ."


def test_case_insensitive_and_abbreviated():
    assert find("LAST MONTH", AT).when == d(2026, 6, 10, 9, 30)
    assert find("since Sept. 2020", AT).when == d(2020, 9, 1)
    assert find("in Dec", AT, "future").when == d(2026, 12, 1)


@pytest.mark.parametrize("sentence", ["I live in Berlin.", "I have 3 cats.", "Lasting memories", "in 1850",
                                      "I may go", ""])
def test_no_date_phrase(sentence):
    assert find(sentence, AT) is None


def test_month_ends_clamp_relative_months():
    assert find("last month", d(2026, 3, 31)).when == d(2026, 2, 28)


@pytest.mark.parametrize("phrase, when", [("since March 5th", d(2026, 3, 5)), ("since June 30", d(2026, 6, 30))])
def test_since_a_day_is_in_the_past(phrase, when):
    p = find(f"I have been vegetarian {phrase}.", AT, "present")
    assert p.when == when and p.direction == "past"


def test_next_month_name_of_the_current_month_is_next_year():
    p = find("We marry next July.", AT, "future")
    assert p.when == d(2027, 7, 1) and p.direction == "future"


@pytest.mark.parametrize("said, when", [(d(2026, 4, 10), d(2026, 6, 1)), (d(2026, 10, 5), d(2027, 6, 1)),
                                        (d(2026, 6, 2), d(2027, 6, 1))])
def test_next_june_is_the_first_june_after_the_messages_month(said, when):
    assert find("We're going to Crete next June.", said, "future").when == when


def test_this_week_is_the_message_time():
    p = find("I'm in Paris for a conference this week.", AT, "present")
    assert (p.text, p.when, p.direction) == ("this week", AT, "either")


@pytest.mark.parametrize("phrase, tense, when", [("in the spring", "past", d(2026, 3, 1)),
                                                 ("this autumn", "future", d(2026, 9, 1)),
                                                 ("next summer", "future", d(2027, 6, 1))])
def test_seasons_resolve(phrase, tense, when):
    assert find(f"I left {phrase}.", AT, tense).when == when


@pytest.mark.parametrize("text, only", [("saturday", True), ("January", True), ("last week", True), ("the 14th", True),
                                        ("14 March 2024", True), ("Lisbon", False), ("Sunday market", False),
                                        ("Porto Alegre", False), ("", False)])
def test_only_time_tells_a_time_from_a_name(text, only):
    assert only_time(text) is only
