"""The verifier: for each candidate span, its class (or none: not a fact about the user), the class's
calibrated probability (the fact's confidence) and its status (current, ended, negated, plan, past).

The recognizer finds spans well but names their class less well (a stay tagged as a home, a child as
someone the user lives with); the class model reads the recognizer's label as one feature among the
span's context and words, and may overrule it. Beside those sparse features it reads two dense ones, the
bundled sentence encoder's contextual vectors of the span and of its governing verb: words never seen in
the corpus ("Haskell", "tacrolimus") still land near the words of their kind.

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
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DIM = 1 << 15
STATUSES = ("current", "ended", "negated", "plan", "past")
FIRST_PERSON = frozenset({"i", "we", "me", "us", "my", "our", "mine", "ours", "im", "i'm", "ive", "i've", "id", "i'd",
                          "ill", "i'll"})
WINDOW = 5
CONTENT_REACH = 40       # tokens either side of a span whose content words it reads (all of a usual sentence)
DENSE = 2 * 384          # the span's and its verb's contextual vectors
DENSE_SCALE = 2.0        # each unit vector scaled so the regulariser weighs it like a handful of sparse features


def governing_verb(span):
    """The verb (or copula's head) that governs the span: up the tree from the span's root."""
    tok = span.root
    for _ in range(8):
        if tok.pos_ in ("VERB", "AUX") or tok.head.i == tok.i:
            return tok
        tok = tok.head
    return tok


def names(doc, span, cls: str) -> list[str]:
    """The feature names of one candidate (hashed by :func:`vector`)."""
    out = [f"c={cls}", f"len={min(len(span), 6)}", f"dep={span.root.dep_}", f"c|dep={cls}|{span.root.dep_}",
           f"shape0={span[0].shape_[:4]}", f"pos0={span[0].pos_}"]
    if span[0].like_num:
        out.append("num")
    verb = governing_verb(span)
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
    if head.i != verb.i:
        out += [f"h={head.lemma_.lower()}", f"hdep={verb.dep_}"]
    sentence = _sentence(span)
    if sentence.question:
        out += ["question", f"c|question={cls}"]
    out += sentence.mood
    for i in range(1, WINDOW + 1):
        if span.start - i >= 0:
            out.append(f"L{min(i, 3)}={doc[span.start - i].lower_}")
        if span.end - 1 + i < len(doc):
            out.append(f"R{min(i, 3)}={doc[span.end - 1 + i].lower_}")
    if span.start >= 1:
        out.append(f"L1c={doc[span.start - 1].lower_}|{cls}")
    if span.start >= 2:
        out.append(f"L2g={doc[span.start - 2].lower_}_{doc[span.start - 1].lower_}")
    out += sentence.cues
    return out


# Words of a sentence that say when or whether (a feature each wherever they stand in it).
CUES = frozenset({"ago", "last", "next", "since", "until", "used", "anymore", "longer", "former", "ex", "tomorrow", "soon",
                  "later", "yesterday", "will", "gonna", "going", "planning", "plan", "hoping", "want", "wants", "quit",
                  "left", "stopped", "gave", "sold", "moved", "died", "passed", "broke", "cancelled", "canceled",
                  "finished", "graduated", "retired", "no", "never", "not", "n't", "was", "were", "had", "did"})


@dataclass(frozen=True)
class _Sentence:
    """What every candidate of one sentence reads from it: read once per sentence (a run-on message of
    thousands of words has hundreds of candidates in one sentence)."""
    question: bool
    mood: list[str]
    cues: list[str]
    positions: list[int]     # token indices of its nouns, verbs, adjectives and names, in order
    lemmas: list[str]        # their lemmas

    def content(self, start: int, end: int) -> list[str]:
        """Lemmas of its content words in [start, end)."""
        return self.lemmas[bisect_left(self.positions, start):bisect_left(self.positions, end)]


def _read(sentence) -> _Sentence:
    words = {t.lower_ for t in sentence}
    mood = ["suppose"] if words & {"if", "would", "could", "might", "hypothetically", "imagine"} else []
    if sentence[0].tag_ in ("WDT", "WP", "WRB") or sentence[0].lower_ in ("do", "does", "can", "should", "is", "are"):
        mood.append(f"opens={sentence[0].lower_}")
    mood.append(f"fp={bool(words & FIRST_PERSON)}")
    content = [(t.i, t.lemma_.lower()) for t in sentence if t.pos_ in ("NOUN", "VERB", "ADJ", "PROPN")]
    return _Sentence(question=sentence.text.rstrip().endswith("?"), mood=mood,
                     cues=[f"s={t.lower_}" for t in sentence if t.lower_ in CUES],
                     positions=[i for i, _ in content], lemmas=[lemma for _, lemma in content])


def _sentence(span) -> _Sentence:
    """The span's sentence, read once per doc (kept in the doc's ``user_data``)."""
    doc = span.doc
    found = doc.user_data.get("kenning.verifier")
    if found is None:
        sents = list(doc.sents)
        found = doc.user_data["kenning.verifier"] = ([s.start for s in sents], sents, {})
    starts, sents, read = found
    k = bisect_right(starts, span.start) - 1
    if k not in read:
        read[k] = _read(sents[k])
    return read[k]


def class_names(doc, span, tagged: str) -> list[str]:
    """The class model's features: the class-free context of :func:`names`, the recognizer's label, the
    span's own words, the words that govern it and the content words of its sentence."""
    out = [n for n in names(doc, span, "?") if not n.startswith(("c=", "c|", "L1c="))]
    verb = governing_verb(span)
    out += [f"t={tagged}", f"t|v={tagged}|{verb.lemma_.lower()}", f"root={span.root.lemma_.lower()}"]
    out += [f"sw={t.lower_}" for t in span]
    tok = span.root
    for level in range(3):
        if tok.head.i == tok.i:
            break
        out.append(f"up{level}={tok.dep_}|{tok.head.lemma_.lower()}")
        tok = tok.head
    for child in span.root.children:
        if child.dep_ in ("poss", "compound", "amod", "prep") and not (span.start <= child.i < span.end):
            out.append(f"kid={child.dep_}|{child.lemma_.lower()}")
    sentence = _sentence(span)
    out += [f"w={lemma}" for lemma in sentence.content(span.start - CONTENT_REACH, span.start)
            + sentence.content(span.end, span.end + CONTENT_REACH)]
    return out


def dense(states, span) -> np.ndarray:
    """The span's and its governing verb's vectors: the mean of the encoder's word pieces under each (see
    ``LocalEmbedder.token_states``), each of unit length times :data:`DENSE_SCALE`."""
    vectors, offsets = states
    out = np.zeros(DENSE, dtype=np.float32)
    verb = governing_verb(span)
    for k, (start, end) in enumerate(((span.start_char, span.end_char), (verb.idx, verb.idx + len(verb)))):
        under = (offsets[:, 0] < end) & (start < offsets[:, 1]) if len(offsets) else np.zeros(0, bool)
        if under.any():
            v = vectors[under].mean(axis=0)
            out[k * 384:(k + 1) * 384] = DENSE_SCALE * v / max(float(np.linalg.norm(v)), 1e-6)
    return out


def vector(features: list[str]) -> dict[int, float]:
    row: dict[int, float] = {}
    for name in features:
        i = zlib.crc32(name.encode()) % DIM
        row[i] = row.get(i, 0.0) + 1.0
    return row


NONE = "none"   # the class model's answer for a span that is no fact about the user


@dataclass
class Verifier:
    """Weights of the class model (one row per label, the vocabulary's classes and ``none``) and the status
    model (one row per status)."""

    labels: tuple[str, ...]
    class_w: np.ndarray      # (len(labels), DIM)
    class_b: np.ndarray
    class_d: np.ndarray      # (len(labels), DENSE)
    status_w: np.ndarray     # (len(STATUSES), DIM)
    status_b: np.ndarray
    status_d: np.ndarray     # (len(STATUSES), DENSE)
    calibration: tuple[float, float] = (1.0, 0.0)   # Platt (a, b) over the chosen class's logit

    def classify(self, doc, span, tagged: str, states, vec: np.ndarray | None = None) -> tuple[str, float]:
        """(class, raw probability) of the likeliest class other than ``none``; ``states`` are the encoder's
        for the doc's text."""
        row = vector(class_names(doc, span, tagged))
        idx = np.fromiter(row.keys(), dtype=np.int64, count=len(row))
        val = np.fromiter(row.values(), dtype=np.float32, count=len(row))
        vec = dense(states, span) if vec is None else vec
        scores = self.class_w[:, idx] @ val + self.class_d @ vec + self.class_b
        scores = np.exp(scores - scores.max())
        probs = scores / scores.sum()
        order = np.argsort(-probs)
        best = int(order[0]) if self.labels[int(order[0])] != NONE else int(order[1])
        return self.labels[best], float(probs[best])

    def calibrated(self, p: float) -> float:
        a, b = self.calibration
        p = min(max(p, 1e-6), 1 - 1e-6)
        return float(1.0 / (1.0 + np.exp(-(a * np.log(p / (1 - p)) + b))))

    def status(self, doc, span, cls: str, states, vec: np.ndarray | None = None) -> str:
        row = vector(names(doc, span, cls))
        idx = np.fromiter(row.keys(), dtype=np.int64, count=len(row))
        val = np.fromiter(row.values(), dtype=np.float32, count=len(row))
        vec = dense(states, span) if vec is None else vec
        scores = self.status_w[:, idx] @ val + self.status_d @ vec + self.status_b
        return STATUSES[int(np.argmax(scores))]

    def judge(self, doc, span, tagged: str, states) -> tuple[str, float, str]:
        """(class, calibrated probability, status) of a candidate span the recognizer tagged ``tagged``."""
        vec = dense(states, span)      # read once, for both models
        cls, p = self.classify(doc, span, tagged, states, vec)
        return cls, self.calibrated(p), self.status(doc, span, cls, states, vec)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        class_idx = np.flatnonzero(np.any(self.class_w != 0, axis=0))
        status_idx = np.flatnonzero(np.any(self.status_w != 0, axis=0))
        class_q, class_scale = _int8(self.class_w[:, class_idx])
        status_q, status_scale = _int8(self.status_w[:, status_idx])
        half = np.float16
        np.savez_compressed(folder / "verifier.npz", class_idx=class_idx.astype(np.int32),
                            class_w=class_q, class_scale=class_scale, class_b=self.class_b,
                            class_d=self.class_d.astype(half), status_idx=status_idx.astype(np.int32),
                            status_w=status_q, status_scale=status_scale, status_b=self.status_b,
                            status_d=self.status_d.astype(half))
        (folder / "verifier.json").write_text(json.dumps({"dim": DIM, "dense": DENSE, "statuses": STATUSES,
                                                          "labels": self.labels,
                                                          "calibration": list(self.calibration)}))

    @classmethod
    def load(cls, folder: Path) -> "Verifier":
        meta = json.loads((folder / "verifier.json").read_text())
        if meta["dim"] != DIM or tuple(meta["statuses"]) != STATUSES or meta.get("dense") != DENSE:
            raise ValueError(f"the verifier in {folder} was trained with other features; train it again")
        data = np.load(folder / "verifier.npz")
        if not {"class_d", "status_d", "class_scale"} <= set(data.files):
            raise ValueError(f"the verifier in {folder} was trained with other features; train it again")
        labels = tuple(meta["labels"])
        class_w = np.zeros((len(labels), DIM), dtype=np.float32)
        class_w[:, data["class_idx"]] = data["class_w"] * data["class_scale"][:, None]
        status_w = np.zeros((len(STATUSES), DIM), dtype=np.float32)
        status_w[:, data["status_idx"]] = data["status_w"] * data["status_scale"][:, None]
        return cls(labels, class_w, data["class_b"].astype(np.float32), data["class_d"].astype(np.float32),
                   status_w, data["status_b"].astype(np.float32), data["status_d"].astype(np.float32),
                   tuple(meta.get("calibration", (1.0, 0.0))))


def _int8(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weights as int8 with one scale per row (a class's weights share a range): a quarter of the
    bytes of float32; the test split's scores move by at most a candidate or two."""
    scale = np.abs(weights).max(axis=1) / 127 if weights.size else np.zeros(len(weights))
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.round(weights / scale[:, None]).astype(np.int8), scale


def _matrix(rows, dense_rows=None):
    from scipy.sparse import csr_matrix, hstack

    data, indices, indptr = [], [], [0]
    for row in rows:
        indices.extend(row.keys())
        data.extend(row.values())
        indptr.append(len(indices))
    sparse = csr_matrix((np.array(data, dtype=np.float32), np.array(indices), np.array(indptr)), shape=(len(rows), DIM))
    return sparse if dense_rows is None else hstack([sparse, csr_matrix(dense_rows)], format="csr")


def _multinomial(rows, labels: list[str], names: tuple[str, ...], c: float, seed: int,
                 dense_rows=None) -> tuple[np.ndarray, np.ndarray]:
    """One weight row per name (the sparse columns, then the dense ones); a name never seen in ``labels`` is
    never chosen."""
    from sklearn.linear_model import LogisticRegression

    y = [names.index(label) for label in labels]
    model = LogisticRegression(C=c, max_iter=3000, random_state=seed).fit(_matrix(rows, dense_rows), y)
    width = DIM + (0 if dense_rows is None else DENSE)
    w = np.zeros((len(names), width), dtype=np.float32)
    b = np.full(len(names), -1e4, dtype=np.float32)
    for row, label in enumerate(model.classes_):
        w[label] = model.coef_[row if len(model.classes_) > 2 else 0]
        b[label] = model.intercept_[row if len(model.classes_) > 2 else 0]
    return w, b


def fit(class_rows: list[dict[int, float]], class_dense: np.ndarray, class_labels: list[str],
        status_rows: list[dict[int, float]], status_dense: np.ndarray, status_labels: list[str], classes: list[str],
        *, c: float = 1.0, seed: int = 0) -> Verifier:
    """Fit both models with scikit-learn's logistic regression (training only)."""
    labels = (*classes, NONE)
    class_w, class_b = _multinomial(class_rows, class_labels, labels, c, seed, class_dense)
    status_w, status_b = _multinomial(status_rows, status_labels, STATUSES, c, seed, status_dense)
    return Verifier(labels, class_w[:, :DIM], class_b, class_w[:, DIM:], status_w[:, :DIM], status_b,
                    status_w[:, DIM:])
