"""The store contracts (kenning.store.base), method by method, on every backend.

Each test runs on SQLite and on PostgreSQL (a real server, tests/pg.py) through the contract alone:
no backend's private names, so a new backend passes or fails the same tests. What only one backend
has (SQLite's files and FTS tables, PostgreSQL's migrations under racing processes and HNSW search)
stays in test_sqlite.py and test_postgres.py.
"""
from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
import pytest

from kenning.errors import DimensionMismatch, DocumentConflict, DuplicateFact, LeaseLost, NonFiniteVector
from kenning.model import CoreFile, Entity, Episode, Job, Note, Scope
from kenning.store.base import FactQuery, Store
from facts_kit import DIM, NOW, SAM, ids, make_fact, put, unit

ALEX = Scope("default", "default", "alex")


@pytest.fixture
def store(backend, request) -> Store:
    if backend == "sqlite":
        from kenning.store.sqlite import SQLiteStore

        s = SQLiteStore(":memory:")
    else:
        from kenning.store.postgres import PostgresStore

        s = PostgresStore(request.getfixturevalue("pg_url"))
    s.check_embedding_model("fake-8", DIM)
    yield s
    s.close()




def live_vector_ids(store, scope=SAM) -> list[str]:
    """The facts exact vector search can return now (every live fact with a vector), sorted."""
    return sorted(key for key, _ in store.vector_search(scope, "fact", unit(0), 1000, at=NOW))


def job(dataset="sam", content="I live in Berlin.", **kw) -> Job:
    return Job(request_id=f"req_{uuid.uuid4().hex}", project="default", environment="default", dataset=dataset,
               role="user", content=content, at=NOW, created_at=NOW, updated_at=NOW, **kw)


# -- facts ---------------------------------------------------------------------------------------

def test_fact_valid_now_is_live(store):
    fid = put(store, make_fact())
    assert ids(store) == {fid}


def test_future_fact_is_not_live_now_but_live_as_of_after_its_start(store):
    start = NOW + timedelta(days=10)
    fid = put(store, make_fact(valid_at=start))
    assert ids(store) == set()
    assert ids(store, as_of=start - timedelta(seconds=1)) == set()
    assert ids(store, as_of=start) == {fid}
    assert ids(store, as_of=start + timedelta(days=5)) == {fid}


def test_expired_fact_drops_out_of_live_lists(store):
    end = NOW - timedelta(days=1)
    fid = put(store, make_fact(valid_at=NOW - timedelta(days=30), valid_until=end))
    assert ids(store) == set()
    assert ids(store, as_of=end - timedelta(days=1)) == {fid}
    assert ids(store, as_of=end) == set(), "valid_until is exclusive"


def test_invalidated_fact_leaves_live_lists_but_shows_as_of_before(store):
    deleted = NOW - timedelta(days=2)
    fid = put(store, make_fact(valid_at=NOW - timedelta(days=30)))
    store.update_fact(SAM, fid, invalid_at=deleted)
    assert ids(store) == set()
    assert ids(store, as_of=deleted - timedelta(days=1)) == {fid}
    assert ids(store, as_of=deleted) == set()
    assert ids(store, as_of=deleted + timedelta(days=1)) == set()


def test_as_of_before_a_fact_started_hides_it(store):
    fid = put(store, make_fact(valid_at=NOW - timedelta(days=5)))
    assert ids(store, as_of=NOW - timedelta(days=6)) == set()
    assert ids(store, as_of=NOW - timedelta(days=4)) == {fid}


def test_include_invalidated_lists_the_whole_history(store):
    live = put(store, make_fact(obj="lisbon"))
    gone = put(store, make_fact(obj="berlin", invalid_at=NOW - timedelta(days=1)))
    expired = put(store, make_fact(obj="madrid", valid_until=NOW - timedelta(days=1)))
    future = put(store, make_fact(obj="paris", valid_at=NOW + timedelta(days=9)))
    assert ids(store) == {live}
    assert ids(store, include_invalidated=True) == {live, gone, expired, future}


def test_list_orders_by_valid_at_and_pages(store):
    made = [put(store, make_fact(obj=f"city{i}", valid_at=NOW - timedelta(days=10 - i))) for i in range(5)]
    facts, total = store.list_facts(SAM, FactQuery(limit=2, offset=1))
    assert total == 5
    assert [f.fact_id for f in facts] == made[1:3]


@pytest.mark.parametrize("read", ["keyword", "vector", "slot"])
def test_every_read_path_applies_the_live_predicate(store, read):
    live = put(store, make_fact(obj="lisbon", text="user lives in lisbon"), vector=unit(1))
    put(store, make_fact(obj="porto", text="user lives in porto", valid_at=NOW + timedelta(days=3)), vector=unit(2))
    put(store, make_fact(obj="madrid", text="user lives in madrid", valid_until=NOW - timedelta(days=1)), vector=unit(3))
    put(store, make_fact(obj="berlin", text="user lives in berlin", invalid_at=NOW - timedelta(days=1)), vector=unit(4))
    if read == "keyword":
        found = {fid for fid, _ in store.keyword_search(SAM, "lives", NOW, 10)}
        assert found == {live}
    elif read == "vector":
        assert live_vector_ids(store) == [live]
    else:  # the write path's slot: live now or starting later, never expired or invalidated
        found = {f.object for f in store.facts_in_slot(SAM, ["lives in"], NOW)}
        assert found == {"lisbon", "porto"}


def test_vector_search_follows_updates(store):
    a = put(store, make_fact(obj="lisbon"), vector=unit(1))
    b = put(store, make_fact(obj="porto", predicate="likes"), vector=unit(2))
    assert live_vector_ids(store) == sorted([a, b])
    store.update_fact(SAM, a, invalid_at=NOW)
    assert live_vector_ids(store) == [b]


def test_keyword_search_finds_facts_by_word_and_stem(store):
    cello = put(store, make_fact("plays", "cello", text="user plays the cello"))
    put(store, make_fact("lives in", "lisbon"))
    assert [fid for fid, _ in store.keyword_search(SAM, "cello", NOW, 10)] == [cello]
    assert [fid for fid, _ in store.keyword_search(SAM, "playing", NOW, 10)] == [cello]
    assert store.keyword_search(SAM, "violin", NOW, 10) == []


def test_keyword_search_tolerates_punctuation_and_fts_syntax(store):
    cello = put(store, make_fact("plays", "cello", text="user plays the cello"))
    for query in ['"cello', "cello* OR", "NEAR(cello)", "cello AND -x", "what's the cello?"]:
        assert [fid for fid, _ in store.keyword_search(SAM, query, NOW, 10)] == [cello], query
    assert store.keyword_search(SAM, "?!", NOW, 10) == []


def test_keyword_search_never_crosses_datasets(store):
    other = Scope("default", "default", "alex")
    mine = put(store, make_fact("plays", "cello", text="user plays the cello"))
    theirs = put(store, make_fact("plays", "cello", text="user plays the cello"), scope=other)
    assert [fid for fid, _ in store.keyword_search(SAM, "cello", NOW, 10)] == [mine]
    assert [fid for fid, _ in store.keyword_search(other, "cello", NOW, 10)] == [theirs]
    assert ids(store, q="cello") == {mine}


def test_list_facts_q_filters_by_words(store):
    cello = put(store, make_fact("plays", "cello", text="user plays the cello"))
    put(store, make_fact("lives in", "lisbon"))
    assert ids(store, q="cello") == {cello}
    assert ids(store, q="?") == set()


@pytest.mark.parametrize("other", [Scope("other-project", "default", "sam"), Scope("default", "prod", "sam"),
                                   Scope("default", "default", "alex")], ids=["project", "environment", "dataset"])
def test_nothing_crosses_scopes(store, other):
    fid = put(store, make_fact(), vector=unit(1))
    store.insert_entity(SAM, Entity(entity_id="e1", name="berlin", type="PLACE", created_at=NOW), unit(5))
    store.insert_episode(SAM, Episode(episode_id="m1", role="user", content="I live in Berlin.", at=NOW,
                                      created_at=NOW))
    store.record_ingest(SAM, "ref-1", {"memory_ids": [fid]}, NOW)

    assert ids(store, other, include_invalidated=True) == set()
    assert store.get_facts(other, [fid]) == []
    assert store.facts_in_slot(other, ["lives in"], NOW) == []
    assert store.keyword_search(other, "berlin", NOW, 10) == []
    assert live_vector_ids(store, other) == []
    assert store.fact_vectors(other, [fid]) == {}
    assert store.entities(other) == []
    assert store.entity_vectors(other, "PLACE")[0] == []
    assert store.get_episode(other, "m1") is None
    assert store.get_ingest(other, "ref-1") is None
    assert store.predicate_labels(other) == []
    # the owner still sees all of it
    assert store.get_facts(SAM, [fid])[0].fact_id == fid
    assert store.get_episode(SAM, "m1").content == "I live in Berlin."
    assert store.get_ingest(SAM, "ref-1") == {"memory_ids": [fid]}


def test_update_in_another_scope_changes_nothing(store):
    fid = put(store, make_fact())
    store.update_fact(Scope("default", "default", "alex"), fid, invalid_at=NOW)
    assert ids(store) == {fid}


def test_same_live_fact_may_exist_once_per_scope(store):
    put(store, make_fact())
    put(store, make_fact(), scope=Scope("default", "prod", "sam"))
    put(store, make_fact(), scope=Scope("p2", "default", "sam"))


def test_live_twin_is_refused(store):
    put(store, make_fact())
    with pytest.raises(DuplicateFact):
        put(store, make_fact())
    assert len(ids(store, include_invalidated=True)) == 1


def test_twin_of_an_invalidated_fact_is_allowed(store):
    old = put(store, make_fact())
    store.update_fact(SAM, old, invalid_at=NOW)
    new = put(store, make_fact())
    assert ids(store) == {new}


def test_twins_with_different_windows_are_allowed(store):
    put(store, make_fact(valid_until=NOW + timedelta(days=5)))
    put(store, make_fact())


def test_transaction_rolls_back_on_error(store):
    with pytest.raises(RuntimeError):
        with store.transaction(SAM):
            put(store, make_fact())
            raise RuntimeError("boom")
    assert ids(store, include_invalidated=True) == set()
    with store.transaction(SAM):  # the store is usable afterwards
        put(store, make_fact())
    assert len(ids(store)) == 1


def test_vectors_round_trip_as_float32(store):
    vec = unit(7).astype(np.float64)
    fid = put(store, make_fact(), vector=vec)
    got = store.fact_vectors(SAM, [fid])[fid]
    assert got.dtype == np.float32 and got.shape == (DIM,)
    np.testing.assert_array_equal(got, vec.astype(np.float32))
    [(found, score)] = store.vector_search(SAM, "fact", vec.astype(np.float32), 5, at=NOW)
    assert found == fid and score == pytest.approx(1.0, abs=1e-5)


def test_entity_vectors_round_trip(store):
    store.insert_entity(SAM, Entity(entity_id="e1", name="berlin", type="PLACE", created_at=NOW), unit(3))
    store.insert_entity(SAM, Entity(entity_id="e2", name="jazz", type="TOPIC", created_at=NOW), unit(4))
    store.insert_entity(SAM, Entity(entity_id="e3", name="rome", type="PLACE", created_at=NOW), None)
    found, matrix = store.entity_vectors(SAM, "PLACE")
    assert found == ["e1"]
    np.testing.assert_array_equal(matrix[0], unit(3).astype(np.float32))
    assert {e.name for e in store.entities(SAM, "PLACE")} == {"berlin", "rome"}


def test_set_fact_vector_writes_only_while_embed_text_is_unchanged(store):
    fid = put(store, make_fact(), embed_text="user lives in berlin. About: berlin.")
    assert [p[1] for p in store.pending("fact", 10)] == [fid]
    assert store.set_vector("fact", SAM, fid, "user lives in rome. About: rome.", unit(1)) is False
    assert store.fact_vectors(SAM, [fid]) == {}
    assert store.set_vector("fact", Scope("default", "default", "alex"), fid,
                                 "user lives in berlin. About: berlin.", unit(1)) is False
    assert store.set_vector("fact", SAM, fid, "user lives in berlin. About: berlin.", unit(1)) is True
    np.testing.assert_array_equal(store.fact_vectors(SAM, [fid])[fid], unit(1).astype(np.float32))
    assert store.pending("fact", 10) == []


def test_pending_facts_name_their_scope_and_text(store):
    other = Scope("p2", "prod", "alex")
    a = put(store, make_fact(), embed_text="text a")
    b = put(store, make_fact(), scope=other, embed_text="text b")
    put(store, make_fact(obj="rome"), vector=unit(1))
    assert store.pending("fact", 10) == [(SAM, a, "text a"), (other, b, "text b")]
    assert store.pending("fact", 1) == [(SAM, a, "text a")]


@pytest.mark.parametrize("bad", [unit(1, DIM - 1), unit(1, DIM + 1), np.ones((DIM, 1)) / np.sqrt(DIM)],
                         ids=["short", "long", "column"])
def test_wrong_dimension_is_refused_everywhere(store, bad):
    with pytest.raises(DimensionMismatch):
        put(store, make_fact(), vector=bad)
    with pytest.raises(DimensionMismatch):
        store.insert_entity(SAM, Entity(entity_id="e1", name="x", type="THING", created_at=NOW), bad)
    fid = put(store, make_fact())
    with pytest.raises(DimensionMismatch):
        store.set_vector("fact", SAM, fid, f"{make_fact().text}. About: berlin.", bad)
    assert store.fact_vectors(SAM, [fid]) == {}
    assert store.entities(SAM) == []


def test_one_fact_takes_exactly_one_vector(store):
    two_rows = np.stack([unit(1), unit(2)])
    with pytest.raises(DimensionMismatch):
        put(store, make_fact(obj="lisbon"), vector=two_rows)
    put(store, make_fact(obj="jazz", predicate="likes"), vector=unit(3))
    assert [v.shape for v in store.fact_vectors(SAM, live_vector_ids(store)).values()] == [(DIM,)]


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_vector_is_refused(store, value):
    bad = unit(1).copy()
    bad[3] = value
    with pytest.raises(NonFiniteVector):
        put(store, make_fact(), vector=bad)
    assert ids(store, include_invalidated=True) == set()
    fid = put(store, make_fact(), embed_text="t")
    with pytest.raises(NonFiniteVector):
        store.set_vector("fact", SAM, fid, "t", bad)
    assert store.fact_vectors(SAM, [fid]) == {}


# -- lifecycle: what a store declares -----------------------------------------------------------

def test_a_store_declares_its_migrations_location_and_reads(store):
    applied = store.applied_migrations()
    assert applied and [name for name, _ in applied] == sorted(name for name, _ in applied)
    assert all(at is None or at.tzinfo is not None for _, at in applied)
    assert isinstance(store.migrated_now, list) and set(store.migrated_now) <= {name for name, _ in applied}
    assert isinstance(store.location, str) and store.location
    assert isinstance(store.parallel_reads, bool)
    assert (store.embedding_dim(), store.embedding_model()) == (DIM, "fake-8")


def test_another_dimension_is_refused_once_one_is_recorded(store):
    with pytest.raises(DimensionMismatch):
        store.check_embedding_model("bigger", DIM * 2)
    store.check_embedding_model("fake-8", DIM)   # the same one again: fine
    assert store.embedding_dim() == DIM


# -- lookups by id stay inside their tenant --------------------------------------------------------

def test_fact_state_answers_only_within_its_project_and_environment(store):
    fid = put(store, make_fact(), vector=unit(1))
    scope, fact, embedded = store.fact_state(fid, "default", "default")
    assert (scope, fact.fact_id, embedded) == (SAM, fid, True)
    assert store.fact_state(fid, "other", "default") is None
    assert store.fact_state(fid, "default", "prod") is None
    assert store.fact_state("f_missing", "default", "default") is None


def test_get_job_answers_only_within_its_project_and_environment(store):
    queued, created = store.enqueue(job())
    assert created
    assert store.get_job(queued.request_id, "default", "default").content == "I live in Berlin."
    assert store.get_job(queued.request_id, "other", "default") is None
    assert store.get_job(queued.request_id, "default", "prod") is None


# -- entities, messages, receipts -----------------------------------------------------------------

def test_entities_are_found_by_name_or_alias_within_the_dataset(store):
    store.insert_entity(SAM, Entity(entity_id="e1", name="tom", type="PERSON", created_at=NOW), None)
    store.add_alias(SAM, "e1", "tommy")
    store.add_alias(SAM, "e1", "tommy")   # twice: kept once
    assert [e.aliases for e in store.entities(SAM)] == [["tommy"]]
    assert [e.entity_id for e in store.find_entities(SAM, ["tommy"])] == ["e1"]
    assert [e.entity_id for e in store.find_entities(SAM, ["tom", "nobody"])] == ["e1"]
    assert store.find_entities(ALEX, ["tom"]) == [] and store.find_entities(SAM, []) == []
    assert store.entities(SAM, "PLACE") == []


def test_messages_keep_their_chat_order_and_neighbours(store):
    for i in range(4):
        store.insert_episode(SAM, Episode(episode_id=f"m{i}", role="user", content=f"turn {i}", chat="c",
                                          at=NOW + timedelta(minutes=i), created_at=NOW), None)
    store.insert_episode(SAM, Episode(episode_id="x", role="user", content="elsewhere", chat="d", at=NOW,
                                      created_at=NOW), None)
    assert store.previous_message(SAM, "c", NOW + timedelta(minutes=2, seconds=30)).episode_id == "m2"
    assert store.previous_message(SAM, "c", NOW - timedelta(minutes=1)) is None
    assert store.previous_message(SAM, None, NOW + timedelta(hours=1)) is None
    assert [e.episode_id for e in store.get_episodes(SAM, ["m3", "missing", "m0"])] == ["m3", "m0"]
    assert store.message_neighbors(SAM, ["m1"]) == {"m1": ["m0", "m2"]}
    assert store.message_neighbors(SAM, ["m1"], exclude_chat="c") == {}
    store.insert_episode(SAM, Episode(episode_id="loose", role="user", content="no chat", at=NOW, created_at=NOW),
                         None)
    assert store.message_neighbors(SAM, ["loose", "m3"]) == {"m3": ["m2"]}   # no chat: no conversation
    assert [h[0] for h in store.episode_keyword_search(SAM, "elsewhere", 5)] == ["x"]
    assert store.get_episodes(ALEX, ["m1"]) == []


def test_an_ingest_receipt_is_kept_per_dataset(store):
    store.record_ingest(SAM, "ref", {"memory_ids": ["f_1"]}, NOW)
    assert store.get_ingest(SAM, "ref") == {"memory_ids": ["f_1"]}
    assert store.get_ingest(ALEX, "ref") is None


# -- notes -----------------------------------------------------------------------------------------

def test_notes_list_by_namespace_page_and_forget(store):
    for i, ns in enumerate(["user", "user", "assistant"]):
        store.insert_note(SAM, Note(note_id=f"n{i}", text=f"note {i} about cello", namespace=ns,
                                    created_at=NOW + timedelta(seconds=i)), unit(i))
    notes, total = store.list_notes(SAM, ["user"], False, 10, 0)
    assert ([n.note_id for n in notes], total) == (["n0", "n1"], 2)
    assert [n.note_id for n in store.list_notes(SAM, None, False, 1, 1)[0]] == ["n1"]
    store.forget_note(SAM, "n0", NOW, "n1")
    assert store.list_notes(SAM, ["user"], False, 10, 0)[1] == 1
    forgotten = store.get_notes(SAM, ["n0"])[0]
    assert forgotten.forgotten_at is not None and forgotten.superseded_by == "n1"
    assert store.list_notes(SAM, ["user"], True, 10, 0)[1] == 2
    assert {h[0] for h in store.note_keyword_search(SAM, "cello", 10)} == {"n1", "n2"}
    assert [h[0] for h in store.vector_search(SAM, "note", unit(2), 1, namespaces=["assistant"])] == ["n2"]
    assert store.get_notes(ALEX, ["n1"]) == [] and store.list_notes(ALEX, None, True, 10, 0) == ([], 0)


# -- core files and documents ----------------------------------------------------------------------

def test_core_file_versions_never_repeat_and_history_keeps_deletes(store):
    first = store.core_put(SAM, "user", "/memories/a.md", "one", "create")
    assert isinstance(first, CoreFile) and first.version == 1
    assert store.core_put(SAM, "user", "/memories/a.md", "two", "str_replace").version == 2
    store.core_put(SAM, "user", "/memories/B.md", "b", "create")
    assert [f.path for f in store.core_list(SAM, "user")] == ["/memories/B.md", "/memories/a.md"]   # code points
    store.core_delete(SAM, "user", "/memories/a.md")
    store.core_delete(SAM, "user", "/memories/a.md")   # absent: nothing happens
    assert store.core_get(SAM, "user", "/memories/a.md") is None
    assert store.core_put(SAM, "user", "/memories/a.md", "three", "create").version == 4
    history = store.core_history(SAM, "user", "/memories/a.md")
    assert [(v.version, v.op, v.content) for v in history] == [
        (1, "create", "one"), (2, "str_replace", "two"), (3, "delete", None), (4, "create", "three")]
    assert store.core_list(ALEX, "user") == [] and store.core_list(SAM, "assistant") == []


def test_documents_check_versions_expire_and_purge(store):
    args = ("default", "default", "team")
    doc = store.doc_put(*args, "a/x.md", "one", None, None, NOW)
    assert doc.version == 1
    with pytest.raises(DocumentConflict):
        store.doc_put(*args, "a/x.md", "again", None, None, NOW)
    assert store.doc_put(*args, "a/x.md", "two", 1, None, NOW).version == 2
    store.doc_put(*args, "a/y.md", "soon gone", None, NOW + timedelta(seconds=1), NOW)
    store.doc_put(*args, "b/z.md", "other folder", None, None, NOW)
    assert [d.path for d in store.doc_list(*args, "a/", NOW)] == ["a/x.md", "a/y.md"]
    later = NOW + timedelta(seconds=2)
    assert [d.path for d in store.doc_list(*args, "a/", later)] == ["a/x.md"]
    assert store.doc_get(*args, "a/y.md", later) is None
    assert store.doc_delete(*args, "a/y.md", later) is False   # expired: already gone
    assert store.doc_purge(later, "default", "default") == 1
    assert store.doc_delete(*args, "a/x.md", later) is True
    assert store.doc_get("other", "default", "team", "b/z.md", NOW) is None


# -- the job queue ---------------------------------------------------------------------------------

def test_a_dataset_runs_in_order_under_a_lease(store):
    first, _ = store.enqueue(job(content="one"))
    second, _ = store.enqueue(job(content="two"))
    again, created = store.enqueue(job(content="one again", client_ref=None))
    assert created   # no client_ref: every turn is new
    claimed = store.claim("w1", 60, NOW)
    assert claimed.request_id == first.request_id and claimed.status == "distilling"
    assert store.claim("w2", 60, NOW) is None   # the dataset's next job waits for the first
    with pytest.raises(LeaseLost):
        with store.transaction(SAM):
            store.finish(first.request_id, "w2", {"memory_ids": []})
    with store.transaction(SAM):
        store.finish(first.request_id, "w1", None, error="boom")
    assert store.get_job(first.request_id, "default", "default").status == "failed"
    assert store.count_jobs(("failed",)) == 1 and store.count_jobs(("queued",), "default", "default", "sam") == 2
    assert [j.request_id for j in store.list_jobs("default", "default", "sam", "failed")] == [first.request_id]
    assert store.retry_failed("default", "default", "alex") == 0
    assert store.retry_failed("default", "default") == 1
    assert store.count_jobs(("queued",)) == 3


def test_datasets_take_turns_so_a_backlog_never_starves_another_dataset(store):
    """Issue 16, item 10: 400 queued turns of one tenant made another's single turn wait for all of them."""
    flood = [store.enqueue(job(dataset="flood", content=f"turn {i}"))[0] for i in range(40)]
    order = []

    def run_one(worker="w") -> None:
        claimed = store.claim(worker, 60, NOW)
        order.append(claimed.dataset)
        with store.transaction(Scope("default", "default", claimed.dataset)):
            store.finish(claimed.request_id, worker, {"status": "stored", "memory_ids": []})

    for _ in range(5):
        run_one()
    late, _ = store.enqueue(job(dataset="late", content="my one turn"))
    other, _ = store.enqueue(job(dataset="other", content="first"))
    store.enqueue(job(dataset="other", content="second"))
    for _ in range(6):
        run_one()
    assert order[:5] == ["flood"] * 5
    assert "late" in order[5:7] and order[5:11].count("other") == 2        # within a turn or two, not after 35
    while store.count_jobs(("queued",)):
        run_one()
    assert order.count("flood") == 40 and store.get_job(flood[-1].request_id, "default", "default").status == "done"
    assert store.get_job(late.request_id, "default", "default").status == "done"
    assert store.get_job(other.request_id, "default", "default").status == "done"


def test_a_client_ref_makes_a_turn_idempotent(store):
    made, created = store.enqueue(job(client_ref="turn-1"))
    twin, again = store.enqueue(job(client_ref="turn-1", content="different text"))
    assert created and not again and twin.request_id == made.request_id


# -- datasets and keys -------------------------------------------------------------------------------

def test_datasets_list_with_counts_and_erase_one(store):
    put(store, make_fact(), vector=unit(1))
    put(store, make_fact(obj="rome"), scope=ALEX)
    store.insert_note(ALEX, Note(note_id="n1", text="a note", created_at=NOW), None)
    rows, total = store.datasets("default", "default", None, 10, 0)
    assert total == 2 and [(d.dataset, d.facts, d.notes) for d in rows] == [("alex", 1, 1), ("sam", 1, 0)]
    assert [d.dataset for d in store.datasets("default", "default", "le", 10, 0)[0]] == ["alex"]
    removed = store.delete_dataset(ALEX)
    assert removed["facts"] == 1 and removed["notes"] == 1
    assert [d.dataset for d in store.datasets("default", "default", None, 10, 0)[0]] == ["sam"]
    assert ids(store) != set()


def test_usage_counts_the_characters_a_dataset_stores(store):
    """Kept by triggers as rows come and go: the storage quota reads one row. Everything a tenant can make
    the store hold counts: texts, and the paths, namespaces and names beside them (issue 31, finding 3)."""
    assert store.usage(SAM) == 0
    put(store, make_fact())                                     # text, source quote, predicate, object, entity
    fact_chars = store.usage(SAM)
    assert fact_chars > 0 and store.usage(ALEX) == 0
    store.insert_note(SAM, Note(note_id="n1", text="x" * 1000, created_at=NOW), None)
    assert store.usage(SAM) == fact_chars + 1000 + len("user")
    store.core_put(SAM, "user", "/memories/a.md", "y" * 500, "create")
    store.core_put(SAM, "user", "/memories/a.md", "z" * 200, "write", keep=1)   # the first version is pruned
    assert store.usage(SAM) == fact_chars + 1004 + 200 + len("/memories/a.md") + len("user")
    store.enqueue(job(content="I live in Berlin."))
    assert store.usage(SAM) > fact_chars + 1200
    store.delete_dataset(SAM)
    assert store.usage(SAM) == 0


def test_api_keys_are_found_by_hash_listed_and_revoked_by_id(store):
    assert store.count_api_keys() == 0
    h1, h2, h3 = ("a" * 64), ("b" * 64), ("c" * 64)
    store.put_api_key(h1, "default", "admin", "ci")
    store.put_api_key(h2, "default", "member")
    store.put_api_key(h3, "other", "service")
    found = store.find_api_key(h1)
    assert (found.key_id, found.project, found.role, found.name) == ("a" * 16, "default", "admin", "ci")
    assert store.find_api_key("d" * 64) is None and store.count_api_keys() == 3
    assert [k.key_id for k in store.list_api_keys("default")] == ["a" * 16, "b" * 16]
    assert store.api_key_live("b" * 16)
    assert not store.revoke_api_key("b" * 16, "other")        # not that project's key
    assert store.revoke_api_key("b" * 16, "default") and not store.revoke_api_key("b" * 16)
    assert not store.api_key_live("b" * 16) and store.find_api_key(h2) is None and store.count_api_keys() == 2
    assert [k.key_id for k in store.list_api_keys()] == ["a" * 16, "c" * 16]
    revoked = [k for k in store.list_api_keys("default", include_revoked=True) if k.revoked_at is not None]
    assert [k.key_id for k in revoked] == ["b" * 16]


def test_sessions_are_found_until_they_expire_or_are_deleted(store):
    from datetime import timedelta

    from kenning import timeutil

    principal = {"p": "default", "e": "default", "kind": "member", "d": None, "r": None}
    store.put_session("s1", principal, "a" * 16, timeutil.now() + timedelta(hours=1))
    store.put_session("s2", principal, None, timeutil.now() - timedelta(seconds=1))   # already over
    assert store.find_session("s1") == (principal, "a" * 16)
    assert store.find_session("s2") is None and store.find_session("s3") is None
    store.delete_session("s1")
    assert store.find_session("s1") is None


# -- the entity graph ------------------------------------------------------------------------------

def test_entity_graph_walks_from_an_entity_through_the_messages_its_facts_share(store):
    """sister anna (m1) -> anna and porto said together (m2) -> porto and tom said together (m3)."""
    from kenning.model import Entity

    for name in ("anna", "porto", "tom", "lisbon"):
        store.insert_entity(SAM, Entity(entity_id=f"e_{name}", name=name, type="PERSON", created_at=NOW), None)

    def fact(predicate, obj, episode, **kw):
        f = make_fact(predicate, obj, **kw).model_copy(update={"episode_id": episode})
        store.insert_fact(SAM, f, f.text, None, entity_id=f"e_{obj}")
        return f.fact_id
    sister = fact("has sister", "anna", "m1")
    visits = fact("visits", "anna", "m2")
    city = fact("likes", "porto", "m2")
    friend = fact("has friend", "tom", "m3")
    trip = fact("visited", "porto", "m3")
    fact("lives in", "lisbon", "m4")                                            # never said with the others
    fact("has friend", "tom", "m5", invalid_at=NOW - timedelta(days=1))        # superseded: no step
    walked = store.entity_graph(SAM, ["e_anna"], NOW, 2, 50)
    hops = {key: hop for key, _, hop in walked}
    assert hops == {sister: 0, visits: 0, city: 1, trip: 1, friend: 2}
    assert [hop for _, _, hop in walked] == sorted(hop for _, _, hop in walked)   # nearest first
    assert {key: ep for key, ep, _ in walked}[city] == "m2"
    assert {key for key, _, hop in store.entity_graph(SAM, ["e_anna"], NOW, 1, 50)} == {sister, visits, city, trip}
    assert {key for key, _, _ in store.entity_graph(SAM, ["e_anna"], NOW, 0, 50)} == {sister, visits}
    assert store.entity_graph(ALEX, ["e_anna"], NOW, 2, 50) == []              # never another dataset's rows
    assert store.entity_graph(SAM, [], NOW, 2, 50) == []
    assert len(store.entity_graph(SAM, ["e_anna"], NOW, 2, 2)) == 2


def test_message_vectors_come_back_for_the_messages_that_have_one(store):
    for i in range(3):
        store.insert_episode(SAM, Episode(episode_id=f"v{i}", role="user", content=f"turn {i}", chat="c",
                                          at=NOW + timedelta(minutes=i), created_at=NOW), unit(i) if i < 2 else None)
    got = store.message_vectors(SAM, ["v0", "v2", "v1", "missing"])
    assert sorted(got) == ["v0", "v1"]
    assert np.allclose(got["v1"], unit(1), atol=1e-6)
    assert store.message_vectors(ALEX, ["v0"]) == {} and store.message_vectors(SAM, []) == {}


def test_usage_follows_rows_rewritten_in_place(store):
    """A finished turn drops its words and an erasure redacts a message in place: the count moves by the
    difference, and is back to zero once everything is gone (it drifted up by what each rewrite removed)."""
    from kenning.store.base import ErasurePlan

    words = "I live in Berlin and work at the harbour."
    store.enqueue(job(content=words))
    queued = store.usage(SAM)
    claimed = store.claim("w1", 30.0, NOW)
    with store.transaction(SAM):
        store.finish(claimed.request_id, "w1", {"status": "stored"})
    assert queued - store.usage(SAM) >= len(words)   # the finished turn keeps its receipt, not its words (SQLite
    #                                                  also writes its JSON again without spaces)
    said, redacted = "I keep bees at Vexmoor.", "I keep bees at [erased]."
    store.insert_episode(SAM, Episode(episode_id="m1", role="user", content=said, at=NOW, created_at=NOW))
    before = store.usage(SAM)
    with store.transaction(SAM):
        store.erase(SAM, ErasurePlan(redactions={"m1": (redacted, redacted, None)}))
    assert store.usage(SAM) == before - len(said) + len(redacted)
    store.delete_dataset(SAM)
    assert store.usage(SAM) == 0
