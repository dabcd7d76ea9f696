"""Minimal BERT (all-MiniLM-L6-v2 shape) in PyTorch, weights loaded from the bundled int8 ONNX."""
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

H, L, NH, I, V, P = 384, 6, 12, 1536, 30522, 512
EPS = 1e-12


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(H, H); self.key = nn.Linear(H, H); self.value = nn.Linear(H, H)
        self.attn_out = nn.Linear(H, H); self.attn_ln = nn.LayerNorm(H, eps=EPS)
        self.inter = nn.Linear(H, I); self.out = nn.Linear(I, H); self.out_ln = nn.LayerNorm(H, eps=EPS)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, bias):
        B, T, _ = x.shape
        def heads(t):
            return t.view(B, T, NH, H // NH).transpose(1, 2)
        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                           dropout_p=0.1 if self.training else 0.0)
        a = a.transpose(1, 2).reshape(B, T, H)
        x = self.attn_ln(x + self.drop(self.attn_out(a)))
        h = self.out(F.gelu(self.inter(x)))
        return self.out_ln(x + self.drop(h))


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(V, H); self.pos = nn.Embedding(P, H); self.ttype = nn.Embedding(2, H)
        self.emb_ln = nn.LayerNorm(H, eps=EPS); self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList([Layer() for _ in range(L)])

    def forward(self, ids, mask):
        T = ids.shape[1]
        pos = torch.arange(T, device=ids.device)
        x = self.word(ids) + self.ttype(torch.zeros_like(ids)) + self.pos(pos)[None]
        x = self.drop(self.emb_ln(x))
        bias = ((1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min)
        for layer in self.layers:
            x = layer(x, bias)
        return x


def load_from_onnx(model: Bert, path: str) -> dict:
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    init = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    # dequantize: Cast(x_q) -> Mul(x_f, x_scale) -> x   (symmetric, zero point 0)
    vals = dict(init)
    for n in g.node:
        if n.op_type == 'Cast' and n.input[0] in init:
            vals[n.output[0]] = init[n.input[0]].astype(np.float32)
        elif n.op_type == 'Mul' and n.input[0] in vals and n.input[1] in init and n.input[0].endswith('_f'):
            vals[n.output[0]] = vals[n.input[0]] * init[n.input[1]]
    # MatMul(x, W) followed by Add(., bias-name): torch Linear weight = W.T
    nodes = list(g.node)
    byinput = {}
    for n in nodes:
        for i in n.input:
            byinput.setdefault(i, []).append(n)
    named = {}
    for n in nodes:
        if n.op_type == 'MatMul' and n.input[1] in vals and n.input[1] not in ('',):
            add = byinput[n.output[0]][0]
            bname = [i for i in add.input if i != n.output[0]][0]
            named[bname.replace('.bias', '.weight')] = vals[n.input[1]].T
            named[bname] = init[bname]
    for k in init:
        if k.endswith('LayerNorm.weight') or k.endswith('LayerNorm.bias') or 'token_type' in k or 'intermediate.dense.bias' in k:
            named[k] = init[k]
    named['inner.embeddings.word_embeddings.weight'] = vals['inner.embeddings.word_embeddings.weight']
    named['inner.embeddings.position_embeddings.weight'] = vals['inner.embeddings.position_embeddings.weight']
    m = {'inner.embeddings.word_embeddings.weight': 'word.weight',
         'inner.embeddings.position_embeddings.weight': 'pos.weight',
         'inner.embeddings.token_type_embeddings.weight': 'ttype.weight',
         'inner.embeddings.LayerNorm.weight': 'emb_ln.weight', 'inner.embeddings.LayerNorm.bias': 'emb_ln.bias'}
    sub = {'attention.self.query': 'query', 'attention.self.key': 'key', 'attention.self.value': 'value',
           'attention.output.dense': 'attn_out', 'attention.output.LayerNorm': 'attn_ln',
           'intermediate.dense': 'inter', 'output.dense': 'out', 'output.LayerNorm': 'out_ln'}
    for l in range(L):
        for a, b in sub.items():
            for w in ('weight', 'bias'):
                m[f'inner.encoder.layer.{l}.{a}.{w}'] = f'layers.{l}.{b}.{w}'
    sd = {}
    for k, v in m.items():
        sd[v] = torch.from_numpy(np.array(named[k])).float()
    missing, unexpected = model.load_state_dict(sd, strict=True), None
    return sd
