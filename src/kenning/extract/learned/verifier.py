"""The verifier: for each candidate span, whether to keep it (a calibrated probability, the fact's
confidence) and its status (current, ended, negated, plan, past).

Features are read off the parse around the span, never keyed to words of particular sentences: the
class, the span's dependency role and shape, the governing verb's lemma, tense, mood and form, its
negation, auxiliaries and modals, who its subject is (the user or someone else), whether the sentence
asks or supposes, and the words on either side. They are hashed into a fixed-size vector (crc32, the
same on every machine), so inference is a sparse dot product with NumPy; scikit-learn fits the weights
at training time only.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DIM = 1 << 15
STATUSES = ("current", "ended", "negated", "plan", "past")
FIRST_PERSON = frozenset({"i", "we", "me", "us", "my", "our", "mine", "ours", "im", "i'm", "ive", "i've", "id", "i'd",
                          "ill", "i'll"})
WINDOW = 5


def _verb(span):
    """The verb (or copula's head) that governs the span: up the tree from the span's root."""
    tok = span.root
    for _ in range(8):
        if tok.pos_ in ("VERB", "AUX") or tok.head is tok:
            return tok
        tok = tok.head
    return tok


def names(doc, span, cls: str) -> list[str]:
    """The feature names of one candidate (hashed by :func:`vector`)."""
    out = [f"c={cls}", f"len={min(len(span), 6)}", f"dep={span.root.dep_}", f"c|dep={cls}|{span.root.dep_}",
           f"shape0={span[0].shape_[:4]}", f"pos0={span[0].pos_}"]
    if span[0].like_num:
        out.append("num")
    verb = _verb(span)
    lemma = verb.lemma_.lower()
    out += [f"v={lemma}", f"c|v={cls}|{lemma}", f"vpos={verb.pos_}", f"vdep={verb.dep_}"]
    for key in ("Tense", "VerbForm", "Mood", "Aspect"):
        for value in verb.morph.get(key):
            out += [f"{key}={value}", f"c|{key}={cls}|{value}"]
    subject = None
    for child in verb.children:
        low = child.lower_
        if child.dep_ == "neg":
            out += ["neg", f"c|neg={cls}"]
        elif child.dep_ in ("aux", "auxpass"):
            out += [f"aux={child.lemma_.lower()}", f"c|aux={cls}|{child.lemma_.lower()}"]
        elif child.dep_ == "mark":
            out.append(f"mark={low}")
        elif child.dep_ == "advmod":
            out.append(f"adv={low}")
        elif child.dep_ in ("nsubj", "nsubjpass", "expl"):
            subject = child
    if subject is None:
        out.append("subj=none")
    else:
        who = "me" if subject.lower_ in FIRST_PERSON or any(t.lower_ in FIRST_PERSON for t in subject.subtree) \
            else "other"
        out += [f"subj={who}", f"c|subj={cls}|{who}"]
    head = verb.head
    if head is not verb:
        out += [f"h={head.lemma_.lower()}", f"hdep={verb.dep_}"]
    sentence = span.sent
    words = {t.lower_ for t in sentence}
    if sentence.text.rstrip().endswith("?"):
        out += ["question", f"c|question={cls}"]
    if words & {"if", "would", "could", "might", "hypothetically", "imagine"}:
        out.append("suppose")
    if sentence[0].tag_ in ("WDT", "WP", "WRB") or sentence[0].lower_ in ("do", "does", "can", "should", "is", "are"):
        out.append(f"opens={sentence[0].lower_}")
    first_person = any(t.lower_ in FIRST_PERSON for t in sentence)
    out.append(f"fp={first_person}")
    for i in range(1, WINDOW + 1):
        if span.start - i >= 0:
            out.append(f"L{min(i, 3)}={doc[span.start - i].lower_}")
        if span.end - 1 + i < len(doc):
            out.append(f"R{min(i, 3)}={doc[span.end - 1 + i].lower_}")
    if span.start >= 1:
        out.append(f"L1c={doc[span.start - 1].lower_}|{cls}")
    if span.start >= 2:
        out.append(f"L2g={doc[span.start - 2].lower_}_{doc[span.start - 1].lower_}")
    for tok in sentence:
        if tok.lower_ in ("ago", "last", "next", "since", "until", "used", "anymore", "longer", "former", "ex",
                          "tomorrow", "soon", "later", "yesterday", "will", "gonna", "going", "planning", "plan",
                          "hoping", "want", "wants", "quit", "left", "stopped", "gave", "sold", "moved", "died",
                          "passed", "broke", "cancelled", "canceled", "finished", "graduated", "retired", "no",
                          "never", "not", "n't", "was", "were", "had", "did"):
            out.append(f"s={tok.lower_}")
    return out


def vector(features: list[str]) -> dict[int, float]:
    row: dict[int, float] = {}
    for name in features:
        i = zlib.crc32(name.encode()) % DIM
        row[i] = row.get(i, 0.0) + 1.0
    return row


@dataclass
class Verifier:
    """Weights of the keep model (binary) and the status model (one row per status)."""

    keep_w: np.ndarray
    keep_b: float
    status_w: np.ndarray     # (len(STATUSES), DIM)
    status_b: np.ndarray
    calibration: tuple[float, float] = (1.0, 0.0)   # Platt (a, b) over the keep model's logit

    def judge(self, doc, span, cls: str) -> tuple[float, str]:
        """(keep probability, status) of a candidate."""
        row = vector(names(doc, span, cls))
        idx = np.fromiter(row.keys(), dtype=np.int64, count=len(row))
        val = np.fromiter(row.values(), dtype=np.float32, count=len(row))
        a, b = self.calibration
        keep = 1.0 / (1.0 + np.exp(-(a * (float(self.keep_w[idx] @ val) + self.keep_b) + b)))
        scores = self.status_w[:, idx] @ val + self.status_b
        return float(keep), STATUSES[int(np.argmax(scores))]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        keep_idx = np.flatnonzero(self.keep_w)
        status_idx = np.flatnonzero(np.any(self.status_w != 0, axis=0))
        np.savez_compressed(folder / "verifier.npz", keep_idx=keep_idx, keep_w=self.keep_w[keep_idx],
                            keep_b=np.array([self.keep_b]), status_idx=status_idx,
                            status_w=self.status_w[:, status_idx], status_b=self.status_b)
        (folder / "verifier.json").write_text(json.dumps({"dim": DIM, "statuses": STATUSES,
                                                          "calibration": list(self.calibration)}))

    @classmethod
    def load(cls, folder: Path) -> "Verifier":
        meta = json.loads((folder / "verifier.json").read_text())
        if meta["dim"] != DIM or tuple(meta["statuses"]) != STATUSES:
            raise ValueError(f"the verifier in {folder} was trained with other features; train it again")
        data = np.load(folder / "verifier.npz")
        keep_w = np.zeros(DIM, dtype=np.float32)
        keep_w[data["keep_idx"]] = data["keep_w"]
        status_w = np.zeros((len(STATUSES), DIM), dtype=np.float32)
        status_w[:, data["status_idx"]] = data["status_w"]
        return cls(keep_w, float(data["keep_b"][0]), status_w, data["status_b"].astype(np.float32),
                   tuple(meta.get("calibration", (1.0, 0.0))))


def fit(keep_rows: list[dict[int, float]], keep_labels: list[int], status_rows: list[dict[int, float]],
        status_labels: list[str], *, c: float = 1.0, seed: int = 0) -> Verifier:
    """Fit both models with scikit-learn's logistic regression (training only)."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    def matrix(rows):
        data, indices, indptr = [], [], [0]
        for row in rows:
            indices.extend(row.keys())
            data.extend(row.values())
            indptr.append(len(indices))
        return csr_matrix((np.array(data, dtype=np.float32), np.array(indices), np.array(indptr)), shape=(len(rows), DIM))

    keep = LogisticRegression(C=c, max_iter=2000, random_state=seed).fit(matrix(keep_rows), keep_labels)
    y = [STATUSES.index(s) for s in status_labels]
    status = LogisticRegression(C=c, max_iter=2000, random_state=seed).fit(matrix(status_rows), y)
    status_w = np.zeros((len(STATUSES), DIM), dtype=np.float32)
    status_b = np.full(len(STATUSES), -1e4, dtype=np.float32)   # a status never seen is never chosen
    for row, label in enumerate(status.classes_):
        status_w[label] = status.coef_[row if len(status.classes_) > 2 else 0]
        status_b[label] = status.intercept_[row if len(status.classes_) > 2 else 0]
    return Verifier(keep.coef_[0].astype(np.float32), float(keep.intercept_[0]), status_w, status_b)
