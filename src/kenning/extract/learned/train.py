"""Train the learned extractor from the labelled corpus (deterministic seed; about half an hour on 2 cores;
needs the ``train`` extra, PyTorch included).

    python -m kenning.extract.learned.train [--corpus data/corpus] [--out src/kenning/extract/learned/model]

1. Three recognizers (:mod:`.recognizer_train`) train at once: two, each trained on half of the training
   split, tag the other half; their candidates (right or wrong, as an unseen message would get them), each
   with the class of the label it overlaps or ``none``, are the class model's examples. The third, trained
   on the whole training split, is the one shipped.
2. The status model learns from every labelled fact of the training split.
3. The verifier's class model learns from the fold recognizers' candidates and every labelled span.
4. The chosen class's probability is calibrated (Platt) on the calibration split's candidates, so it can serve as
   the fact's confidence.
5. The test split, which nothing above has seen, is scored per class and written beside the weights.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from . import corpus, recognizer_train, verifier
from .candidates import UNTAGGED, overlap, pipeline
from .candidates import candidates as all_candidates
from .recognizer import Recognizer
from .corpus import Item

MODEL = Path(__file__).resolve().parent / "model"
ROOT = Path(__file__).resolve().parents[4]


def take(gold: list, cls: str, start: int, end: int):
    """The first label of ``gold`` of class ``cls`` overlapping [start, end), removed from ``gold`` (each
    label is found once); None when there is none."""
    match = next((g for g in gold if g.cls == cls and g.start < end and start < g.end), None)
    if match is not None:
        gold.remove(match)
    return match


def candidates(nlp, recognizer, items: list[Item]):
    """(doc, span, the recognizer's label, the item's labels) for every candidate: the recognizer's spans
    and the parse phrases beside them."""
    out = []
    docs = recognizer.tag(nlp.pipe([i.text for i in items], batch_size=64))
    for doc, item in zip(docs, items):
        for span, tagged in all_candidates(doc):
            out.append((doc, span, tagged, item.labels))
    return out


def with_spans(nlp, items: list[Item], found: dict[str, list]) -> list:
    """The items' docs with ``ents`` set to spans found for them beforehand (the fold taggers')."""
    from spacy.util import filter_spans

    docs = list(nlp.pipe([i.text for i in items], batch_size=64))
    for doc, item in zip(docs, items):
        made = (doc.char_span(s, e, label=c, alignment_mode="expand") for s, e, c in found.get(item.id, []))
        doc.ents = filter_spans([m for m in made if m is not None and len(m)])
    return docs


def gold_class(labels, tagged: str, start: int, end: int) -> str:
    """The class of the label the span overlaps (the recognizer's own class when several do), or ``none``.
    A parse phrase (``tagged`` is UNTAGGED) must cover at least half of the label's and its own characters
    together: a phrase that holds the object among other words would store those words too."""
    over = [g for g in labels if g.start < end and start < g.end]
    if tagged == UNTAGGED:
        over = [g for g in over if overlap((g.start, g.end), (start, end)) >= 0.5]
    if not over:
        return verifier.NONE
    return tagged if any(g.cls == tagged for g in over) else max(over, key=lambda g: min(g.end, end) - max(g.start, start)).cls


def encode(items: list[Item]) -> dict[str, tuple]:
    """The bundled encoder's token states of each item's text (what the class model's dense features read)."""
    from ...embed.local import LocalEmbedder

    texts = sorted({i.text for i in items})
    return dict(zip(texts, LocalEmbedder().token_states(texts)))


def gold_rows(nlp, items: list[Item], classify: bool = False, states: dict | None = None):
    """Feature rows of every labelled fact (its span as the recognizer would have found it) and their dense
    features (from ``states``), with its status; with ``classify``, the class model's rows (no recognizer's
    label) with its class."""
    rows, labels, dense = [], [], []
    docs = list(nlp.pipe([i.text for i in items], batch_size=64))
    for doc, item in zip(docs, items):
        for label in item.labels:
            span = doc.char_span(label.start, label.end, alignment_mode="expand")
            if span is None or not len(span):
                continue
            if classify:
                rows.append(verifier.vector(verifier.class_names(doc, span, "?")))
                dense.append(verifier.dense(states[item.text], span))
                labels.append(label.cls)
            else:
                rows.append(verifier.vector(verifier.names(doc, span, label.cls)))
                dense.append(verifier.dense(states[item.text], span))
                labels.append(label.status)
    return rows, labels, dense


def cache_key(items: list[Item], args) -> str:
    """What the recognizers depend on: the training and calibration messages and labels, and the settings."""
    h = hashlib.sha1()
    for item in items:
        h.update(json.dumps([item.id, item.text, [(l.cls, l.start, l.end) for l in item.labels]]).encode())
    h.update(json.dumps([args.epochs, args.fold_epochs, args.seed, "minilm-bio", recognizer_train.RECIPE]).encode())
    return h.hexdigest()[:16]


def platt(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(a, b) so that sigmoid(a * logit(p) + b) is calibrated on these candidates."""
    from sklearn.linear_model import LogisticRegression

    p = np.clip(scores, 1e-6, 1 - 1e-6)
    logit = np.log(p / (1 - p)).reshape(-1, 1)
    model = LogisticRegression(C=1e6, max_iter=1000).fit(logit, labels)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def evaluate(extract, items: list[Item]) -> dict:
    """Per class and overall: a fact is found when a kept candidate of its class overlaps it; ``status``
    counts those whose status is right too."""
    per = defaultdict(Counter)
    for item in items:
        found = extract(item.text)
        gold = list(item.labels)
        for start, end, cls, status, _ in found:
            match = take(gold, cls, start, end)
            if match is None:
                per[cls]["fp"] += 1
                continue
            per[cls]["tp"] += 1
            per[cls]["status_ok"] += match.status == status
        for g in gold:
            per[g.cls]["fn"] += 1
    total = sum(per.values(), Counter())

    def row(c: Counter) -> dict:
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else None
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else None
        return {"precision": None if p is None else round(p, 3), "recall": None if r is None else round(r, 3),
                "status_accuracy": round(c["status_ok"] / c["tp"], 3) if c["tp"] else None,
                "facts": c["tp"] + c["fn"], "found": c["tp"] + c["fp"]}
    return {"overall": row(total), "classes": {cls: row(c) for cls, c in sorted(per.items())}}


def recognizers(cache: Path, items: list[Item], classes: list[str], args) -> None:
    """Train the three recognizers in ``cache`` at once, one process and one thread each: the fold
    taggers (each trained on one half of the training split, tagging the other) and the shipped one."""
    payload = {"classes": classes, "items": [
        {"id": i.id, "unit": i.unit, "text": i.text, "split": i.split,
         "labels": [{"cls": l.cls, "start": l.start, "end": l.end} for l in i.labels]} for i in items]}
    (cache / "items.json").write_text(json.dumps(payload))
    runs = {"fold0": ["--train-on", "train:1", "--tag", "train:0", "--epochs", str(args.fold_epochs)],
            "fold1": ["--train-on", "train:0", "--tag", "train:1", "--epochs", str(args.fold_epochs)],
            "final": ["--train-on", "train", "--export", "--epochs", str(args.epochs)]}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    procs = {}
    for name, extra in runs.items():
        log = open(cache / f"{name}.log", "w")
        procs[name] = (subprocess.Popen([sys.executable, "-m", "kenning.extract.learned.recognizer_train",
                                         str(cache / "items.json"), str(cache / name), "--seed", str(args.seed),
                                         *extra], stdout=log, stderr=subprocess.STDOUT, env=env), log)
    failed = []
    for name, (proc, log) in procs.items():
        if proc.wait() != 0:
            failed.append(name)
        log.close()
        print(name, (cache / f"{name}.log").read_text().strip().splitlines()[-1:], flush=True)
    if failed:
        raise SystemExit(f"recognizer training failed: {failed}; see {cache}/<name>.log")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "data" / "corpus")
    ap.add_argument("--out", type=Path, default=MODEL)
    ap.add_argument("--epochs", type=int, default=5, help="the shipped recognizer's epochs")
    ap.add_argument("--fold-epochs", type=int, default=5, help="the fold recognizers' epochs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=ROOT / "build" / "extractor-cache",
                    help="the recognizers and their spans, kept by a hash of the corpus and settings: fitting the "
                         "verifier again takes minutes")
    ap.add_argument("--c", type=float, default=1.0, help="the verifier's inverse regularisation strength")
    ap.add_argument("--no-gold-rows", dest="gold_rows", action="store_false",
                    help="fit the class model on the recognizers' candidates only")
    ap.add_argument("--score-only", action="store_true", help="score the model in --out again, train nothing")
    args = ap.parse_args(argv)
    if args.score_only:
        previous = args.out / "training.json"
        meta = json.loads(previous.read_text()) if previous.exists() else {}
        return report(args.out, corpus.load(args.corpus), {k: v for k, v in meta.items()
                                                           if k not in ("scores", "precision_recall")})
    began = time.perf_counter()
    items = corpus.load(args.corpus)
    classes = corpus.classes()
    train = [i for i in items if i.split == "train"]
    calibration = [i for i in items if i.split == "calibration"]
    test = [i for i in items if i.split == "test"]
    print(f"corpus: {len(items)} messages ({len(train)} train, {len(calibration)} calibration, {len(test)} test)",
          flush=True)

    key = cache_key(train + calibration, args)
    cache = args.cache / key
    cache.mkdir(parents=True, exist_ok=True)
    final = cache / "final"
    cached = (final / "recognizer.onnx").exists() and all((cache / f"fold{h}" / f"spans-train-{h}.json").exists()
                                                          for h in (0, 1))
    if not cached:
        recognizers(cache, train + calibration, classes, args)
    oof: dict = {}
    for h in (0, 1):
        oof.update(json.loads((cache / f"fold{h}" / f"spans-train-{h}.json").read_text()))
    recognizer = Recognizer(final)
    nlp = pipeline()

    began_encoding = time.perf_counter()
    states = encode(train + calibration)
    print(f"encoded {len(states)} messages in {time.perf_counter() - began_encoding:.0f} s", flush=True)
    class_rows, class_labels, class_dense = [], [], []
    for doc, item in zip(with_spans(nlp, train, oof), train):
        for span, tagged in all_candidates(doc):
            class_rows.append(verifier.vector(verifier.class_names(doc, span, tagged)))
            class_dense.append(verifier.dense(states[item.text], span))
            class_labels.append(gold_class(item.labels, tagged, span.start_char, span.end_char))
    status_rows, status_labels, status_dense = gold_rows(nlp, train, states=states)
    if args.gold_rows:     # every labelled span too, without the recognizer's label: the class from its context
        rows, labels_, dense = gold_rows(nlp, train, classify=True, states=states)
        class_rows += rows
        class_labels += labels_
        class_dense += dense
    model = verifier.fit(class_rows, np.array(class_dense), class_labels, status_rows, np.array(status_dense),
                         status_labels, classes, seed=args.seed, c=args.c)

    raw, truth = [], []
    for doc, span, tagged, gold in candidates(nlp, recognizer, calibration):
        cls, p = model.classify(doc, span, tagged, states[doc.text])
        raw.append(p)
        truth.append(int(gold_class(gold, cls, span.start_char, span.end_char) == cls))
    model.calibration = platt(np.array(raw), np.array(truth))   # over the uncalibrated probabilities

    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("recognizer.onnx", "recognizer.json"):
        shutil.copyfile(final / name, args.out / name)
    model.save(args.out)
    histories = {name: json.loads((cache / name / "history.json").read_text()) for name in ("fold0", "fold1", "final")}
    meta = {"corpus_messages": len(items), "writers": sorted({i.writer for i in items} - {"vocabulary"}),
            "splits": {"train": len(train), "calibration": len(calibration), "test": len(test)},
            "seed": args.seed, "epochs": args.epochs, "fold_epochs": args.fold_epochs, "recognizer": "minilm-bio",
            "c": args.c, "gold_rows": args.gold_rows, "recognizer_history": histories,
            "class_examples": len(class_rows), "status_examples": len(status_rows),
            "seconds": round(time.perf_counter() - began, 1), "recognizers_from_cache": cached}
    return report(args.out, items, meta)


def report(folder: Path, items: list[Item], meta: dict) -> dict:
    """Score the model in ``folder`` on the test and calibration splits, with its precision-recall curve
    over the keep threshold, and write it all to ``training.json`` beside the weights."""
    from .extractor import THRESHOLD, LearnedExtractor

    extractor = LearnedExtractor(folder)
    test = [i for i in items if i.split == "test"]
    scores = {"test": evaluate(extractor.spans, test),
              "calibration": evaluate(extractor.spans, [i for i in items if i.split == "calibration"])}
    curve = []
    for threshold in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        extractor.threshold = threshold
        overall = evaluate(extractor.spans, test)["overall"]
        curve.append({"threshold": threshold, "precision": overall["precision"], "recall": overall["recall"]})
    meta = {**meta, "threshold": THRESHOLD, "scores": scores,
            "precision_recall": curve}
    (folder / "training.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps({"test": scores["test"]["overall"], "curve": curve}, indent=1))
    return meta


if __name__ == "__main__":
    main()
