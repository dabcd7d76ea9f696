"""The learned extractor: the recognizer's spans, judged by the verifier, as candidates of the vocabulary.

A span the verifier keeps becomes a candidate with its class's predicate, kind and object type (from
``kenning/vocabulary/facts.toml``) and the verifier's calibrated probability as its confidence; its status
decides the rest: ``ended`` ends the live fact it names, ``plan`` is an intention dated by the time
phrase of its sentence, ``past`` an event (or, for a state, one that is over), ``negated`` is not stored.
"""
from __future__ import annotations

import functools
import re
from datetime import datetime
from pathlib import Path

import numpy as np

from ... import predicates as preds
from ...embed.local import LocalEmbedder
from ...vocabulary import Row
from ...vocabulary import load as load_vocabulary
from .. import dates
from ..base import Candidate, Extractor
from .candidates import candidates, pipeline
from .corpus import VOCABULARY
from .recognizer import Recognizer
from .verifier import Verifier, governing_verb

MODEL = Path(__file__).resolve().parent / "model"
THRESHOLD = 0.5          # candidates the verifier gives less are dropped
# A candidate for a one-value slot replaces the live value: a wrong one costs a right fact, so it must be surer.
ONE_VALUE_THRESHOLD = 0.7
# Classes whose facts need more than the span to state; none left (a relative's detail reads its relation
# from the parse: relative_predicate).
UNSUPPORTED: frozenset[str] = frozenset()
# Characters of a message the trained extractor reads: a second or two of work on one core. Past it the
# rules alone read on (they stop at the write path's time budget), so one huge message cannot hold a worker.
READ_CHARS = 10_000
LONG = 150      # tokens: a longer message is encoded sentence by sentence (the encoder reads 256 word pieces)
EVENT_KINDS = frozenset({"event", "plan"})
# Words that name nothing on their own (a pronoun of a pronouns fact, "they/them", does).
FUNCTION_WORDS = frozenset({"a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "mine", "ours", "of",
                            "and", "or", "to", "in", "on", "at", "for", "with", "s", "i", "me", "we", "us", "you",
                            "it", "this", "that"})


def head(text: str) -> str:
    """The part of ``text`` the trained extractor reads: all of it, or its first :data:`READ_CHARS`
    characters cut at the last whitespace before them."""
    if len(text) <= READ_CHARS:
        return text
    cut = text.rfind(" ", READ_CHARS // 2, READ_CHARS)
    return text[:cut if cut > 0 else READ_CHARS]


def vocabulary(path: Path = VOCABULARY) -> dict[str, Row]:
    return {row.cls: row for row in load_vocabulary(path).rows}


def _stamp(folder: Path) -> tuple:
    """When the weights were written: weights trained again in place are loaded again."""
    return tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.iterdir()) if p.is_file())


@functools.lru_cache(maxsize=1)
def _encoder() -> LocalEmbedder:
    """The bundled model, for extractors made without the write path's: one per process."""
    return LocalEmbedder()


@functools.lru_cache(maxsize=4)
def _load(folder: Path, stamp: tuple):
    """The parse pipeline, the recognizer and the verifier: loaded once per process and folder (a second of
    work and tens of megabytes), shared by every extractor over them, which only read them."""
    return pipeline(), Recognizer(folder), Verifier.load(folder)


class LearnedExtractor(Extractor):
    """Offline, trained on the labelled corpus (see kenning.extract.learned.train)."""

    name = "learned"

    def __init__(self, folder: Path = MODEL, threshold: float = THRESHOLD, encoder: LocalEmbedder | None = None):
        """``encoder``: the bundled embedder the write path uses, so a message is encoded once for both."""
        if not (folder / "recognizer.onnx").is_file() or not (folder / "verifier.npz").is_file():
            from ...errors import ConfigError
            raise ConfigError(f"no trained extractor in {folder}: run python -m kenning.extract.learned.train")
        self.folder, self.threshold = folder, threshold
        self.rows = vocabulary()
        self._nlp, self.recognizer, self.verifier = _load(folder.resolve(), _stamp(folder))
        self.encoder = encoder or _encoder()

    def _states(self, docs) -> list[tuple]:
        """The encoder's token states of each doc; a doc longer than the encoder reads is encoded a
        sentence at a time, with the offsets moved to the doc's."""
        short = [d for d in docs if len(d) <= LONG]
        found = dict(zip((id(d) for d in short), self.encoder.token_states([d.text for d in short])))
        out = []
        for doc in docs:
            if id(doc) in found:
                out.append(found[id(doc)])
                continue
            sents = list(doc.sents)
            parts = self.encoder.token_states([s.text for s in sents])
            out.append((np.concatenate([v for v, _ in parts]) if parts else np.zeros((0, 384), np.float32),
                        np.concatenate([o + s.start_char for (_, o), s in zip(parts, sents)])
                        if parts else np.zeros((0, 2), np.int32)))
        return out

    def _judged(self, docs):
        """Each doc with the candidates the verifier keeps: (span, class, status, confidence), the likeliest
        first; one overlapping a likelier kept one is dropped (one object, one fact)."""
        docs = self.recognizer.tag(docs)
        for doc, states in zip(docs, self._states(docs)):
            judged = []
            for span, tagged in candidates(doc):
                cls, p, status = self.verifier.judge(doc, span, tagged, states)
                judged.append((whole(span), cls, status, p))
            judged.sort(key=lambda j: -j[3])
            kept = []
            for j in judged:
                if j[3] >= self.bar(j[1]) and not any(j[0].start < k[0].end and k[0].start < j[0].end for k in kept):
                    kept.append(j)
            yield doc, kept

    def spans(self, text: str) -> list[tuple[int, int, str, str, float]]:
        """(start, end, class, status, confidence) of the kept candidates (for evaluation)."""
        doc, judged = next(self._judged([self._nlp(head(text))]))
        return [(e.start_char, e.end_char, cls, status, p) for e, cls, status, p in judged]

    def bar(self, cls: str) -> float:
        """The confidence a candidate of ``cls`` needs to be kept."""
        row = self.rows.get(cls)
        return max(self.threshold, ONE_VALUE_THRESHOLD) if row is not None and row.cardinality == "one" else self.threshold

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        return self.extract_many([text], at=[at])[0]

    def extract_many(self, texts: list[str], *, at: list[datetime]) -> list[list[Candidate]]:
        out = []
        docs = list(self._nlp.pipe((head(t) for t in texts), batch_size=64))
        for (doc, judged), when in zip(self._judged(docs), at):
            cands, seen, times = [], set(), {}   # times: each sentence's time phrase, found once
            for ent, cls, status, p in judged:
                if cls in UNSUPPORTED or cls not in self.rows or status == "negated" or \
                        (cls, status, ent.text.lower()) in seen:
                    continue        # a thing said twice is one fact (the likelier reading came first)
                seen.add((cls, status, ent.text.lower()))
                cand = self._candidate(ent, cls, status, p, when, times)
                if cand is not None:
                    cands.append(cand)
            out.append(cands)
        return out

    def _candidate(self, span, cls: str, status: str, confidence: float, at: datetime,
                   times: dict | None = None) -> Candidate | None:
        row = self.rows[cls]
        typed = row.object != "value"
        sentence = span.sent.text
        tense = {"plan": "future", "past": "past", "ended": "past"}.get(status, "present")
        times = {} if times is None else times
        if (sentence, tense) not in times:
            times[sentence, tense] = dates.find(sentence, at, tense)
        when = times[sentence, tense]
        kind = row.state_kind
        valid_at = None
        ends = status == "ended"
        if status == "plan":
            kind, valid_at = "plan", (when.when if when and when.when > at else None)
        elif status == "past":
            if row.kind in EVENT_KINDS:
                kind, valid_at = "event", (when.when if when else None)
            else:
                ends, valid_at = True, (when.when if when else None)
        elif status == "ended":
            valid_at = when.when if when and when.when <= at else None
        elif when is not None and when.when <= at and not _inside(when, span):
            valid_at = when.when     # "since 2019", "for six years", "started … last week": the fact's start
        predicate, obj = row.predicate, span.text
        if row.open:
            phrase = verb_phrase(span, status)
            if phrase is None and (copula := _copula(governing_verb(span), status)):
                phrase = copula, obj        # "I'm a lefty": is · lefty
            predicate, obj = phrase or (predicate, obj)
        elif row.predicate.startswith("<relation>"):
            predicate = relative_predicate(span, status)
        obj = _clean(obj)
        if predicate is None or predicate.startswith("<") or not obj:
            return None      # no verb to read the predicate from, no relative named, or nothing named
        holder = "user's" if preds.relation_detail(predicate) else "user"     # a relative's detail
        return Candidate(kind=kind, predicate=predicate, object=obj,
                         object_is_entity=typed, entity_type=row.object if typed else None,
                         text=f"{holder} {predicate} {obj}", confidence=round(confidence, 3),
                         source_quote=sentence, valid_at=valid_at, ends=ends)


MODIFIERS = frozenset({"amod", "nummod", "compound", "quantmod", "nmod", "poss", "case"})
OPEN_ENDS = frozenset({"ADP", "CCONJ", "DET"})      # a name never ends on "for", "and", "the"
REACH = 6


def whole(span):
    """The span mended where it stops short: a trailing preposition takes its object ("Royal Hospital for"
    → "… for Children and Young People") or goes, and a last word that modifies a noun after it takes that
    noun ("our first" → "our first baby"): a modifier alone names nothing. Never past :data:`REACH` words."""
    doc, start, end = span.doc, span.start, span.end
    last = doc[end - 1]
    if last.pos_ in OPEN_ENDS:
        far = max(t.i for t in last.subtree) + 1
        if last.dep_ == "prep" and end < far <= end + REACH and doc[far - 1].pos_ in ("NOUN", "PROPN"):
            end = far
        while end > start + 1 and doc[end - 1].pos_ in OPEN_ENDS:
            end -= 1
        last = doc[end - 1]
    head = last.head
    if (last.dep_ in MODIFIERS and head.pos_ in ("NOUN", "PROPN") and end <= head.i < end + 3
            and all(t.dep_ in MODIFIERS and start <= t.head.i <= head.i for t in doc[end:head.i])):
        end = head.i + 1
    return span if end == span.end else doc[start:end]


def verb_phrase(span, status: str) -> tuple[str, str] | None:
    """An open class's predicate, read from the verb that governs the span ("I go rock climbing" → "goes"
    · "rock climbing"; "I ran my first half marathon" → "ran" · …; "we're flying to Tokyo" → "is flying
    to" · "Tokyo"); a span that starts with its verb gives it up ("run 5k" → "runs" · "5k"). None when no
    verb governs it or the verb is a copula."""
    obj = span.text
    verb = governing_verb(span)
    if span.start <= verb.i < span.end:
        if verb.i == span.start and len(span) > 1 and verb.pos_ == "VERB":
            obj = span[1:].text       # the verb leads the span: it is the predicate
        elif verb.head.i != verb.i and verb.head.pos_ in ("VERB", "AUX"):
            verb = verb.head
        else:
            return None
    if verb.pos_ not in ("VERB", "AUX") or verb.lemma_.lower() == "be":
        return None
    lemma = verb.lemma_.lower()
    if status in ("past", "ended") and verb.tag_ == "VBD":
        words = [verb.lower_]
    elif verb.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in verb.children):
        words = ["is", verb.lower_]
    else:
        words = [preds.third_person(lemma)]
    words += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    head = span.root.head
    if span.root.dep_ == "pobj" and head.dep_ == "prep" and head.head.i == verb.i:
        words.append(head.lower_)
    return " ".join(words), obj


def relative_predicate(span, status: str) -> str | None:
    """The predicate of a fact about one of the user's people, as the write path reads it
    (``predicates.relation_detail``): the relation word in the subject of the verb that governs the span, its
    name when one stands beside it, then the verb phrase ("my mum Rosa lives in Leeds" → "mum rosa lives
    in" · "Leeds"; "my husband is a teacher" → "husband is" · "teacher"). None when no relation word is
    the subject."""
    verb = governing_verb(span)
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return None
    words = [t for t in subject.subtree if not (span.start <= t.i < span.end)]
    relation = next((t for t in words if t.lower_ in preds.RELATIONS), None)
    if relation is None:
        return None
    name = " ".join(t.lower_ for t in words if t.pos_ == "PROPN" and t.i != relation.i)
    phrase = verb_phrase(span, status)
    tail = phrase[0] if phrase is not None else _copula(verb, status)
    if tail is None:
        return None
    return " ".join(w for w in (relation.lower_, name, tail) if w)


def _inside(when: dates.DatePhrase, span) -> bool:
    """Whether the time phrase is part of the span (a birthday's date is its object, not its start)."""
    start = span.start_char - span.sent.start_char
    return when.start < start + len(span.text) and start < when.end


def _copula(verb, status: str) -> str | None:
    """"is" (or "was", for a state over) when ``verb`` is a form of "be"; None otherwise."""
    if verb.lemma_.lower() != "be":
        return None
    return "was" if status in ("past", "ended") and verb.tag_ == "VBD" else "is"


def _clean(obj: str) -> str:
    """The object without trailing punctuation or an unclosed bracket's aside ("wheelchair user (spinal
    injury" → "wheelchair user"); empty when no word of it names anything (a pronoun, an article)."""
    if obj.count("(") > obj.count(")"):
        head, _, tail = obj.partition("(")
        obj = head if head.strip() else tail
    obj = obj.strip().rstrip(".,;:!?-–—").strip()
    words = re.findall(r"\w+", obj.lower())
    return obj if any(w not in FUNCTION_WORDS for w in words) else ""
