"""The PostgreSQL store at scale: bulk import through COPY, a vocabulary per dataset, cached vector
matrices that follow every connection's writes, and the opt-in HNSW index built after a bulk load.

Real PostgreSQL (tests/pg.py); the plans asserted on come from EXPLAIN (ANALYZE) of the store's own SQL.
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

import numpy as np
import psycopg
import pytest

from kenning import InputError, Memory, Settings, timeutil, transfer
from kenning.model import Fact, Note, Scope
from kenning.store import postgres as pg
from kenning.store.postgres import PostgresStore

pytestmark = pytest.mark.postgres

DIM = 16
NOW = datetime.now(timezone.utc)
A, B = Scope("default", "default", "ann"), Scope("default", "default", "bob")


def unit(rng, n: int = 1) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fact(obj: str, predicate: str = "likes", text: str | None = None) -> Fact:
    return Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate=predicate, object=obj, object_is_entity=False,
                text=text or f"user {predicate} {obj}", valid_at=NOW - timedelta(days=1), created_at=NOW)


@pytest.fixture
def store(pg_url):
    s = PostgresStore(pg_url)
    s.check_embedding_model("fake-16", DIM)
    yield s
    s.close()


def export_of(mem: Memory) -> list[str]:
    lines = list(mem.export())
    return [lines[0]] + sorted(lines[1:])


# -- bulk import ------------------------------------------------------------------------------------

@pytest.fixture
def source(tmp_path, local_embedder):
    mem = Memory(str(tmp_path / "source.db"))
    for i, city in enumerate(["Berlin", "Lisbon", "Porto"]):
        mem.add(f"I live in {city}.", "sam", at=NOW - timedelta(days=30 - i), chat="c1")
    for food in ("ramen", "tapas", "pho", "dal"):
        mem.add(f"I love {food}.", "kim", chat="k1")
    mem.notes.save("sam", "Works in the Lisbon office")
    mem.core.write("sam", "/memories/profile.md", "Name: Sam\n")
    mem.documents.write("run-7", "plan.md", "v1")
    yield mem
    mem.close()


def test_a_bulk_import_in_small_batches_reproduces_the_export_exactly(source, pg_url, local_embedder, monkeypatch):
    monkeypatch.setattr(transfer, "BATCH_ROWS", 2)   # many COPY batches, each kind split across several
    lines = list(source.export(include_vectors=True))
    with Memory(pg_url) as target:
        counts = target.import_(lines)
        assert counts["skipped"] == 0 and counts["fact"] == len([x for x in lines if '"kind":"fact"' in x])
        assert export_of(target) == export_of(source)
        assert target.recall("Where do I live?", dataset="sam").facts[0].object == "porto"
        again = target.import_(lines)   # everything is there already: all skipped, nothing doubled
        assert again["skipped"] == len(lines) - 1 and export_of(target) == export_of(source)


def test_a_row_the_database_refuses_names_its_line_and_nothing_is_imported(source, pg_url, local_embedder):
    lines = list(source.export())
    bad = next(i for i, line in enumerate(lines) if '"kind":"fact"' in line)
    record = json.loads(lines[bad])
    record["text"] = "user lives in \x00 nowhere"      # PostgreSQL text cannot hold NUL
    lines[bad] = json.dumps(record)
    with Memory(pg_url) as target:
        with pytest.raises(InputError, match=rf"line {bad + 1}: fact: .*NUL.*nothing was imported"):
            target.import_(lines)
        assert target.list_facts("sam", include_invalidated=True).total == 0
        assert target.notes.list("sam") == []


def test_into_an_empty_store_the_hnsw_index_is_built_once_after_the_load(source, pg_url, local_embedder):
    lines = list(source.export(include_vectors=True))
    with Memory(pg_url, settings=Settings(ann_index=True)) as target:
        assert target.store._has_ann_index()
        target.import_(lines)
        assert target.store._has_ann_index()
        hits = target.store.cross_dataset_search("default", "default", target.embedder.embed("ramen"), 3)
        assert hits and {scope.dataset for scope, _, _ in hits} <= {"sam", "kim"}
    with Memory(pg_url) as plain:   # the setting off: an index that exists stays (dropping it is the admin's call)
        assert plain.store._has_ann_index()


# -- a vocabulary per dataset -------------------------------------------------------------------------

def test_each_dataset_has_its_own_vocabulary_and_a_keyword_read_touches_only_its_rows(store, pg_url):
    rng = np.random.default_rng(1)
    with store.transaction(B):
        for i in range(300):
            store.insert_fact(B, fact(f"saffron risotto {i}"), "x", unit(rng)[0])
    with store.transaction(A):
        store.insert_fact(A, fact("saffron buns"), "x", unit(rng)[0])
        store.insert_fact(A, fact("o'brien's pub", predicate="visits"), "x", unit(rng)[0])
    with psycopg.connect(pg_url) as conn:
        tsv = conn.execute("SELECT tsv::text FROM facts WHERE dataset = 'ann' AND object = 'saffron buns'").fetchone()[0]
        token = conn.execute("SELECT kenning_scope_token('default', 'default', 'ann')").fetchone()[0]
        assert f"'{token}saffron'" in tsv and "'saffron'" not in tsv
        # the scoped word's posting list holds ann's row alone: no tenant filter needed to leave bob's out
        matched = conn.execute("SELECT count(*) FROM facts WHERE tsv @@ kenning_scoped_query("
                               "kenning_scope_token('default', 'default', 'ann'), plainto_tsquery('english', 'saffron'))"
                               ).fetchone()[0]
        assert matched == 1
    assert [store.get_facts(A, [k])[0].object for k, _ in store.keyword_search(A, "saffron", NOW, 10)] == ["saffron buns"]
    assert len(store.keyword_search(B, "saffron", NOW, 500)) == 300
    assert [store.get_facts(A, [k])[0].object for k, _ in store.keyword_search(A, "O'Brien's", NOW, 10)] == ["o'brien's pub"]
    assert [f.object for f in store.list_facts(A, pg.FactQuery(q="saffron"))[0]] == ["saffron buns"]


def test_a_word_in_most_of_a_large_datasets_rows_is_left_out_as_in_sqlite(store):
    rng = np.random.default_rng(2)
    with store.transaction(B):
        for i in range(1_200):
            store.insert_fact(B, fact(f"plain thing {i}"), "x", unit(rng)[0])
        store.insert_fact(B, fact("plain quince"), "x", unit(rng)[0])
    with store.transaction(A):
        store.insert_fact(A, fact("plain toast"), "x", unit(rng)[0])
    assert store.keyword_search(B, "plain", NOW, 10) == []          # in every row: weighs nothing, costs much
    assert [store.get_facts(B, [k])[0].object for k, _ in store.keyword_search(B, "plain quince", NOW, 10)] \
        == ["plain quince"]
    assert len(store.keyword_search(A, "plain", NOW, 10)) == 1       # a small dataset ranks every word


# -- cached matrices -------------------------------------------------------------------------------

def test_the_cached_matrices_follow_every_connections_writes(store, pg_url):
    rng = np.random.default_rng(3)
    other = PostgresStore(pg_url)
    try:
        first = fact("quince")
        v = unit(rng)[0]
        with store.transaction(A):
            store.insert_fact(A, first, "x", v)
            store.insert_note(A, Note(note_id=f"n_{uuid.uuid4().hex}", text="a note", created_at=NOW), v)
        assert [k for k, _ in other.vector_search(A, "fact", v, 5)] == [first.fact_id]   # loads other's cache
        second = fact("medlar")
        with store.transaction(A):
            store.insert_fact(A, second, "x", v)
        assert {k for k, _ in other.vector_search(A, "fact", v, 5)} == {first.fact_id, second.fact_id}
        with store.transaction(A):
            store.update_fact(A, first.fact_id, invalid_at=NOW)     # deleted elsewhere: gone here at once
        assert [k for k, _ in other.vector_search(A, "fact", v, 5)] == [second.fact_id]
        assert len(other.vector_search(A, "note", v, 5)) == 1
        with psycopg.connect(pg_url) as conn:   # a write from outside kenning moves the version too
            conn.execute("UPDATE notes SET forgotten_at = now() WHERE dataset = 'ann'")
        assert other.vector_search(A, "note", v, 5) == []
        assert other.vector_search(B, "fact", v, 5) == []           # another dataset: its own (empty) matrix
    finally:
        other.close()


def test_reads_side_by_side_follow_the_setting_and_default_to_the_core_count(pg_url, monkeypatch):
    assert PostgresStore(pg_url, parallel_reads=True).parallel_reads is True
    assert PostgresStore(pg_url, parallel_reads=False).parallel_reads is False
    monkeypatch.setattr(pg.os, "cpu_count", lambda: 2)
    assert PostgresStore(pg_url).parallel_reads is False
    monkeypatch.setattr(pg.os, "cpu_count", lambda: 8)
    assert PostgresStore(pg_url).parallel_reads is True
    with PostgresStore(pg_url)._pool.connection() as conn:
        assert conn.execute("SHOW plan_cache_mode").fetchone()["plan_cache_mode"] == "force_custom_plan"


def test_the_postgresql_settings_come_from_the_environment():
    s = Settings.from_env({"KENNING_REPLICAS": "postgresql://a/b, postgresql://c/d", "KENNING_ANN_INDEX": "true",
                           "KENNING_PARALLEL_READS": "false", "KENNING_REPLICA_WAIT_SECONDS": "0.5",
                           "KENNING_REPLICA_MAX_LAG_SECONDS": "2"})
    assert s.replicas == ("postgresql://a/b", "postgresql://c/d")
    assert (s.ann_index, s.parallel_reads, s.replica_wait_seconds, s.replica_max_lag_seconds) == (True, False, 0.5, 2.0)
    assert Settings.from_env({}).parallel_reads is None and Settings.from_env({}).ann_index is False


def test_a_large_import_leaves_its_rows_vacuumed_and_counted(store, pg_url, monkeypatch):
    monkeypatch.setattr(transfer, "MAINTAIN_ROWS", 3)
    rng = np.random.default_rng(4)
    header = {"kind": "kenning-export", "version": 1, "embedding_model": "fake-16", "dim": DIM, "vectors": True}
    lines = [json.dumps(header)]
    for i in range(5):
        f = fact(f"plum {i}")
        row = {"dataset": "ann", **{k: getattr(f, k) for k in ("fact_id", "subject", "predicate", "object",
                                                                "object_is_entity", "entity_type", "text", "kind",
                                                                "confidence", "source_quote", "valid_until",
                                                                "invalid_at", "superseded_by", "episode_id")},
               "entity_id": None, "valid_at": timeutil.dump(f.valid_at), "created_at": timeutil.dump(f.created_at),
               "embed_text": f.text,
               "vector": unit(rng)[0]}
        lines.append(transfer._line(transfer._record("fact", "default", "default", row, True)))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        before = conn.execute("SELECT coalesce(vacuum_count, 0) + coalesce(autovacuum_count, 0) FROM"
                              " pg_stat_user_tables WHERE relname = 'facts'").fetchone()[0]
    counts, _ = transfer.import_lines(store, lines)
    assert counts["fact"] == 5
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        after = conn.execute("SELECT coalesce(vacuum_count, 0) + coalesce(autovacuum_count, 0) FROM"
                             " pg_stat_user_tables WHERE relname = 'facts'").fetchone()[0]
    assert after > before
