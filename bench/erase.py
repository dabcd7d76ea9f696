"""What an erasure costs: erasing a message, a fact and a text in a 10,000-row dataset, on SQLite and PostgreSQL.

Each store holds the measured dataset (10,000 synthetic rows: a third each facts, messages, notes, with
random vectors; bench/synthetic.py) beside two other datasets of the same size, plus real messages mined by
the parse extractor with the bundled embedder, which are what gets erased. Each verb runs ``--runs`` times,
alternating two settings on the same store: ``immediate`` (the default: rows, then compaction: SQLite
merges its keyword indexes and truncates the WAL; PostgreSQL rewrites the touched tables with
VACUUM FULL) and ``deferred`` (rows only; ``compact()`` later), so the share of compaction shows.

    .venv/bin/python bench/erase.py [--rows 10000] [--runs 6]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402
from synthetic import Filler  # noqa: E402

# Distinct values (numbered ones would resolve to one entity, as typos do).
CITIES = ["Lisbon", "Oslo", "Ghent", "Porto", "Kyoto", "Quito", "Tallinn", "Dakar", "Hobart", "Lima", "Perth", "Turin",
          "Bergen", "Cusco", "Malmo", "Nantes", "Leeds", "Split", "Graz", "Lyon", "Cork", "Riga", "Pune", "Bonn"]
SENTENCES = ["I adopted a greyhound called Zorb{i} from the shelter.", "I work at Brightwave{i} as a designer.",
             "I moved to {city} last spring.", "My sister Ilse{i} lives in Ghent."]


def seed(mem, runs: int) -> None:
    """Real messages to erase: ``runs`` of each kind per setting, mined and embedded."""
    for i in range(4 * runs):
        for template in SENTENCES:
            mem.add(template.format(i=i, city=CITIES[i % len(CITIES)]), "probe", chat=f"c{i}", message_id=f"m{i}-{SENTENCES.index(template)}")


def timed(call) -> float:
    t = time.perf_counter()
    call()
    return (time.perf_counter() - t) * 1000


def measure(url: str, rows: int, runs: int, embedder) -> dict:
    from kenning import Memory
    from kenning.config import Settings

    immediate = Memory(url, embedder=embedder, extractor="parse")
    deferred = Memory(url, embedder=embedder, extractor="parse", settings=Settings(erase_compaction="deferred"))
    try:
        filler = Filler(immediate.store, embedder.dim)
        scope = immediate.services.scope("probe")
        filler.fill_many(scope.project, scope.environment, [("probe", rows), ("other-a", rows), ("other-b", rows)])
        immediate.store.maintain()
        seed(immediate, runs)
        out: dict[str, dict[str, list[float]]] = {}
        n = 0
        for run in range(runs):
            for setting, mem in (("immediate", immediate), ("deferred", deferred)):
                i = 2 * run + (setting == "deferred")
                fact = mem.list_facts("probe", message_id=f"m{i}-2", include_invalidated=True).facts[0]
                steps = {
                    "message": lambda: mem.erase.message("probe", f"m{i}-0"),
                    "fact": lambda: mem.erase.fact("probe", fact.fact_id),
                    "content_dry_run": lambda: mem.erase.content("probe", f"ilse{i}", dry_run=True),
                    "content": lambda: mem.erase.content("probe", f"ilse{i}"),
                }
                for name, step in steps.items():
                    out.setdefault(name, {}).setdefault(setting, []).append(timed(step))
                n += 1
        compact = [timed(deferred.erase.compact) for _ in range(2)]
        size = immediate.list_facts("probe").total
    finally:
        immediate.close()
        deferred.close()
    summary = {name: {setting: {"median_ms": round(statistics.median(v), 1), "max_ms": round(max(v), 1), "n": len(v)}
                      for setting, v in by.items()} for name, by in out.items()}
    summary["compact_all_tables_ms"] = [round(v, 1) for v in compact]
    summary["live_facts_in_dataset"] = size
    return summary


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=6)
    args = ap.parse_args(argv)
    from kenning import Memory
    from latency import embedded_postgres

    embedder = Memory(":memory:").embedder
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = measure(f"sqlite:///{folder}/k.db", args.rows, args.runs, embedder)
        print("sqlite", results["sqlite"])
    with tempfile.TemporaryDirectory() as folder:
        server = embedded_postgres(folder)
        try:
            results["postgres"] = measure(server.get_uri(), args.rows, args.runs, embedder)
            print("postgres", results["postgres"])
        finally:
            server.cleanup()
    write("erase", {"rows_per_dataset": args.rows, "datasets": 3, "runs": args.runs,
                    "what": "ms per erasure in a dataset of rows_per_dataset rows beside two others as large; "
                            "immediate = rows + compaction, deferred = rows only", "results": results},
          "psycopg")


if __name__ == "__main__":
    main()
