import json, random, time, sys
import numpy as np, torch, torch.nn as nn
from bert import Bert, H
from tagger_data import load_items, classes, tag_names, tokenizer, encode, decode
from metrics import span_metrics

import os; torch.set_num_threads(int(os.environ.get('THREADS', '1'))); torch.manual_seed(0); random.seed(0); np.random.seed(0)
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 4
LR, BS = float(os.environ.get('LR', '5e-5')), 16


class Tagger(nn.Module):
    def __init__(self, n_tags):
        super().__init__()
        self.bert = Bert(); self.drop = nn.Dropout(0.1); self.head = nn.Linear(H, n_tags)

    def forward(self, ids, mask):
        return self.head(self.drop(self.bert(ids, mask)))


def pad(batch, key, val):
    T = max(len(b[0]) for b in batch)
    return torch.tensor([b[key] + [val] * (T - len(b[key])) for b in batch])


def collate(batch):
    ids = pad(batch, 0, 0)
    mask = torch.tensor([[1] * len(b[0]) + [0] * (ids.shape[1] - len(b[0])) for b in batch])
    tags = pad(batch, 3, -100)
    return ids, mask, tags


def predict(model, enc, names, bs=64):
    model.eval(); out = []
    order = sorted(range(len(enc)), key=lambda i: len(enc[i][0]))
    res = [None] * len(enc)
    with torch.no_grad():
        for s in range(0, len(order), bs):
            idx = order[s:s + bs]; batch = [enc[i] for i in idx]
            ids, mask, _ = collate(batch)
            pred = model(ids, mask).argmax(-1).tolist()
            for i, p in zip(idx, pred):
                e = enc[i]; res[i] = decode(p[:len(e[0])], e[1], e[2], names)
    return res


def gold(items):
    return [[(l['start'], l['end'], l['cls']) for l in i['labels']] for i in items]


if __name__ == '__main__':
    items = load_items(); cls_list = classes(items); names = tag_names(cls_list)
    json.dump(cls_list, open('/tmp/exp/classes.json', 'w'))
    tok = tokenizer()
    split = {s: [i for i in items if i['split'] == s] for s in ('train', 'calibration', 'test')}
    enc = {s: encode(tok, v, cls_list) for s, v in split.items()}
    print({s: len(v) for s, v in split.items()}, 'tags', len(names), flush=True)
    model = Tagger(len(names)); model.bert.load_state_dict(torch.load('/tmp/exp/minilm_fp32_from_int8.pt'))
    model.bert.word.weight.requires_grad_(False)   # frozen word-piece embeddings (speed on a contended 2-core box)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR, weight_decay=0.01, foreach=True)
    steps = EPOCHS * ((len(enc['train']) + BS - 1) // BS)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / (0.1 * steps)) * max(0.0, (steps - s) / (0.9 * steps)) if s >= 0.1 * steps else s / (0.1 * steps))
    lossf = nn.CrossEntropyLoss(ignore_index=-100)
    rng = random.Random(0); best = (-1, None); log = []
    for ep in range(EPOCHS):
        model.train(); t0 = time.perf_counter(); order = list(range(len(enc['train']))); rng.shuffle(order); tot = 0
        # length bucketing: sort within chunks of 50 batches, then shuffle the batches
        batches = []
        for c in range(0, len(order), BS * 50):
            chunk = sorted(order[c:c + BS * 50], key=lambda i: len(enc['train'][i][0]))
            batches += [chunk[k:k + BS] for k in range(0, len(chunk), BS)]
        rng.shuffle(batches)
        for b in batches:
            ids, mask, tags = collate([enc['train'][i] for i in b])
            logits = model(ids, mask)
            loss = lossf(logits.reshape(-1, logits.shape[-1]), tags.reshape(-1))
            opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); sched.step()
            tot += loss.item(); nb = getattr(sys.modules[__name__], '_nb', 0) + 1; sys.modules[__name__]._nb = nb
            if nb % 50 == 0: print('step', nb, round(time.perf_counter() - t0, 1), 's', flush=True)
        train_s = time.perf_counter() - t0
        cal = span_metrics(gold(split['calibration']), predict(model, enc['calibration'], names))
        row = {'epoch': ep + 1, 'loss': round(tot / (len(order) / BS), 4), 'train_seconds': round(train_s, 1), 'cal': cal}
        print(json.dumps(row), flush=True); log.append(row)
        if cal['f_cls'] > best[0]:
            best = (cal['f_cls'], ep + 1); torch.save(model.state_dict(), '/tmp/exp/tagger_best.pt')
        torch.save(model.state_dict(), f'/tmp/exp/tagger_ep{ep+1}.pt')
    model.load_state_dict(torch.load('/tmp/exp/tagger_best.pt'))
    preds = predict(model, enc['test'], names)
    test = span_metrics(gold(split['test']), preds)
    print(json.dumps({'best_epoch': best[1], 'test': test}), flush=True)
    json.dump({'log': log, 'best_epoch': best[1], 'test': test,
               'preds': {i['id']: p for i, p in zip(split['test'], preds)}}, open('/tmp/exp/tagger_results.json', 'w'))
