# run with /work/main/.venv/bin/python: the project's own tagger.score matching (one-to-one, class must match,
# gold = labels widened to spaCy tokens with overlaps dropped) applied to saved predictions of both systems.
import json, sys
from pathlib import Path
from kenning.extract.learned import corpus
from kenning.extract.learned.tagger import spans, base_pipeline
items = {i.id: i for i in corpus.load(Path('/work/main/data/corpus')) if i.split == 'test' and i.writer != 'vocabulary'}
nlp = base_pipeline()
def score(preds):
    tp = fp = fn = 0
    for iid, found in preds.items():
        item = items[iid]; gold = spans(nlp.make_doc(item.text), item); hit = set()
        for s, e, c in found:
            m = next((g for g in gold if g[2] == c and g[0] < e and s < g[1] and g not in hit), None)
            if m: hit.add(m); tp += 1
            else: fp += 1
        fn += len(gold) - len(hit)
    p = tp / (tp + fp); r = tp / (tp + fn)
    return {'p': round(p, 3), 'r': round(r, 3), 'f': round(2 * p * r / (p + r), 3)}
print('recognizer', score(json.load(open('/tmp/exp/recognizer_test.json'))['preds']))
for f in sys.argv[1:]:
    print(f, score(json.load(open(f))))
