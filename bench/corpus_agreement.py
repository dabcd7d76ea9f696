"""How far two annotators agree on the corpus's labels, and the learned extractor against each.

A second annotator, a helper who had read only the corpus README and the vocabulary (neither the labels
nor the code), labelled 150 messages drawn at random from the test split
(``bench/data/corpus_agreement/second-annotator.jsonl``). A fact matches when a label of the other
annotator has its class and overlaps its object; each label matches once. Run:

    .venv/bin/python bench/corpus_agreement.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

from kenning.extract.learned import corpus  # noqa: E402
from kenning.extract.learned.extractor import LearnedExtractor  # noqa: E402

SECOND = ROOT / "bench" / "data" / "corpus_agreement" / "second-annotator.jsonl"


def spans(text: str, facts: list[dict]) -> list[tuple[int, int, str, str]]:
    out = []
    for fact in facts:
        start = text.find(fact["object"])
        if start >= 0:
            out.append((start, start + len(fact["object"]), fact["class"], fact["status"]))
    return out


def agreement(found, gold) -> tuple[int, int]:
    """(matches, matches whose status agrees) of ``found`` against ``gold``, one gold label each."""
    used, matched, status = set(), 0, 0
    for start, end, cls, st in found:
        k = next((k for k, (s, e, c, _) in enumerate(gold) if k not in used and start < e and s < end and c == cls), None)
        if k is not None:
            used.add(k)
            matched += 1
            status += gold[k][3] == st
    return matched, status


def pr(matched: int, found: int, gold: int) -> dict:
    p, r = matched / found, matched / gold
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(2 * p * r / (p + r), 3)}


def main() -> dict:
    items = {i.id: i for i in corpus.load(ROOT / "data" / "corpus")}
    rows = [json.loads(line) for line in SECOND.read_text().splitlines() if line.strip()]
    extractor = LearnedExtractor()
    totals = {"first": 0, "second": 0, "matched": 0, "status": 0}
    model = {name: [0, 0, 0] for name in ("first", "second")}      # matched, found, gold
    for row in rows:
        first = [(l.start, l.end, l.cls, l.status) for l in items[row["id"]].labels]
        second = spans(row["text"], row["facts"])
        matched, status = agreement(second, first)
        totals["first"] += len(first)
        totals["second"] += len(second)
        totals["matched"] += matched
        totals["status"] += status
        found = [(s, e, cls, st) for s, e, cls, st, _ in extractor.spans(row["text"])]
        for name, gold in (("first", first), ("second", second)):
            model[name][0] += agreement(found, gold)[0]
            model[name][1] += len(found)
            model[name][2] += len(gold)
    out = {"messages": len(rows), **totals,
           "second_against_first": pr(totals["matched"], totals["second"], totals["first"]),
           "status_agreement": round(totals["status"] / totals["matched"], 3),
           "learned_against": {name: pr(*counts) for name, counts in model.items()}}
    print(json.dumps(out, indent=1))
    write("corpus_agreement", out)
    return out


if __name__ == "__main__":
    main()
