"""Recall latency vs. dataset size, in a store that holds many other datasets.

Synthetic data (how): 10,000 datasets share ``--rows`` rows (default 1,000,000),
a third each facts, messages and notes. Three probe datasets hold 100, 1,000 and
10,000 rows; the rest share what is left. Texts are 8-14 words drawn from a
5,000-word vocabulary with Zipf frequencies (so keyword posting lists look like
real ones); vectors are random unit vectors of the bundled model's dimension
(computing 1M real embeddings would take an hour and measure nothing else).
Queries are real sentences embedded by the real model on every call: the
latency includes query embedding, vector search over the dataset, BM25, entity
and slot signals, fusion, and rendering the context block. One ONNX thread.

    .venv/bin/python bench/recall_latency.py [--rows 1000000] [--queries 200] [--db PATH]

Writes bench/results/recall_latency.json.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROBES = (100, 1_000, 10_000)
DATASETS = 10_000
QUERIES = ["Where does the user live?", "What does the user do for work?", "Does the user have any pets?",
           "What food does the user like?", "When did the user move?", "What is the user training for?",
           "Which languages does the user speak?", "What car is the user looking at?"]


def vocabulary(rng, size=5_000):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(size)]


def fill(store, scope, n, rng, words, weights, dim, start):
    from kenning.model import Episode, Fact, Note

    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    lengths = rng.integers(8, 15, size=n)
    picks = rng.choice(len(words), size=int(lengths.sum()), p=weights)
    now = datetime.now(timezone.utc)
    at = 0
    with store.transaction(scope):
        for i in range(n):
            text = " ".join(words[j] for j in picks[at:at + lengths[i]])
            at += lengths[i]
            when = start + timedelta(minutes=i)
            kind = i % 3
            if kind == 0:
                obj = " ".join(text.split()[:2]) + f" {i}"
                fact = Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate="likes", object=obj, text=f"user likes {text}",
                            valid_at=when, created_at=now)
                store.insert_fact(scope, fact, f"{fact.text}. About: user.", vectors[i])
            elif kind == 1:
                store.insert_episode(scope, Episode(episode_id=f"m{i}", role="user", content=text, chat="c1",
                                                    at=when, created_at=now), vectors[i])
            else:
                store.insert_note(scope, Note(note_id=f"n_{uuid.uuid4().hex}", text=text, created_at=now), vectors[i])


def build(db: str, rows: int, seed: int = 7):
    from kenning.store.sqlite import SQLiteStore
    from kenning.model import Scope

    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    ranks = np.arange(1, len(words) + 1)
    weights = (1 / ranks) / (1 / ranks).sum()
    store = SQLiteStore(db)
    store.check_embedding_model("all-MiniLM-L6-v2-int8", 384)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    rest = (rows - sum(PROBES)) // (DATASETS - len(PROBES))
    t0 = time.perf_counter()
    for i, n in enumerate(PROBES):
        fill(store, Scope("bench", "default", f"probe-{n}"), n, rng, words, weights, 384, start)
    for d in range(DATASETS - len(PROBES)):
        fill(store, Scope("bench", "default", f"user-{d}"), rest, rng, words, weights, 384, start)
        if d % 1000 == 0:
            print(f"  {d:>5} datasets filled ({time.perf_counter() - t0:.0f}s)", flush=True)
    store.close()
    return time.perf_counter() - t0


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--db", default=None, help="reuse a store built earlier with the same --rows")
    args = ap.parse_args(argv)

    from kenning import Memory, Settings

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or f"{tmp}/latency.db"
        build_s = None
        if not Path(db).exists():
            print(f"building {args.rows:,} rows across {DATASETS:,} datasets in {db} ...")
            build_s = build(db, args.rows)
        mem = Memory(f"sqlite:///{db}", settings=Settings(project="bench", onnx_threads=1))
        rows = []
        for n in PROBES:
            dataset = f"probe-{n}"
            mem.recall(QUERIES[0], dataset=dataset)            # warm the dataset's matrices
            lat = []
            for i in range(args.queries):
                q = f"{QUERIES[i % len(QUERIES)]} ({n}-{i})"     # a new text each time: no embedding cache hits
                t = time.perf_counter()
                mem.recall(q, dataset=dataset)
                lat.append((time.perf_counter() - t) * 1000)
            rows.append({"rows_in_dataset": n, "p50_ms": round(statistics.median(lat), 2),
                         "p95_ms": round(pct(lat, 95), 2), "p99_ms": round(pct(lat, 99), 2)})
        t = time.perf_counter()
        for i in range(args.queries):
            mem.embedder.embed(f"{QUERIES[i % len(QUERIES)]} [{i}]")
        embed_ms = (time.perf_counter() - t) * 1000 / args.queries
        mem.close()
    print(f"\nstore: {args.rows:,} rows in {DATASETS:,} datasets" + (f" (built in {build_s:.0f}s)" if build_s else ""))
    print(f"{'rows in dataset':>16}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}")
    for r in rows:
        print(f"{r['rows_in_dataset']:>16,}{r['p50_ms']:>10}{r['p95_ms']:>10}{r['p99_ms']:>10}")
    print(f"(query embedding alone: {embed_ms:.2f} ms mean)")
    out = ROOT / "bench" / "results" / "recall_latency.json"
    out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "machine": platform.machine(), "python": platform.python_version(),
                               "total_rows": args.rows, "datasets": DATASETS, "curve": rows,
                               "query_embedding_ms_mean": round(embed_ms, 2)}, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
