"""The read path as far as the foundation needs it: live facts only, signals, the context block."""
from __future__ import annotations

from kenning import Memory, Settings


def _mem(**settings):
    return Memory(":memory:", settings=Settings(**settings)) if settings else Memory(":memory:")


def test_recall_ranks_the_asked_slot_first_and_says_why():
    mem = _mem()
    for text in ("I live in Porto.", "I love ramen.", "I work at Farfetch.", "I'm allergic to shellfish."):
        mem.add(text, dataset="sam", at="2026-08-16T09:00:00Z")
    res = mem.recall("Where does the user live?", dataset="sam")
    assert res.facts[0].object == "porto"
    fact_item = next(i for i in res.items if i.kind == "fact")
    assert fact_item.fact.fact_id == res.facts[0].fact_id
    assert {"vector", "slot"} <= set(fact_item.signals)
    assert fact_item.episode_id == res.facts[0].episode_id is not None
    top = res.items[0]  # the fact or the message it came from
    assert (top.episode_id or top.message_id) == res.facts[0].episode_id


def test_recall_never_returns_superseded_deleted_or_future_facts():
    mem = _mem()
    mem.add("I live in Berlin.", dataset="sam", at="2026-07-01T10:00:00Z")
    mem.add("I moved to Lisbon last month.", dataset="sam", at="2026-09-03T10:00:00Z")
    mem.add("I drive a Honda Civic.", dataset="sam", at="2026-09-03T10:00:00Z")
    civic = mem.list_facts("sam", q="civic").facts[0]
    mem.delete_fact("sam", civic.fact_id)
    res = mem.recall("Where does the user live? What car?", dataset="sam")
    objects = [f.object for f in res.facts]
    assert "lisbon" in objects
    assert "berlin" not in objects and "honda civic" not in objects


def test_entity_named_in_the_query_brings_its_facts():
    mem = _mem()
    mem.add("I'm looking at the Toyota Corolla Hybrid.", dataset="sam", at="2026-08-16T09:00:00Z")
    mem.add("I love ramen.", dataset="sam", at="2026-08-16T09:00:00Z")
    res = mem.recall("what about the toyota corolla hybrid", dataset="sam")
    assert res.facts[0].object == "toyota corolla hybrid"
    fact_item = next(i for i in res.items if i.kind == "fact")
    assert fact_item.fact.object == "toyota corolla hybrid" and "entity" in fact_item.signals
    assert "corolla" in res.items[0].text.lower()


def test_confidence_floor_applies_at_read_time_only():
    strict = _mem(retrieval_floor=0.95)
    strict.add("I live in Oslo.", dataset="sam")
    assert strict.list_facts("sam").total == 1          # stored regardless of the floor
    assert strict.recall("Where does the user live?", dataset="sam").facts == []


def test_context_block_groups_by_anchor_within_budget():
    mem = _mem()
    for text in ("I live in Berlin.", "I'm a vegetarian.", "I love ramen.", "I speak Portuguese."):
        mem.add(text, dataset="sam", at="2026-08-16T09:00:00Z")
    res = mem.recall("What do you know about the user?", dataset="sam")
    assert res.context.startswith("User facts:\n- ")
    assert "- lives in: berlin (since 2026-08-16)" in res.context
    short = mem.recall("What do you know about the user?", dataset="sam", budget=60)
    assert len(short.context) <= 60
    assert short.context.count("\n- ") < res.context.count("\n- ")


def test_recall_on_an_unknown_dataset_is_empty():
    res = _mem().recall("anything", dataset="nobody")
    assert res.facts == [] and res.context == ""
