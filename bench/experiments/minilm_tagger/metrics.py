"""Span metrics shared by both venvs. gold/pred: lists (per message) of (start, end, cls) char spans."""


def iou(a, b):
    inter = min(a[1], b[1]) - max(a[0], b[0])
    return max(inter, 0) / (max(a[1], b[1]) - min(a[0], b[0]))


def span_metrics(golds, preds):
    n_gold = n_pred = 0
    c = dict(r_any=0, r_cls=0, p_any=0, p_cls=0, r_any_s=0, r_cls_s=0, p_any_s=0, p_cls_s=0)
    for gold, pred in zip(golds, preds):
        n_gold += len(gold); n_pred += len(pred)
        for g in gold:
            ov = [(p, iou(g, p)) for p in pred if iou(g, p) > 0]
            c['r_any'] += any(ov); c['r_cls'] += any(p[2] == g[2] for p, _ in ov)
            c['r_any_s'] += any(x >= 0.5 for _, x in ov); c['r_cls_s'] += any(p[2] == g[2] and x >= 0.5 for p, x in ov)
        for p in pred:
            ov = [(g, iou(g, p)) for g in gold if iou(g, p) > 0]
            c['p_any'] += any(ov); c['p_cls'] += any(g[2] == p[2] for g, _ in ov)
            c['p_any_s'] += any(x >= 0.5 for _, x in ov); c['p_cls_s'] += any(g[2] == p[2] and x >= 0.5 for g, x in ov)
    out = {'n_gold': n_gold, 'n_pred': n_pred}
    for k, v in c.items():
        out[k] = round(v / (n_gold if k.startswith('r') else max(n_pred, 1)), 4)
    for suf in ('any', 'cls', 'any_s', 'cls_s'):
        p, r = out['p_' + suf], out['r_' + suf]
        out['f_' + suf] = round(2 * p * r / (p + r), 4) if p + r else 0.0
    return out
