"""The PostgreSQL store on its own: migrations, the live-fact backstop under racing connections, exact
per-dataset and HNSW cross-dataset vector search, export/import across backends, and many processes on
one database (queue workers, writers of one dataset).

The contract itself runs on both stores in the conformance suite (the ``[postgres]`` tests); these are
the things only a shared server has. Real PostgreSQL (tests/pg.py), real subprocesses.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import numpy as np
import psycopg
import pytest

from kenning import Memory, Settings
from kenning.cli import main
from kenning.errors import DimensionMismatch, DuplicateFact
from kenning.model import Fact, Scope
from kenning.store.base import FactQuery
from kenning.store.postgres import MIGRATIONS, PostgresStore

pytestmark = pytest.mark.postgres

DIM = 16
NOW = datetime.now(timezone.utc)
SAM = Scope("default", "default", "sam")


def unit(rng, n: int = 1, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fact(obj: str = "lisbon", predicate: str = "lives in", **kw) -> Fact:
    return Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate=predicate, object=obj, object_is_entity=True,
                entity_type="PLACE", text=f"user {predicate} {obj}", valid_at=kw.pop("valid_at", NOW - timedelta(days=1)),
                created_at=NOW, **kw)


@pytest.fixture
def store(pg_url):
    s = PostgresStore(pg_url)
    s.check_embedding_model("fake-16", DIM)
    yield s
    s.close()


def env(tmp_path) -> dict:
    return {**os.environ, "KENNING_HOME": str(tmp_path)}


# -- migrations ---------------------------------------------------------------------------------------

def test_migrations_are_recorded_once_and_reopening_applies_none(pg_server):
    url = pg_server.empty_database()
    try:
        first = PostgresStore(url)
        names = [m.__name__ for m in MIGRATIONS]
        assert first.migrated_now == names
        applied = first.applied_migrations()
        assert [name for name, _ in applied] == names and all(at is not None for _, at in applied)
        first.close()
        again = PostgresStore(url)
        assert again.migrated_now == [] and again.applied_migrations() == applied
        again.close()
    finally:
        pg_server.drop(url)


def test_stores_opened_at_once_on_a_new_database_migrate_it_once(pg_server):
    url = pg_server.empty_database()
    stores, errors = [], []

    def open_one():
        try:
            stores.append(PostgresStore(url))
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == [] and len(stores) == 4
        assert sorted(n for s in stores for n in s.migrated_now) == sorted(m.__name__ for m in MIGRATIONS)
    finally:
        for s in stores:
            s.close()
        pg_server.drop(url)


def test_cli_migrate_lists_the_migrations(pg_server, capsys):
    url = pg_server.empty_database()
    try:
        assert main(["--db", url, "--json", "migrate"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [r["migration"] for r in rows] == [m.__name__ for m in MIGRATIONS]
        assert {r["applied"] for r in rows} == {"now"}
        assert main(["--db", url, "--json", "migrate"]) == 0
        assert {json.loads(line)["applied"] for line in capsys.readouterr().out.splitlines()} == {"before"}
    finally:
        pg_server.drop(url)


def test_the_dimension_is_recorded_once_and_enforced_by_the_schema(store, pg_url):
    with pytest.raises(DimensionMismatch):
        store.check_embedding_model("other", DIM + 1)
    with psycopg.connect(pg_url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("INSERT INTO notes (project, environment, dataset, namespace, note_id, text, created_at,"
                     " embedding) VALUES ('p', 'e', 'd', 'user', 'n1', 't', now(), %s::vector)",
                     (str([0.5] * (DIM + 1)),))


# -- the live-fact backstop ---------------------------------------------------------------------------

def test_racing_connections_create_one_live_fact(pg_url, store):
    """A second connection's twin waits on the first one's uncommitted row, then is refused."""
    other = PostgresStore(pg_url)
    outcome = []

    def second():
        try:
            other.insert_fact(SAM, fact(), "e", None)
            outcome.append("stored")
        except DuplicateFact:
            outcome.append("duplicate")

    try:
        with store._tx():   # a transaction without the dataset's lock: only the index stands in the way
            store.insert_fact(SAM, fact(), "e", None)
            racer = threading.Thread(target=second)
            racer.start()
            time.sleep(0.3)
            assert outcome == [], "the twin must wait for the first transaction"
        racer.join(10)
        assert outcome == ["duplicate"]
        assert store.list_facts(SAM, FactQuery())[1] == 1
    finally:
        other.close()


def test_a_refused_twin_leaves_the_transaction_usable(store):
    with store.transaction(SAM):
        store.insert_fact(SAM, fact(), "e", None)
        with pytest.raises(DuplicateFact):
            store.insert_fact(SAM, fact(), "e", None)
        store.insert_fact(SAM, fact("porto", "works in"), "e", None)   # the transaction goes on
    assert sorted(f.object for f in store.facts_in_slot(SAM, ["lives in", "works in"], NOW)) == ["lisbon", "porto"]


def test_the_backstop_counts_only_live_facts_and_their_window(store):
    old = fact()
    store.insert_fact(SAM, old, "e", None)
    store.insert_fact(SAM, fact(valid_until=NOW + timedelta(days=5)), "e", None)   # another window: allowed
    store.update_fact(SAM, old.fact_id, invalid_at=NOW)
    store.insert_fact(SAM, fact(), "e", None)                                      # the old one is no longer live
    store.insert_fact(Scope("default", "default", "kim"), fact(), "e", None)       # another dataset
    with pytest.raises(DuplicateFact):
        store.insert_fact(SAM, fact(), "e", None)


# -- vector search ---------------------------------------------------------------------------------------

def test_per_dataset_search_is_exact_even_with_the_hnsw_index(store):
    rng = np.random.default_rng(1)
    vectors = unit(rng, 400)
    ids = []
    with store.transaction(SAM):
        for i, v in enumerate(vectors):
            f = fact(f"place {i}")
            store.insert_fact(SAM, f, "e", v)
            ids.append(f.fact_id)
        for i, v in enumerate(unit(rng, 300)):
            store.insert_fact(Scope("default", "default", "kim"), fact(f"x {i}"), "e", v)
    query = unit(rng)[0]
    truth = np.argsort(-(vectors @ query))[:25]
    hits = store.vector_search(SAM, "fact", query, 25)
    assert [h[0] for h in hits] == [ids[i] for i in truth]
    np.testing.assert_allclose([h[1] for h in hits], (vectors @ query)[truth], atol=1e-5)
    assert store.vector_search(SAM, "fact", query, 25, floor=0.5) == [h for h in hits if h[1] >= 0.5]


def test_message_neighbors_follow_time_then_insertion_within_a_chat(store):
    from kenning.model import Episode

    t = NOW - timedelta(hours=1)
    for key, chat, minute in (("a", "c1", 0), ("b", "c1", 1), ("x", "c2", 1), ("c", "c1", 1), ("d", "c1", 2),
                              ("n1", None, 0), ("n2", None, 5)):
        store.insert_episode(SAM, Episode(episode_id=key, role="user", content=key, chat=chat,
                                          at=t + timedelta(minutes=minute), created_at=NOW))
    got = store.message_neighbors(SAM, ["c", "a", "x", "n2", "missing"])
    assert got == {"c": ["b", "d"], "a": ["b"], "x": []}   # n2 has no chat, so no neighbours
    assert list(got) == ["c", "a", "x"]
    assert store.message_neighbors(SAM, ["c"], exclude_chat="c1") == {}


def test_cross_dataset_search_uses_hnsw_with_iterative_scan_and_restores_the_setting(pg_url):
    store = PostgresStore(pg_url, max_size=1, ann_index=True)   # one connection: the one the search used answers SHOW
    try:
        store.check_embedding_model("fake-16", DIM)
        rng = np.random.default_rng(7)
        small = unit(rng, 30)
        small_ids = []
        with store.transaction():
            for d in range(40):   # 1,200 facts of another project around the few of ours
                scope = Scope("big", "default", f"user-{d}")
                for i, v in enumerate(unit(rng, 30)):
                    store.insert_fact(scope, fact(f"b{d}-{i}"), "e", v)
            for i, v in enumerate(small):
                scope = Scope("small", "default", f"user-{i % 3}")
                f = fact(f"s{i}")
                store.insert_fact(scope, f, "e", v)
                small_ids.append((scope, f.fact_id))
        store._x("ANALYZE facts")
        query = unit(rng)[0]

        hits = store.cross_dataset_search("small", "default", query, 10)
        truth = [small_ids[i][1] for i in np.argsort(-(small @ query))[:10]]
        assert len(hits) == 10 and {h[1] for h in hits} == set(truth)
        assert [h[2] for h in hits] == sorted((h[2] for h in hits), reverse=True)
        assert {h[0] for h in hits} <= {s for s, _ in small_ids}
        assert store._q("SHOW hnsw.iterative_scan")[0]["hnsw.iterative_scan"] == "off"

        # The index alone, as the planner reads it for a large tenant (no sort allowed): without iterative
        # scan its first candidates are mostly other tenants' and the filter leaves fewer than k.
        typed = f"vector({DIM})"
        sql = (f"SELECT fact_id FROM facts WHERE project = 'small' AND environment = 'default'"
               f" AND invalid_at IS NULL AND embedding IS NOT NULL"
               f" ORDER BY (embedding::{typed}) <=> %s::{typed} LIMIT 10")
        q = str(query.tolist())
        with store._tx() as conn:
            conn.execute("SET LOCAL enable_sort = off")
            plan = "\n".join(r["QUERY PLAN"] for r in conn.execute("EXPLAIN " + sql, (q,)))
            assert "facts_embedding_hnsw" in plan
            assert len(conn.execute(sql, (q,)).fetchall()) < 10
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            assert {r["fact_id"] for r in conn.execute(sql, (q,))} == set(truth)
    finally:
        store.close()


# -- export and import across backends ----------------------------------------------------------------

def test_an_export_moves_between_sqlite_and_postgres_and_back_byte_for_byte(tmp_path, pg_url, local_embedder):
    from test_export import answers, populate

    source = Memory(str(tmp_path / "source.db"))
    target = Memory(pg_url)
    try:
        populate(source)
        first = list(source.export(include_vectors=True))
        target.import_(first)
        assert list(target.export(include_vectors=True)) == first
        assert target.import_(first)["skipped"] == len(first) - 1, "a second import changes nothing"
        back = Memory(str(tmp_path / "back.db"))
        try:
            back.import_(list(target.export(include_vectors=True)))
            assert list(back.export(include_vectors=True)) == first
        finally:
            back.close()
        ranked = ("Where does the user live?", "What car is the user looking at?", "Lisbon office")
        for dataset in ("sam", "kim"):
            want = {k: v for k, v in answers(source, dataset).items() if k not in ranked}
            assert {k: v for k, v in answers(target, dataset).items() if k not in ranked} == want
    finally:
        source.close()
        target.close()


# -- many processes on one database ----------------------------------------------------------------------

CITIES = ["lisbon", "porto", "madrid", "paris", "berlin", "rome", "vienna", "prague", "oslo", "dublin"]


def test_three_worker_processes_run_every_job_once_in_dataset_order(pg_url, tmp_path, local_embedder):
    datasets, per = [f"user-{d}" for d in range(10)], 50
    said = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)   # one time for all: the last one processed is live
    with Memory(pg_url, settings=Settings(worker_threads=0)) as mem:
        requests = {d: [mem.add_turn(d, "user", f"I live in {CITIES[i % len(CITIES)].title()}.", at=said,
                                     message_id=f"{d}-m{i}").request_id for i in range(per)]
                    for d in datasets}
    assert sum(len(r) for r in requests.values()) == 500
    started = time.monotonic()
    workers = [subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", pg_url, "worker", "--exit-when-idle",
                                 "--poll", "0.05", "--lease", "60"], env=env(tmp_path), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for _ in range(3)]
    outputs = [w.communicate(timeout=300)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0, 0], outputs
    ran = [int(out.rsplit("ran ", 1)[1].split(" job")[0]) for out in outputs]
    assert sum(ran) == 500, f"claims per worker: {ran}"

    with Memory(pg_url, embedder=None, settings=Settings(worker_threads=0)) as mem:
        assert mem.store.count_jobs(("done",)) == 500
        assert mem.store.count_jobs(("queued", "distilling", "failed")) == 0
        for d in datasets:
            receipts = [mem.status(r).result for r in requests[d]]
            assert [r.candidates_stored + r.candidates_updated for r in receipts] == [1] * per
            assert all(r.candidates_deduped == 0 for r in receipts)
            history = mem.list_facts(d, include_invalidated=True, limit=100)
            assert history.total == per, "one fact per job, no twins"
            (live,) = mem.list_facts(d).facts
            assert live.object == CITIES[(per - 1) % len(CITIES)] and live.episode_id == f"{d}-m{per - 1}"
            # Each job superseded the one before it: the chain is the arrival order.
            by_id = {f.fact_id: f for f in history.facts}
            chain = [by_id[r.memory_ids[0]] for r in receipts]
            assert all(a.superseded_by == b.fact_id for a, b in zip(chain, chain[1:]))
            done = [mem.store.get_job(r, *mem.services.tenant()).updated_at for r in requests[d]]
            assert done == sorted(done)
    print(f"\n3 workers, 500 jobs in {time.monotonic() - started:.1f}s; claims per worker: {ran}")


WRITER = """
import json, sys
from kenning import Memory, Settings
mem = Memory(sys.argv[1], embedder=None, settings=Settings(worker_threads=0))
print("ready", flush=True)
sys.stdin.readline()
r = mem.add("I live in Lisbon.", "sam", at="2026-01-05T09:00:00Z")
print(json.dumps(r.model_dump(mode="json", exclude={"memory"})), flush=True)
mem.close()
"""


def test_eight_processes_asserting_one_fact_store_it_once(pg_url, tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, pg_url], env=env(tmp_path), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:   # all of them at once
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in results]
    receipts = [json.loads(out.strip().splitlines()[-1]) for out, _ in results]
    stored = [r for r in receipts if r["status"] == "stored"]
    deduped = [r for r in receipts if r["reason"] == "duplicate"]
    assert len(stored) == 1 and len(deduped) == 7
    assert all(r["deduplicated_against"] == stored[0]["memory_ids"] for r in deduped)
    with Memory(pg_url, embedder=None, settings=Settings(worker_threads=0)) as mem:
        assert [f.fact_id for f in mem.list_facts("sam", include_invalidated=True).facts] == stored[0]["memory_ids"]
