"""Write-path throughput with the offline extractor: turns/s, facts/s, add latency.

Ingests every turn of the LoCoMo dev conversations (each speaker a dataset)
through ``Memory.add`` on a real SQLite file, and reports the embedder's load
time and per-query latency alongside. Run:

    .venv/bin/python bench/write_throughput.py [--locomo PATH] [--turns N]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import LOCOMO as DEFAULT_LOCOMO, pct, write  # noqa: E402


def session_time(text: str) -> datetime:
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns(path: Path, limit: int | None):
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            at = session_time(conv[f"session_{n}_date_time"])
            for turn in conv[f"session_{n}"]:
                out.append((f"{sample['sample_id']}-{turn['speaker']}".replace(" ", "_"), turn["text"], at, turn["dia_id"]))
            n += 1
    return out[:limit] if limit else out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    ap.add_argument("--turns", type=int, default=None)
    args = ap.parse_args(argv)

    from kenning import Memory
    from kenning.embed.local import LocalEmbedder

    t0 = time.perf_counter()
    emb = LocalEmbedder()
    emb.load()
    load_s = time.perf_counter() - t0
    queries = ["Where does the user live?", "What does Caroline do for work?", "Does the user have pets?"] * 34
    emb.embed(queries[0])
    lat = []
    for q in queries:
        t = time.perf_counter()
        emb.embed(q)
        lat.append((time.perf_counter() - t) * 1000)

    data = turns(args.locomo, args.turns)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(f"sqlite:///{tmp}/bench.db")
        mem.add("I live in Berlin.", dataset="warmup")
        add_ms, facts = [], 0
        start = time.perf_counter()
        for i, (dataset, text, at, dia) in enumerate(data):
            t = time.perf_counter()
            r = mem.add(text, dataset=dataset, at=at, message_id=f"{dia}-{i}")
            add_ms.append((time.perf_counter() - t) * 1000)
            facts += r.candidates_stored + r.candidates_updated
        total = time.perf_counter() - start
        mem.close()

    result = {
        "command": "python bench/write_throughput.py",
        "turns": len(data), "facts_written": facts, "seconds": round(total, 3),
        "turns_per_s": round(len(data) / total, 1), "facts_per_s": round(facts / total, 1),
        "add_ms_p50": round(statistics.median(add_ms), 2), "add_ms_p95": round(pct(add_ms, 95), 2),
        "add_ms_p99": round(pct(add_ms, 99), 2),
        "embedder_load_s": round(load_s, 3), "embed_query_ms_p50": round(statistics.median(lat), 2),
        "embed_query_ms_p95": round(pct(lat, 95), 2),
    }
    width = max(map(len, result))
    for k, v in result.items():
        print(f"{k:<{width}}  {v}")
    goal = result["turns_per_s"]
    print(f"\ngoal: >= 100 turns/s with the offline extractor: {goal} " + ("(met)" if goal >= 100 else
                                                                         f"(missed by {100 - goal:.1f})"))
    write("write_throughput", result)


if __name__ == "__main__":
    main()
