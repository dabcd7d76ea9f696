import json
from pathlib import Path
from kenning.extract.learned import corpus
from kenning.embed.local import default_model_files
items = corpus.load(Path('/work/main/data/corpus'))
out=[]
import collections
c=collections.Counter()
for it in items:
    c[(it.writer, it.split)]+=1
    if it.writer == 'vocabulary': continue
    out.append(dict(id=it.id, text=it.text, split=it.split, writer=it.writer,
        labels=[dict(cls=l.cls, start=l.start, end=l.end, status=l.status) for l in it.labels]))
json.dump(out, open('/tmp/exp/items.json','w'))
print(len(items), len(out)); print(sorted(c.items()))
m,t=default_model_files(); print(m); print(t)
