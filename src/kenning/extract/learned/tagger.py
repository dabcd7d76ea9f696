"""The candidate stage: a spaCy entity recognizer whose labels are the vocabulary's classes (the span is the
fact's object), beside ``en_core_web_sm``'s own components.

It starts from ``en_core_web_sm``'s token layer: the recognizer listens to the shared ``tok2vec`` until
``replace_listeners`` gives it a copy of its own, whose weights are kept through ``initialize`` and then
fine-tuned, so the parser the verifier reads is never changed. Its cost is linear in the text (one
transition-based pass).
"""
from __future__ import annotations

import random
from dataclasses import replace
import time
from pathlib import Path
from typing import Iterable

from .corpus import Item

COMPONENT = "facts"
SPAN = "FACT"     # the one label of a recognizer that finds spans and leaves their class to the verifier
CONFIG = {"model": {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner",
                    "extra_state_tokens": False, "hidden_width": 64, "maxout_pieces": 2, "use_upper": True,
                    "nO": None,
                    "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}}}


def base_pipeline():
    """``en_core_web_sm`` as the parse extractor loads it (offline, checked), in a pipeline of our own,
    without its entity recognizer: a recognizer treats entities already set as fixed, and the facts'
    spans overlap them (the types come from the vocabulary instead)."""
    import spacy

    from ..parse import nlp as parse_nlp

    return spacy.load(Path(parse_nlp.load().path), exclude=["ner"])


def add_tagger(nlp, labels: Iterable[str], hidden_width: int = 64):
    """The recognizer, with its own copy of the pipeline's token layer."""
    config = {"model": {**CONFIG["model"], "hidden_width": hidden_width}}
    facts = nlp.add_pipe("ner", name=COMPONENT, config=config)
    nlp.replace_listeners("tok2vec", COMPONENT, ["model.tok2vec"])
    for label in labels:
        facts.add_label(label)
    return facts


def spans(doc, item: Item) -> list[tuple[int, int, str]]:
    """The item's labels as token-aligned character spans (widened to whole tokens), overlaps dropped:
    the longer label keeps its place."""
    out = []
    for label in sorted(item.labels, key=lambda l: -(l.end - l.start)):
        span = doc.char_span(label.start, label.end, alignment_mode="expand")
        if span is None or not span.text.strip():
            continue
        if any(span.start_char < e and s < span.end_char for s, e, _ in out):
            continue
        out.append((span.start_char, span.end_char, label.cls))
    return sorted(out)


def as_spans(items: list[Item]) -> list[Item]:
    """The items with every label's class replaced by :data:`SPAN`."""
    return [replace(item, labels=[replace(label, cls=SPAN) for label in item.labels]) for item in items]


def examples(nlp, items: list[Item]):
    from spacy.training import Example

    out = []
    for item in items:
        doc = nlp.make_doc(item.text)
        out.append(Example.from_dict(doc, {"entities": spans(doc, item)}))
    return out


def train(nlp, items: list[Item], labels: list[str], *, epochs: int = 20, seed: int = 0, dev: list[Item] | None = None,
          log=print, hidden_width: int = 64, drop: float = 0.2, batch: int = 16) -> dict:
    """Fine-tune the recognizer on ``items``; with ``dev``, keep the epoch whose dev F1 was best."""
    import spacy
    from spacy.util import minibatch

    spacy.util.fix_random_seed(seed)
    rng = random.Random(seed)
    facts = add_tagger(nlp, labels, hidden_width)
    train_examples = examples(nlp, items)
    token_layer = facts.model.get_ref("tok2vec").to_bytes()
    facts.initialize(lambda: train_examples, nlp=nlp)
    facts.model.get_ref("tok2vec").from_bytes(token_layer)   # initialize re-draws it: keep en_core_web_sm's
    optimizer = nlp.create_optimizer()
    best, best_bytes, history = -1.0, None, []
    for epoch in range(epochs):
        began = time.perf_counter()
        rng.shuffle(train_examples)
        losses: dict = {}
        with nlp.select_pipes(enable=[COMPONENT]):
            for group in minibatch(train_examples, size=batch):
                nlp.update(group, sgd=optimizer, drop=drop, losses=losses)
        row = {"epoch": epoch + 1, "loss": round(float(losses.get(COMPONENT, 0.0)), 1),
               "seconds": round(time.perf_counter() - began, 1)}
        if dev:
            row.update(score(nlp, dev))
            if row["f"] > best:
                best, best_bytes = row["f"], facts.to_bytes()
        history.append(row)
        log(row)
    if best_bytes is not None:
        facts.from_bytes(best_bytes)
    return {"history": history, "best_f": best}


def predict(nlp, texts: list[str]):
    """The docs with their ``facts`` spans (and the parse) for ``texts``."""
    return list(nlp.pipe(texts, batch_size=64))


def score(nlp, items: list[Item]) -> dict:
    """Span-and-class precision and recall of the recognizer (a prediction overlapping a gold span of its class
    counts as found)."""
    with nlp.select_pipes(enable=[COMPONENT]):   # the recognizer alone: it needs no parse
        docs = predict(nlp, [i.text for i in items])
    tp = fp = fn = 0
    for doc, item in zip(docs, items):
        gold = spans(doc, item)
        found = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
        hit = set()
        for s, e, c in found:
            match = next((g for g in gold if g[2] == c and g[0] < e and s < g[1] and g not in hit), None)
            if match:
                hit.add(match)
                tp += 1
            else:
                fp += 1
        fn += len(gold) - len(hit)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"p": round(p, 3), "r": round(r, 3), "f": round(2 * p * r / (p + r), 3) if p + r else 0.0}
