"""The vocabulary's example sentences through each offline extractor: which give their fact.

Each row of ``src/kenning/vocabulary/facts.toml`` carries example sentences with the object (and status)
they state. An example passes when a candidate has the row's predicate or one of its aliases (an open
row's: any verb), the object (one inside the other, ignoring case) and the status (an ending ends, a plan
is a plan, a past event is an event or an ending). For the learned extractor each example is also a test
case (``tests/extract/test_learned.py``). Run:

    .venv/bin/python bench/vocabulary_examples.py [--extractors learned,parse,combined]
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402
from extract_compare import build  # noqa: E402

from kenning.predicates import relation_detail  # noqa: E402

AT = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


def passes(row, candidates, obj: str, status: str) -> bool:
    low = obj.lower()
    for c in candidates:
        same = low in c.object.lower() or c.object.lower() in low
        predicate = row.open or c.predicate in row.slot or (
            row.predicate.startswith("<relation>") and relation_detail(c.predicate) is not None)
        state = {"ended": c.ends, "plan": c.kind == "plan", "past": c.kind == "event" or c.ends}.get(status, not c.ends)
        if c.object and same and predicate and state:
            return True
    return False


def main(argv=None) -> dict:
    from kenning.extract.learned.extractor import UNSUPPORTED
    from kenning.vocabulary import load

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extractors", default="learned,parse,combined")
    ap.add_argument("--name", default="vocabulary_examples")
    args = ap.parse_args(argv)
    cases = [(row, *case) for row in load().rows if row.cls not in UNSUPPORTED for case in row.cases()]
    results = {}
    for name in args.extractors.split(","):
        extractor = build(name)
        failing = []
        for row, sentence, obj, status in cases:
            found = extractor.extract(sentence, at=AT)
            if not passes(row, found, obj, status):
                failing.append({"class": row.cls, "sentence": sentence,
                                "got": [f"{c.predicate} · {c.object}{' (ends)' if c.ends else ''}" for c in found]})
        results[name] = {"examples": len(cases), "pass": len(cases) - len(failing), "failing": failing}
        print(f"{name:9} {len(cases) - len(failing)}/{len(cases)} examples give their fact", flush=True)
        for f in failing:
            print(f"   {f['class']:20} {f['sentence']!r} → {f['got']}")
    write(args.name, {"results": results})
    return results


if __name__ == "__main__":
    main()
