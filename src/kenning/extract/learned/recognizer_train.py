"""Fine-tune the bundled encoder (all-MiniLM-L6-v2) as the recognizer: a token tagger whose tags are the
vocabulary's classes in BIO form, exported to int8 ONNX for :mod:`.recognizer`.

Training needs the ``train`` extra (PyTorch and onnx); the shipped recognizer runs on onnxruntime alone.
:mod:`.train` runs this module as subprocesses, one thread each (two threads per process on two cores
made PyTorch many times slower):

    python -m kenning.extract.learned.recognizer_train ITEMS.json OUT_DIR --train-on train[:half] \
        [--tag SPLIT ...] [--epochs 5] [--export]

The encoder starts from the bundled int8 weights, dequantised (the pooled vectors of the PyTorch copy
match the ONNX model's to a cosine of 0.9999999); its word-piece embeddings stay frozen, the rest is
fine-tuned: AdamW, learning rate 1e-4 with 10% warm-up and linear decay, batches of 16 sorted by length
within chunks, gradient norm clipped at 1, seed 0.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from pathlib import Path

import numpy as np

from .recognizer import MAX_PIECES, decode, tag_names, tokenizer

RECIPE = 1          # raise when a change here changes what training produces (the training cache's key)
H, LAYERS, HEADS, INNER, VOCAB, POSITIONS = 384, 6, 12, 1536, 30522, 512
EPS = 1e-12


def _torch():
    try:
        import torch
    except ImportError as e:     # pragma: no cover - the message is the point
        raise SystemExit("training the recognizer needs PyTorch: pip install 'kenning[train]' "
                         "(CPU wheels: --extra-index-url https://download.pytorch.org/whl/cpu)") from e
    return torch


def half(unit: str) -> int:
    """Which half of the training split a sequence falls in (as :func:`.train._half`)."""
    return int(hashlib.sha1(("half:" + unit).encode()).hexdigest()[:4], 16) % 2


def build_model(n_tags: int):
    """A BERT of all-MiniLM-L6-v2's shape with a linear tagging head."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.query, self.key, self.value = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)
            self.attn_out, self.attn_ln = nn.Linear(H, H), nn.LayerNorm(H, eps=EPS)
            self.inter, self.out, self.out_ln = nn.Linear(H, INNER), nn.Linear(INNER, H), nn.LayerNorm(H, eps=EPS)
            self.drop = nn.Dropout(0.1)

        def forward(self, x, bias):
            b, t, _ = x.shape

            def heads(v):
                return v.view(b, t, HEADS, H // HEADS).transpose(1, 2)
            a = F.scaled_dot_product_attention(heads(self.query(x)), heads(self.key(x)), heads(self.value(x)),
                                               attn_mask=bias, dropout_p=0.1 if self.training else 0.0)
            x = self.attn_ln(x + self.drop(self.attn_out(a.transpose(1, 2).reshape(b, t, H))))
            return self.out_ln(x + self.drop(self.out(F.gelu(self.inter(x)))))

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.word, self.pos, self.ttype = nn.Embedding(VOCAB, H), nn.Embedding(POSITIONS, H), nn.Embedding(2, H)
            self.emb_ln, self.drop = nn.LayerNorm(H, eps=EPS), nn.Dropout(0.1)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
            self.head = nn.Linear(H, n_tags)

        def forward(self, ids, mask):
            x = self.word(ids) + self.ttype(torch.zeros_like(ids)) + self.pos(torch.arange(ids.shape[1]))[None]
            x = self.drop(self.emb_ln(x))
            bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
            for layer in self.layers:
                x = layer(x, bias)
            return self.head(self.drop(x))

    return Tagger()


def bundled_weights() -> dict:
    """The bundled int8 encoder's weights, dequantised, named as :func:`build_model` names them."""
    import onnx
    from onnx import numpy_helper

    from ...embed.local import default_model_files

    graph = onnx.load(str(default_model_files()[0])).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    values = dict(init)
    for node in graph.node:       # int8 weights: Cast(q) then Mul(q_f, scale)
        if node.op_type == "Cast" and node.input[0] in init:
            values[node.output[0]] = init[node.input[0]].astype(np.float32)
        elif node.op_type == "Mul" and node.input[0] in values and node.input[1] in init and node.input[0].endswith("_f"):
            values[node.output[0]] = values[node.input[0]] * init[node.input[1]]
    consumers: dict = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    named = {}
    for node in graph.node:     # MatMul(x, W) then Add(., bias): a Linear whose weight is W transposed
        if node.op_type == "MatMul" and node.input[1] in values:
            add = consumers[node.output[0]][0]
            bias = next(i for i in add.input if i != node.output[0])
            named[bias.replace(".bias", ".weight")] = values[node.input[1]].T
            named[bias] = init[bias]
    for name in init:
        if name.endswith(("LayerNorm.weight", "LayerNorm.bias")) or "token_type" in name or "intermediate.dense.bias" in name:
            named[name] = init[name]
    for name in ("word_embeddings", "position_embeddings"):
        named[f"inner.embeddings.{name}.weight"] = values[f"inner.embeddings.{name}.weight"]
    rename = {"inner.embeddings.word_embeddings.weight": "word.weight",
              "inner.embeddings.position_embeddings.weight": "pos.weight",
              "inner.embeddings.token_type_embeddings.weight": "ttype.weight",
              "inner.embeddings.LayerNorm.weight": "emb_ln.weight", "inner.embeddings.LayerNorm.bias": "emb_ln.bias"}
    parts = {"attention.self.query": "query", "attention.self.key": "key", "attention.self.value": "value",
             "attention.output.dense": "attn_out", "attention.output.LayerNorm": "attn_ln",
             "intermediate.dense": "inter", "output.dense": "out", "output.LayerNorm": "out_ln"}
    for layer in range(LAYERS):
        for onnx_name, ours in parts.items():
            for w in ("weight", "bias"):
                rename[f"inner.encoder.layer.{layer}.{onnx_name}.{w}"] = f"layers.{layer}.{ours}.{w}"
    return {ours: np.array(named[theirs], dtype=np.float32) for theirs, ours in rename.items()}


def encode(tok, items: list[dict], classes: list[str]) -> list[tuple]:
    """(ids, tags) of each item, cut to :data:`MAX_PIECES`; special pieces are not scored (-100). Of
    overlapping labels the longer keeps its place."""
    index = {t: i for i, t in enumerate(tag_names(classes))}
    out = []
    for item, enc in zip(items, tok.encode_batch([i["text"] for i in items])):
        n = min(len(enc.ids), MAX_PIECES)           # cut to the window, [SEP] kept last
        ids, offsets, special = enc.ids[:n - 1] + [enc.ids[-1]], enc.offsets, enc.special_tokens_mask
        tags = [-100 if special[j] or j == n - 1 else 0 for j in range(n)]
        taken = [False] * n
        for label in sorted(item["labels"], key=lambda l: -(l["end"] - l["start"])):
            idx = [j for j in range(1, n - 1) if not special[j] and offsets[j][0] < label["end"]
                   and label["start"] < offsets[j][1]]
            if not idx or any(taken[j] for j in idx):
                continue
            for k, j in enumerate(idx):
                tags[j] = index[("B-" if k == 0 else "I-") + label["cls"]]
                taken[j] = True
        out.append((ids, tags))
    return out


def _batch(rows: list[tuple]):
    torch = _torch()
    width = max(len(r[0]) for r in rows)
    ids = torch.tensor([r[0] + [0] * (width - len(r[0])) for r in rows])
    mask = torch.tensor([[1] * len(r[0]) + [0] * (width - len(r[0])) for r in rows])
    tags = torch.tensor([r[1] + [-100] * (width - len(r[1])) for r in rows])
    return ids, mask, tags


def fit(items: list[dict], classes: list[str], *, epochs: int, seed: int = 0, lr: float = 1e-4, batch: int = 16,
        log=print):
    """The tagger fine-tuned on ``items``; the last epoch's weights."""
    torch = _torch()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = build_model(len(tag_names(classes)))
    state = {k: torch.from_numpy(v) for k, v in bundled_weights().items()}
    missing = model.load_state_dict(state, strict=False).missing_keys
    if sorted(missing) != ["head.bias", "head.weight"]:
        raise RuntimeError(f"the bundled encoder's weights did not all load: {missing}")
    model.word.weight.requires_grad_(False)
    rows = encode(tokenizer(), items, classes)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(rows) / batch)
    warm = 0.1 * steps
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / warm if s < warm else max(0.0, (steps - s) / (steps - warm)))
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    history = []
    for epoch in range(epochs):
        model.train()
        began, total = time.perf_counter(), 0.0
        order = list(range(len(rows)))
        rng.shuffle(order)
        batches = []
        for c in range(0, len(order), batch * 50):        # similar lengths together, batches shuffled
            chunk = sorted(order[c:c + batch * 50], key=lambda i: len(rows[i][0]))
            batches += [chunk[k:k + batch] for k in range(0, len(chunk), batch)]
        rng.shuffle(batches)
        for b in batches:
            ids, mask, tags = _batch([rows[i] for i in b])
            logits = model(ids, mask)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tags.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            total += loss.item()
        row = {"epoch": epoch + 1, "loss": round(total / len(batches), 4),
               "seconds": round(time.perf_counter() - began, 1)}
        history.append(row)
        log(row)
    model.eval()
    return model, history


def predict(model, items: list[dict], classes: list[str]) -> dict[str, list]:
    """(start, end, class) spans of each item's text, by id, from the PyTorch model (the fold taggers)."""
    torch = _torch()
    names, tok = tag_names(classes), tokenizer()
    out = {}
    encs = tok.encode_batch([i["text"] for i in items])
    with torch.no_grad():
        for s in range(0, len(items), 32):
            group = list(zip(items[s:s + 32], encs[s:s + 32]))
            rows = [e.ids[:min(len(e.ids), MAX_PIECES) - 1] + [e.ids[-1]] for _, e in group]
            ids, mask, _ = _batch([(r, [0] * len(r)) for r in rows])
            tags = model(ids, mask).argmax(-1).tolist()
            for (item, enc), r, t in zip(group, rows, tags):
                n = len(r)
                out[item["id"]] = decode(t[1:n - 1], enc.offsets[1:n - 1], names)
    return out


def export(model, folder: Path, classes: list[str]) -> Path:
    """The model as int8 ONNX (``recognizer.onnx``) with its classes and digest (``recognizer.json``); the
    float model stays beside it (``recognizer.fp32.onnx``, not shipped)."""
    torch = _torch()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder.mkdir(parents=True, exist_ok=True)
    fp32, int8 = folder / "recognizer.fp32.onnx", folder / "recognizer.onnx"
    ids = torch.tensor([[101, 1045, 2293, 2009, 102], [101, 2009, 102, 0, 0]])
    mask = (ids != 0).long()
    torch.onnx.export(model, (ids, mask), str(fp32), input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": {0: "b", 1: "t"}, "attention_mask": {0: "b", 1: "t"},
                                    "logits": {0: "b", 1: "t"}})
    # per output channel: a scale for each column keeps about two points of span recall that one scale per
    # matrix loses (test split, one-to-one: fp32 P 0.645 R 0.669, per matrix 0.612/0.642, per channel 0.630/0.662)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    digest = hashlib.sha256(int8.read_bytes()).hexdigest()
    (folder / "recognizer.json").write_text(json.dumps({"classes": classes, "sha256": digest}) + "\n")
    return int8


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("items", type=Path, help="JSON: {classes, items: [{id, unit, text, split, labels}]}")
    ap.add_argument("out", type=Path)
    ap.add_argument("--train-on", required=True, help="a split, or SPLIT:HALF for one half of it (0 or 1)")
    ap.add_argument("--tag", action="append", default=[], help="tag a split (or SPLIT:HALF) with the model: "
                                                               "OUT/spans-<name>.json")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--export", action="store_true", help="write the int8 ONNX model to OUT")
    args = ap.parse_args(argv)
    data = json.loads(args.items.read_text())
    items, classes = data["items"], data["classes"]

    def chosen(spec: str) -> list[dict]:
        split, _, which = spec.partition(":")
        return [i for i in items if i["split"] == split and (not which or half(i["unit"]) == int(which))]

    args.out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    seen = chosen(args.train_on)
    print(f"{args.train_on}: {len(seen)} messages, {args.epochs} epochs", flush=True)
    model, history = fit(seen, classes, epochs=args.epochs, seed=args.seed,
                         log=lambda r: print(args.train_on, r, flush=True))
    for spec in args.tag:
        (args.out / f"spans-{spec.replace(':', '-')}.json").write_text(json.dumps(predict(model, chosen(spec), classes)))
    if args.export:
        export(model, args.out, classes)
    (args.out / "history.json").write_text(json.dumps({"train_on": args.train_on, "epochs": args.epochs,
                                                       "history": history,
                                                       "seconds": round(time.perf_counter() - began, 1)}))


if __name__ == "__main__":
    main()
