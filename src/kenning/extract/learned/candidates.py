"""Candidate spans: the recognizer's, and the phrases of the parse it missed.

The recognizer finds most labelled objects on messages like its corpus and fewer on others;
the phrases of the parse (noun phrases without their article or possessive, conjuncts, runs of proper
nouns, numbers, adjectives that describe the subject, verb phrases headed by a gerund or an infinitive)
hold most of the rest. Every
candidate goes to the verifier, which was trained on both kinds and answers ``none`` for the many that
state nothing; a parse phrase carries the recognizer label :data:`UNTAGGED`.
"""
from __future__ import annotations

from pathlib import Path

UNTAGGED = "-"
# Words that head no fact of their own: pronouns and placeholders.
EMPTY = frozenset({"i", "me", "we", "us", "you", "it", "they", "them", "he", "she", "him", "her", "this", "that",
                   "these", "those", "what", "something", "anything", "everything", "nothing", "one", "who",
                   "which", "someone", "anyone", "everyone", "lot", "bit", "thing", "things", "stuff"})
MAX_TOKENS = 8


def pipeline():
    """``en_core_web_sm`` as the parse extractor loads it (offline, checked), in a pipeline of our own,
    without its entity recognizer: the recognizer's spans take ``doc.ents`` (the types come from the
    vocabulary)."""
    import spacy

    from ..parse import nlp as parse_nlp

    return spacy.load(Path(parse_nlp.load().path), exclude=["ner"])


def _trimmed(doc, tokens):
    """The tokens' span without a leading article, possessive or pronoun; None if nothing is left."""
    tokens = [t for t in tokens if not (t.dep_ in ("det", "poss", "predet") or t.tag_ in ("PRP$", "DT", "PRP"))]
    if not tokens or all(t.lower_ in EMPTY or t.is_punct for t in tokens):
        return None
    start, end = tokens[0].i, tokens[-1].i + 1
    while end > start and (doc[end - 1].is_punct or doc[end - 1].is_space):
        end -= 1
    return doc[start:end] if end - start <= MAX_TOKENS and end > start else None


def parse_phrases(doc) -> list:
    """Spans of the parse that may be a fact's object."""
    out = []
    for chunk in doc.noun_chunks:
        span = _trimmed(doc, list(chunk))
        if span is not None:
            out.append(span)
    for tok in doc:
        if tok.like_num or (tok.pos_ == "ADJ" and tok.dep_ in ("acomp", "attr", "oprd")):
            out.append(doc[tok.i:tok.i + 1])
        if tok.dep_ == "conj" and tok.pos_ in ("NOUN", "PROPN", "ADJ", "NUM"):   # "Portuguese and a little Japanese"
            span = _trimmed(doc, [t for t in tok.subtree if t.i <= tok.i])
            if span is not None:
                out.append(span)
        if tok.pos_ == "PROPN" and (tok.i == 0 or doc[tok.i - 1].pos_ != "PROPN"):       # a name the chunker split
            end = tok.i + 1
            while end < len(doc) and doc[end].pos_ == "PROPN":
                end += 1
            out.append(doc[tok.i:end])
        if tok.pos_ == "VERB" and (tok.tag_ == "VBG" or tok.dep_ in ("xcomp", "pcomp")):
            right = [c for c in tok.rights if c.dep_ in ("dobj", "prt", "prep", "advmod", "attr")]
            end = max([tok.i] + [max(x.i for x in c.subtree) for c in right])
            span = _trimmed(doc, list(doc[tok.i:end + 1]))
            if span is not None:
                out.append(span)
    seen, unique = set(), []
    for span in out:
        if (span.start, span.end) not in seen:
            seen.add((span.start, span.end))
            unique.append(span)
    return unique


def candidates(doc) -> list[tuple[object, str]]:
    """(span, recognizer label) for the recognizer's spans, then every parse phrase that overlaps none of
    them (:data:`UNTAGGED`)."""
    out = [(ent, ent.label_) for ent in doc.ents]
    for span in parse_phrases(doc):
        if not any(span.start < e.end and e.start < span.end for e in doc.ents):
            out.append((span, UNTAGGED))
    return out


def overlap(a, b) -> float:
    """Token overlap of two spans over their union (0 when apart)."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    return max(inter, 0) / (max(a[1], b[1]) - min(a[0], b[0]))
