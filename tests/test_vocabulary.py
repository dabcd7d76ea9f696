"""The fact vocabulary: every row complete, and the views the write and read paths take of it."""
from __future__ import annotations

import re

from kenning import conflicts, predicates, recall, vocabulary
from kenning.model import ENTITY_TYPES

KINDS = {"attribute", "relation", "preference", "possession", "skill", "routine", "plan", "event", "health"}
V = vocabulary.load()


def test_every_row_is_complete():
    assert len({r.cls for r in V.rows}) == len(V.rows)
    for row in V.rows:
        assert row.kind in KINDS, row.cls
        assert row.cardinality in ("one", "many"), row.cls
        assert row.object == "value" or row.object in ENTITY_TYPES, row.cls
        assert row.predicate and row.examples, row.cls
        for sentence, obj, status in row.cases():
            assert obj and obj in sentence and status in ("current", "ended", "plan", "past"), sentence


def test_a_stored_predicate_belongs_to_one_row():
    seen: dict[str, str] = {}
    for row in V.rows:
        for p in row.slot:
            assert p not in seen, f"{p!r} is in {seen.get(p)} and {row.cls}"
            seen[p] = row.cls


def test_references_name_what_exists():
    classes = {r.cls for r in V.rows}
    for row in V.rows:
        assert set(row.contradicts) <= classes, row.cls
        assert set(row.intention) <= set(row.slot), row.cls          # a plan names one of the row's own slots
        for s in row.synonyms:
            target = s.partition("->")[2].strip()
            assert not target or target in row.aliases, s
    assert V.one_at_a_time <= V.people
    assert set(V.diet_excludes) <= set(V.diets)


def test_supersession_reads_cardinality_and_aliases():
    registry = predicates.PredicateRegistry()
    for row in V.rows:
        for p in row.slot:
            assert registry.is_one_value(p) == (row.cardinality == "one"), p
    assert registry.is_one_value("has wife") and not registry.is_one_value("has child")


def test_normalisation_reads_synonyms():
    assert predicates.normalise("Resides in") == "lives in"
    assert predicates.normalise("is engaged to") == "has fiance"     # a synonym of an alias
    assert predicates.normalise("hates") == "dislikes"


def test_plans_opposites_and_conflicts_come_from_the_table():
    assert predicates.intention("lives in") == "plans to move to"
    assert predicates.opposite("likes") == "dislikes" and predicates.opposite("dislikes") == "likes"
    assert predicates.STATE_KINDS["has dog"] == "relation"
    assert {"has wife", "is married to", "is dating"} <= conflicts.PARTNER_PREDICATES
    assert "fish" in conflicts.DIET_EXCLUDES["vegetarian"] and "cheese" in conflicts.DIET_EXCLUDES["vegan"]


def test_a_new_row_is_all_it_takes(tmp_path):
    table = tmp_path / "facts.toml"
    table.write_text(vocabulary.TABLE.read_text() + '''
[[fact]]
class = "blood_type"
predicate = "has blood type"
kind = "health"
cardinality = "one"
object = "value"
synonyms = ["blood type is"]
questions = ["blood type", "blood group"]
now = true
examples = ["I'm O negative -> O negative"]
''')
    v = vocabulary.load(table)
    assert "has blood type" in v.one_value
    assert v.synonyms["blood type is"] == "has blood type"
    rx, slot, now = v.slot_hints()[-1]
    assert re.search(rx, "what's her blood group?") and slot == ("has blood type",) and now


def test_recall_hints_name_each_slot_from_its_question_words():
    assert recall.slot_predicates("Where does she live now?", present=True)[0] == "lives in"
    assert "has child" in recall.slot_predicates("How many kids does he have?")
    assert "is allergic to" in recall.slot_predicates("Is she allergic to anything?")
    assert recall.slot_predicates("When did she paint a sunrise?") == []   # "when", "did" name no slot
    for rx, _, _ in recall.SLOT_HINTS:
        assert not re.search(rx, "when did you do that")
