"""Where a recall's time goes: every store read it makes, timed, and (PostgreSQL) the plan of each statement.

``breakdown`` wraps the store's public methods for the length of a few recalls and reports, per
method, how often one recall calls it and its p50/p95 in milliseconds; recall runs its signal reads
side by side on a server store, so the per-read sum can exceed the recall's wall time. ``plans``
records the SQL statements one recall sends (PostgreSQL) and runs each again under
``EXPLAIN (ANALYZE, BUFFERS)``, so the plans in the results come from the run, not from a note.

    .venv/bin/python bench/reads.py --db postgresql://… --dataset probe-10000 [--queries 30]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import summary  # noqa: E402
from synthetic import QUERIES  # noqa: E402

SKIP = {"close", "transaction", "parallel_reads", "dialect", "path", "url", "migrated_now"}


@contextmanager
def timed(store):
    """Every public store method called meanwhile, timed: yields {method: [ms, …]} (thread-safe)."""
    calls: dict[str, list[float]] = defaultdict(list)
    lock = threading.Lock()
    patched = {}
    for name in dir(type(store)):
        if name.startswith("_") or name in SKIP or not callable(getattr(type(store), name, None)):
            continue
        original = getattr(store, name)

        def wrapper(*args, __original=original, __name=name, **kwargs):
            t = time.perf_counter()
            try:
                return __original(*args, **kwargs)
            finally:
                with lock:
                    calls[__name].append((time.perf_counter() - t) * 1000)
        patched[name] = wrapper
        setattr(store, name, wrapper)
    try:
        yield calls
    finally:
        for name in patched:
            delattr(store, name)


def breakdown(mem, dataset: str, queries: int, tag: str = "reads") -> dict:
    """Per store method: calls per recall and p50/p95 ms, over ``queries`` recalls (new texts each)."""
    mem.recall(QUERIES[0], dataset=dataset)
    walls = []
    with timed(mem.store) as calls:
        for i in range(queries):
            t = time.perf_counter()
            mem.recall(f"{QUERIES[i % len(QUERIES)]} ({tag}-{i})", dataset=dataset)
            walls.append((time.perf_counter() - t) * 1000)
    # the query embedding, timed alone (a new text: no cache hit)
    embed = []
    for i in range(queries):
        t = time.perf_counter()
        mem.embedder.embed(f"{QUERIES[i % len(QUERIES)]} ({tag}-embed-{i})")
        embed.append((time.perf_counter() - t) * 1000)
    reads = {name: {"calls_per_recall": round(len(ms) / queries, 2), **summary(ms),
                    "total_ms_per_recall": round(sum(ms) / queries, 2)}
             for name, ms in sorted(calls.items(), key=lambda kv: -sum(kv[1]))}
    return {"dataset": dataset, "recalls": queries, "recall": summary(walls), "query_embedding": summary(embed),
            "reads": reads}


def plans(mem, dataset: str, query: str = "What food does the user like? (plans)") -> list[dict]:
    """The SQL one recall sends, each statement's time as sent and its EXPLAIN (ANALYZE, BUFFERS)."""
    store = mem.store
    if not hasattr(store, "_pool"):   # PostgreSQL's statements only
        return []
    sent, lock = [], threading.Lock()
    original = store._q

    def recording(sql, params=None):
        t = time.perf_counter()
        try:
            return original(sql, params)
        finally:
            with lock:
                sent.append((sql, params, (time.perf_counter() - t) * 1000))
    store._q = recording
    try:
        mem.recall(query, dataset=dataset)
    finally:
        del store._q
    out = []
    for sql, params, ms in sent:
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            continue
        with store._pool.connection() as conn:
            rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
        plan = [r["QUERY PLAN"] for r in rows]
        out.append({"sql": " ".join(sql.split())[:400], "ms_as_sent": round(ms, 2),
                    "execution_ms": _execution_ms(plan), "plan": plan})
    return sorted(out, key=lambda p: -p["ms_as_sent"])


def _execution_ms(plan: list[str]) -> float | None:
    for line in plan:
        if line.startswith("Execution Time:"):
            return float(line.split(":")[1].split()[0])
    return None


def show(result: dict) -> str:
    lines = [f"recall p50/p95 {result['recall']['p50_ms']} / {result['recall']['p95_ms']} ms;"
             f" query embedding p50 {result['query_embedding']['p50_ms']} ms", f"{'read':<26}{'calls':>7}"
             f"{'p50 ms':>9}{'p95 ms':>9}{'ms/recall':>11}"]
    for name, r in result["reads"].items():
        lines.append(f"{name:<26}{r['calls_per_recall']:>7}{r['p50_ms']:>9}{r['p95_ms']:>9}{r['total_ms_per_recall']:>11}")
    return "\n".join(lines)


def main(argv=None):
    from kenning import Memory, Settings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--project", default="bench")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--plans", action="store_true", help="print the EXPLAIN of each statement")
    args = ap.parse_args(argv)
    mem = Memory(args.db, settings=Settings(project=args.project, onnx_threads=1, worker_threads=0))
    try:
        result = breakdown(mem, args.dataset, args.queries)
        print(show(result))
        if args.plans:
            for p in plans(mem, args.dataset):
                print(f"\n-- {p['ms_as_sent']} ms as sent, {p['execution_ms']} ms executing: {p['sql'][:160]}")
                print("\n".join(p["plan"]))
    finally:
        mem.close()
    return result


if __name__ == "__main__":
    main()
