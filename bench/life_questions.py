"""Plain questions over people's life stories: is the first recalled item right, and the first line
of the context block?

Each story of ``../shared/data/life-stories-dev.jsonl`` goes into its own dataset, every turn
through ``Memory.add`` at its own time (message id ``<story>-t<i>``, one chat per day). The questions
(``bench/data/life_questions.jsonl``, written by a helper who had not read the code: kind ``now``,
``when`` or ``fact``, an evidence quote from one turn, answer terms) are asked through ``recall``
after the last turn. An item is right when it is the evidence turn, or a fact mined from it, or a
fact whose object or sentence holds an answer term as a word; a context line is right when it holds
an answer term or the evidence quote.

    .venv/bin/python bench/life_questions.py [--show]

Writes bench/results/life_questions.json.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

STORIES = ROOT.parent / "shared" / "data" / "life-stories-dev.jsonl"
QUESTIONS = ROOT / "bench" / "data" / "life_questions.jsonl"


def has_term(text: str, terms: list[str]) -> bool:
    low = text.lower()
    return any(re.search(rf"(?<!\w){re.escape(t.lower())}(?!\w)", low) for t in terms)


def item_right(item, q: dict, evidence_id: str) -> bool:
    if item.kind == "message":
        return item.message_id == evidence_id
    if item.kind == "fact":
        f = item.fact
        return f.episode_id == evidence_id or has_term(f"{f.object} {f.text}", q["answer_terms"])
    return has_term(item.text, q["answer_terms"])


def first_line(context: str) -> str:
    return next((line for line in context.splitlines() if line.startswith("- ")), "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stories", type=Path, default=STORIES)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--show", action="store_true", help="print every question that went wrong")
    ap.add_argument("--at-end", action="store_true",
                    help="ask as of the story's last turn (recall(as_of=…)), as the questions were written")
    ap.add_argument("--set", default="", help="preset knobs to try, as in locomo_tune.py: 'recency=0.5;w.fact.slot=1'")
    ap.add_argument("--json", type=Path, default=Path("life_questions.json"))
    args = ap.parse_args(argv)

    from kenning import Memory
    from kenning.recall import HYBRID
    from locomo_tune import parse_grid, preset_of

    stories = {s["id"]: s for s in map(json.loads, args.stories.read_text().splitlines())}
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    scores: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    with Memory(":memory:") as mem:
        mem.services.reader.preset = preset_of(HYBRID, parse_grid(args.set)[0])
        for sid, story in stories.items():
            for i, turn in enumerate(story["turns"]):
                mem.add(turn["content"], dataset=sid, at=turn["at"], role=turn.get("role", "user"),
                        chat=f"{sid}-{turn['at'][:10]}", message_id=f"{sid}-t{i}")  # a chat a day
        for q in questions:
            turns = stories[q["story"]]["turns"]
            (index,) = [i for i, t in enumerate(turns) if q["evidence"] in t["content"]]
            evidence_id = f"{q['story']}-t{index}"
            when = {"as_of": turns[-1]["at"]} if args.at_end else {}
            res = mem.recall(q["question"], dataset=q["story"], limit=10, **when)
            first = bool(res.items) and item_right(res.items[0], q, evidence_id)
            top5 = any(item_right(i, q, evidence_id) for i in res.items[:5])
            line = first_line(res.context)
            context = has_term(line, q["answer_terms"]) or q["evidence"].lower() in line.lower()
            for group in (q["kind"], "all"):
                scores[group]["first_item"].append(first)
                scores[group]["top5"].append(top5)
                scores[group]["context_first_line"].append(context)
            if args.show and not first:
                print(f"[{q['kind']}] {q['question']}  (expected {q['answer']!r})")
                for item in res.items[:3]:
                    print(f"    {item.kind}: {item.text[:100]!r} {item.signals}")
    report = {group: {name: round(sum(v) / len(v), 3) for name, v in by.items()} | {"n": len(by["first_item"])}
              for group, by in scores.items()}
    print(f"{'kind':<6}{'n':>4}{'first item':>12}{'top 5':>8}{'context line 1':>16}")
    for group in ("now", "when", "fact", "all"):
        if group in report:
            r = report[group]
            print(f"{group:<6}{r['n']:>4}{r['first_item']:>12.3f}{r['top5']:>8.3f}{r['context_first_line']:>16.3f}")
    write(args.json.stem, {"command": "python bench/life_questions.py" + (" --at-end" if args.at_end else ""),
                           "questions": args.questions.name, "preset": args.set or "hybrid", "report": report})
    return 0


if __name__ == "__main__":
    sys.exit(main())
