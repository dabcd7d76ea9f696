import json
from tokenizers import Tokenizer

MAXLEN = 128


def load_items():
    return json.load(open('/tmp/exp/items.json'))


def classes(items):
    return sorted({l['cls'] for i in items for l in i['labels']})


def tag_names(cls_list):
    return ['O'] + [f'{p}-{c}' for c in cls_list for p in ('B', 'I')]


def tokenizer():
    tok = Tokenizer.from_file('/tmp/exp/tokenizer.json')
    tok.no_padding()   # tokenizer.json ships with fixed padding to 128: turn it off
    tok.enable_truncation(max_length=MAXLEN)
    return tok


def encode(tok, items, cls_list):
    """ids, offsets, tag ids (-100 for specials). Overlapping labels: the longer keeps its place."""
    tag_id = {t: i for i, t in enumerate(tag_names(cls_list))}
    encs = tok.encode_batch([i['text'] for i in items])
    out = []
    for it, e in zip(items, encs):
        tags = [-100 if s else 0 for s in e.special_tokens_mask]
        taken = [False] * len(tags)
        for l in sorted(it['labels'], key=lambda l: -(l['end'] - l['start'])):
            idx = [j for j, (a, b) in enumerate(e.offsets) if not e.special_tokens_mask[j] and a < l['end'] and l['start'] < b]
            if not idx or any(taken[j] for j in idx):
                continue
            for k, j in enumerate(idx):
                tags[j] = tag_id[('B-' if k == 0 else 'I-') + l['cls']]
                taken[j] = True
        out.append((e.ids, e.offsets, list(e.special_tokens_mask), tags))
    return out


def decode(tag_seq, offsets, special, names):
    """Contiguous B/I runs -> (start_char, end_char, cls); an I whose class differs starts a new span."""
    spans, cur = [], None
    for t, (a, b), s in zip(tag_seq, offsets, special):
        if s:
            continue
        name = names[t]
        if name == 'O':
            if cur: spans.append(cur); cur = None
            continue
        p, c = name.split('-', 1)
        if cur and p == 'I' and c == cur[2]:
            cur = (cur[0], b, c)
        else:
            if cur: spans.append(cur)
            cur = (a, b, c)
    if cur: spans.append(cur)
    return spans
