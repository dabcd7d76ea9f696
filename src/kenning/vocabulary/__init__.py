"""The fact vocabulary (``facts.toml``): one row per kind of fact, read by every part that needs to know one.

Supersession (which slots hold one value), normalisation (which phrasings mean a slot), plans (what a
state is called until it starts), conflicts (opposites, partners, diets), recall's slot hints and the
learned extractor's classes all come from this table, so adding a kind of fact is one row.
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "facts.toml"


@dataclass(frozen=True)
class Row:
    cls: str
    predicate: str
    kind: str
    cardinality: str
    object: str
    aliases: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    intention: dict[str, str] = field(default_factory=dict)
    now: bool = False
    open: bool = False
    ends: tuple[str, ...] = ()
    contradicts: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()

    @property
    def slot(self) -> tuple[str, ...]:
        """The predicates stored for this row: its own and its aliases."""
        return (self.predicate, *self.aliases)

    def cases(self) -> list[tuple[str, str, str]]:
        """(sentence, object, status) of each example."""
        out = []
        for example in self.examples:
            sentence, _, rest = example.partition(" -> ")
            obj, _, status = (x.strip() for x in rest.partition("|"))
            out.append((sentence, obj, status or "current"))
        return out

    @property
    def state_kind(self) -> str:
        """The fact kind a stored fact of this row has (health facts are attributes)."""
        return "attribute" if self.kind == "health" else self.kind


@dataclass(frozen=True)
class Vocabulary:
    rows: tuple[Row, ...]
    people: frozenset[str]
    one_at_a_time: frozenset[str]
    diets: tuple[str, ...]
    diet_excludes: dict[str, frozenset[str]]

    def row(self, cls: str) -> Row:
        return next(r for r in self.rows if r.cls == cls)

    @functools.cached_property
    def one_value(self) -> frozenset[str]:
        return frozenset(p for r in self.rows if r.cardinality == "one" for p in r.slot)

    @functools.cached_property
    def synonyms(self) -> dict[str, str]:
        """phrasing → stored predicate."""
        out = {}
        for r in self.rows:
            for s in r.synonyms:
                phrase, _, target = (x.strip() for x in s.partition("->"))
                out[phrase] = target or r.predicate
        return out

    @functools.cached_property
    def intentions(self) -> dict[str, str]:
        """state predicate → what a plan for it is called until it starts."""
        return {p: label for r in self.rows for p, label in r.intention.items()}

    @functools.cached_property
    def state_kinds(self) -> dict[str, str]:
        """The fact kind of each predicate a plan can start (the keys of :attr:`intentions`)."""
        return {p: r.state_kind for r in self.rows for p in r.intention}

    @functools.cached_property
    def opposites(self) -> dict[str, str]:
        """predicate → the predicate whose live fact with the same object it contradicts."""
        by_class = {r.cls: r for r in self.rows}
        return {r.predicate: by_class[c].predicate for r in self.rows for c in r.contradicts}

    def slot_hints(self) -> list[tuple[str, tuple[str, ...], bool]]:
        """(regex of a question's words, the predicates it asks about, whether the slot is present state)
        for every row with question words, in the table's order."""
        out = []
        for r in self.rows:
            if not r.questions or r.predicate.startswith("<"):
                continue
            words = "|".join(r"\s+".join(map(re.escape, q.split())) for q in sorted(r.questions, key=len, reverse=True))
            out.append((rf"\b(?:{words})(?:s|es)?\b", (*r.slot, *r.related), r.now))
        return out


@functools.cache
def load(path: Path = TABLE) -> Vocabulary:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    rows = []
    for raw in data["fact"]:
        raw = dict(raw)
        cls = raw.pop("class")
        rows.append(Row(cls=cls, **{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}))
    people = data.get("people", {})
    diets = data.get("diets", {})
    return Vocabulary(tuple(rows), frozenset(people.get("words", ())), frozenset(people.get("one_at_a_time", ())),
                      tuple(diets.get("names", ())),
                      {name: frozenset(foods) for name, foods in diets.get("excludes", {}).items()})
