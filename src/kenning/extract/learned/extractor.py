"""The learned extractor: the recognizer's spans, judged by the verifier, as candidates of the vocabulary.

A span the verifier keeps becomes a candidate with its class's predicate, kind and object type (from
``kenning/vocabulary/facts.toml``) and the verifier's calibrated probability as its confidence; its status
decides the rest: ``ended`` ends the live fact it names, ``plan`` is an intention dated by the time
phrase of its sentence, ``past`` an event (or, for a state, one that is over), ``negated`` is not stored.
"""
from __future__ import annotations

import json
import tomllib
from datetime import datetime
from pathlib import Path

from .. import dates
from ..base import Candidate, Extractor
from . import tagger
from .corpus import VOCABULARY
from .verifier import Verifier

MODEL = Path(__file__).resolve().parent / "model"
THRESHOLD = 0.5          # candidates the verifier gives less are dropped (and counted as rejected)
# Classes whose facts need more than the span to state (the relation's own predicate); not produced yet.
UNSUPPORTED = frozenset({"relative_detail", "other"})
EVENT_KINDS = frozenset({"event", "plan"})


def vocabulary(path: Path = VOCABULARY) -> dict[str, dict]:
    with open(path, "rb") as f:
        return {row["class"]: row for row in tomllib.load(f)["fact"]}


class LearnedExtractor(Extractor):
    """Offline, trained on the labelled corpus (see kenning.extract.learned.train)."""

    name = "learned"

    def __init__(self, folder: Path = MODEL, threshold: float = THRESHOLD):
        if not (folder / tagger.COMPONENT).is_dir() or not (folder / "verifier.npz").is_file():
            from ...errors import ConfigError
            raise ConfigError(f"no trained extractor in {folder}: run python -m kenning.extract.learned.train")
        self.folder, self.threshold = folder, threshold
        self.rows = vocabulary()
        self._nlp = tagger.base_pipeline()
        shape_file = folder / "tagger.json"   # the recognizer's shape, as trained
        shape = json.loads(shape_file.read_text()) if shape_file.exists() else {}
        facts = tagger.add_tagger(self._nlp, [], hidden_width=shape.get("hidden_width", 64))
        facts.from_disk(folder / tagger.COMPONENT)
        self.verifier = Verifier.load(folder)

    def _judged(self, docs):
        for doc in docs:
            out = []
            for ent in doc.ents:
                keep, status = self.verifier.judge(doc, ent, ent.label_)
                out.append((ent, ent.label_, status, keep))
            yield doc, out

    def spans(self, text: str) -> list[tuple[int, int, str, str, float]]:
        """(start, end, class, status, confidence) of the kept candidates (for evaluation)."""
        doc, judged = next(self._judged([self._nlp(text)]))
        return [(e.start_char, e.end_char, cls, status, p) for e, cls, status, p in judged if p >= self.threshold]

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        return self.extract_many([text], at=[at])[0]

    def extract_many(self, texts: list[str], *, at: list[datetime]) -> list[list[Candidate]]:
        out = []
        docs = self._nlp.pipe(texts, batch_size=64)
        for (doc, judged), when in zip(self._judged(docs), at):
            cands = []
            for ent, cls, status, p in judged:
                if p < self.threshold or cls in UNSUPPORTED or cls not in self.rows or status == "negated":
                    continue
                cands.append(self._candidate(ent, cls, status, p, when))
            out.append(cands)
        return out

    def _candidate(self, span, cls: str, status: str, confidence: float, at: datetime) -> Candidate:
        row = self.rows[cls]
        typed = row["object"] not in ("value",)
        sentence = span.sent.text
        tense = {"plan": "future", "past": "past", "ended": "past"}.get(status, "present")
        when = dates.find(sentence, at, tense)
        kind = row["kind"] if row["kind"] != "health" else "attribute"
        valid_at = None
        ends = status == "ended"
        if status == "plan":
            kind, valid_at = "plan", (when.when if when and when.when > at else None)
        elif status == "past":
            if row["kind"] in EVENT_KINDS:
                kind, valid_at = "event", (when.when if when else None)
            else:
                ends, valid_at = True, (when.when if when else None)
        elif status == "ended":
            valid_at = when.when if when and when.when <= at else None
        elif when is not None and when.kind in ("since", "since_year", "for_n") and when.when <= at:
            valid_at = when.when     # "for six years", "since 2019": the fact's start
        return Candidate(kind=kind, predicate=row["predicate"], object=span.text,
                         object_is_entity=typed, entity_type=row["object"] if typed else None,
                         text=f"user {row['predicate']} {span.text}", confidence=round(confidence, 3),
                         source_quote=sentence, valid_at=valid_at, ends=ends)
