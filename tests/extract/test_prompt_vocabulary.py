"""The prompt and the write path speak one vocabulary: every predicate the current prompt teaches is stored as taught.

The predicates come from the prompt itself (its worked examples and the quoted predicates of its rules), so
a prompt that teaches a word the write path rewrites, or a slot whose cardinality differs from what the
prompt says of it, fails here rather than in a deployment.
"""
from __future__ import annotations

import json
import re

import pytest

from kenning import predicates as preds
from kenning.extract.llm import FACT_SCHEMA, PROMPT_VERSION, load_prompt, vocabulary_predicates

PROMPT = load_prompt(PROMPT_VERSION).system
EXAMPLES = [f for block in re.findall(r'^\{"facts": \[(?:\]\}|.*?^\]\})', PROMPT, flags=re.S | re.M)
            for f in json.loads(block)["facts"]]
_RULE = PROMPT[PROMPT.index("- `predicate`:"):PROMPT.index("- `object`:")]   # the rule that lists predicates
TAUGHT = sorted({m for m in re.findall(r'"([a-z][a-z ]+?)" ·', PROMPT)} | {f["predicate"] for f in EXAMPLES}
                | {m for m in re.findall(r'"([a-z][a-z ]+?)"', _RULE) if not m.startswith(("user", "we "))}
                | set(vocabulary_predicates()))
REGISTRY = preds.PredicateRegistry()


def test_the_prompt_teaches_predicates_and_examples():
    assert len(EXAMPLES) >= 20 and len(TAUGHT) >= 25


@pytest.mark.parametrize("predicate", vocabulary_predicates())
def test_the_vocabulary_reaches_the_prompt_and_the_schema_as_stored(predicate):
    assert f'"{predicate}"' in PROMPT
    assert predicate in FACT_SCHEMA["properties"]["facts"]["items"]["properties"]["predicate"]["description"]
    assert preds.normalise(predicate) == predicate


@pytest.mark.parametrize("predicate", TAUGHT)
def test_a_taught_predicate_is_stored_as_taught(predicate):
    assert preds.normalise(predicate) == predicate
    assert not predicate.startswith("plans to"), "the prompt never teaches intentions: the write path makes them"


@pytest.mark.parametrize("fact", EXAMPLES, ids=lambda f: f"{f['predicate']}·{f['object']}")
def test_an_example_fact_keeps_its_predicate_object_and_entity_flag(fact):
    pair = preds.canonical_pair(preds.normalise(fact["predicate"]), fact["object"], fact["object_is_entity"],
                                raw=fact["predicate"])
    assert pair == (fact["predicate"], fact["object"], fact["object_is_entity"])


@pytest.mark.parametrize("predicate, one_value", [
    ("lives in", True), ("works at", True), ("works as", True), ("is named", True), ("goes by", True),
    ("follows diet", True), ("prefers answer style", True), ("prefers units", True), ("has husband", True),
    ("has fiance", True), ("has fiancee", True), ("is married to", True), ("mother lives in", True),
    ("son leo is aged", True), ("sister ana works as", True),
    ("likes", False), ("dislikes", False), ("has child", False), ("has sister", False), ("speaks", False),
    ("is learning", False), ("does not eat", False), ("children are aged", False), ("is allergic to", False),
])
def test_slot_cardinality_is_what_the_prompt_says(predicate, one_value):
    assert predicate in TAUGHT or predicate in ("son leo is aged", "has child")
    assert REGISTRY.is_one_value(predicate) is one_value


@pytest.mark.parametrize("said, stored", [
    (("is vegetarian", "vegetarian"), ("follows diet", "vegetarian")),
    (("is", "vegan"), ("follows diet", "vegan")),
    (("has fiancée", "zoé"), ("has fiancee", "zoé")),
    (("is engaged to", "josé"), ("has fiance", "josé")),
    (("is called", "maya"), ("is named", "maya")),
    (("is nicknamed", "jo"), ("goes by", "jo")),
    (("has brother", "brother"), ("has brother", "1")),
    (("has kids", "two kids"), ("has kids", "2")),
    (("doesn't eat", "meat"), ("does not eat", "meat")),
])
def test_an_earlier_or_looser_wording_is_stored_the_prompts_way(said, stored):
    predicate, obj = said
    got = preds.canonical_pair(preds.normalise(predicate), obj, True, raw=predicate)
    assert got[:2] == stored


def test_the_diets_the_prompt_names_are_the_ones_conflicts_understand():
    from kenning.conflicts import DIET_EXCLUDES

    named = set(re.findall(r'"(vegetarian|vegan|pescatarian)"', PROMPT))
    assert named and named <= set(DIET_EXCLUDES) and named <= preds.DIETS
