"""The learned extractor (issue 32): its corpus, its verifier, and the shipped model scored
on the corpus's test split, class by class, against the figures recorded when it was trained."""
from __future__ import annotations

import json
import math
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from kenning.extract.learned import corpus, verifier
from kenning.extract.learned.extractor import MODEL, LearnedExtractor
from kenning.extract.learned.train import evaluate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "corpus"


@pytest.fixture(scope="module")
def items():
    return corpus.load(CORPUS)


@pytest.fixture(scope="module")
def extractor():
    return LearnedExtractor()


def test_the_corpus_is_whole_and_every_class_is_taught(items):
    assert len(items) >= 4_000
    counts = Counter(label.cls for item in items for label in item.labels)
    assert set(counts) == set(corpus.classes()), set(corpus.classes()) - set(counts)
    assert min(counts.values()) >= 5, counts.most_common()[-5:]
    assert sum(1 for i in items if not i.labels) / len(items) > 0.1          # messages with nothing durable
    assert len({i.unit for i in items if "." in i.id}) >= 500                  # multi-turn sequences
    statuses = Counter(label.status for item in items for label in item.labels)
    assert set(statuses) == set(corpus.STATUSES)


def test_splits_are_stable_and_a_sequence_stays_in_one(items):
    assert corpus.split_of("w1-0001") == corpus.split_of("w1-0001")
    assert [corpus.split_of(f"x{i}") for i in range(8)] == [corpus.split_of(f"x{i}") for i in range(8)]
    by_unit: dict[str, set[str]] = {}
    for item in items:
        by_unit.setdefault(item.unit, set()).add(item.split)
    assert all(len(s) == 1 for s in by_unit.values())
    shares = Counter(i.split for i in items)
    assert 0.1 < shares["test"] / len(items) < 0.2


def test_a_label_outside_its_text_is_refused(tmp_path):
    from kenning import InputError

    (tmp_path / "w9").mkdir()
    (tmp_path / "w9" / "m.jsonl").write_text(json.dumps(
        {"id": "w9-1", "text": "I live in Oslo", "facts": [{"class": "lives_in", "object": "Bergen",
                                                             "status": "current", "time": None}]}) + "\n")
    with pytest.raises(InputError, match="not in the text"):
        corpus.load(tmp_path)


def test_the_verifier_saves_and_loads_what_it_learned(tmp_path):
    rows = [verifier.vector(["c=a", f"w={i % 3}"]) for i in range(30)]
    labels = [("lives_in", "age", verifier.NONE)[i % 3] for i in range(30)]
    statuses = [("current", "ended", "plan")[i % 3] for i in range(30)]
    dense = np.random.default_rng(0).normal(size=(30, verifier.DENSE)).astype(np.float32)
    fitted = verifier.fit(rows, dense, labels, rows, dense, statuses, ["lives_in", "age", "pet"])
    fitted.save(tmp_path)
    again = verifier.Verifier.load(tmp_path)

    assert again.labels == ("lives_in", "age", "pet", verifier.NONE)
    for saved, kept in ((again.class_w, fitted.class_w), (again.status_w, fitted.status_w)):   # int8, a scale a row
        step = np.abs(kept).max(axis=1, keepdims=True) / 127
        assert np.all(np.abs(saved - kept) <= step / 2 + 1e-6) and np.any(saved != 0)
    close = {"rtol": 1e-3, "atol": 1e-4}     # the dense weights are kept in half precision
    assert np.allclose(again.class_d, fitted.class_d, **close) and np.any(again.class_d != 0)
    assert np.allclose(again.status_d, fitted.status_d, **close)
    assert again.class_b[2] < -1e3      # a class never seen is never chosen


def test_a_verifier_trained_without_the_dense_features_is_refused(tmp_path):
    rows = [verifier.vector([f"w={i % 2}"]) for i in range(10)]
    none = np.zeros((10, verifier.DENSE), np.float32)
    fitted = verifier.fit(rows, none, ["age", verifier.NONE] * 5, rows, none, ["current", "ended"] * 5, ["age"])
    fitted.save(tmp_path)
    meta = json.loads((tmp_path / "verifier.json").read_text())
    (tmp_path / "verifier.json").write_text(json.dumps({**meta, "dense": 0}))
    with pytest.raises(ValueError, match="train it again"):
        verifier.Verifier.load(tmp_path)


def test_parse_phrases_the_recognizer_missed_become_candidates(extractor):
    from kenning.extract.learned.candidates import UNTAGGED, candidates

    (doc,) = extractor.recognizer.tag([extractor._nlp("My sister and I adopted an old greyhound called Biscuit, "
                                                      "and I'm learning to sail.")])
    found = {span.text: tagged for span, tagged in candidates(doc)}
    assert "old greyhound" in found or "greyhound" in found
    assert not any(text.lower() in ("i", "my", "an") for text in found)      # never a bare pronoun or article
    spans = [span for span, _ in candidates(doc)]
    tagged = [s for s, t in candidates(doc) if t != UNTAGGED]
    assert all(not (u.start < t.end and t.start < u.end) for u, tu in candidates(doc) if tu == UNTAGGED
               for t in tagged)                                                # a parse phrase never doubles one
    assert len(spans) == len({(s.start, s.end) for s in spans})


def test_the_shipped_model_holds_its_recorded_scores_class_by_class(items, extractor):
    """The regression guard: on the test split (which training never saw), overall precision and recall may
    not fall more than 0.01 below what was recorded when the shipped weights were trained, on the writers'
    files they were trained with; nor may any class's fall by more than 0.02 or one standard error of its own
    sample, whichever is more.

    The recognizer is int8 (MatMulInteger), and onnxruntime picks its integer kernels by CPU: the same
    weights on an Intel Xeon with AVX-512 VNNI and AMX scored 0.810/0.621 overall against the 0.808/0.624
    recorded on the AMD EPYC they were trained on, and nine classes moved by one to four items each (a class
    of 5 facts, one item: 0.2). A flat 0.02 per class read that as nine regressions."""
    meta = json.loads((MODEL / "training.json").read_text())
    recorded = meta["scores"]["test"]
    trained_on = corpus.load(CORPUS, writers=meta["writers"])      # writers added since wait for the next training
    now = evaluate(extractor.spans, [i for i in trained_on if i.split == "test"])
    overall = {k: (now["overall"][k], recorded["overall"][k]) for k in ("precision", "recall")
               if now["overall"][k] < recorded["overall"][k] - 0.01}
    assert not overall, overall

    def worse(cls: str, was: dict, key: str) -> bool:
        if was[key] is None:
            return False
        n = was["facts"] if key == "recall" else was["found"]
        sampled = math.sqrt(max(was[key] * (1 - was[key]), 1 / n) / n) if n else 1.0   # a proportion's SE
        return (now["classes"][cls][key] or 0.0) < was[key] - max(0.02, sampled)

    fell = {cls: (now["classes"][cls], was) for cls, was in recorded["classes"].items()
            if cls in now["classes"] and (worse(cls, was, "recall") or worse(cls, was, "precision"))}
    assert not fell, fell


def test_candidates_carry_the_vocabulary(extractor):
    at = datetime(2026, 6, 1, tzinfo=timezone.utc)
    out = extractor.extract_many(["I live in Lisbon with my wife Ana and our dog Rufus.", "What is 5 miles in km?"],
                                 at=[at, at])
    assert out[1] == []
    for cand in out[0]:
        assert cand.subject == "user" and 0.0 < cand.confidence <= 1.0
        assert cand.object in "I live in Lisbon with my wife Ana and our dog Rufus."



def _vocabulary_cases():
    from kenning.extract.learned.extractor import UNSUPPORTED
    from kenning.vocabulary import load

    return [pytest.param(row, *case, id=f"{row.cls}:{case[0][:40]}") for row in load().rows
            if row.cls not in UNSUPPORTED for case in row.cases()]


@pytest.mark.parametrize("row,sentence,obj,status", _vocabulary_cases())
def test_each_vocabulary_example_gives_its_fact(extractor, row, sentence, obj, status):
    """Every example sentence of the vocabulary is a case of its own: the row's predicate (or an alias; an
    open row's: any verb), the object and the status (matching as ``bench/vocabulary_examples.py`` does)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from vocabulary_examples import AT, passes

    found = extractor.extract(sentence, at=AT)
    assert passes(row, found, obj, status), [f"{c.predicate} · {c.object}{' (ends)' if c.ends else ''}" for c in found]


@pytest.mark.parametrize("text,obj,predicate", [
    ("My mum Rosa lives in Leeds.", "Leeds", "mum rosa lives in"),
    ("my husband is a teacher", "teacher", "husband is"),
    ("My dad has early stage Parkinson's.", "early stage Parkinson's", "dad has"),
    ("I live in Leeds.", "Leeds", None),                       # about the user: no relative
])
def test_a_relatives_detail_names_the_relative_then_the_verb(extractor, text, obj, predicate):
    from kenning.extract.learned.extractor import relative_predicate
    from kenning.predicates import relation_detail

    doc = extractor._nlp(text)
    start = text.index(obj)
    span = doc.char_span(start, start + len(obj))
    assert relative_predicate(span, "current") == predicate
    if predicate is not None:
        assert relation_detail(predicate) is not None      # the write path reads it as the relative's


@pytest.mark.parametrize("obj,kept", [
    ("wheelchair user (spinal injury", "wheelchair user"),      # an unclosed aside is cut
    ("practice.", "practice"),
    ("my", ""), ("the", ""),                                    # names nothing: no fact
    ("Rubik's cube", "Rubik's cube"),
])
def test_an_object_keeps_only_what_names_something(obj, kept):
    from kenning.extract.learned.extractor import _clean

    assert _clean(obj) == kept


@pytest.mark.parametrize("text,cut,mended", [
    ("We are expecting our first baby in June.", "our first", "our first baby"),        # a modifier takes its noun
    ("I work at the Royal Hospital for Children and Young People now.", "Royal Hospital for",
     "Royal Hospital for Children and Young People"),                                    # a preposition its object
    ("I love hiking and", "hiking and", "hiking"),                                       # a dangling "and" goes
    ("I have two cats.", "two cats", "two cats"),                                        # a whole phrase stays
])
def test_a_span_that_stops_short_is_mended(extractor, text, cut, mended):
    from kenning.extract.learned.extractor import whole

    doc = extractor._nlp(text)
    start = text.index(cut)
    assert whole(doc.char_span(start, start + len(cut))).text == mended


def test_an_open_fact_never_stores_its_rows_placeholder(extractor):
    at = datetime(2026, 6, 1, tzinfo=timezone.utc)
    texts = ["I'm a lefty, always have been.", "I collect vintage fountain pens", "lol being left-handed, amirite"]
    for cands in extractor.extract_many(texts, at=[at] * len(texts)):
        for cand in cands:
            assert not cand.predicate.startswith("<") and cand.object.strip()


def test_a_pronouns_fact_keeps_its_pronouns():
    from kenning.extract.learned.extractor import _clean

    assert _clean("they/them") == "they/them" and _clean("she/her") == "she/her"


def test_a_huge_message_is_read_only_so_far(extractor):
    from kenning.extract.learned.extractor import READ_CHARS

    text = "I live in Porto. " * 6_000          # 102,000 characters
    spans = extractor.spans(text)
    assert spans and all(end <= READ_CHARS for _, end, *_ in spans)
    at = datetime(2026, 6, 1, tzinfo=timezone.utc)
    assert [c.object for c in extractor.extract(text, at=at)] == ["Porto"]
