"""Queue throughput with the offline extractor: add_turn → worker → searchable.

Sends every turn of the LoCoMo dev conversations (one dataset per speaker)
through ``add_turn`` as fast as it returns, with 1 and then 2 embedded worker
threads on a fresh SQLite file each, and reports end-to-end jobs per second
(first add_turn to last job done) and how fast add_turn itself returns; then
400 more turns arrive paced at half that throughput, and the delay from
add_turn to searchable is measured on them (a job is searchable when it is
done: its facts, message and vectors commit in the transaction that marks it
done).

    .venv/bin/python bench/queue_throughput.py [--locomo PATH] [--turns N]
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from write_throughput import DEFAULT_LOCOMO, pct, turns  # noqa: E402

PACED = 400


def run(data, threads: int) -> dict:
    from kenning import Memory, Settings
    from kenning.embed.base import CachedEmbedder
    from kenning.embed.local import LocalEmbedder

    data, paced = data[:-PACED], data[-PACED:]  # paced turns were never embedded in this run
    with tempfile.TemporaryDirectory() as tmp:
        # A fresh embedder per run: the process-wide cache would make the second run free.
        mem = Memory(f"sqlite:///{tmp}/queue.db", settings=Settings(worker_threads=threads),
                     embedder=CachedEmbedder(LocalEmbedder()))
        mem.add("I live in Berlin.", dataset="warmup")
        returned = []
        start = time.perf_counter()
        for i, (dataset, text, at, dia) in enumerate(data):
            t = time.perf_counter()
            mem.add_turn(dataset, "user", text, at=at, message_id=f"{dia}-{i}")
            returned.append((time.perf_counter() - t) * 1000)
        mem.flush()
        total = time.perf_counter() - start
        failed = mem.store.count_jobs(("failed",))
        # Paced arrivals at half the measured throughput: the delay a user sees when the queue keeps up.
        rate = 0.5 * len(data) / total
        ids = []
        t_next = time.perf_counter()
        for i, (dataset, text, at, dia) in enumerate(paced):
            time.sleep(max(0.0, t_next - time.perf_counter()))
            ids.append(mem.add_turn(f"paced-{dataset}", "user", text, at=at, message_id=f"p-{dia}-{i}").request_id)
            t_next += 1 / rate
        mem.flush()
        jobs = [mem.store.get_job(r, *mem.services.tenant()) for r in ids]
        delays = [(j.updated_at - j.created_at).total_seconds() * 1000 for j in jobs]
        mem.close()
    return {"worker_threads": threads, "jobs": len(data), "failed": failed, "seconds": round(total, 2),
            "jobs_per_s": round(len(data) / total, 1),
            "add_turn_ms_p50": round(statistics.median(returned), 3), "add_turn_ms_p95": round(pct(returned, 95), 3),
            "paced_rate_per_s": round(rate, 1),
            "to_searchable_ms_p50": round(statistics.median(delays), 1),
            "to_searchable_ms_p95": round(pct(delays, 95), 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    ap.add_argument("--turns", type=int, default=None)
    args = ap.parse_args(argv)
    data = turns(args.locomo, args.turns)
    results = [run(data, threads) for threads in (1, 2)]
    keys = list(results[0])
    print(f"{'':<22}" + "".join(f"{r['worker_threads']:>12} thr" for r in results))
    for k in keys[1:]:
        print(f"{k:<22}" + "".join(f"{r[k]:>16}" for r in results))
    out = ROOT / "bench" / "results" / "queue_throughput.json"
    out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "machine": platform.machine(), "python": platform.python_version(),
                               "runs": results}, indent=2) + "\n")
    print(f"\nwritten to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
