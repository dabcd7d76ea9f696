"""CPU time of the dashboard's entity page (the graph and the entity list) by the number of entities.

Each size gets a fresh in-memory store holding one dataset of N entities, every one named by a fact
(every third by two), in messages naming up to four entities each (co-mention lines); the page
``/datasets/<d>/entities?view=history`` is asked of the app in this process (Starlette's TestClient,
development mode) and the process's CPU time around the request is the page's cost. The page reads at
most MOST_FACTS facts, so the largest size draws from that many.

``--old REV`` runs the same page a second time with the graph module of that git revision (read with
``git show REV:src/kenning/server/dashboard/graph.py``) in place of today's, so a before/after table
comes from one run on one machine. Run:

    .venv/bin/python bench/dashboard_graph.py [--sizes 100,500,1500,5000] [--old REV] [--old-most 5000]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
TYPES = ("PERSON", "ORG", "PLACE", "PRODUCT", "SKILL", "TOPIC", "FOOD", "THING")
GRAPH = "src/kenning/server/dashboard/graph.py"


def seed(memory, n: int, dataset: str = "crowd") -> int:
    """N entities and the facts naming them, straight into the store (no extraction): the facts count."""
    from kenning.model import Entity, Fact, Scope

    scope = Scope(memory.settings.project, memory.settings.environment, dataset)
    count = 0
    with memory.store.transaction(scope):
        for i in range(n):
            e = Entity(entity_id=f"e_{i:06d}", name=f"thing {i}" if i % 7 else f"a rather long entity name {i}",
                       type=TYPES[i % len(TYPES)], created_at=T)
            memory.store.insert_entity(scope, e, None)
            for j in range(1 + (i % 3 == 0)):
                f = Fact(fact_id=f"f_{i:06d}_{j}", predicate="likes" if j == 0 else "owns", object=e.name,
                         object_is_entity=True, entity_type=e.type, text=f"user likes {e.name}",
                         valid_at=T + timedelta(minutes=i), created_at=T, episode_id=f"m{i // 4}")
                memory.store.insert_fact(scope, f, f"{f.text}.", None)
                count += 1
    return count


def old_graph(rev: str):
    """The graph module as it was at ``rev``, importable beside today's (its relative imports resolve)."""
    source = subprocess.run(["git", "show", f"{rev}:{GRAPH}"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout
    name = "kenning.server.dashboard._graph_bench_old"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "kenning.server.dashboard"
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{GRAPH}", "exec"), module.__dict__)
    return module


def page_cpu(n: int, build=None, repeat: int = 1) -> dict:
    """The entity page's CPU seconds (best of ``repeat``) and the entities it drew, with ``build`` as the
    page's graph builder (None: today's)."""
    from fastapi.testclient import TestClient

    from kenning import Memory
    from kenning.server import build as build_app
    from kenning.server.dashboard import entities

    memory = Memory(":memory:")
    facts = seed(memory, n)
    app, _, _ = build_app(memory=memory, host="127.0.0.1")
    today = entities.build_graph
    if build is not None:
        entities.build_graph = build
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            best, html = float("inf"), ""
            for _ in range(repeat):
                t0 = time.process_time()
                r = client.get("/datasets/crowd/entities", params={"view": "history"})
                best = min(best, time.process_time() - t0)
                assert r.status_code == 200, r.text[:300]
                html = r.text
    finally:
        entities.build_graph = today
        memory.close()
    svg = re.search(r'<svg[^>]*class="graph".*?</svg>', html, re.S).group(0)
    drawn = len(re.findall(r'<a [^>]*class="node type-(?!user)', svg))
    return {"cpu_s": round(best, 3), "drawn": drawn, "facts": facts}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500,1500,5000", help="entity counts, comma-separated")
    ap.add_argument("--old", help="a git revision whose graph module to time side by side (the 'before')")
    ap.add_argument("--old-most", type=int, default=5000, help="skip the old module above this many entities")
    ap.add_argument("--repeat", type=int, default=3, help="requests per size for today's module (best kept)")
    args = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core: CPU time, not parallelism
    except (AttributeError, OSError):
        pass
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    old = None
    if args.old:
        module = old_graph(args.old)

        def old(*a, list_href=None, **kw):   # the old builder took no list link
            return module.build_graph(*a, **kw)

    page_cpu(20)                                   # warm up imports, templates, numpy
    rows = []
    head = f"{'entities':>9} {'facts':>6} | {'now: CPU s':>10} {'drawn':>6}"
    head += f" | {'before: CPU s':>13} {'drawn':>6} {'speed-up':>9}" if old else ""
    print(head)
    print("-" * len(head))
    for n in sizes:
        now = page_cpu(n, repeat=args.repeat)
        row = {"entities": n, "facts": now["facts"], "now": now}
        line = f"{n:>9,} {now['facts']:>6,} | {now['cpu_s']:>10.3f} {now['drawn']:>6,}"
        if old and n <= args.old_most:
            before = page_cpu(n, build=old, repeat=args.repeat if n <= 500 else 1)   # best of a few where cheap
            row["before"] = before
            ratio = before["cpu_s"] / max(now["cpu_s"], 1e-6)
            line += f" | {before['cpu_s']:>13.3f} {before['drawn']:>6,} {ratio:>8.1f}x"
        elif old:
            line += f" | {'(skipped)':>13}"
        print(line, flush=True)
        rows.append(row)
    result = {"page": "/datasets/<d>/entities?view=history", "cores": 1, "old": args.old, "rows": rows}
    write("dashboard_graph", result)
    return result


if __name__ == "__main__":
    main()
