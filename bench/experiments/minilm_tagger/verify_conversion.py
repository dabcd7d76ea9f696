import numpy as np, torch, onnxruntime as ort
from tokenizers import Tokenizer
from bert import Bert, load_from_onnx
torch.set_num_threads(2)
tok = Tokenizer.from_file('/tmp/exp/tokenizer.json'); tok.enable_padding(pad_id=0, pad_token='[PAD]'); tok.enable_truncation(256)
sents = ["moved to lisbon in may, still no couch lol", "I'm learning the cello, week three and my fingers hurt",
         "my husband and I are expecting our first baby in March", "What is the capital of Peru?",
         "I quit smoking last year and started running marathons, ran the Berlin one in 2019"]
enc = tok.encode_batch(sents)
ids = np.array([e.ids for e in enc], dtype=np.int64); mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
sess = ort.InferenceSession('/tmp/exp/minilm_int8.onnx', providers=['CPUExecutionProvider'])
h_onnx = sess.run(None, {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)})[0]
model = Bert(); load_from_onnx(model, '/tmp/exp/minilm_int8.onnx'); model.eval()
with torch.no_grad():
    h_t = model(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
def pool(h, m):
    w = m[..., None].astype(np.float32); p = (h * w).sum(1) / w.sum(1); return p / np.linalg.norm(p, axis=1, keepdims=True)
a, b = pool(h_onnx, mask), pool(h_t, mask)
cos = (a * b).sum(1)
print('sentence cosine per sentence:', np.round(cos, 6), 'min', cos.min())
m = mask.astype(bool)
tc = (h_onnx[m] * h_t[m]).sum(1) / np.linalg.norm(h_onnx[m], axis=1) / np.linalg.norm(h_t[m], axis=1)
print('token-state cosine min/mean:', tc.min(), tc.mean(), 'max abs diff', np.abs(h_onnx[m]-h_t[m]).max())
torch.save(model.state_dict(), '/tmp/exp/minilm_fp32_from_int8.pt')
