"""Write-path throughput with the offline extractor: turns/s, facts/s, add latency.

Ingests every turn of the LoCoMo dev conversations (each speaker a dataset)
through ``Memory.add`` on a real SQLite file, and reports the embedder's load
time and per-query latency alongside. Run:

    .venv/bin/python bench/write_throughput.py [--locomo PATH] [--turns N] [--batch N]

Then the same turns go through ``add_turn`` and one queue worker that claims
``--batch`` jobs at a time (one parser batch, one embedding batch per claim),
timed side by side in the same run, once per extractor of ``--extractors``
(the first is also timed through ``add``).
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


def cold(mem) -> None:
    """Empty the process-wide vector cache, so a timed run embeds every text it needs."""
    cache = getattr(mem.services.writer.embedder, "_cache", None)
    if cache is not None:
        cache.clear()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    ap.add_argument("--turns", type=int, default=None)
    ap.add_argument("--batch", type=int, default=16, help="jobs a queue worker claims at once")
    ap.add_argument("--extractors", default="combined,parse",
                    help="comma-separated: combined (the default extractor), parse, learned; the first one is timed "
                         "through add as well as queued")
    args = ap.parse_args(argv)
    names = args.extractors.split(",")

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
        mem = Memory(f"sqlite:///{tmp}/bench.db", extractor=names[0])
        mem.add("I live in Berlin.", dataset="warmup")
        cold(mem)
        add_ms, facts = [], 0
        start = time.perf_counter()
        for i, (dataset, text, at, dia) in enumerate(data):
            t = time.perf_counter()
            r = mem.add(text, dataset=dataset, at=at, message_id=f"{dia}-{i}")
            add_ms.append((time.perf_counter() - t) * 1000)
            facts += r.candidates_stored + r.candidates_updated
        total = time.perf_counter() - start
        mem.close()

        # The same turns queued (add_turn) and drained by one worker in batches of args.batch jobs:
        # one parser batch and one embedding batch per claim, one dataset per job in flight.
        from kenning import Settings
        from kenning.jobs import Worker

        queued = {}
        for name in names:
            qmem = Memory(f"sqlite:///{tmp}/queued-{name}.db", settings=Settings(worker_threads=0), extractor=name)
            qmem.add("I live in Berlin.", dataset="warmup")
            t = time.perf_counter()
            for i, (dataset, text, at, dia) in enumerate(data):
                qmem.add_turn(dataset, "user", text, at=at, message_id=f"{dia}-{i}")
            enqueue_s = time.perf_counter() - t
            worker = Worker(qmem.services, batch=args.batch)
            cold(qmem)   # the add run above filled the shared vector cache with these very texts
            t = time.perf_counter()
            while worker.run_batch():
                pass
            queued[name] = time.perf_counter() - t
            qmem.close()
        drain_s = queued[names[0]]

        # The floor: the same turns through add with an extractor that finds nothing, so only the
        # message is kept, embedded and indexed. What the parser costs is the difference.
        from kenning import Extractor

        class Nothing(Extractor):
            name = "nothing"

            def extract(self, text, *, at, context=None, known_entities=None):
                return []

        fmem = Memory(f"sqlite:///{tmp}/floor.db", extractor=Nothing())
        fmem.add("I live in Berlin.", dataset="warmup")
        cold(fmem)
        t = time.perf_counter()
        for i, (dataset, text, at, dia) in enumerate(data):
            fmem.add(text, dataset=dataset, at=at, message_id=f"{dia}-{i}")
        floor_s = time.perf_counter() - t
        fmem.close()

    result = {
        "command": "python bench/write_throughput.py" + (f" --extractors {args.extractors}" if len(names) > 1 else ""),
        "extractor": names[0],
        "turns": len(data), "facts_written": facts, "seconds": round(total, 3),
        "turns_per_s": round(len(data) / total, 1), "facts_per_s": round(facts / total, 1),
        "add_ms_p50": round(statistics.median(add_ms), 2), "add_ms_p95": round(pct(add_ms, 95), 2),
        "add_ms_p99": round(pct(add_ms, 99), 2),
        "queued_batch": args.batch, "queued_enqueue_s": round(enqueue_s, 3), "queued_drain_s": round(drain_s, 3),
        "queued_turns_per_s": round(len(data) / drain_s, 1),
        "queued_vs_add": round(total / drain_s, 2),
        **{f"queued_turns_per_s_{name}": round(len(data) / queued[name], 1) for name in names[1:]},
        **{f"queued_ms_per_turn_{name}": round(1000 * queued[name] / len(data), 2) for name in names},
        "floor_ms_per_turn": round(1000 * floor_s / len(data), 2),
        "floor_no_extractor_turns_per_s": round(len(data) / floor_s, 1),
        "parse_share_of_add_time": round(1 - floor_s / total, 3),
        "embedder_load_s": round(load_s, 3), "embed_query_ms_p50": round(statistics.median(lat), 2),
        "embed_query_ms_p95": round(pct(lat, 95), 2),
    }
    width = max(map(len, result))
    for k, v in result.items():
        print(f"{k:<{width}}  {v}")
    for key in ("turns_per_s", "queued_turns_per_s"):
        goal = result[key]
        print(f"goal: >= 80 turns/s with the offline extractor ({key}): {goal} " + (
            "(met)" if goal >= 80 else f"(missed by {80 - goal:.1f})"))
    write("write_throughput", result)


if __name__ == "__main__":
    main()
