"""LoCoMo evidence recall@k: kenning's recall vs. BM25 over raw turns vs. dense-only, in one run.

Each conversation goes into its own dataset: every turn through ``Memory.add``
(``message_id`` = its dia_id, ``at`` = its session time, ``chat`` = the
session), so the message is indexed and the facts mined from it cite it. Each
question is then asked through ``recall``; the ranked items map to dia_ids (a
fact by the message it came from) and recall@k is the share of the question's
gold evidence among the first k, averaged per category and over all five.

    .venv/bin/python bench/locomo.py [--data PATH] [--ks 5,10,25] [--db PATH] [--presets hybrid,...]

Writes bench/results/locomo.json. Data: LoCoMo (CC BY-NC 4.0), see ../shared/data/README.md.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def turns_of(sample):
    conv = sample["conversation"]
    n = 1
    while f"session_{n}" in conv or f"session_{n}_date_time" in conv:
        turns = conv.get(f"session_{n}") or []
        if turns:
            when = datetime.strptime(conv[f"session_{n}_date_time"].strip(), "%I:%M %p on %d %B, %Y").replace(
                tzinfo=timezone.utc)
        for i, turn in enumerate(turns):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            yield turn["dia_id"], f"session_{n}", when.replace(second=min(59, i % 60)), text
        n += 1


def clean_evidence(ids, valid):
    out = set()
    for raw in ids:
        for part in re.split(r"[;,\s]+", str(raw)):
            m = re.match(r"^D:?(\d+):0*(\d+)$", part.strip())
            if m and f"D{int(m.group(1))}:{int(m.group(2))}" in valid:
                out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return sorted(out)


def bm25_rank(turns, question, k1=1.5, b=0.75):
    tok = lambda s: re.findall(r"[a-z0-9]+", s.lower())  # noqa: E731
    docs = [tok(t) for _, t in turns]
    df = Counter(w for d in docs for w in set(d))
    n, avg = len(docs), sum(len(d) for d in docs) / max(1, len(docs))
    scores = []
    for (did, _), d in zip(turns, docs):
        tf, s = Counter(d), 0.0
        for w in tok(question):
            if w in tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
        scores.append((s, did))
    scores.sort(key=lambda x: -x[0])
    return [[did] for _, did in scores]


def item_ids(item) -> list[str]:
    return [i for i in (item.episode_id, item.message_id) if i]


def score(ranked, gold, k):
    seen = set()
    for ids in ranked[:k]:
        seen.update(ids)
    return len(seen & set(gold)) / len(gold)


def ingest(mem, samples) -> tuple[int, float]:
    n, t0 = 0, time.perf_counter()
    for sample in samples:
        dataset = f"locomo-{sample['sample_id']}"
        for dia_id, chat, when, text in turns_of(sample):
            mem.add(text, dataset=dataset, at=when, role="user", chat=chat, message_id=dia_id)
            n += 1
    return n, time.perf_counter() - t0


def evaluate(mem, samples, ks, systems):
    """systems: name -> callable(dataset, question, turns) -> ranked list of dia_id lists."""
    results = {name: defaultdict(lambda: defaultdict(list)) for name in systems}
    timings = defaultdict(float)
    for sample in samples:
        dataset = f"locomo-{sample['sample_id']}"
        turns = [(t[0], t[3]) for t in turns_of(sample)]
        valid = {t[0] for t in turns}
        for qa in sample["qa"]:
            gold = clean_evidence(qa.get("evidence", []), valid)
            if not gold:
                continue
            for name, system in systems.items():
                t0 = time.perf_counter()
                ranked = system(dataset, qa["question"], turns, max(ks))
                timings[name] += time.perf_counter() - t0
                for k in ks:
                    results[name][qa["category"]][k].append(score(ranked, gold, k))
    return results, timings


def table(results, ks):
    report = {}
    for name, by_cat in results.items():
        report[name] = {CATEGORIES[c]: {**{k: sum(v[k]) / len(v[k]) for k in ks}, "n": len(v[ks[0]])}
                        for c, v in sorted(by_cat.items())}
        report[name]["overall"] = {k: sum(sum(v[k]) for v in by_cat.values()) /
                                   sum(len(v[k]) for v in by_cat.values()) for k in ks}
        report[name]["overall"]["n"] = sum(len(v[ks[0]]) for v in by_cat.values())
    return report


def print_table(report, ks):
    names = list(report)
    print(f"{'category':<13}{'n':>5}" + "".join(f"{n[:10] + '@' + str(k):>15}" for k in ks for n in names))
    for cat in list(CATEGORIES.values()) + ["overall"]:
        if cat not in report[names[0]]:
            continue
        row = f"{cat:<13}{report[names[0]][cat]['n']:>5}"
        row += "".join(f"{report[n][cat][k]:>15.3f}" for k in ks for n in names)
        print(row)


def kenning_system(mem, preset=None):
    def run(dataset, question, turns, limit):
        if preset is not None:
            mem.services.reader.preset = preset
        res = mem.recall(question, dataset=dataset, limit=min(100, limit))
        return [item_ids(i) for i in res.items]
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ks", default="5,10,25")
    ap.add_argument("--db", default=None, help="reuse an ingested store (default: a fresh temporary file)")
    ap.add_argument("--json", type=Path, default=Path("locomo.json"), help="result name under bench/results/")
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]

    from kenning import Memory
    from kenning.recall import DENSE, HYBRID

    samples = json.loads(args.data.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or f"{tmp}/locomo.db"
        fresh = args.db is None or not Path(args.db).exists()
        mem = Memory(f"sqlite:///{db}")
        n_turns, ingest_s = ingest(mem, samples) if fresh else (0, 0.0)
        systems = {
            "kenning": kenning_system(mem, HYBRID),
            "bm25-raw": lambda d, q, turns, k: bm25_rank(turns, q),
            "dense-only": kenning_system(mem, DENSE),
        }
        results, timings = evaluate(mem, samples, ks, systems)
        mem.services.reader.preset = HYBRID
        mem.close()
    report = table(results, ks)
    print_table(report, ks)
    n_q = report["kenning"]["overall"]["n"]
    if n_turns:
        print(f"\ningested {n_turns} turns in {ingest_s:.1f}s ({n_turns / ingest_s:.0f} turns/s)")
    print(f"kenning recall: {1000 * timings['kenning'] / n_q:.1f} ms per question ({n_q} questions)")
    k = 10 if 10 in ks else ks[-1]
    ratio = report["kenning"]["overall"][k] / max(1e-9, report["bm25-raw"]["overall"][k])
    print(f"recall@{k} overall: kenning {report['kenning']['overall'][k]:.3f}, "
          f"bm25 {report['bm25-raw']['overall'][k]:.3f} (ratio {ratio:.2f}), "
          f"dense-only {report['dense-only']['overall'][k]:.3f}")
    write(args.json.stem, {"command": "python bench/locomo.py", "data": args.data.name, "ks": ks, "report": report,
                           "turns": n_turns, "ingest_s": round(ingest_s, 1),
                           "recall_ms_per_question": round(1000 * timings["kenning"] / n_q, 2)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
