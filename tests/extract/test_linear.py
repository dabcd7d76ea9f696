"""Extraction time grows linearly with the length of a message, whatever it holds.

Timed side by side (best of three at n and at 2n characters), so a busy machine slows both;
the bound is generous: 2n must take under three times as long as n. Absolute figures live in
``bench/adversarial.py``.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from kenning.extract.parse import ParseExtractor

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
N = 12_000


def _shapes(n: int) -> dict[str, str]:
    chat = "I moved to Berlin three years ago and passed my German exam last week. "
    return {
        "whitespace": ("I live in" + " " * 500 + "Lisbon ") * (n // 516 + 1),
        "repeated_word": "buffalo " * (n // 8 + 1),
        "no_punctuation": " ".join("the cat walks under seven green windows slowly".split() * (n // 45 + 1)),
        "parentheses": "(" * (n // 2) + "I live in Lisbon" + ")" * (n // 2),
        "chat": chat * (n // len(chat) + 1),
    }


@pytest.fixture(scope="module")
def extractor():
    ex = ParseExtractor()
    ex.extract("warm up", at=AT)
    return ex


def _best(ex, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        ex.extract(text, at=AT)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("shape", list(_shapes(10)))
def test_time_for_twice_the_text_is_under_three_times(extractor, shape):
    small = _shapes(N)[shape][:N]
    large = _shapes(2 * N)[shape][: 2 * N]
    t_small, t_large = _best(extractor, small), _best(extractor, large)
    assert t_large < 3 * max(t_small, 0.005), f"{shape}: {t_small:.3f} s for {N:,}, {t_large:.3f} s for {2 * N:,}"


def test_adversarial_text_still_yields_its_fact(extractor):
    cands = extractor.extract("I live in" + " " * 5000 + "Lisbon.", at=AT)
    assert [(c.predicate, c.object) for c in cands] == [("lives in", "lisbon")]


def test_source_quote_is_the_users_own_words(extractor):
    text = "hey!  im Dan,   31 (data analyst) at Indeed... sooooo tired lol"
    quotes = {c.source_quote for c in extractor.extract(text, at=AT)}
    assert quotes and all(q in text for q in quotes), quotes


def test_cleaning_never_rewrites_part_of_a_word(extractor):
    # "bc" is chat for "because" and "4444" a run, but only as whole words
    for name in ("zqorgc9238ad2bc", "zqorge444462790", "zqorge9871bf1a0"):
        cands = extractor.extract(f"I work at {name}.", at=AT)
        assert [(c.predicate, c.object) for c in cands] == [("works at", name)]


def test_a_message_past_its_time_budget_stops_being_mined(extractor):
    """Issue 16, items 2 and 10: however slow a message is to mine, a worker moves on after the budget."""
    text = "I live in Berlin and I work at the hospital.\n" * 400
    whole = extractor.extract_many([text, "I love hiking."], at=[AT, AT])
    assert not any(c.rejected for c in whole[0]) and any(c.predicate == "lives in" for c in whole[0])
    tight = ParseExtractor(budget_seconds=1e-9)
    tight._nlp = extractor._nlp       # the same parser, another budget
    cut, after = tight.extract_many([text, "I love hiking."], at=[AT, AT])
    assert [c.rejected for c in cut if c.rejected][0].startswith("time budget: mining stopped after")
    assert len(cut) < len(whole[0])
    assert [c.rejected for c in after if c.rejected]     # each message has a budget of its own


def test_the_receipt_says_the_budget_cut_a_message(new_memory):
    from kenning import Settings

    mem = new_memory(embedder=None, settings=Settings(extract_budget_seconds=1e-9))
    text = "I live in Berlin.\n" * 300
    receipt = mem.add(text, "sam")
    assert any(r.startswith("time budget") for r in receipt.rejections)
    assert mem.messages.get("sam", receipt.episode_id).content == text      # the whole message is kept
