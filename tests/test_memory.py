"""``Memory`` as a user meets it: opening stores, tenancy, listing, deleting and recall."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kenning import Memory, Settings
from kenning.model import Scope

T0 = datetime(2025, 2, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def mem(new_memory, local_embedder):
    """Each test runs on both stores (see conftest: the conformance suite)."""
    return new_memory()


def at(day: int) -> datetime:
    return T0 + timedelta(days=day)


def objects(page_or_facts):
    facts = getattr(page_or_facts, "facts", page_or_facts)
    return sorted(f.object for f in facts)


# -- opening a store -----------------------------------------------------------------------

@pytest.mark.parametrize("form", ["sqlite:///{p}", "{p}"])
def test_file_store_urls_persist_across_instances(tmp_path, form, local_embedder):
    url = form.format(p=tmp_path / "sub" / "k.db")
    with Memory(url) as mem:
        mem.add("I live in Berlin.", "sam", at=at(0))
    with Memory(url) as mem:
        assert objects(mem.list_facts("sam")) == ["berlin"]
    assert (tmp_path / "sub" / "k.db").is_file()


@pytest.mark.parametrize("url", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_memory_urls_are_throwaway(url, local_embedder):
    with Memory(url) as mem:
        mem.add("I live in Berlin.", "sam")
    with Memory(url) as mem:
        assert mem.list_facts("sam").total == 0


def test_default_store_lives_under_kenning_home(tmp_path, monkeypatch, local_embedder):
    home = tmp_path / "home"
    monkeypatch.setenv("KENNING_HOME", str(home))
    with Memory() as mem:
        mem.add("I live in Berlin.", "sam")
    assert (home / "kenning.db").is_file()
    with Memory(settings=Settings(home=home)) as mem:
        assert mem.list_facts("sam").total == 1


def test_memories_share_one_loaded_embedder(local_embedder, new_memory):
    with new_memory() as a, new_memory() as b:
        assert a.embedder is b.embedder is local_embedder


def test_custom_embedder_works_end_to_end(hash_embedder_cls, store_url):
    with Memory(store_url, embedder=hash_embedder_cls(32)) as mem:
        mem.add("I live in Berlin and I love jazz.", "sam", at=at(0))
        assert mem.store.embedding_dim() == 32
        res = mem.recall("jazz", "sam")
        assert res.facts[0].object == "jazz" and "vector" in res.items[0].signals


# -- tenancy --------------------------------------------------------------------------------

def test_same_dataset_in_another_project_or_environment_sees_nothing(mem):
    mem.add("I live in Berlin.", "sam", at=at(0))
    mem.add("I live in Rome.", "sam", at=at(0), project="acme")
    mem.add("I live in Oslo.", "sam", at=at(0), environment="prod")

    assert objects(mem.list_facts("sam")) == ["berlin"]
    assert objects(mem.list_facts("sam", project="acme")) == ["rome"]
    assert objects(mem.list_facts("sam", environment="prod")) == ["oslo"]
    assert mem.list_facts("sam", project="acme", environment="prod").total == 0
    assert [e.name for e in mem.list_entities("sam", project="acme")] == ["rome"]
    assert objects(mem.recall("Where does the user live?", "sam", environment="prod").facts) == ["oslo"]
    assert objects(mem.recall("Where does the user live?", "sam").facts) == ["berlin"]


def test_project_from_settings_is_the_default(local_embedder, store_url):
    with Memory(store_url, project="acme") as acme:
        acme.add("I live in Rome.", "sam", at=at(0))
    with Memory(store_url) as default:
        assert default.list_facts("sam").total == 0
        assert objects(default.list_facts("sam", project="acme")) == ["rome"]


def test_environment_from_the_environment_variable(monkeypatch, local_embedder, store_url):
    monkeypatch.setenv("KENNING_ENVIRONMENT", "staging")
    with Memory(store_url) as mem:
        mem.add("I live in Rome.", "sam", at=at(0))
        assert mem.list_facts("sam").total == 1
        assert mem.list_facts("sam", environment="default").total == 0


def test_a_supersession_never_touches_another_dataset(mem):
    mem.add("I live in Berlin.", "sam", at=at(0))
    mem.add("I live in Berlin.", "alex", at=at(0))
    mem.add("I moved to Lisbon.", "alex", at=at(5))
    assert objects(mem.list_facts("sam")) == ["berlin"]
    assert objects(mem.list_facts("alex")) == ["lisbon"]


# -- listing -----------------------------------------------------------------------------------

def test_list_facts_pages_in_time_order(mem):
    for i, text in enumerate(["I love ramen.", "I love tacos.", "I love jazz.", "I love chess.", "I love tea."]):
        mem.add(text, "sam", at=at(i))
    first = mem.list_facts("sam", limit=2)
    second = mem.list_facts("sam", limit=2, offset=2)
    last = mem.list_facts("sam", limit=2, offset=4)
    beyond = mem.list_facts("sam", limit=2, offset=10)
    assert [f.object for f in first.facts + second.facts + last.facts] == ["ramen", "tacos", "jazz", "chess", "tea"]
    assert {p.total for p in (first, second, last, beyond)} == {5}
    assert beyond.facts == [] and (first.limit, first.offset, second.offset) == (2, 0, 2)


def test_list_facts_by_keyword_and_entity(mem):
    mem.add("I live in Berlin and I love jazz.", "sam", at=at(0))
    mem.add("I play the cello.", "sam", at=at(1))
    assert objects(mem.list_facts("sam", q="cello")) == ["cello"]
    assert objects(mem.list_facts("sam", q="living")) == ["berlin"]
    assert objects(mem.list_facts("sam", entity="Jazz")) == ["jazz"]
    assert mem.list_facts("sam", entity="nowhere").total == 0


def test_list_facts_accepts_as_of_strings_and_datetimes(mem):
    mem.add("I live in Berlin.", "sam", at=at(0))
    mem.add("I moved to Lisbon.", "sam", at=at(10))
    assert objects(mem.list_facts("sam", as_of="2025-02-05T00:00:00Z")) == ["berlin"]
    assert objects(mem.list_facts("sam", as_of=datetime(2025, 2, 5))) == ["berlin"]
    assert objects(mem.list_facts("sam", as_of=at(20))) == ["lisbon"]


# -- deleting ----------------------------------------------------------------------------------

def test_delete_is_soft_and_keeps_the_history(mem, now):
    r = mem.add("I drive a Honda Civic.", "sam", at=at(0))
    (fid,) = r.memory_ids
    mem.delete_fact("sam", fid)
    assert mem.list_facts("sam").total == 0
    (gone,) = mem.list_facts("sam", include_invalidated=True).facts
    assert gone.fact_id == fid and gone.invalid_at is not None
    assert objects(mem.list_facts("sam", as_of=now - timedelta(minutes=5))) == ["honda civic"]
    assert mem.recall("What car does the user drive?", "sam").facts == []


def test_delete_twice_keeps_the_first_deletion_time(mem):
    (fid,) = mem.add("I love jazz.", "sam").memory_ids
    mem.delete_fact("sam", fid)
    first = mem.list_facts("sam", include_invalidated=True).facts[0].invalid_at
    mem.delete_fact("sam", fid)
    assert mem.list_facts("sam", include_invalidated=True).facts[0].invalid_at == first


def test_a_deleted_fact_can_be_learnt_again(mem):
    (old,) = mem.add("I live in Oslo.", "sam", at=at(0)).memory_ids
    mem.delete_fact("sam", old)
    again = mem.add("I live in Oslo.", "sam", at=at(1))
    assert again.status == "stored" and again.memory_ids != [old]
    assert objects(mem.list_facts("sam")) == ["oslo"]


# -- recall ---------------------------------------------------------------------------------

def test_recall_ranks_the_answer_first_with_its_signals(mem):
    mem.add("I live in Porto.", "sam", at=at(0))
    mem.add("I work as a data scientist at Farfetch.", "sam", at=at(0))
    mem.add("I'm allergic to shellfish.", "sam", at=at(0))
    res = mem.recall("Where does the user live?", "sam")
    assert res.facts[0].object == "porto"
    top = res.items[0]
    assert top.kind == "fact" and top.id == res.facts[0].fact_id and top.score > 0
    assert {"vector", "slot"} <= set(top.signals)
    scores = [i.score for i in res.items]
    assert scores == sorted(scores, reverse=True)


def test_recall_returns_live_facts_only(mem, now):
    mem.add("I live in Berlin.", "sam", at=now - timedelta(days=100))
    mem.add("I'm moving to Paris next month.", "sam", at=now - timedelta(days=1))
    mem.add("I used to live in Madrid.", "sam", at=now - timedelta(days=1))
    res = mem.recall("Where does the user live?", "sam")
    assert sorted((f.predicate, f.object) for f in res.facts) == [("lives in", "berlin"), ("plans to move to", "paris")]
    assert "lives in: berlin" in res.context and "plans to move to: paris" in res.context
    assert "lives in: paris" not in res.context and "madrid" not in res.context


def test_recall_limit_and_context_budget(mem):
    for text in ["I love ramen.", "I love tacos.", "I love jazz.", "I love chess.", "I love tea."]:
        mem.add(text, "sam", at=at(0))
    assert len(mem.recall("What does the user like?", "sam", limit=2).facts) == 2
    full = mem.recall("What does the user like?", "sam").context
    assert full.startswith("User facts:\n") and full.count("\n- likes: ") == 5
    assert "(since 2025-02-01)" in full
    small = mem.recall("What does the user like?", "sam", budget=60).context
    assert len(small) <= 60 and small.startswith("User facts:")


def test_context_block_shows_an_end_date(mem, now):
    mem.add("I live in Berlin.", "sam", at=now - timedelta(days=3))
    mem.add("I'm moving to Paris next month.", "sam", at=now - timedelta(days=1))
    context = mem.recall("Where does the user live?", "sam").context
    assert "- lives in: berlin (since " in context and ", until " in context


def test_recall_items_trace_to_their_message(mem):
    mem.add("I play the cello.", "sam", message_id="msg-7")
    res = mem.recall("What instrument does the user play?", "sam")
    assert res.items[0].episode_id == "msg-7"
    assert mem.store.get_episode(Scope("default", "default", "sam"), "msg-7").content == "I play the cello."


# -- entity filter edge cases -------------------------------------------------------------------

def test_entity_filter_finds_a_non_ascii_alias(mem):
    mem.add("I live in Zurich.", "sam", at=at(0))
    (entity,) = mem.list_entities("sam")
    mem.store.add_alias(Scope("default", "default", "sam"), entity.entity_id, "zürich")
    assert mem.list_entities("sam")[0].aliases == ["zürich"]
    assert objects(mem.list_facts("sam", entity="zurich")) == ["zurich"]
    assert objects(mem.list_facts("sam", entity="zürich")) == ["zurich"]


def test_entity_filter_treats_wildcards_literally(mem):
    mem.add("I'm looking at the Toyota Corolla Hybrid.", "sam", at=at(0))
    mem.add("yeah the corola hybrid looks great", "sam", at=at(1))
    assert mem.list_facts("sam", entity="%").total == 0


# -- two processes' worth of writers on one file ------------------------------------------------

def test_concurrent_writers_on_one_file_store_one_fact(local_embedder, store_url):
    import threading

    first, second = Memory(store_url), Memory(store_url)
    barrier = threading.Barrier(2)
    receipts, errors = [], []

    def write(mem):
        barrier.wait()
        try:
            receipts.append(mem.add("I am allergic to peanuts.", "sam", at=at(0)))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=write, args=(m,)) for m in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        assert sorted(r.status for r in receipts) == ["skipped", "stored"]
        assert len({r.memory_ids[0] for r in receipts}) == 1
        assert first.list_facts("sam", include_invalidated=True).total == 1
    finally:
        first.close()
        second.close()


def test_a_dataset_stores_at_most_its_quota(new_memory):
    """Issue 16, item 10: one user token grew the database 18 MB in 1.4 s."""
    from kenning import QuotaExceeded, Settings

    m = new_memory(embedder=None, settings=Settings(max_dataset_chars=5_000, worker_threads=0))
    m.notes.save("sam", "n" * 3_000)
    for write in (lambda: m.notes.save("sam", "m" * 3_000), lambda: m.add("I live in " + "x" * 2_990, "sam"),
                  lambda: m.add_turn("sam", "user", "t" * 3_000), lambda: m.messages.index("sam", "i" * 3_000),
                  lambda: m.core.write("sam", "/memories/a.md", "c" * 3_000)):
        with pytest.raises(QuotaExceeded, match="the quota is 5,000"):
            write()
    m.notes.save("alex", "m" * 3_000)                          # each dataset has its own quota
    m.notes.forget("sam", m.notes.list("sam")[0].note_id)       # forgotten notes still count: they stay in history
    with pytest.raises(QuotaExceeded):
        m.notes.save("sam", "m" * 3_000)
    m.delete_dataset("sam")                                     # erasing frees it
    m.notes.save("sam", "m" * 3_000)


def test_one_function_names_a_facts_state_at_any_time():
    from kenning.model import Fact

    def fact(**kw):
        base = dict(fact_id="f", subject="user", predicate="eats", object="fish", text="user eats fish",
                    confidence=0.9, valid_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                    created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
        return Fact.model_validate({**base, **kw})

    day = lambda m, d: datetime(2026, m, d, tzinfo=timezone.utc)          # noqa: E731
    ended = fact(valid_until=day(6, 10))
    assert [ended.state_at(day(m, 1)) for m in (5, 7)] == ["live", "ended"]
    plan = fact(valid_at=day(5, 1))
    assert [plan.state_at(day(4, 1)), plan.state_at(day(5, 1))] == ["future", "live"]
    replaced = fact(invalid_at=day(3, 1), superseded_by="g")
    assert [replaced.state_at(day(2, 1)), replaced.state_at(day(3, 1))] == ["live", "superseded"]
    assert fact(invalid_at=day(3, 1)).state_at(day(4, 1)) == "deleted"
    assert ended.live_at(day(5, 1)) and not ended.live_at(day(7, 1))
