"""The SQLite store on its own: files (WAL, reopening, migrations), FTS5 internals, racing connections
on one file, its per-dataset matrix cache. The contract itself runs on every backend in test_contract.py.
Real databases, in memory or under tmp_path."""
from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kenning import timeutil
from kenning.errors import DimensionMismatch, DuplicateFact, MigrationError
from kenning.model import Episode, Scope
from kenning.store import sqlite as sqlite_mod
from kenning.store.sqlite import SQLiteStore
from facts_kit import DIM, NOW, SAM, ids, make_fact, put, unit





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


# -- tenancy ----------------------------------------------------------------------------

# -- the live-fact backstop -------------------------------------------------------

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


# -- vectors ------------------------------------------------------------------------------

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


def test_a_new_home_folder_and_database_are_the_owners_alone(tmp_path):
    """Other local users could read every fact from a 0644 database in a 0755 folder."""
    import stat

    path = tmp_path / "home" / "kenning.db"
    SQLiteStore(path).close()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    SQLiteStore(shared / "k.db").close()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755   # a folder that was there is left as it is


def test_another_tenant_cannot_forge_words_into_a_datasets_vocabulary():
    """Issue 31, finding 10: ``x_<victim's prefix>zanzibar`` written in another project landed in the victim's
    vocabulary (the tokenizer split on the underscore), and after 520 such messages the common-word filter
    switched "zanzibar" off in the victim's 1,001-message dataset."""
    from kenning import Memory

    with Memory(":memory:", embedder=None) as mem:
        victim = mem.services.scope("victim", "acme", "default")
        for i in range(1_000):
            mem.messages.index("victim", f"ordinary message number {i}", project="acme")
        mem.messages.index("victim", "we are flying to zanzibar in may", message_id="m_zanzibar", project="acme")
        forged = f"x_{sqlite_mod.word_prefix(*victim)}zanzibar"
        for i in range(520):
            mem.messages.index("mallory", f"{forged} {forged} {i}", project="beta")
        store = mem.store
        assert [e for e, _ in store.episode_keyword_search(victim, "zanzibar", 5)] == ["m_zanzibar"]
        # nothing of beta's rows is a word of the victim's: the victim's dataset holds the word once
        count = store._q("SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?",
                         (f'content: "{sqlite_mod.word_prefix(*victim)}zanzibar"',))[0][0]
        assert count == 1


def test_words_are_what_the_tokenizer_keeps_together():
    assert sqlite_mod.scoped_words("p", "e", "d", "snake_case ünïcode 42nd") == " ".join(
        sqlite_mod.word_prefix("p", "e", "d") + w for w in ("snake", "case", "ünïcode", "42nd"))


def test_a_deleted_dataset_leaves_none_of_its_words_in_the_files(db_path):
    """Deleted rows are zeroed (secure_delete), the keyword indexes merged (FTS5 keeps a deleted row's words
    in older segments until then) and the WAL checkpointed and truncated: the file, its WAL and its shared
    memory hold none of the dataset's rarest words; another dataset's are still there."""
    from kenning import Memory

    mem = Memory(f"sqlite:///{db_path}", embedder=None, extractor="parse")
    mem.add("I adopted a greyhound called Zorblax from the Quillington shelter.", "sam", chat="c1")
    mem.notes.save("sam", "Zorblax hates thunderstorms.")
    mem.add("I keep bees at the Vexmoor allotment.", "ana", chat="c1")

    def count(word: bytes) -> int:
        files = [p for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)]
        return sum(p.read_bytes().lower().count(word) for p in files)

    assert count(b"zorblax") and count(b"quillington")
    mem.delete_dataset("sam")
    assert (count(b"zorblax"), count(b"quillington")) == (0, 0)
    mem.close()
    assert (count(b"zorblax"), count(b"quillington")) == (0, 0) and count(b"vexmoor") > 0


def test_a_deleted_message_leaves_none_of_its_words_in_the_files(db_path):
    """A message deleted from the middle of a chat: gone from its row, the keyword index, the next message's
    keyword context, the WAL, and from the facts mined from it."""
    from kenning import Memory

    mem = Memory(f"sqlite:///{db_path}", embedder=None, extractor="parse")
    mem.add("I live in Porto.", "sam", chat="c1")
    gone = mem.add("I adopted a greyhound called Zorblax from the Quillington shelter.", "sam", chat="c1")
    mem.add("She sleeps on the sofa all day.", "sam", chat="c1")

    def count(word: bytes) -> int:
        files = [p for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)]
        return sum(p.read_bytes().lower().count(word) for p in files)

    assert count(b"zorblax") and count(b"quillington")
    mem.messages.delete("sam", gone.episode_id)
    mem.close()
    assert (count(b"zorblax"), count(b"quillington")) == (0, 0) and count(b"porto") > 0
