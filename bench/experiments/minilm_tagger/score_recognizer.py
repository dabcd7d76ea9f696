# run with /work/main/.venv/bin/python
import json, sys, time
sys.path.insert(0, '/tmp/exp')
from metrics import span_metrics
from kenning.extract.learned.extractor import LearnedExtractor
items = [i for i in json.load(open('/tmp/exp/items.json')) if i['split'] == 'test']
ex = LearnedExtractor()
ex._nlp('warm up')
golds, preds = [], []
t = time.perf_counter()
for it in items:
    doc = ex._nlp(it['text'])
    preds.append([(e.start_char, e.end_char, e.label_) for e in doc.ents])
    golds.append([(l['start'], l['end'], l['cls']) for l in it['labels']])
dt = time.perf_counter() - t
print('pipe names', ex._nlp.pipe_names)
res = span_metrics(golds, preds); res['ms_per_msg_full_pipeline'] = round(1000 * dt / len(items), 2)
print(json.dumps(res))
json.dump({'metrics': res, 'preds': {it['id']: p for it, p in zip(items, preds)}}, open('/tmp/exp/recognizer_test.json', 'w'))
