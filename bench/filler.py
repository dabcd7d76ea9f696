"""Recall when the assistant's replies are filler: does what the person said still come first?

Each conversation of ``bench/data/filler_conversations.jsonl`` (written by a helper who had not read
the code: three people over a year, 18 user turns, each followed by an assistant reply with the same
timestamp; one conversation repeats one stock reply, one rotates four, one mixes stock replies with
real advice) goes into its own dataset through ``Memory.add_turn`` as an assistant SDK would send it:
the user turn queued, the reply kept at once. Then each question is recalled (limit 10).

Per question, over all conversations:
- ``evidence@1`` / ``evidence@3``: an item among the first 1 / 3 is an evidence turn, or a fact mined
  from one;
- ``other_voice@3``: an assistant turn is among the first three items (lower is better);
- ``repeats``: context blocks in which one message text appears more than once (lower is better).

    .venv/bin/python bench/filler.py [--show]

Writes bench/results/filler.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

CONVERSATIONS = ROOT / "bench" / "data" / "filler_conversations.jsonl"


def evidence(item, ids: set[str]) -> bool:
    return (item.episode_id or item.message_id) in ids


def repeated(context: str) -> bool:
    said = Counter(line.split("] ", 1)[-1] for line in context.splitlines() if line.startswith("- ["))
    return any(n > 1 for n in said.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=Path, default=CONVERSATIONS)
    ap.add_argument("--show", action="store_true", help="print each question's first three items")
    ap.add_argument("--json", type=Path, default=Path("filler.json"))
    args = ap.parse_args(argv)

    from kenning import Memory

    conversations = [json.loads(line) for line in args.conversations.read_text().splitlines() if line.strip()]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, Memory(str(Path(tmp) / "filler.db")) as mem:
        for convo in conversations:
            for turn in convo["turns"]:
                mem.add_turn(convo["id"], turn["role"], turn["text"], thread=turn["chat"], at=turn["at"],
                             message_id=f"{convo['id']}-{turn['id']}")
        mem.flush(timeout=600)
        for convo in conversations:
            for q in convo["questions"]:
                ids = {f"{convo['id']}-{e}" for e in q["evidence"]}
                res = mem.recall(q["q"], dataset=convo["id"], limit=10)
                top = res.items[:3]
                row = {"conversation": convo["id"], "q": q["q"],
                       "evidence@1": bool(top) and evidence(top[0], ids),
                       "evidence@3": any(evidence(i, ids) for i in top),
                       "other_voice@3": any(i.message is not None and i.message.role != "user" for i in top),
                       "repeats": repeated(res.context)}
                rows.append(row)
                if args.show:
                    print(f"{convo['id']}  {q['q']}  (answer: {q['answer']}; evidence {sorted(ids)})")
                    for i in top:
                        who = i.message.role if i.message is not None else i.kind
                        print(f"    {who:<9} {i.score:.3f} {(i.episode_id or '')[-4:]:>4}  {i.text[:90]!r}")
    measures = ("evidence@1", "evidence@3", "other_voice@3", "repeats")
    report = {m: round(sum(r[m] for r in rows) / len(rows), 3) for m in measures} | {"n": len(rows)}
    by_convo = {c["id"]: {m: round(sum(r[m] for r in rows if r["conversation"] == c["id"])
                                   / max(1, sum(r["conversation"] == c["id"] for r in rows)), 3) for m in measures}
                for c in conversations}
    print(f"{'':<10}" + "".join(f"{m:>15}" for m in measures))
    for name, r in [*by_convo.items(), ("all", report)]:
        print(f"{name:<10}" + "".join(f"{r[m]:>15.3f}" for m in measures))
    write(args.json.stem, {"command": "python bench/filler.py", "conversations": args.conversations.name,
                           "report": report, "by_conversation": by_convo})
    return 0


if __name__ == "__main__":
    sys.exit(main())
