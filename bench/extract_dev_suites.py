"""The two development sentence suites (``bench/data/extract_dev/``) through each offline extractor.

About 400 everyday and casual messages, each with what a demanding user expects from it (the format is in
``bench/data/extract_dev/sentences.py``), and pairs of messages that must land in one one-value slot.
The rule extractor was written against these sentences, so its figure is in-sample; the learned one never
saw them. A report, not a test: every failing case is listed with what the extractor got. Run:

    .venv/bin/python bench/extract_dev_suites.py [--extractors parse,learned,combined] [--failures]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "data" / "extract_dev"))

import casual  # noqa: E402
import sentences  # noqa: E402
from cases import check, check_same_slot  # noqa: E402
from common import write  # noqa: E402
from extract_compare import build  # noqa: E402


def score(extractor) -> dict:
    """Per suite: cases passed, and each failure with the check's message."""
    out = {}
    for suite in (sentences, casual):
        name = suite.__name__
        for kind, items, run in (("cases", suite.CASES, lambda c: check(extractor, c.text, c.expect)),
                                 ("slot_pairs", suite.SLOT_PAIRS,
                                  lambda p: check_same_slot(extractor, p.first, p.second, p.predicate))):
            failed = {}
            for item in items:
                try:
                    run(item)
                except AssertionError as exc:
                    failed[item.id] = str(exc)
            out[f"{name}.{kind}"] = {"passed": len(items) - len(failed), "total": len(items), "failed": failed}
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extractors", default="parse,learned,combined")
    ap.add_argument("--failures", action="store_true", help="print each failing case")
    args = ap.parse_args(argv)
    results = {}
    for name in args.extractors.split(","):
        results[name] = score(build(name))
        for suite, r in results[name].items():
            print(f"{name:10s} {suite:22s} {r['passed']:4d}/{r['total']:<4d} ({r['passed'] / r['total']:.3f})")
            if args.failures:
                for case, why in r["failed"].items():
                    print(f"    {case}: {why}")
    write("extract_dev_suites", {"extractors": results})
    return results


if __name__ == "__main__":
    main()
