"""Cross-fitting tagger runs. usage: train_cf.py MODE EPOCHS ; MODE in {A, B, final}.
A: train on train-half 0, predict half 1.  B: train on half 1, predict half 0.  final: train on all train, predict cal+test.
Same recipe as train_tagger.py (lr 1e-4 via LR env, bs 16, frozen word emb, warmup 10% + linear decay, seed 0), last epoch used."""
import json, random, time, sys, os, hashlib
import numpy as np, torch, torch.nn as nn
torch.set_num_threads(1)
from train_tagger import Tagger, collate, predict, gold
from tagger_data import load_items, tag_names, tokenizer, encode
from metrics import span_metrics
torch.set_num_threads(1); torch.manual_seed(0); random.seed(0); np.random.seed(0)
MODE, EPOCHS = sys.argv[1], int(sys.argv[2])
LR, BS = float(os.environ.get('LR', '1e-4')), 16


def half(i):
    unit = i.split('.', 1)[0] if '.' in i else i
    return int(hashlib.sha1(("half:" + unit).encode()).hexdigest()[:4], 16) % 2


items = load_items(); cls_list = json.load(open('/tmp/exp/classes.json')); names = tag_names(cls_list)
tok = tokenizer()
train_all = [i for i in items if i['split'] == 'train']
if MODE == 'final':
    tr = train_all; pred_sets = {'calibration': [i for i in items if i['split'] == 'calibration'],
                                 'test': [i for i in items if i['split'] == 'test']}
else:
    h = 0 if MODE == 'A' else 1
    tr = [i for i in train_all if half(i['id']) == h]; pred_sets = {'oof': [i for i in train_all if half(i['id']) != h]}
enc_tr = encode(tok, tr, cls_list)
print(MODE, 'train', len(tr), {k: len(v) for k, v in pred_sets.items()}, 'lr', LR, 'epochs', EPOCHS, flush=True)
model = Tagger(len(names)); model.bert.load_state_dict(torch.load('/tmp/exp/minilm_fp32_from_int8.pt'))
model.bert.word.weight.requires_grad_(False)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR, weight_decay=0.01, foreach=True)
steps = EPOCHS * ((len(enc_tr) + BS - 1) // BS)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / (0.1 * steps)) * max(0.0, (steps - s) / (0.9 * steps)) if s >= 0.1 * steps else s / (0.1 * steps))
lossf = nn.CrossEntropyLoss(ignore_index=-100)
rng = random.Random(0); T0 = time.perf_counter(); nb = 0; log = []
for ep in range(EPOCHS):
    model.train(); t0 = time.perf_counter(); order = list(range(len(enc_tr))); rng.shuffle(order); tot = 0
    batches = []
    for c in range(0, len(order), BS * 50):
        chunk = sorted(order[c:c + BS * 50], key=lambda i: len(enc_tr[i][0]))
        batches += [chunk[k:k + BS] for k in range(0, len(chunk), BS)]
    rng.shuffle(batches)
    for b in batches:
        ids, mask, tags = collate([enc_tr[i] for i in b])
        logits = model(ids, mask)
        loss = lossf(logits.reshape(-1, logits.shape[-1]), tags.reshape(-1))
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); sched.step()
        tot += loss.item(); nb += 1
        if nb % 50 == 0: print('step', nb, round(time.perf_counter() - t0, 1), 's', flush=True)
    row = {'epoch': ep + 1, 'loss': round(tot / len(batches), 4), 'train_seconds': round(time.perf_counter() - t0, 1)}
    print(json.dumps(row), flush=True); log.append(row)
    torch.save(model.state_dict(), f'/tmp/exp/cf/{MODE}_last.pt')
res = {'mode': MODE, 'epochs': EPOCHS, 'lr': LR, 'n_train': len(tr), 'log': log, 'train_wall_s': round(time.perf_counter() - T0, 1)}
for k, its in pred_sets.items():
    p = predict(model, encode(tok, its, cls_list), names)
    res[k + '_metrics'] = span_metrics(gold(its), p)
    json.dump({i['id']: s for i, s in zip(its, p)}, open(f'/tmp/exp/cf/{MODE}_{k}_preds.json', 'w'))
res['total_wall_s'] = round(time.perf_counter() - T0, 1)
print(json.dumps(res), flush=True)
json.dump(res, open(f'/tmp/exp/cf/{MODE}_result.json', 'w'), indent=1)
if MODE == 'final':
    torch.save(model.state_dict(), '/tmp/exp/tagger_final.pt')
print('DONE', flush=True)
