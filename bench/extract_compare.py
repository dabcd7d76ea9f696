"""Extractors side by side on a labelled message set (default: bench/data/extract_messages_222.jsonl).

Each expected fact is found when a candidate's object names the same thing (equal after lower-casing and
dropping articles, or one contains the other as whole words) and agrees on ``ends``; a candidate that
matches no expected fact counts against precision (on a message that states nothing durable, every
candidate does). Predicates are not compared: the two extractors' vocabularies name slots differently,
and the objects carry the meaning that recall and supersession need. Automatic and lenient; a hand
check of a sample goes beside any figure quoted from it. Run:

    .venv/bin/python bench/extract_compare.py [--data FILE] [--extractors parse,learned]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

ARTICLES = re.compile(r"\b(?:a|an|the|my|our|his|her|their)\b")


def norm(text: str) -> str:
    return " ".join(ARTICLES.sub(" ", text.lower()).replace("'s", "").split())


def same(expected: str, found: str) -> bool:
    a, b = norm(expected), norm(found)
    if not a or not b:
        return False
    return a == b or f" {a} " in f" {b} " or f" {b} " in f" {a} "


MODEL = None    # --model: the learned extractor's weights (default: the shipped ones)


def build(name: str):
    if name == "parse":
        from kenning.extract.parse import ParseExtractor
        return ParseExtractor()
    if name == "learned":
        from kenning.extract.learned.extractor import LearnedExtractor
        return LearnedExtractor(MODEL) if MODEL else LearnedExtractor()
    if name.startswith("combined"):   # combined: the rules first (as Memory builds it); combined-learned: the model first
        from kenning.extract.combined import CombinedExtractor
        first, then = ("learned", "parse") if name == "combined-learned" else ("parse", "learned")
        return CombinedExtractor(build(first), build(then))
    raise SystemExit(f"unknown extractor {name!r}")


def corpus_items(split: str) -> list[dict]:
    """The corpus split's messages in this script's format (a sequence's turns each on its own, as a message
    without its thread is what an extractor sees); an ending, or a state in the past, is expected as an
    ending, a negated fact not at all (nothing is stored for it)."""
    from kenning.extract.learned import corpus
    from kenning.vocabulary import load

    kinds = {row.cls: row.kind for row in load().rows}
    out = []
    for item in corpus.load(ROOT / "data" / "corpus"):
        if item.split != split or item.writer == "vocabulary":
            continue
        out.append({"id": item.id, "at": "2026-06-01T12:00:00Z", "text": item.text,
                    "expected": [{"predicate": l.cls, "object": l.object, "ends": l.status == "ended" or (
                        l.status == "past" and kinds[l.cls] not in ("event", "plan"))}
                                 for l in item.labels if l.status != "negated"]})
    return out


def score(extractor, items: list[dict]) -> dict:
    tp = fp = fn = 0
    began = time.perf_counter()
    misses, wrong = [], []
    for item in items:
        at = datetime.fromisoformat(item["at"].replace("Z", "+00:00"))
        found = [c for c in extractor.extract(item["text"], at=at) if not c.rejected and c.object]
        left = list(item["expected"])
        for cand in found:
            match = next((e for e in left if same(e["object"], cand.object) and bool(e.get("ends")) == cand.ends), None)
            if match is None:
                fp += 1
                wrong.append((item["id"], cand.predicate, cand.object, cand.ends))
            else:
                left.remove(match)
                tp += 1
        fn += len(left)
        misses += [(item["id"], e["predicate"], e["object"]) for e in left]
    seconds = time.perf_counter() - began
    return {"recall": round(tp / (tp + fn), 3) if tp + fn else None,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "expected": tp + fn, "candidates": tp + fp, "ms_per_message": round(1000 * seconds / len(items), 1),
            "sample_misses": misses[:40], "sample_wrong": wrong[:40]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "extract_messages_222.jsonl")
    ap.add_argument("--extractors", default="parse,learned")
    ap.add_argument("--corpus-split", choices=("test", "calibration"),
                    help="score on this split of the labelled corpus (data/corpus) instead of --data; negated "
                         "labels are not expected")
    ap.add_argument("--name", default="extract_compare")
    ap.add_argument("--model", type=Path, help="the learned extractor's weights (default: the shipped ones)")
    args = ap.parse_args(argv)
    global MODEL
    MODEL = args.model
    if args.corpus_split:
        items = corpus_items(args.corpus_split)
    else:
        items = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    results = {}
    for name in args.extractors.split(","):
        extractor = build(name)
        extractor.extract("warm up", at=datetime.fromisoformat("2026-01-01T00:00:00+00:00"))
        results[name] = score(extractor, items)
        r = results[name]
        print(f"{name:8} recall {r['recall']}  precision {r['precision']}  ({r['expected']} expected, "
              f"{r['candidates']} candidates, {r['ms_per_message']} ms a message)", flush=True)
    data = f"data/corpus ({args.corpus_split} split)" if args.corpus_split else str(args.data.relative_to(ROOT))
    out = {"data": data, "messages": len(items), "results": results}
    write(args.name, out)
    return out


if __name__ == "__main__":
    main()
