"""The verifier trained on the MiniLM tagger's spans, end to end on the corpus's test split.

Spans come from the cross-fitted run (``train_cf.py``; kept in ``crossfit/``):
- ``oof_train_preds.json``: each training message tagged by a fold tagger that did not see it.
- ``final_cal_preds.json`` and ``final_test_preds.json``: the final tagger's spans on the calibration
  and test splits.

This fits the verifier as ``kenning.extract.learned.train`` does, with the tagger's spans in place of the
spaCy recognizer's: the class model on the candidates and every labelled span, the status model on the
labels, Platt calibration on the calibration split. It then scores the test split with ``train.evaluate``.
Run from the repository root:

    .venv/bin/python bench/experiments/minilm_tagger/verifier_on_tagger.py [FOLDER]
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
from spacy.util import filter_spans

from kenning.extract.learned import corpus, tagger, train, verifier
from kenning.extract.learned.candidates import candidates
from kenning.extract.learned.extractor import LearnedExtractor

EXP = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "crossfit"


def tagged_docs(nlp, items, preds):
    docs = list(nlp.pipe([i.text for i in items], batch_size=64))
    for doc, item in zip(docs, items):
        spans = [doc.char_span(s, e, label=cls, alignment_mode="expand") for s, e, cls in preds.get(item.id, [])]
        doc.ents = filter_spans([s for s in spans if s is not None and len(s)])
    return docs


def _wait_for(path: Path) -> dict:
    """The final tagger's spans, once its run has written them (it may still be training)."""
    while not path.exists():
        time.sleep(20)
    time.sleep(2)
    return json.loads(path.read_text())


def main():
    began = time.perf_counter()
    items = corpus.load(Path("data/corpus"))
    split = {name: [i for i in items if i.split == name] for name in ("train", "calibration", "test")}
    oof = json.loads((EXP / "oof_train_preds.json").read_text())
    nlp = tagger.base_pipeline()
    states = train.encode(split["train"] + split["calibration"] + split["test"])

    rows, dense, labels = [], [], []
    for doc, item in zip(tagged_docs(nlp, split["train"], oof), split["train"]):
        for span, tag in candidates(doc):
            rows.append(verifier.vector(verifier.class_names(doc, span, tag)))
            dense.append(verifier.dense(states[item.text], span))
            labels.append(train.gold_class(item.labels, tag, span.start_char, span.end_char))
    status_rows, status_dense, status_labels = [], [], []
    for doc, item in zip(nlp.pipe([i.text for i in split["train"]], batch_size=64), split["train"]):
        for label in item.labels:
            span = doc.char_span(label.start, label.end, alignment_mode="expand")
            if span is None or not len(span):
                continue
            vec = verifier.dense(states[item.text], span)
            rows.append(verifier.vector(verifier.class_names(doc, span, "?")))
            dense.append(vec)
            labels.append(label.cls)
            status_rows.append(verifier.vector(verifier.names(doc, span, label.cls)))
            status_dense.append(vec)
            status_labels.append(label.status)
    model = verifier.fit(rows, np.array(dense), labels, status_rows, np.array(status_dense), status_labels,
                         corpus.classes())
    cal, test = (_wait_for(EXP / f"final_{name}_preds.json") for name in ("cal", "test"))
    raw, truth = [], []
    for doc, item in zip(tagged_docs(nlp, split["calibration"], cal), split["calibration"]):
        for span, tag in candidates(doc):
            cls, p = model.classify(doc, span, tag, states[item.text])
            raw.append(p)
            truth.append(int(train.gold_class(item.labels, cls, span.start_char, span.end_char) == cls))
    model.calibration = train.platt(np.array(raw), np.array(truth))

    extractor = LearnedExtractor()          # its thresholds and overlap rule, with this verifier
    extractor.verifier = model
    docs = {item.id: doc for doc, item in zip(tagged_docs(nlp, split["test"], test), split["test"])}
    ids = {item.text: item.id for item in split["test"]}

    def spans(text):
        kept = next(extractor._judged([docs[ids[text]]]))[1]
        return [(e.start_char, e.end_char, cls, status, p) for e, cls, status, p in kept]

    out = {"tagger+retrained verifier": train.evaluate(spans, split["test"])["overall"],
           "spaCy recognizer+shipped verifier": train.evaluate(LearnedExtractor().spans, split["test"])["overall"]}
    curve = []
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        extractor.threshold = threshold
        o = train.evaluate(spans, split["test"])["overall"]
        curve.append((threshold, o["precision"], o["recall"]))
    out["curve (threshold, P, R)"] = curve
    out["seconds"] = round(time.perf_counter() - began)
    print(json.dumps(out, indent=1))
    (Path(__file__).resolve().parent / "verifier_on_tagger.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
