"""Choose recall weights on LoCoMo honestly: every setting of a grid is scored per conversation,
and beside the in-sample best (chosen and scored on the same conversations) stands the
leave-one-out figure: each conversation scored with the setting that was best on the others.
The leave-one-out number is the one that predicts an unseen conversation.

    .venv/bin/python bench/locomo_tune.py --db /tmp/locomo.db \\
        --grid 'when_boost=0,0.5,1;session_prior=0,0.5'

``--db`` is a store ``bench/locomo.py --db PATH`` ingested (ingested here when missing). Knobs
are fields of ``kenning.recall.Preset``; unnamed ones keep the HYBRID preset's values. Writes
bench/results/locomo_tune.json.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402
from locomo import CATEGORIES, DEFAULT_DATA, clean_evidence, ingest, item_ids, score, turns_of  # noqa: E402


def parse_grid(text: str) -> list[dict]:
    axes = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, values = part.split("=", 1)
        axes.append([(name.strip(), float(v)) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)] or [{}]


def preset_of(base, setting: dict):
    """``base`` with the setting's knobs; ``w.KIND.SIGNAL`` names a fusion weight."""
    weights = dict(base.weights)
    fields = {}
    for name, value in setting.items():
        if name.startswith("w."):
            _, kind, signal = name.split(".")
            weights[kind, signal] = value
        else:
            fields[name] = int(value) if isinstance(getattr(base, name), int) else value
    return dataclasses.replace(base, weights=weights, **fields)


def run_setting(mem, samples, preset, k):
    """[(conversation, category, recall@k)] for every question."""
    mem.services.reader.preset = preset
    out = []
    for sample in samples:
        dataset = f"locomo-{sample['sample_id']}"
        valid = {t[0] for t in turns_of(sample)}
        for qa in sample["qa"]:
            gold = clean_evidence(qa.get("evidence", []), valid)
            if gold:
                res = mem.recall(qa["question"], dataset=dataset, limit=k)
                out.append((sample["sample_id"], qa["category"], score([item_ids(i) for i in res.items], gold, k)))
    return out


def summary(rows) -> dict:
    by_cat = defaultdict(list)
    for _, cat, value in rows:
        by_cat[CATEGORIES[cat]].append(value)
    out = {cat: round(sum(v) / len(v), 4) for cat, v in sorted(by_cat.items())}
    out["overall"] = round(sum(v for _, _, v in rows) / max(1, len(rows)), 4)
    return out


def mean(rows) -> float:
    return sum(v for _, _, v in rows) / max(1, len(rows))


def leave_one_out(settings: list[dict], results: list[list]) -> tuple[list, dict]:
    """Each conversation scored with the setting best on all the others."""
    conversations = sorted({conv for conv, _, _ in results[0]})
    rows, chosen = [], {}
    for held in conversations:
        best = max(range(len(settings)), key=lambda i: mean([r for r in results[i] if r[0] != held]))
        chosen[held] = settings[best]
        rows.extend(r for r in results[best] if r[0] == held)
    return rows, chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--db", required=True)
    ap.add_argument("--grid", default="")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--json", type=Path, default=Path("locomo_tune.json"))
    args = ap.parse_args(argv)

    from kenning import Memory
    from kenning.recall import HYBRID

    samples = json.loads(args.data.read_text())
    fresh = not Path(args.db).exists()
    mem = Memory(f"sqlite:///{args.db}")
    if fresh:
        ingest(mem, samples)
    settings = parse_grid(args.grid)
    results = []
    for setting in settings:
        rows = run_setting(mem, samples, preset_of(HYBRID, setting), args.k)
        results.append(rows)
        print(json.dumps(setting), json.dumps(summary(rows)), flush=True)
    mem.services.reader.preset = HYBRID
    mem.close()
    best = max(range(len(settings)), key=lambda i: mean(results[i]))
    loo_rows, chosen = leave_one_out(settings, results)
    report = {"k": args.k, "data": args.data.name, "grid": args.grid,
              "settings": [{"setting": s, **summary(r)} for s, r in zip(settings, results)],
              "in_sample": {"setting": settings[best], **summary(results[best])},
              "leave_one_out": {"chosen": chosen, **summary(loo_rows)}}
    print(f"\nin-sample best {json.dumps(settings[best])}: {json.dumps(summary(results[best]))}")
    print(f"leave-one-out: {json.dumps(summary(loo_rows))}")
    for conv, setting in chosen.items():
        print(f"  {conv}: {json.dumps(setting)}")
    write(args.json.stem, {"command": "python bench/locomo_tune.py", **report})
    return 0


if __name__ == "__main__":
    sys.exit(main())
