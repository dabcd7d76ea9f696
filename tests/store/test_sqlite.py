"""The SQLite store on its own: the live predicate, listing, search, tenancy, migrations,
the live-fact backstop and vector handling. Real databases, in memory or under tmp_path."""
from __future__ import annotations

import sqlite3
import threading
import uuid
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kenning import timeutil
from kenning.errors import DimensionMismatch, DuplicateFact, MigrationError, NonFiniteVector
from kenning.model import Entity, Episode, Fact, Scope
from kenning.store import sqlite as sqlite_mod
from kenning.store.base import FactQuery
from kenning.store.sqlite import SQLiteStore

DIM = 8
SAM = Scope("default", "default", "sam")
NOW = datetime.now(timezone.utc)


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim)
    return v / np.linalg.norm(v)


def make_fact(predicate="lives in", obj="berlin", *, valid_at=None, valid_until=None, invalid_at=None,
              text=None, fact_id=None) -> Fact:
    return Fact(fact_id=fact_id or f"f_{uuid.uuid4().hex}", predicate=predicate, object=obj,
                object_is_entity=True, entity_type="PLACE", text=text or f"user {predicate} {obj}",
                valid_at=valid_at or NOW - timedelta(days=30), valid_until=valid_until, invalid_at=invalid_at,
                created_at=NOW)


def put(store, fact, scope=SAM, vector=None, embed_text=None):
    store.insert_fact(scope, fact, embed_text or f"{fact.text}. About: {fact.object}.", vector)
    return fact.fact_id


def ids(store, scope=SAM, **query):
    facts, total = store.list_facts(scope, FactQuery(**query))
    assert total == len(facts) or query.get("limit")
    return {f.fact_id for f in facts}


@pytest.fixture
def store():
    s = SQLiteStore(":memory:")
    s.check_embedding_model("fake-8", DIM)
    yield s
    s.close()


@pytest.fixture
def file_store(db_path):
    s = SQLiteStore(db_path)
    s.check_embedding_model("fake-8", DIM)
    yield s
    s.close()


# -- the live predicate --------------------------------------------------------------

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


@pytest.mark.parametrize("read", ["keyword", "matrix", "slot"])
def test_every_read_path_applies_the_live_predicate(store, read):
    live = put(store, make_fact(obj="lisbon", text="user lives in lisbon"), vector=unit(1))
    put(store, make_fact(obj="porto", text="user lives in porto", valid_at=NOW + timedelta(days=3)), vector=unit(2))
    put(store, make_fact(obj="madrid", text="user lives in madrid", valid_until=NOW - timedelta(days=1)), vector=unit(3))
    put(store, make_fact(obj="berlin", text="user lives in berlin", invalid_at=NOW - timedelta(days=1)), vector=unit(4))
    if read == "keyword":
        found = {fid for fid, _ in store.keyword_search(SAM, "lives", NOW, 10)}
        assert found == {live}
    elif read == "matrix":
        found_ids, matrix = store.live_matrix(SAM, NOW)
        assert found_ids == [live] and matrix.shape == (1, DIM)
    else:  # the write path's slot: live now or starting later, never expired or invalidated
        found = {f.object for f in store.facts_in_slot(SAM, ["lives in"], NOW)}
        assert found == {"lisbon", "porto"}


def test_live_matrix_follows_updates(store):
    a = put(store, make_fact(obj="lisbon"), vector=unit(1))
    b = put(store, make_fact(obj="porto", predicate="likes"), vector=unit(2))
    assert sorted(store.live_matrix(SAM, NOW)[0]) == sorted([a, b])
    store.update_fact(SAM, a, invalid_at=NOW)
    assert store.live_matrix(SAM, NOW)[0] == [b]


def test_live_matrix_sees_commits_from_another_connection(db_path):
    one, two = SQLiteStore(db_path), SQLiteStore(db_path)
    try:
        one.check_embedding_model("fake-8", DIM)
        a = put(one, make_fact(obj="lisbon"), vector=unit(1))
        assert two.live_matrix(SAM, NOW)[0] == [a]
        b = put(one, make_fact(obj="jazz", predicate="likes"), vector=unit(2))
        assert sorted(two.live_matrix(SAM, NOW)[0]) == sorted([a, b])
    finally:
        one.close()
        two.close()


# -- keyword search ----------------------------------------------------------------

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


def test_keyword_search_skips_words_in_most_rows_of_a_large_dataset(store):
    """A word in at least half of a large dataset's rows weighs ~0 in BM25 and costs milliseconds to
    rank; it is left out, so the rare word decides and a query of common words alone finds nothing."""
    n = sqlite_mod.COMMON_MIN_ROWS
    with store.transaction(SAM):
        for i in range(n):
            put(store, make_fact("likes", f"thing {i}", text=f"user likes thing {i}"))
    cello = put(store, make_fact("likes", "cello", text="user likes the cello"))
    assert [fid for fid, _ in store.keyword_search(SAM, "like cello", NOW, 10)] == [cello]
    assert store.keyword_search(SAM, "likes", NOW, 10) == []
    # A dataset under the size floor ranks every word, however common.
    small = Scope("default", "default", "alex")
    few = [put(store, make_fact("likes", f"thing {i}", text=f"user likes thing {i}"), scope=small) for i in range(5)]
    assert {fid for fid, _ in store.keyword_search(small, "likes", NOW, 10)} == set(few)


def test_list_facts_q_filters_by_words(store):
    cello = put(store, make_fact("plays", "cello", text="user plays the cello"))
    put(store, make_fact("lives in", "lisbon"))
    assert ids(store, q="cello") == {cello}
    assert ids(store, q="?") == set()


# -- tenancy ----------------------------------------------------------------------------

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
    assert store.live_matrix(other, NOW)[0] == []
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


# -- the live-fact backstop -------------------------------------------------------

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


@pytest.mark.parametrize("connections", ["shared store", "two connections"])
def test_racing_writers_cannot_create_twins(db_path, connections):
    first = SQLiteStore(db_path)
    second = first if connections == "shared store" else SQLiteStore(db_path)
    barrier = threading.Barrier(2)
    outcomes: list = []
    lock = threading.Lock()
    fact_time = NOW - timedelta(days=1)

    def writer(store):
        fact = make_fact(valid_at=fact_time)  # identical content, a different fact_id per writer
        barrier.wait()
        try:
            put(store, fact)
            result = "stored"
        except DuplicateFact as exc:
            result = exc
        with lock:
            outcomes.append(result)

    try:
        threads = [threading.Thread(target=writer, args=(s,)) for s in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(outcomes) == 2
        assert outcomes.count("stored") == 1
        assert sum(isinstance(o, DuplicateFact) for o in outcomes) == 1
        assert len(ids(first, include_invalidated=True)) == 1
    finally:
        first.close()
        if second is not first:
            second.close()


def test_transaction_rolls_back_on_error(store):
    with pytest.raises(RuntimeError):
        with store.transaction(SAM):
            put(store, make_fact())
            raise RuntimeError("boom")
    assert ids(store, include_invalidated=True) == set()
    with store.transaction(SAM):  # the store is usable afterwards
        put(store, make_fact())
    assert len(ids(store)) == 1


# -- vectors ------------------------------------------------------------------------------

def test_vectors_round_trip_as_float32(store):
    vec = unit(7).astype(np.float64)
    fid = put(store, make_fact(), vector=vec)
    got = store.fact_vectors(SAM, [fid])[fid]
    assert got.dtype == np.float32 and got.shape == (DIM,)
    np.testing.assert_array_equal(got, vec.astype(np.float32))
    _, matrix = store.live_matrix(SAM, NOW)
    np.testing.assert_array_equal(matrix[0], vec.astype(np.float32))


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
    assert store.live_matrix(SAM, NOW)[1].shape[1] == DIM


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


def test_vector_without_recorded_model_is_refused():
    s = SQLiteStore(":memory:")
    try:
        with pytest.raises(DimensionMismatch):
            put(s, make_fact(), vector=unit(1))
        put(s, make_fact())  # no vector: fine, it stays pending
    finally:
        s.close()


def test_recorded_embedding_dimension_is_enforced_on_reopen(db_path):
    s = SQLiteStore(db_path)
    s.check_embedding_model("fake-8", DIM)
    s.close()
    s = SQLiteStore(db_path)
    try:
        assert s.embedding_dim() == DIM
        s.check_embedding_model("fake-8", DIM)  # same dimension: accepted
        with pytest.raises(DimensionMismatch) as info:
            s.check_embedding_model("bigger", 384)
        assert "8" in str(info.value) and "384" in str(info.value)
        assert s.embedding_dim() == DIM
    finally:
        s.close()


# -- files: WAL, migrations ---------------------------------------------------------------

def test_file_store_uses_wal(file_store, db_path):
    assert file_store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con = sqlite3.connect(db_path)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        con.close()


def test_file_store_persists_across_reopen(db_path):
    s = SQLiteStore(db_path)
    s.check_embedding_model("fake-8", DIM)
    fid = put(s, make_fact(), vector=unit(2))
    s.close()
    s = SQLiteStore(db_path)
    try:
        assert ids(s) == {fid}
        np.testing.assert_array_equal(s.fact_vectors(SAM, [fid])[fid], unit(2).astype(np.float32))
    finally:
        s.close()


def test_missing_parent_folders_are_created(tmp_path):
    s = SQLiteStore(tmp_path / "a" / "b" / "k.db")
    s.close()
    assert (tmp_path / "a" / "b" / "k.db").is_file()


def _migrations(db_path):
    con = sqlite3.connect(db_path)
    try:
        return con.execute("SELECT name, applied_at FROM migrations ORDER BY name").fetchall()
    finally:
        con.close()


def test_migrations_are_recorded_and_not_rerun(db_path):
    SQLiteStore(db_path).close()
    first = _migrations(db_path)
    assert [name for name, _ in first] == [m.__name__ for m in sqlite_mod.MIGRATIONS]
    SQLiteStore(db_path).close()
    assert _migrations(db_path) == first


def test_a_new_migration_runs_once(db_path, monkeypatch):
    SQLiteStore(db_path).close()
    calls = []

    def m999_add_notes(db):
        calls.append(1)
        db.execute("CREATE TABLE notes_test (id TEXT PRIMARY KEY)")
        db.execute("CREATE INDEX notes_test_i ON notes_test (id)")

    shipped = [m.__name__ for m in sqlite_mod.MIGRATIONS]
    monkeypatch.setattr(sqlite_mod, "MIGRATIONS", [*sqlite_mod.MIGRATIONS, m999_add_notes])
    SQLiteStore(db_path).close()
    SQLiteStore(db_path).close()
    assert len(calls) == 1
    assert [name for name, _ in _migrations(db_path)] == shipped + ["m999_add_notes"]


def test_a_failing_migration_rolls_back_and_raises(db_path, monkeypatch):
    SQLiteStore(db_path).close()

    def m002_broken(db):
        db.execute("CREATE TABLE half_done (id TEXT)")
        db.execute("CREATE TABLE oops (")

    shipped = [m.__name__ for m in sqlite_mod.MIGRATIONS]
    monkeypatch.setattr(sqlite_mod, "MIGRATIONS", [*sqlite_mod.MIGRATIONS, m002_broken])
    with pytest.raises(MigrationError) as info:
        SQLiteStore(db_path)
    assert "m002_broken" in str(info.value)
    con = sqlite3.connect(db_path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        con.close()
    assert "half_done" not in tables
    assert [name for name, _ in _migrations(db_path)] == shipped


def test_times_are_stored_as_sortable_utc_text(store):
    fid = put(store, make_fact(valid_at=datetime(2026, 3, 1, 10, 0, tzinfo=timezone(timedelta(hours=2)))))
    raw = store._db.execute("SELECT valid_at FROM facts WHERE fact_id = ?", (fid,)).fetchone()[0]
    assert raw == "2026-03-01T08:00:00.000000Z"
    assert timeutil.load(raw) == datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc)


def test_erasing_a_dataset_empties_its_keyword_rows_only(store):
    from kenning.model import Note

    alex = Scope("default", "default", "alex")
    for scope in (SAM, alex):
        put(store, make_fact("plays", "cello", text="user plays the cello"), scope=scope)
        store.insert_episode(scope, Episode(episode_id="m1", role="user", content="I play the cello", chat="c",
                                            at=NOW, created_at=NOW))
        store.insert_note(scope, Note(note_id=f"n_{scope.dataset}", text="cello lessons on Monday",
                                      created_at=NOW), None)
    store.delete_dataset(SAM)

    def rows(table, scope):
        token = sqlite_mod.scope_token(*scope)
        return store._q(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (f"scope:{token}",))[0][0]
    for table in ("facts_fts", "episodes_fts", "notes_fts"):
        assert (rows(table, SAM), rows(table, alex)) == (0, 1), table
    assert [hit[0] for hit in store.episode_keyword_search(alex, "cello", 10)] == ["m1"]
