"""Extraction time on adversarial messages at the 100,000-character limit, and its growth.

Four shapes that broke regex extractors elsewhere: runs of whitespace, one word repeated, a
long text with no punctuation, deeply nested parentheses; plus ordinary chat at that length.
Each is timed through the offline extractor alone (no store, no embedder) on one core, at
n and 2n characters, so the growth ratio is measured side by side in one run. Run:

    .venv/bin/python bench/adversarial.py [--chars 100000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
CHAT = ("I moved to Berlin three years ago and finally passed my B1 German exam last week. "
        "My sister Ana lives in Porto with her two kids, and I visit them every summer. ")
VOCAB = "the of cat house river blue slowly walk table idea green seven music under window bright".split()


def shapes(n: int) -> dict[str, str]:
    plain = " ".join(VOCAB[(i * 7) % len(VOCAB)] for i in range(n // 5))
    return {
        "whitespace_runs": ("I live in" + " " * 997 + "Lisbon ") * (n // 1007 + 1),
        "one_word_repeated": ("buffalo " * (n // 8 + 1)),
        "no_punctuation": plain,
        "nested_parentheses": "(" * (n // 2) + "I live in Lisbon" + ")" * (n // 2),
        "chat": CHAT * (n // len(CHAT) + 1),
    }


def timed(extractor, text: str) -> float:
    t0 = time.perf_counter()
    extractor.extract(text, at=AT)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=100_000)
    args = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core, as the issue asks
    except (AttributeError, OSError):
        pass
    from kenning.extract.parse import ParseExtractor

    ex = ParseExtractor()
    ex.extract("warm up the parser", at=AT)
    half = shapes(args.chars // 2)
    full = shapes(args.chars)
    rows = {}
    for name in full:
        t_half = timed(ex, half[name][: args.chars // 2])
        t_full = timed(ex, full[name][: args.chars])
        rows[name] = {"seconds": round(t_full, 3), "seconds_half": round(t_half, 3),
                      "growth_2x": round(t_full / max(t_half, 1e-6), 2)}
        print(f"{name:20s} {args.chars:,} chars: {t_full:6.2f} s   ({args.chars // 2:,}: {t_half:6.2f} s, "
              f"x{rows[name]['growth_2x']})")
    result = {"chars": args.chars, "cores": 1, "shapes": rows,
              "worst_seconds": max(r["seconds"] for r in rows.values())}
    write("adversarial", result)
    return result


if __name__ == "__main__":
    main()
