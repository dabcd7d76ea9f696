import json, os, time, sys
import numpy as np, torch
from train_tagger import Tagger, collate, predict, gold
from tagger_data import load_items, tag_names, tokenizer, encode, decode
from metrics import span_metrics

torch.set_num_threads(1)
cls_list = json.load(open('/tmp/exp/classes.json')); names = tag_names(cls_list)
items = [i for i in load_items() if i['split'] == 'test']
enc = encode(tokenizer(), items, cls_list)
model = Tagger(len(names)); model.load_state_dict(torch.load(sys.argv[1] if len(sys.argv) > 1 else '/tmp/exp/tagger_best.pt')); model.eval()
res = {'checkpoint': sys.argv[1] if len(sys.argv) > 1 else '/tmp/exp/tagger_best.pt'}
res['torch_fp32_test'] = span_metrics(gold(items), predict(model, enc, names))
print(res, flush=True)
json.dump({i['id']: p for i, p in zip(items, predict(model, enc, names))}, open('/tmp/exp/tagger_test_preds.json', 'w'))
N1 = 300


def bench(run_batch):
    """run_batch(list of enc) -> list of span lists. Returns ms/msg at batch 1 (first N1 msgs) and batch 32 (all)."""
    run_batch(enc[:4])
    t = time.perf_counter()
    for e in enc[:N1]:
        run_batch([e])
    b1 = 1000 * (time.perf_counter() - t) / N1
    t = time.perf_counter()
    for s in range(0, len(enc), 32):
        run_batch(enc[s:s + 32])
    b32 = 1000 * (time.perf_counter() - t) / len(enc)
    return round(b1, 2), round(b32, 2)


def torch_run(batch):
    ids, mask, _ = collate(batch)
    with torch.no_grad():
        p = model(ids, mask).argmax(-1).tolist()
    return [decode(pp[:len(e[0])], e[1], e[2], names) for pp, e in zip(p, batch)]


for th in (1, 2):
    torch.set_num_threads(th)
    res[f'torch_fp32_ms_b1_t{th}'], res[f'torch_fp32_ms_b32_t{th}'] = bench(torch_run)
torch.set_num_threads(1)
print(res, flush=True)
torch.save(model.state_dict(), '/tmp/exp/tagger_best_state.pt')
res['torch_state_dict_MB'] = round(os.path.getsize('/tmp/exp/tagger_best_state.pt') / 1e6, 1)

# ONNX export
ids, mask, _ = collate(enc[:2])
path = '/tmp/exp/tagger_fp32.onnx'
try:
    torch.onnx.export(model, (ids, mask), path, input_names=['input_ids', 'attention_mask'], output_names=['logits'],
                      dynamic_axes={'input_ids': {0: 'b', 1: 't'}, 'attention_mask': {0: 'b', 1: 't'}, 'logits': {0: 'b', 1: 't'}},
                      opset_version=17, dynamo=False)
    res['export'] = 'torchscript exporter (dynamo=False), opset 17'
except Exception as ex:
    print('legacy export failed:', repr(ex)[:500], flush=True)
    torch.onnx.export(model, (ids, mask), path, input_names=['input_ids', 'attention_mask'], output_names=['logits'],
                      dynamic_shapes={'ids': {0: torch.export.Dim('b'), 1: torch.export.Dim('t', max=128)},
                                      'mask': {0: torch.export.Dim('b'), 1: torch.export.Dim('t', max=128)}}, dynamo=True)
    res['export'] = 'dynamo exporter'
from onnxruntime.quantization import quantize_dynamic, QuantType
qpath = '/tmp/exp/tagger_int8.onnx'
quantize_dynamic(path, qpath, weight_type=QuantType.QInt8)
res['onnx_fp32_MB'] = round(os.path.getsize(path) / 1e6, 1)
res['onnx_int8_MB'] = round(os.path.getsize(qpath) / 1e6, 1)
import onnxruntime as ort
for tag, p, th in (('onnx_fp32', path, 1), ('onnx_int8', qpath, 1), ('onnx_int8_t2', qpath, 2)):
    o = ort.SessionOptions(); o.intra_op_num_threads = th; o.inter_op_num_threads = 1
    sess = ort.InferenceSession(p, sess_options=o, providers=['CPUExecutionProvider'])
    def run(batch, sess=sess):
        ids, mask, _ = collate(batch)
        lg = sess.run(None, {'input_ids': ids.numpy(), 'attention_mask': mask.numpy()})[0]
        pr = lg.argmax(-1).tolist()
        return [decode(pp[:len(e[0])], e[1], e[2], names) for pp, e in zip(pr, batch)]
    res[tag + '_ms_b1'], res[tag + '_ms_b32'] = bench(run)
    preds = []
    for s in range(0, len(enc), 32):
        preds += run(enc[s:s + 32])
    res[tag + '_test'] = span_metrics(gold(items), preds)
    print(tag, json.dumps(res), flush=True)
json.dump(res, open('/tmp/exp/bench_results.json', 'w'), indent=1)
print(json.dumps(res, indent=1))
