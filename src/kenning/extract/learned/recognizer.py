"""The candidate stage: the bundled encoder fine-tuned as a token tagger whose tags are the vocabulary's
classes (the tagged words are a fact's object), run as int8 ONNX on onnxruntime.

Trained by :mod:`.recognizer_train` (PyTorch, a training-only extra). It reads word pieces from the
bundled model's own tokenizer; a message longer than the encoder was trained on (:data:`MAX_PIECES`) is
tagged in windows that end at a sentence's start where one falls inside, so every word is read in some
context and the cost stays linear in the text.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import threading
from pathlib import Path

import numpy as np

from ...errors import ConfigError

MAX_PIECES = 128        # word pieces per window, [CLS] and [SEP] included: the length it was trained on
BATCH = 32


def tag_names(classes: list[str]) -> list[str]:
    """The tagger's output labels: ``O``, then ``B-`` and ``I-`` of each class."""
    return ["O"] + [f"{p}-{c}" for c in classes for p in ("B", "I")]


def tokenizer():
    """The bundled model's tokenizer, neither padding nor truncating (windows are cut here)."""
    from tokenizers import Tokenizer

    from ...embed.local import default_model_files

    tok = Tokenizer.from_file(str(default_model_files()[1]))
    tok.no_padding()
    tok.no_truncation()
    return tok


def decode(tags: list[int], offsets: list[tuple[int, int]], names: list[str]) -> list[tuple[int, int, str]]:
    """Runs of B/I tags as (start, end, class) character spans; an ``I`` of another class starts a span."""
    spans: list[list] = []
    current = None
    for tag, (start, end) in zip(tags, offsets):
        name = names[tag]
        if name == "O":
            current = None
            continue
        prefix, cls = name.split("-", 1)
        if current is not None and prefix == "I" and cls == current[2]:
            current[1] = end
        else:
            current = [start, end, cls]
            spans.append(current)
    return [(s, e, c) for s, e, c in spans]


def windows(count: int, starts: list[int], breaks: list[int], size: int = MAX_PIECES - 2) -> list[tuple[int, int]]:
    """[from, to) piece ranges of at most ``size`` pieces covering ``count`` pieces; a window ends before
    the last piece inside it that begins a sentence (``starts``: each piece's first character;
    ``breaks``: the sentences' first characters)."""
    breaks_at = set(breaks)
    out, begin = [], 0
    while begin < count:
        end = min(begin + size, count)
        if end < count:
            end = max((k for k in range(begin + 1, end + 1) if starts[k] in breaks_at), default=end)
        out.append((begin, end))
        begin = end
    return out


class Recognizer:
    """Tags texts with the vocabulary's classes; loaded once per process and shared (it only reads)."""

    def __init__(self, folder: Path, threads: int = 1):
        meta_file, model = folder / "recognizer.json", folder / "recognizer.onnx"
        if not meta_file.is_file() or not model.is_file():
            raise ConfigError(f"no trained recognizer in {folder}: run python -m kenning.extract.learned.train")
        meta = json.loads(meta_file.read_text())
        digest = hashlib.sha256(model.read_bytes()).hexdigest()
        if digest != meta.get("sha256"):
            raise ConfigError(f"{model} has sha256 {digest}, expected {meta.get('sha256')}: train it again")
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.classes = list(meta["classes"])
        self.names = tag_names(self.classes)
        self._session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer()
        self._cls, self._sep = self._tokenizer.token_to_id("[CLS]"), self._tokenizer.token_to_id("[SEP]")
        self._lock = threading.Lock()

    def spans(self, texts: list[str], sentence_starts: list[list[int]] | None = None) -> list[list[tuple[int, int, str]]]:
        """(start, end, class) spans of each text. ``sentence_starts``: each text's sentence offsets, where
        a long text's windows may end."""
        encodings = self._tokenizer.encode_batch(texts)
        jobs = []      # (text index, piece ids, character offsets)
        for n, enc in enumerate(encodings):
            ids, offsets = enc.ids[1:-1], enc.offsets[1:-1]
            breaks = sorted(sentence_starts[n]) if sentence_starts else []
            for begin, end in windows(len(ids), [o[0] for o in offsets], breaks):
                jobs.append((n, ids[begin:end], offsets[begin:end]))
        out: list[list] = [[] for _ in texts]
        order = sorted(range(len(jobs)), key=lambda j: len(jobs[j][1]))
        for s in range(0, len(order), BATCH):
            group = [jobs[j] for j in order[s:s + BATCH]]
            width = max(len(g[1]) for g in group) + 2
            ids = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for row, (_, pieces, _) in enumerate(group):
                ids[row, :len(pieces) + 2] = [self._cls, *pieces, self._sep]
                mask[row, :len(pieces) + 2] = 1
            with self._lock:
                logits = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            tags = logits.argmax(-1)
            for row, (n, pieces, offsets) in enumerate(group):
                out[n] += decode(tags[row, 1:len(pieces) + 1].tolist(), offsets, self.names)
        return [sorted(s) for s in out]

    def tag(self, docs) -> list:
        """The docs with their ``ents`` set to the recognizer's spans (widened to whole tokens; of
        overlapping spans the longest stays)."""
        from spacy.util import filter_spans

        docs = list(docs)
        found = self.spans([d.text for d in docs], [[s.start_char for s in d.sents] for d in docs])
        for doc, spans in zip(docs, found):
            made = (doc.char_span(s, e, label=c, alignment_mode="expand") for s, e, c in spans)
            doc.ents = filter_spans([m for m in made if m is not None and len(m)])
        return docs
