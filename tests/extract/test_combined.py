"""The combined extractor: the first extractor's facts, then the second's that name something new."""
from __future__ import annotations

from datetime import datetime, timezone

from kenning.extract.base import Candidate, Extractor
from kenning.extract.combined import CombinedExtractor, same_thing

AT = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


class Fixed(Extractor):
    def __init__(self, name, *cands):
        self.name, self.cands, self.seen = name, list(cands), []

    def extract(self, text, *, at, context=None, known_entities=None):
        self.seen.append((text, context))
        return [c.model_copy() for c in self.cands]


def test_the_second_adds_only_what_the_first_did_not_name():
    first = Fixed("rules", Candidate(predicate="lives in", object="paris"),
                  Candidate(predicate="has partner", object="", ends=True))
    then = Fixed("model", Candidate(predicate="is staying in", object="Paris"),
                 Candidate(predicate="is aged", object="34"), Candidate(predicate="works at", object="the Acme office"),
                 Candidate(predicate="likes", object="", rejected="no object"))
    out = CombinedExtractor(first, then).extract("text", at=AT, context=["earlier"])
    assert [(c.predicate, c.object) for c in out] == [
        ("lives in", "paris"), ("has partner", ""), ("is aged", "34"), ("works at", "the Acme office"),
        ("likes", "")]                                  # a rejected one is passed on, to be counted
    assert first.seen == then.seen == [("text", ["earlier"])]


def test_one_thing_named_two_ways():
    assert same_thing("my Model 3", "model 3") and same_thing("Royal Hospital", "the Royal Hospital for Children")
    assert same_thing("Leeds", "Leeds United")      # one inside the other, as whole words
    assert not same_thing("art", "martial arts") and not same_thing("", "x")


class Batched(Fixed):
    def extract_many(self, texts, *, at):
        self.seen.append(("batch", tuple(texts)))
        return [[c.model_copy() for c in self.cands] for _ in texts]


def test_a_batch_goes_through_each_extractor_once_and_merges_per_message():
    first = Batched("rules", Candidate(predicate="lives in", object="Paris"))
    then = Fixed("model", Candidate(predicate="is staying in", object="paris"), Candidate(predicate="likes", object="jazz"))
    combined = CombinedExtractor(first, then)
    out = combined.extract_many(["one", "two"], at=[AT, AT])
    assert [[(c.predicate, c.object) for c in cands] for cands in out] == [
        [("lives in", "Paris"), ("likes", "jazz")]] * 2
    assert first.seen == [("batch", ("one", "two"))]           # one batch call
    assert [t for t, _ in then.seen] == ["one", "two"]          # one without a batch call, message by message
    assert combined.extract("one", at=AT) == out[0]
