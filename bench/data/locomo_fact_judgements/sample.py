"""Ingest LoCoMo dev the way locomo_eval does, sample 100 random stored facts with their turn.

    python bench/data/locomo_fact_judgements/sample.py sqlite:////tmp/s.db SEED OUT.jsonl
"""
import json, random, sys
from pathlib import Path
SHARED = Path(__file__).resolve().parents[4] / "shared"
sys.path.insert(0, str(SHARED / "tools"))
from locomo_eval import turns_of
from kenning import Memory
mem = Memory(sys.argv[1])
data = json.load(open(SHARED / 'data' / 'locomo' / 'locomo-dev.json'))
rows = []
for k, s in enumerate(data):
    ds = f"conv{k}"
    texts = {}
    for did, chat, at, text in turns_of(s):
        texts[did] = (text, at)
        r = mem.add(text, dataset=ds, at=at, role="user", chat=chat, message_id=did)
        for mid in r.memory_ids:
            texts.setdefault(mid, (text, at))   # the turn that first stored it, not a later repeat
    facts, off = [], 0
    while True:
        page = mem.list_facts(ds, include_invalidated=True, limit=100, offset=off)
        facts += page.facts
        off += 100
        if off >= page.total:
            break
    for f in facts:
        turn, at = texts.get(f.fact_id, ("?", None))
        rows.append(dict(turn=turn, said_on=at and at.date().isoformat(), kind=f.kind, fact=f"{f.predicate} · {f.object}", valid_at=f.valid_at.date().isoformat(),
                         valid_until=f.valid_until and f.valid_until.date().isoformat(), source_quote=f.source_quote))
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 20261201)
sample = random.sample(rows, 100)
print(len(rows), file=sys.stderr)
with open(sys.argv[3], 'w') as f:
    for i, r in enumerate(sample):
        f.write(json.dumps(dict(id=i, **r)) + '\n')
