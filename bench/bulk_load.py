"""Bulk import into PostgreSQL: ``Memory.import_`` of a synthetic export (with vectors), rows per second.

The export (facts, messages and notes of 100-row datasets, as bench/synthetic.py makes them, vectors
included so nothing is embedded) is written once to a file, then imported four ways, side by side:
into an empty store and into the same store again (live: its rows and indexes in place, new datasets),
each without and with the opt-in HNSW index (``Settings.ann_index``; into an empty store it is built once
after the load). Timed: the whole ``import_`` (reading and checking the JSON lines, COPY, index upkeep).

    .venv/bin/python bench/bulk_load.py [--rows 200000]

Writes bench/results/bulk_load.json.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402
from latency import embedded_postgres  # noqa: E402
from synthetic import Filler  # noqa: E402

from kenning import transfer  # noqa: E402


def export_file(path: Path, rows: int, first: int, dim: int, model: str) -> int:
    """Synthetic datasets user-{first}… as export lines with vectors; returns the records written."""
    filler = Filler(None, dim, seed=first)
    n = 0
    with path.open("w") as out:
        out.write(json.dumps({"kind": "kenning-export", "version": 1, "embedding_model": model, "dim": dim,
                              "vectors": True}) + "\n")
        for d in range(rows // 100):
            for kind, batch in filler.rows(f"user-{first + d}", 100).items():
                for row, vector in batch:   # as `kenning export --vectors` writes them
                    out.write(transfer._line(transfer._record(kind, "bench", "default", {**row, "vector": vector},
                                                              True)))
                    n += 1
    return n


def timed_import(mem, path: Path) -> dict:
    t = time.perf_counter()
    with path.open() as lines:
        counts = mem.import_(lines, embed=False)
    seconds = time.perf_counter() - t
    rows = sum(v for k, v in counts.items() if k != "skipped")
    return {"rows": rows, "seconds": round(seconds, 1), "rows_per_s": round(rows / seconds)}


def main(argv=None):
    from kenning import Memory, Settings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="kenning-bulk-"))
    server = embedded_postgres(str(tmp))
    results = []
    try:
        probe = Memory(":memory:")
        dim, model = probe.embedder.dim, probe.embedder.name
        probe.close()
        first, second = tmp / "first.jsonl", tmp / "second.jsonl"
        export_file(first, args.rows, 0, dim, model)
        export_file(second, args.rows, 10_000_000, dim, model)
        for ann in (False, True):
            name = f"ann{int(ann)}"
            with _admin(server) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            url = server.get_uri(name)
            with Memory(url, settings=Settings(project="bench", ann_index=ann, worker_threads=0)) as mem:
                for label, path in (("empty store", first), ("live store", second)):
                    r = {"into": label, "hnsw_index": ann, **timed_import(mem, path)}
                    print(r, flush=True)
                    results.append(r)
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    command = "python bench/bulk_load.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    write("bulk_load", {"command": command, "rows_per_import": args.rows, "imports": results},
          "psycopg", "pgvector", "embedded-postgres")


def _admin(server):
    import psycopg

    return psycopg.connect(server.get_uri(), autocommit=True)


if __name__ == "__main__":
    main()
