"""What turning off the planner's statistics of text columns costs recall on PostgreSQL.

Migration m016 sets ``STATISTICS 0`` on the columns that hold what people said (an erasure cannot reach
values ANALYZE copied into pg_statistic). This measures recall with and without those statistics on one
store, interleaved: 3 datasets of ``--rows`` synthetic rows each (bench/synthetic.py), ``ANALYZE`` after
each switch, ``--rounds`` rounds of one recall per query in each setting.

    .venv/bin/python bench/text_statistics.py [--rows 10000] [--rounds 8]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import summary, write  # noqa: E402
from synthetic import QUERIES, Filler  # noqa: E402


def switch(conn, on: bool) -> None:
    from kenning.store.postgres import TEXT_COLUMNS

    for table, columns in TEXT_COLUMNS.items():
        for column in columns:
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS {-1 if on else 0}")
            if not on:
                conn.execute("SELECT pg_clear_attribute_stats(current_schema(), %s, %s, false)", (table, column))
    conn.execute("ANALYZE")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args(argv)
    import psycopg

    from kenning import Memory
    from latency import embedded_postgres

    embedder = Memory(":memory:").embedder
    times: dict[str, list[float]] = {"without (m016)": [], "with": []}
    with tempfile.TemporaryDirectory() as folder:
        server = embedded_postgres(folder)
        try:
            url = server.get_uri()
            mem = Memory(url, embedder=embedder, extractor="parse")
            scope = mem.services.scope("probe")
            Filler(mem.store, embedder.dim).fill_many(scope.project, scope.environment,
                                                      [("probe", args.rows), ("other-a", args.rows),
                                                       ("other-b", args.rows)])
            mem.store.maintain()
            with psycopg.connect(url, autocommit=True) as conn:
                for q in QUERIES:   # warm: the model, the matrices, the buffers
                    mem.recall(q, dataset="probe")
                for _ in range(args.rounds):
                    for name, on in (("with", True), ("without (m016)", False)):
                        switch(conn, on)
                        mem.recall(QUERIES[0], dataset="probe")
                        for q in QUERIES:
                            t = time.perf_counter()
                            mem.recall(q, dataset="probe")
                            times[name].append((time.perf_counter() - t) * 1000)
            mem.close()
        finally:
            server.cleanup()
    result = {name: summary(ms) for name, ms in times.items()}
    print(result)
    write("text_statistics", {"rows_per_dataset": args.rows, "datasets": 3, "rounds": args.rounds,
                              "what": "recall ms on PostgreSQL with and without planner statistics of the text "
                                      "columns, interleaved on one store", "recall_ms": result}, "psycopg")


if __name__ == "__main__":
    main()
