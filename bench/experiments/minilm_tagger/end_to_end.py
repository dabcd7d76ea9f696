"""End to end on the corpus's test split: the shipped verifier (trained on the spaCy recognizer's spans)
over the spaCy recognizer's spans, then over the fine-tuned MiniLM tagger's (tagger_test_preds.json).
Run from the repository root: .venv/bin/python bench/experiments/minilm_tagger/end_to_end.py"""
import json
from pathlib import Path

from spacy.util import filter_spans

from kenning.extract.learned import corpus
from kenning.extract.learned.extractor import LearnedExtractor
from kenning.extract.learned.train import evaluate

HERE = Path(__file__).resolve().parent
preds = json.loads((HERE / "tagger_test_preds.json").read_text())
extractor = LearnedExtractor()
items = [i for i in corpus.load(Path("data/corpus")) if i.split == "test"]
ids = {i.text: i.id for i in items}


def with_tagger(text: str):
    doc = extractor._nlp(text)
    spans = [doc.char_span(s, e, label=cls, alignment_mode="expand") for s, e, cls in preds[ids[text]]]
    doc.ents = filter_spans([s for s in spans if s is not None])
    kept = next(extractor._judged([doc]))[1]
    return [(e.start_char, e.end_char, cls, status, p) for e, cls, status, p in kept]


print("spaCy recognizer + verifier:", evaluate(extractor.spans, items)["overall"])
print("MiniLM tagger   + verifier:", evaluate(with_tagger, items)["overall"])
