"""The labelled corpus (``data/corpus/*/…jsonl``, format in its README): loading, checking and splitting.

Every message, single or inside a sequence, becomes one :class:`Item`. A sequence stays in one split, so
no person's earlier words are in training while their later ones are tested. The split is a hash of the
unit's id, so it never moves when files are added: ``test`` (15%) is what the training never sees,
``calibration`` (10%) is held back from the tagger to fit the verifier and its confidence, ``train`` the rest.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from ...vocabulary import TABLE
from ...vocabulary import load as load_vocabulary

STATUSES = ("current", "ended", "negated", "plan", "past")
SPLITS = (("test", 0.15), ("calibration", 0.10), ("train", 0.75))
VOCABULARY = TABLE


@dataclass(frozen=True)
class Label:
    cls: str
    object: str
    status: str
    time: str | None
    start: int      # the object's character span in the text
    end: int
    about: str | None = None


@dataclass
class Item:
    id: str
    writer: str
    register: str
    text: str
    labels: list[Label] = field(default_factory=list)
    split: str = "train"
    unit: str = ""          # the message's id, or its sequence's


def classes(path: Path = VOCABULARY) -> list[str]:
    return [row.cls for row in load_vocabulary(path).rows]


def split_of(unit: str) -> str:
    """A stable split from the unit's id (sha1, so the same on every machine and Python)."""
    x = int(hashlib.sha1(unit.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    edge = 0.0
    for name, share in SPLITS:
        edge += share
        if x < edge:
            return name
    return SPLITS[-1][0]


def _find(text: str, span: str, taken: set[tuple[int, int]]) -> tuple[int, int]:
    """Where ``span`` is in ``text``: the first occurrence not already used by another label of the message."""
    at = text.find(span)
    while at >= 0 and (at, at + len(span)) in taken:
        at = text.find(span, at + 1)
    if at < 0:
        at = text.find(span)
    return at, at + len(span)


def _labels(text: str, facts: list[dict], known: set[str], where: str) -> list[Label]:
    out, taken = [], set()
    for fact in facts:
        cls, obj, status = fact.get("class"), fact.get("object"), fact.get("status")
        if cls not in known:
            raise InputError(f"{where}: unknown class {cls!r}")
        if status not in STATUSES:
            raise InputError(f"{where}: unknown status {status!r}")
        if not isinstance(obj, str) or not obj or obj not in text:
            raise InputError(f"{where}: object {obj!r} is not in the text")
        time = fact.get("time")
        if time is not None and time not in text:
            raise InputError(f"{where}: time {time!r} is not in the text")
        start, end = _find(text, obj, taken)
        taken.add((start, end))
        out.append(Label(cls, obj, status, time, start, end, fact.get("about")))
    return out


def examples(vocabulary: Path = VOCABULARY) -> list[Item]:
    """The vocabulary's example sentences as training items: each row's examples define its class."""
    out = []
    for row in load_vocabulary(vocabulary).rows:
        for n, (sentence, obj, status) in enumerate(row.cases(), 1):
            start = sentence.index(obj)
            out.append(Item(f"vocabulary-{row.cls}-{n}", "vocabulary", "example", sentence,
                            [Label(row.cls, obj, status, None, start, start + len(obj))], "train", row.cls))
    return out


def load(root: Path, vocabulary: Path = VOCABULARY, writers: list[str] | None = None) -> list[Item]:
    """Every message of every writer's files under ``root`` (or of ``writers``), checked, with its split;
    the vocabulary's examples join the training split."""
    known = set(classes(vocabulary))
    items: list[Item] = []
    for path in sorted(root.glob("*/*.jsonl")):
        if writers is not None and path.parent.name not in writers:
            continue
        writer = path.parent.name
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path.relative_to(root)}:{n}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: not JSON: {exc}") from None
            unit = record["id"]
            split = split_of(unit)
            turns = record.get("sequence") or [record]
            for i, turn in enumerate(turns):
                item_id = unit if "sequence" not in record else f"{unit}.{i + 1}"
                items.append(Item(item_id, writer, record.get("register", ""), turn["text"],
                                  _labels(turn["text"], turn.get("facts", []), known, where), split, unit))
    if writers is None:
        items += examples(vocabulary)
    return items
