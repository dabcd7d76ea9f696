"""Message recall through ``mem.messages``: index, search, ids, conflicts, chats, tenancy.

Messages indexed here and messages mined by ``Memory.add`` are the same rows
(episodes); a temporary chat stores nothing. Real stores (each test on SQLite and
PostgreSQL) and the real bundled embedder throughout; an embedder-less ``Memory`` shows
the keyword-only path.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kenning import (Conflict, EmptyText, Episode, InputError, InvalidTime, Memory, MessageHit, NotFound, Scope,
                     TextTooLarge)

T0 = datetime(2025, 3, 4, 9, 0, tzinfo=timezone.utc)  # well in the past

# Keyword evidence needs words that are rare in the index (BM25 of a word every message has is ~0):
# every dataset that a keyword test searches gets these first.
FILLER = ["We talked about the weather today.", "Dinner was pasta with friends.",
          "The meeting moved to Tuesday.", "I watched a documentary about whales.",
          "My sister called in the evening."]


def at(day: int) -> datetime:
    return T0 + timedelta(days=day)


def sc(dataset: str, project: str = "default", environment: str = "default") -> Scope:
    return Scope(project, environment, dataset)


def embedded(mem, kind: str = "episode", dataset: str = "sam") -> list[str]:
    """Ids of the dataset's messages that have a vector: a search deep enough returns every one."""
    dim = mem.store.embedding_dim() or 384
    query = np.full(dim, 1 / np.sqrt(dim), dtype=np.float32)
    return sorted(key for key, _ in mem.store.vector_search(sc(dataset), kind, query, 10_000))


def fill(mem, dataset="sam", **tenant):
    for i, text in enumerate(FILLER):
        mem.messages.index(dataset, text, chat="c0", at=at(i), **tenant)


def texts(hits):
    return [h.text for h in hits]


@pytest.fixture
def mem(new_memory, local_embedder):
    """Each test runs on both stores (see conftest: the conformance suite)."""
    return new_memory()


# -- index ----------------------------------------------------------------------------------------

def test_index_keeps_the_message_with_the_callers_id_chat_role_and_time(mem):
    ep = mem.messages.index("sam", "I bought a red bicycle.", role="user", chat="c1", message_id="m-1", at=at(0))
    assert isinstance(ep, Episode)
    assert (ep.episode_id, ep.role, ep.chat, ep.at, ep.content) == ("m-1", "user", "c1", at(0),
                                                                     "I bought a red bicycle.")
    got = mem.messages.get("sam", "m-1")
    assert (got.episode_id, got.role, got.chat, got.at, got.content) == ("m-1", "user", "c1", at(0),
                                                                         "I bought a red bicycle.")


def test_index_generates_distinct_ids_when_none_is_given(mem):
    a = mem.messages.index("sam", "I bought a red bicycle.")
    b = mem.messages.index("sam", "I bought a red bicycle.")
    assert a.episode_id and b.episode_id and a.episode_id != b.episode_id
    assert mem.messages.get("sam", a.episode_id).content == "I bought a red bicycle."


def test_index_does_not_mine_facts(mem):
    mem.messages.index("sam", "I live in Berlin.", at=at(0))
    assert mem.list_facts("sam").total == 0


def test_each_message_keeps_exactly_one_embedding(mem):
    ids = [mem.messages.index("sam", t, chat="c1", at=at(i)).episode_id
           for i, t in enumerate(["I bought a red bicycle.", "It has a flat tyre.", "I fixed it myself."])]
    assert embedded(mem) == sorted(ids)
    assert mem.store.pending("episode", 10) == []


def test_temporary_message_stores_nothing(mem):
    assert mem.messages.index("sam", "My bank PIN is 4242.", chat="tmp", message_id="m-t", temporary=True) is None
    with pytest.raises(NotFound):
        mem.messages.get("sam", "m-t")
    assert mem.messages.search("sam", "bank PIN") == []
    assert embedded(mem) == []
    assert mem.recall("bank PIN", "sam").messages == []


def test_a_100k_message_is_kept_whole_and_searchable(mem):
    content = "The bicycle story. " + "x" * (100_000 - 19)
    assert len(content) == 100_000
    ep = mem.messages.index("sam", content, message_id="big")
    assert len(mem.messages.get("sam", "big").content) == 100_000 and ep.episode_id == "big"
    assert "big" in [h.message_id for h in mem.messages.search("sam", "bicycle story")]


@pytest.mark.parametrize("call, error", [
    (lambda m: m.messages.index("sam", "x" * 100_001), TextTooLarge),
    (lambda m: m.messages.index("sam", ""), EmptyText),
    (lambda m: m.messages.index("sam", "   \n"), EmptyText),
    (lambda m: m.messages.index("sam", None), InputError),
    (lambda m: m.messages.index("sam", "hi", role="robot"), InputError),
    (lambda m: m.messages.index("sam", "hi", at="not a time"), InvalidTime),
    (lambda m: m.messages.index("sam", "hi", at=datetime.now(timezone.utc) + timedelta(days=30)), InvalidTime),
    (lambda m: m.messages.index("bad name!", "hi"), InputError),
])
def test_bad_index_input_is_refused_and_nothing_is_stored(mem, call, error):
    with pytest.raises(error):
        call(mem)
    assert embedded(mem) == []
    assert mem.store.pending("episode", 10) == []


# -- caller ids and conflicts -----------------------------------------------------------------------

def test_reused_message_id_with_different_text_is_a_conflict(mem):
    mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1", at=at(0))
    with pytest.raises(Conflict, match="m-1"):
        mem.messages.index("sam", "I sold my car.", message_id="m-1", at=at(1))
    assert mem.messages.get("sam", "m-1").content == "I bought a red bicycle."
    assert embedded(mem) == ["m-1"]


def test_reused_message_id_with_the_same_text_returns_the_kept_message(mem):
    first = mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1", at=at(0))
    again = mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1", at=at(0))
    assert again.episode_id == "m-1" and again.created_at == first.created_at
    assert embedded(mem) == ["m-1"]


def test_add_after_index_with_a_different_text_is_a_conflict(mem):
    mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1", at=at(0))
    with pytest.raises(Conflict):
        mem.add("I live in Berlin.", "sam", message_id="m-1", at=at(1))
    assert mem.list_facts("sam").total == 0


def test_index_after_add_with_a_different_text_is_a_conflict(mem):
    mem.add("I live in Berlin.", "sam", message_id="m-1", at=at(0))
    with pytest.raises(Conflict):
        mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1", at=at(1))
    assert mem.messages.get("sam", "m-1").content == "I live in Berlin."


def test_the_same_message_id_in_another_dataset_is_another_message(mem):
    mem.messages.index("sam", "I bought a red bicycle.", message_id="m-1")
    mem.messages.index("alex", "I sold my car.", message_id="m-1")
    mem.messages.index("sam", "I sold my car.", message_id="m-1", project="acme")
    assert mem.messages.get("sam", "m-1").content == "I bought a red bicycle."
    assert mem.messages.get("alex", "m-1").content == "I sold my car."
    assert mem.messages.get("sam", "m-1", project="acme").content == "I sold my car."


# -- one row for a message, whether added or indexed -------------------------------------------------

def test_a_message_mined_by_add_is_the_searchable_message(mem):
    r = mem.add("I live in Porto and I love surfing.", "sam", chat="c1", at=at(0))
    hits = mem.messages.search("sam", "surfing in Porto")
    assert [h.message_id for h in hits] == [r.episode_id]
    hit = hits[0]
    assert (hit.chat, hit.role, hit.at, hit.text) == ("c1", "user", at(0), "I live in Porto and I love surfing.")
    assert {f.episode_id for f in mem.list_facts("sam").facts} == {r.episode_id}


def test_add_then_index_with_the_same_id_is_one_row(mem):
    r = mem.add("I live in Porto.", "sam", message_id="m-1", chat="c1", at=at(0))
    again = mem.messages.index("sam", "I live in Porto.", message_id="m-1", chat="c1", at=at(0))
    assert again.episode_id == "m-1" == r.episode_id
    assert embedded(mem) == ["m-1"]
    assert [h.message_id for h in mem.messages.search("sam", "Porto")] == ["m-1"]


def test_index_then_add_with_the_same_id_is_one_row_and_facts_cite_it(mem):
    mem.messages.index("sam", "I live in Porto.", message_id="m-1", chat="c1", at=at(0))
    r = mem.add("I live in Porto.", "sam", message_id="m-1", chat="c1", at=at(0))
    assert r.status == "stored" and r.episode_id == "m-1"
    assert [f.episode_id for f in mem.list_facts("sam").facts] == ["m-1"]
    assert embedded(mem) == ["m-1"]
    res = mem.recall("Where does the user live?", "sam")
    assert [m.message_id for m in res.messages] == ["m-1"]


def test_a_temporary_add_keeps_facts_but_no_message(mem):
    r = mem.add("I play the cello.", "sam", chat="tmp", message_id="m-tmp", temporary=True, at=at(0))
    assert r.status == "stored" and r.episode_id is None
    assert mem.messages.search("sam", "cello") == []
    with pytest.raises(NotFound):
        mem.messages.get("sam", "m-tmp")


# -- search ------------------------------------------------------------------------------------------

def test_search_returns_hits_with_their_fields_best_first(mem):
    fill(mem)
    mem.messages.index("sam", "I bought a red bicycle.", chat="c1", message_id="m-bike", at=at(10))
    mem.messages.index("sam", "The bicycle has a flat tyre.", chat="c2", role="assistant", at=at(11))
    hits = mem.messages.search("sam", "bicycle")
    assert all(isinstance(h, MessageHit) for h in hits)
    assert set(texts(hits[:2])) == {"I bought a red bicycle.", "The bicycle has a flat tyre."}
    bike = next(h for h in hits if h.message_id == "m-bike")
    assert (bike.chat, bike.role, bike.at, bike.text) == ("c1", "user", at(10), "I bought a red bicycle.")
    tyre = next(h for h in hits if h.text == "The bicycle has a flat tyre.")
    assert tyre.role == "assistant" and tyre.chat == "c2"
    assert {"vector", "keyword"} <= set(bike.signals)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_search_limit(mem):
    fill(mem)
    query = "weather dinner meeting whales sister"
    assert len(mem.messages.search("sam", query, limit=100)) >= 3
    assert len(mem.messages.search("sam", query, limit=2)) == 2
    assert len(mem.messages.search("sam", query, limit=1)) == 1


def test_exclude_chat_leaves_that_chat_out(mem):
    fill(mem)
    mem.messages.index("sam", "I bought a red bicycle.", chat="c1", at=at(10))
    mem.messages.index("sam", "The bicycle has a flat tyre.", chat="c2", at=at(11))
    mem.messages.index("sam", "Bicycle lanes are great here.", chat=None, at=at(12))
    everything = mem.messages.search("sam", "bicycle")
    assert {"c1", "c2", None} <= {h.chat for h in everything}
    hits = mem.messages.search("sam", "bicycle", exclude_chat="c1")
    assert hits and all(h.chat != "c1" for h in hits)
    assert {"The bicycle has a flat tyre.", "Bicycle lanes are great here."} <= set(texts(hits))


def test_exclude_chat_also_filters_keyword_hits_without_an_embedder(plain):
    fill(plain)
    plain.messages.index("sam", "I bought a red bicycle.", chat="c1", at=at(10))
    plain.messages.index("sam", "The bicycle has a flat tyre.", chat="c2", at=at(11))
    assert {h.chat for h in plain.messages.search("sam", "bicycle")} == {"c1", "c2"}  # keyword alone finds both
    hits = plain.messages.search("sam", "bicycle", exclude_chat="c1")
    assert [h.chat for h in hits] == ["c2"]


def test_keyword_search_works_without_an_embedder(plain):
    fill(plain)
    plain.messages.index("sam", "I bought a red bicycle.", chat="c1", message_id="m-bike", at=at(10))
    hits = plain.messages.search("sam", "bicycle")
    assert [h.message_id for h in hits] == ["m-bike"]
    assert "keyword" in hits[0].signals and "vector" not in hits[0].signals


def test_search_on_an_unknown_dataset_is_empty(mem):
    mem.messages.index("sam", "I bought a red bicycle.")
    assert mem.messages.search("nobody", "bicycle") == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t", None])
def test_empty_search_query_is_refused(mem, query):
    with pytest.raises(InputError):
        mem.messages.search("sam", query)


@pytest.mark.parametrize("limit", [0, -1, 101, True, 2.5, "10"])
def test_search_limit_out_of_range_is_refused(mem, limit):
    with pytest.raises(InputError):
        mem.messages.search("sam", "bicycle", limit=limit)


def test_a_100k_character_query_works(mem):
    fill(mem)
    mem.messages.index("sam", "I bought a red bicycle.", message_id="m-bike", at=at(10))
    query = ("bicycle " * 20_000)[:100_000]
    assert len(query) == 100_000
    hits = mem.messages.search("sam", query)
    assert hits[0].message_id == "m-bike"


def test_get_of_an_unknown_message_raises_not_found(mem):
    with pytest.raises(NotFound):
        mem.messages.get("sam", "nope")


# -- embeddings filled later --------------------------------------------------------------------------

def test_messages_indexed_without_an_embedder_are_embedded_later(local_embedder, store_url):
    url = store_url
    with Memory(url, embedder=None) as plain:
        plain.messages.index("sam", "I bought a red bicycle.", message_id="m-bike", chat="c1", at=at(0))
        assert [key for _, key, _ in plain.store.pending("episode", 10)] == ["m-bike"]
    with Memory(url) as mem:
        mem.embed_pending()
        assert mem.store.pending("episode", 10) == []
        assert embedded(mem) == ["m-bike"]
        hits = mem.messages.search("sam", "cycling purchase")  # no shared word: the vector finds it
        assert [h.message_id for h in hits] == ["m-bike"] and "vector" in hits[0].signals


# -- tenancy ----------------------------------------------------------------------------------------

TENANTS = [dict(dataset="alex"), dict(project="acme"), dict(environment="prod"),
           dict(project="acme", environment="prod")]


def _other(tenant):
    tenant = dict(tenant)
    return tenant.pop("dataset", "sam"), tenant


@pytest.mark.parametrize("tenant", TENANTS)
def test_another_tenant_sees_no_messages(mem, tenant):
    fill(mem)
    mem.messages.index("sam", "I bought a red bicycle.", message_id="m-bike", chat="c1", at=at(10))
    dataset, kw = _other(tenant)
    fill(mem, dataset, **kw)
    assert "m-bike" in [h.message_id for h in mem.messages.search("sam", "bicycle")]
    hits = mem.messages.search(dataset, "bicycle", **kw)
    assert "I bought a red bicycle." not in texts(hits)
    assert "I bought a red bicycle." not in [m.text for m in mem.recall("bicycle", dataset, **kw).messages]
    with pytest.raises(NotFound):
        mem.messages.get(dataset, "m-bike", **kw)


@pytest.mark.parametrize("tenant", TENANTS)
def test_another_tenant_sees_no_messages_by_keyword(plain, tenant):
    fill(plain)
    plain.messages.index("sam", "I bought a red bicycle.", message_id="m-bike", at=at(10))
    dataset, kw = _other(tenant)
    fill(plain, dataset, **kw)
    assert [h.message_id for h in plain.messages.search("sam", "red bicycle")] == ["m-bike"]
    assert plain.messages.search(dataset, "red bicycle", **kw) == []
    assert plain.recall("red bicycle", dataset, **kw).messages == []


# -- delete ---------------------------------------------------------------------------------------

def test_delete_removes_the_message_and_the_facts_mined_from_it_and_restores_what_they_superseded(mem):
    first = mem.add("I live in Berlin.", "sam", at=at(0), chat="c1")
    moved = mem.add("I moved to Lisbon. I have a dog called Rex.", "sam", at=at(30), chat="c1")
    assert {(f.predicate, f.object) for f in mem.list_facts("sam").facts} >= {("lives in", "lisbon")}
    mined = mem.list_facts("sam", message_id=moved.episode_id, include_invalidated=True).total
    before = {e.name for e in mem.list_entities("sam")}
    gone = mem.messages.delete("sam", moved.episode_id)
    named_by_none = before - {e.name for e in mem.list_entities("sam")}   # named by no fact left: they go too
    assert gone == {"messages": 1, "facts": mined, "entities": len(named_by_none), "jobs": 0, "restored": 1}
    assert "lisbon" in named_by_none and "berlin" not in named_by_none
    with pytest.raises(NotFound):
        mem.messages.get("sam", moved.episode_id)
    live = mem.list_facts("sam").facts
    assert [(f.predicate, f.object, f.valid_until, f.superseded_by) for f in live] == [
        ("lives in", "berlin", None, None)]
    history = mem.list_facts("sam", include_invalidated=True).facts
    assert all(f.episode_id == first.episode_id for f in history)   # nothing of the removed message is kept
    assert "Lisbon" not in mem.recall("Where does the user live?", "sam").context
    assert not [h for h in mem.messages.search("sam", "Lisbon dog Rex") if h.message_id == moved.episode_id]
    assert mem.messages.thread("sam", "c1").total == 1


def test_delete_of_a_middle_value_keeps_the_later_value_superseding_the_earlier(mem):
    mem.add("I live in Berlin.", "sam", at=at(0))
    middle = mem.add("I moved to Lisbon.", "sam", at=at(30))
    mem.add("I moved to Porto.", "sam", at=at(60))
    assert mem.messages.delete("sam", middle.episode_id)["restored"] == 0
    facts = {f.object: f for f in mem.list_facts("sam", include_invalidated=True).facts}
    assert set(facts) == {"berlin", "porto"}
    assert facts["berlin"].superseded_by == facts["porto"].fact_id and facts["berlin"].invalid_at is not None
    assert [f.object for f in mem.list_facts("sam").facts] == ["porto"]


def test_delete_takes_a_queued_turn_with_it(mem):
    mem.messages.index("sam", "I am allergic to peanuts.", chat="c1", message_id="m-1", at=at(0))
    mem.workers.close()   # nothing runs the queue: the turn stays queued
    mem.add_turn("sam", "user", "I am allergic to peanuts.", chat="c1", message_id="m-1", at=at(0))
    assert mem.messages.delete("sam", "m-1") == {"messages": 1, "facts": 0, "entities": 0, "jobs": 1,
                                                      "restored": 0}
    assert mem.jobs("sam") == []


def test_delete_chat_removes_every_message_of_the_chat_and_its_queued_turns_and_nothing_else(mem):
    mem.add("I live in Berlin.", "sam", at=at(0), chat="c1")
    mem.messages.index("sam", "Good to know!", role="assistant", chat="c1", at=at(0))
    other = mem.add("I play the cello.", "sam", at=at(1), chat="c2")
    mem.add("I play the cello.", "ana", at=at(1), chat="c1")
    mem.workers.close()
    mem.add_turn("sam", "user", "I work at Siemens.", chat="c1", at=at(2))
    gone = mem.messages.delete_chat("sam", "c1")
    assert (gone["messages"], gone["jobs"]) == (2, 1) and gone["facts"] >= 1
    assert mem.messages.thread("sam", "c1").total == 0 and mem.jobs("sam", status="queued") == []
    assert [f.episode_id for f in mem.list_facts("sam").facts] == [other.episode_id]
    assert mem.messages.thread("ana", "c1").total == 1 and mem.list_facts("ana").total == 1
    assert mem.messages.delete_chat("sam", "c1") == {"messages": 0, "facts": 0, "entities": 0, "jobs": 0,
                                                          "restored": 0}


def test_delete_of_an_unknown_message_or_a_bad_chat_is_refused(mem):
    with pytest.raises(NotFound):
        mem.messages.delete("sam", "nope")
    for chat in ("", None):
        with pytest.raises(InputError):
            mem.messages.delete_chat("sam", chat)


def test_a_user_deletes_only_their_own_messages(mem):
    kept = mem.add("I live in Berlin.", "ana", at=at(0))
    sam = mem.as_user("sam")
    from kenning import PermissionDenied
    with pytest.raises(PermissionDenied):
        sam.messages.delete("ana", kept.episode_id)
    with pytest.raises(PermissionDenied):
        sam.messages.delete_chat("ana", "c1")
    assert mem.messages.get("ana", kept.episode_id).content == "I live in Berlin."


def test_delete_takes_the_message_out_of_the_next_ones_keyword_context(plain):
    """Keyword search reads each message with the end of the one before it: once that one is deleted, the
    next message is found by its own words and its own day, not by the deleted words."""
    plain.messages.index("sam", "I adopted a greyhound called Zorblax.", chat="c1", message_id="m1", at=at(0))
    plain.messages.index("sam", "She sleeps on the sofa all day.", chat="c1", message_id="m2", at=at(0) + timedelta(minutes=1))
    plain.messages.index("sam", "Off to the market now.", chat="c1", message_id="m3", at=at(0) + timedelta(minutes=2))
    def keyword(query):
        return {key for key, _ in plain.store.episode_keyword_search(sc("sam"), query, 10)}

    assert keyword("Zorblax") == {"m1", "m2"}   # m2 through the end of m1, read beside it
    plain.messages.delete("sam", "m1")
    assert keyword("Zorblax") == set() and plain.messages.search("sam", "Zorblax") == []
    assert keyword("sofa") == {"m2", "m3"} and keyword("market") == {"m3"}
