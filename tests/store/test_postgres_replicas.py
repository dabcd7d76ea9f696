"""Read replicas for real: a primary and a streaming replica from the embedded PostgreSQL (tests/pg_replica.py).

Recall and listings read the replica; a client reads its own writes at once (the replica replays them, or
the primary answers); a replica killed mid-load costs nothing and loses nothing, and is used again once
it is back; a replica that falls behind past the lag bound is skipped.
"""
from __future__ import annotations

import threading
import time

import pytest

from kenning import Memory, Settings
from kenning.errors import ConfigError

from pg_replica import Cluster

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    yield c
    c.stop()


def replica_memory(cluster, **settings) -> Memory:
    return Memory(cluster.primary_url, replicas=[cluster.replica_url], embedder=None,
                  settings=Settings(worker_threads=0, **settings))


def served(mem) -> int:
    return mem.store.replicas.replicas[0].reads


def wait_until(check, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def on_replica(cluster, sql: str):
    import psycopg

    with psycopg.connect(cluster.replica_url, autocommit=True) as conn:
        return conn.execute(sql).fetchone()


def test_reads_go_to_the_replica_and_a_client_reads_its_own_write_at_once(cluster):
    with replica_memory(cluster) as mem:
        before = served(mem)
        for i, city in enumerate(["Berlin", "Lisbon", "Porto", "Madrid", "Rome"]):
            mem.add(f"I live in {city}.", dataset="ryw", message_id=f"m{i}")
            # at once, through the replica or (if it has not replayed the write yet) the primary
            assert f"lives in: {city.lower()}" in mem.recall("Where do I live?", dataset="ryw").context
            assert [f.object for f in mem.list_facts("ryw").facts] == [city.lower()]
        assert served(mem) > before, "the replica served none of the reads"
        assert mem.store.replicas.stats()["replicas"][0]["up"] is True


def test_while_the_replica_cannot_replay_a_clients_own_write_its_reads_fall_back_to_the_primary(cluster):
    with replica_memory(cluster, replica_wait_seconds=0.05) as writer, replica_memory(cluster) as other:
        writer.add("I live in Oslo.", dataset="paused")
        wait_until(lambda: "oslo" in other.recall("Where do I live?", dataset="paused").context)
        on_replica(cluster, "SELECT pg_wal_replay_pause()")
        try:
            writer.add("I live in Bergen.", dataset="paused")
            fallbacks = writer.store.replicas.fallbacks
            assert "bergen" in writer.recall("Where do I live?", dataset="paused").context   # its own write
            assert writer.store.replicas.fallbacks > fallbacks
            # another client has written nothing there: the replica serves it, as of what it has replayed
            reads = served(other)
            assert "oslo" in other.recall("Where do I live?", dataset="paused").context
            assert served(other) > reads
        finally:
            on_replica(cluster, "SELECT pg_wal_replay_resume()")
        wait_until(lambda: "bergen" in other.recall("Where do I live?", dataset="paused").context)


def test_a_replica_killed_mid_load_fails_nothing_loses_nothing_and_is_used_again_when_back(cluster):
    errors, done = [], []

    def load(mem, n: int) -> None:
        try:
            for i in range(n):
                mem.add(f"I like Rex{i}.", dataset="crash", message_id=f"c{i}")
                hits = mem.recall(f"Rex{i}", dataset="crash")
                assert any(f"rex{i}" in f.object for f in hits.facts) or f"Rex{i}" in hits.context, i
                done.append(i)
        except Exception as exc:   # noqa: BLE001 - the test reports it
            errors.append(exc)

    with replica_memory(cluster) as mem:
        worker = threading.Thread(target=load, args=(mem, 60))
        worker.start()
        wait_until(lambda: len(done) >= 10)
        cluster.kill_replica()
        worker.join(timeout=300)
        assert not errors, errors
        assert len(done) == 60
        assert mem.store.replicas.stats()["replicas"][0]["up"] is False
        assert mem.list_facts("crash", limit=100).total == 60       # every write is there
        cluster.start_replica()
        wait_until(lambda: mem.store.replicas.replicas[0].usable())
        reads = served(mem)
        assert "rex59" in mem.recall("Rex59", dataset="crash").context.lower()
        assert served(mem) > reads


def test_a_replica_behind_by_more_than_the_bound_is_skipped_until_it_catches_up(cluster):
    with replica_memory(cluster, replica_max_lag_seconds=0.5) as reader, \
            Memory(cluster.primary_url, embedder=None, settings=Settings(worker_threads=0)) as writer:
        wait_until(lambda: reader.store.replicas.replicas[0].usable())
        on_replica(cluster, "SELECT pg_wal_replay_pause()")
        try:
            deadline = time.monotonic() + 1.5
            i = 0
            while time.monotonic() < deadline:   # the primary moves on; the replica does not
                writer.add(f"I bought a book called Volume{i}.", dataset="lag")
                i += 1
            wait_until(lambda: reader.store.replicas.replicas[0].lagging)
            reads, fallbacks = served(reader), reader.store.replicas.fallbacks
            assert f"volume{i - 1}" in reader.recall(f"Volume{i - 1}", dataset="lag").context.lower()
            assert served(reader) == reads and reader.store.replicas.fallbacks > fallbacks
        finally:
            on_replica(cluster, "SELECT pg_wal_replay_resume()")
        wait_until(lambda: reader.store.replicas.replicas[0].usable())


def test_replicas_are_refused_for_a_store_that_is_not_postgresql(tmp_path):
    with pytest.raises(ConfigError, match="read replicas serve PostgreSQL stores"):
        Memory(f"sqlite:///{tmp_path}/k.db", replicas=["postgresql://x/y"], embedder=None)


def test_kenning_serve_reads_from_the_replica_it_is_given(cluster, tmp_path, capsys):
    import json
    import os
    import socket
    import subprocess
    import sys

    import httpx

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home")}
    server = subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", cluster.primary_url, "--json", "serve",
                               "--port", str(port), "--replica", cluster.replica_url],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        events = []
        while not events or events[-1]["event"] != "serving":
            line = server.stdout.readline()
            assert line, server.stderr.read()
            events.append(json.loads(line))
        assert [e["event"] for e in events if e["event"] == "replica"] == ["replica"]
        assert next(e for e in events if e["event"] == "replica")["up"] is True
        base = f"http://127.0.0.1:{port}"
        httpx.post(f"{base}/memory/add", json={"text": "I live in Tallinn.", "dataset": "served"}, timeout=60)
        got = httpx.post(f"{base}/v1/recall", json={"query": "Where do I live?", "dataset": "served"}, timeout=60)
        assert "tallinn" in got.json()["context"]
    finally:
        server.terminate()
        server.wait(30)
        server.stdout.close()
        server.stderr.close()
    from kenning.cli import main

    assert main(["--db", str(tmp_path / "k.db"), "serve", "--replica", cluster.replica_url]) != 0
    assert "read replicas serve PostgreSQL stores" in capsys.readouterr().err


def replayed_count(cluster, word: bytes) -> int:
    """``word``'s occurrences in the replica's files for its database, once it has replayed everything the
    primary has written and made a restartpoint (the replayed pages on disk)."""
    from pathlib import Path

    import psycopg

    with psycopg.connect(cluster.primary_url, autocommit=True) as primary:
        primary.execute("CHECKPOINT")   # a checkpoint record: where the replica may make its restartpoint
        target = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    wait_until(lambda: on_replica(cluster, f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")[0])
    with psycopg.connect(cluster.replica_url, autocommit=True) as replica:
        replica.execute("CHECKPOINT")
        oid = replica.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    folder = Path(cluster.replica_data) / "base" / str(oid)
    return sum(p.read_bytes().lower().count(word) for p in folder.iterdir() if p.is_file())


def test_a_replica_serves_nothing_erased_and_its_files_hold_none_of_it_once_replayed(cluster):
    """An erasure is a write like any other: the next read (replica or primary) sees it; and once the replica
    has replayed the compaction (VACUUM FULL), none of the erased words is left in its files."""
    with replica_memory(cluster) as mem:
        mem.add("I adopted a greyhound called Wuzzlepaw from the shelter.", dataset="gone", message_id="m1")
        mem.add("I keep bees.", dataset="gone", message_id="m2")
        assert replayed_count(cluster, b"wuzzlepaw") > 0
        receipt = mem.erase.message("gone", "m1")
        assert receipt.physical == "done"
        seen = mem.recall("What is my dog called?", dataset="gone")
        assert "wuzzlepaw" not in seen.model_dump_json().lower() and mem.messages.get("gone", "m2")
        assert replayed_count(cluster, b"wuzzlepaw") == 0
