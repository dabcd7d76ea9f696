"""The write path's decisions, through ``Memory.add``: supersede, dedup, accumulate,
contradict, end, resolve entities, keep episodes, idempotency, and pending embeddings."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kenning import Candidate, Conflict, Extractor, InputError, Memory, Scope
from kenning.model import UNKNOWN_START

T0 = datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc)  # well in the past: "now" is after every turn


@pytest.fixture
def mem(new_memory, local_embedder):
    """Each test runs on both stores (see conftest: the conformance suite)."""
    return new_memory()


def at(day: int) -> datetime:
    return T0 + timedelta(days=day)


def sc(dataset: str) -> Scope:
    return Scope("default", "default", dataset)


def live(mem, ds, **kw):
    return mem.list_facts(ds, limit=100, **kw).facts


def objects(facts, predicate=None):
    return sorted(f.object for f in facts if predicate is None or f.predicate == predicate)


def history(mem, ds):
    return mem.list_facts(ds, limit=100, include_invalidated=True).facts


# -- supersession -----------------------------------------------------------------------------

def test_new_value_of_one_value_slot_supersedes_the_old(mem):
    first = mem.add("I live in Berlin.", "sam", at=at(0))
    second = mem.add("I moved to Lisbon.", "sam", at=at(60))
    berlin_id = first.memory_ids[0]
    lisbon_id = second.memory_ids[0]

    assert second.status == "stored"
    assert second.candidates_updated == 1 and second.candidates_stored == 0
    assert second.supersedes == [berlin_id]
    assert second.memory.fact_id == lisbon_id and second.memory.object == "lisbon"

    old = mem.store.get_facts(sc("sam"), [berlin_id])[0]
    assert old.invalid_at is not None
    assert old.superseded_by == lisbon_id
    assert objects(live(mem, "sam"), "lives in") == ["lisbon"]
    assert {f.object for f in history(mem, "sam")} == {"berlin", "lisbon"}


def test_as_of_shows_the_city_of_that_time(mem):
    mem.add("I live in Berlin.", "sam", at=at(0))
    mem.add("I moved to Lisbon.", "sam", at=at(60))
    assert objects(live(mem, "sam", as_of=at(-1))) == []
    assert objects(live(mem, "sam", as_of=at(30))) == ["berlin"]
    assert objects(live(mem, "sam", as_of=at(61))) == ["lisbon"]


def test_dated_move_starts_at_the_date_it_names(mem):
    mem.add("I live in Berlin.", "sam", at=datetime(2025, 1, 5, tzinfo=timezone.utc))
    mem.add("I moved to Lisbon last month.", "sam", at=datetime(2025, 9, 3, 10, tzinfo=timezone.utc))
    (lisbon,) = live(mem, "sam")
    assert lisbon.valid_at.date() == datetime(2025, 8, 3).date()
    assert objects(live(mem, "sam", as_of="2025-08-20T00:00:00Z")) == ["lisbon"]
    assert objects(live(mem, "sam", as_of="2025-07-20T00:00:00Z")) == ["berlin"]


def test_planned_move_keeps_the_old_city_live_until_it_happens(mem, now):
    said = now - timedelta(days=1)
    mem.add("I live in Berlin.", "sam", at=said - timedelta(days=100))
    r = mem.add("I'm moving to Paris next month.", "sam", at=said)
    assert r.status == "stored" and len(r.supersedes) == 1

    assert objects(live(mem, "sam"), "lives in") == ["berlin"], "the move is still in the future"
    assert objects(live(mem, "sam"), "plans to move to") == ["paris"], "the intention is live now"
    berlin = next(f for f in live(mem, "sam") if f.predicate == "lives in")
    assert berlin.invalid_at is None and berlin.valid_until is not None
    later = live(mem, "sam", as_of=said + timedelta(days=40))
    assert objects(later, "lives in") == ["paris"] and objects(later, "plans to move to") == [], \
        "on its date the plan is the new state and the intention is over"
    assert {f.object for f in history(mem, "sam")} == {"berlin", "paris"}


def test_a_changed_plan_replaces_the_intention_and_the_planned_home(mem, now):
    said = now - timedelta(days=20)
    month = (said + timedelta(days=62)).strftime("%B")       # a named month ahead: one date for both plans
    mem.add("I live in Berlin.", "sam", at=said - timedelta(days=100))
    mem.add(f"We're moving to Portland in {month}.", "sam", at=said)
    mem.add(f"Change of plans: we're moving to Seattle in {month} instead.", "sam", at=said + timedelta(days=1))
    assert objects(live(mem, "sam"), "plans to move to") == ["seattle"]
    assert objects(live(mem, "sam"), "lives in") == ["berlin"]
    later = live(mem, "sam", as_of=said + timedelta(days=100))
    assert objects(later, "lives in") == ["seattle"]
    every = history(mem, "sam")
    assert all(f.valid_until is None or f.valid_until > f.valid_at for f in every), "never an empty window"
    portland = [f for f in every if f.object == "portland"]
    assert portland and all(f.invalid_at is not None for f in portland), "the first plan never comes to hold"


def test_an_intention_worded_as_such_is_live_until_its_date(mem, now):
    said = now - timedelta(days=3)
    month = (said + timedelta(days=62)).strftime("%B")
    mem.add(f"We are planning to visit Japan in {month}.", "sam", at=said)
    facts = live(mem, "sam")
    assert [(f.predicate, f.kind) for f in facts if "japan" in f.object.lower()] == [("plans to", "plan")], \
        [(f.predicate, f.object) for f in facts]
    [japan] = [f for f in facts if "japan" in f.object.lower()]
    assert japan.valid_at == said and japan.valid_until > said + timedelta(days=30)
    assert not live(mem, "sam", as_of=japan.valid_until), "over once its date comes"


def test_future_move_in_a_named_month(mem, now):
    october = datetime(now.year - 1, 10, 15, 10, tzinfo=timezone.utc)
    mem.add("I live in Berlin.", "sam", at=october - timedelta(days=30))
    mem.add("I'm moving to Paris in December.", "sam", at=october)
    assert objects(live(mem, "sam", as_of=october + timedelta(days=30)), "lives in") == ["berlin"]
    assert objects(live(mem, "sam", as_of=datetime(now.year, 1, 15, tzinfo=timezone.utc))) == ["paris"]


def test_older_backfilled_message_does_not_supersede_the_newer_value(mem):
    newer = mem.add("I live in Lisbon.", "sam", at=at(100))
    older = mem.add("I live in Berlin.", "sam", at=at(0))
    lisbon = mem.store.get_facts(sc("sam"), newer.memory_ids)[0]
    assert older.supersedes == []
    assert lisbon.invalid_at is None and lisbon.superseded_by is None and lisbon.valid_until is None
    assert "lisbon" in objects(live(mem, "sam"))
    assert objects(live(mem, "sam", as_of=at(50))) == ["berlin"]


def test_backfilled_value_becomes_history_ending_where_the_newer_starts(mem):
    mem.add("I live in Lisbon.", "sam", at=at(100))
    mem.add("I live in Berlin.", "sam", at=at(0))
    assert objects(live(mem, "sam")) == ["lisbon"]
    berlin = next(f for f in history(mem, "sam") if f.object == "berlin")
    assert berlin.valid_until == at(100)


def test_a_later_word_dated_back_before_an_undated_value_supersedes_it(mem):
    """"I live in Berlin" (its start: only when it was said), then days later "I moved to Madrid last month":
    the later word on the present wins. Berlin held until the move; when it began nobody said."""
    mem.add("I live in Berlin.", "sam", at=at(40))
    moved = mem.add("I moved to Madrid last month.", "sam", at=at(49))
    assert objects(live(mem, "sam")) == ["madrid"]
    madrid = mem.store.get_facts(sc("sam"), moved.memory_ids)[0]
    berlin = next(f for f in history(mem, "sam") if f.object == "berlin")
    assert madrid.valid_at < at(40) and berlin.superseded_by == madrid.fact_id
    assert berlin.valid_at == UNKNOWN_START and berlin.valid_until == madrid.valid_at
    assert objects(live(mem, "sam", as_of=at(45))) == ["madrid"]
    assert objects(live(mem, "sam", as_of=madrid.valid_at - timedelta(days=1))) == ["berlin"]


def test_values_arriving_out_of_order_fit_between_the_superseded_ones(mem):
    """Backfills and racing writers store values in any order: each still holds from its own message
    until the next one's, also where the next one was already superseded (never two at one time)."""
    cities = ["berlin", "lisbon", "madrid", "paris", "rome", "vienna", "prague", "oslo"]
    for i in (3, 6, 1, 5, 7, 0, 4, 2):
        mem.add(f"I live in {cities[i].title()}.", "sam", at=at(10 * i))
    assert objects(live(mem, "sam")) == ["oslo"]
    for i, city in enumerate(cities):
        assert objects(live(mem, "sam", as_of=at(10 * i))) == [city]
        assert objects(live(mem, "sam", as_of=at(10 * i + 5))) == [city]


# -- dedup and many-value slots -----------------------------------------------------------

def test_exact_repeat_returns_the_same_fact(mem):
    first = mem.add("I am allergic to peanuts.", "sam", at=at(0))
    again = mem.add("I am allergic to peanuts.", "sam", at=at(1))
    (fid,) = first.memory_ids
    assert again.status == "skipped" and again.reason == "duplicate"
    assert again.memory_ids == [fid] and again.memory.fact_id == fid
    assert again.candidates_deduped == 1 and again.deduplicated_against == [fid]
    assert again.candidates_stored == 0 and again.candidates_updated == 0
    assert len(history(mem, "sam")) == 1


def test_plural_and_singular_are_one_value(mem):
    first = mem.add("I am allergic to peanuts.", "sam", at=at(0))
    again = mem.add("I'm allergic to peanut.", "sam", at=at(1))
    assert again.deduplicated_against == first.memory_ids
    assert len(live(mem, "sam")) == 1


def test_repeat_plus_new_fact_counts_both(mem):
    mem.add("I live in Lisbon.", "sam", at=at(0))
    r = mem.add("I live in Lisbon and I just got a bike.", "sam", at=at(1))
    assert r.status == "stored"
    assert r.candidates_deduped == 1 and r.candidates_stored == 1
    assert r.candidates_extracted == 2
    assert objects(live(mem, "sam"), "lives in") == ["lisbon"]


def test_many_value_slot_accumulates(mem):
    a = mem.add("I love ramen.", "sam", at=at(0))
    b = mem.add("I also love tacos.", "sam", at=at(1))
    c = mem.add("I love jazz.", "sam", at=at(2))
    assert [r.candidates_stored for r in (a, b, c)] == [1, 1, 1]
    assert all(r.supersedes == [] for r in (a, b, c))
    assert objects(live(mem, "sam"), "likes") == ["jazz", "ramen", "tacos"]


def test_configured_one_value_predicate_supersedes(local_embedder, new_memory):
    from kenning import Settings

    with new_memory(settings=Settings(one_value_predicates=("plays",))) as mem:
        mem.add("I play the cello.", "sam", at=at(0))
        r = mem.add("I play the piano.", "sam", at=at(1))
        assert len(r.supersedes) == 1
        assert objects(live(mem, "sam")) == ["piano"]


# -- contradiction and ending ------------------------------------------------------------

def test_positive_statement_supersedes_its_negation(mem):
    neg = mem.add("I don't eat meat.", "sam", at=at(0))
    pos = mem.add("I eat meat now.", "sam", at=at(30))
    assert pos.supersedes == neg.memory_ids
    facts = live(mem, "sam")
    assert len([f for f in facts if "meat" in f.object]) == 1
    assert facts[0].predicate == "eats"
    old = mem.store.get_facts(sc("sam"), neg.memory_ids)[0]
    assert old.predicate == "does not eat" and old.superseded_by == pos.memory_ids[0]


def test_dislike_supersedes_a_like_of_the_same_thing(mem):
    like = mem.add("I love sushi.", "sam", at=at(0))
    mem.add("I love ramen.", "sam", at=at(0))
    hate = mem.add("I hate sushi.", "sam", at=at(10))
    assert hate.supersedes == like.memory_ids
    assert sorted((f.predicate, f.object) for f in live(mem, "sam")) == [("dislikes", "sushi"), ("likes", "ramen")]


def test_no_longer_ends_the_live_fact(mem):
    rome = mem.add("I live in Rome.", "sam", at=at(0))
    end = mem.add("I no longer live in Rome.", "sam", at=at(40))
    assert end.candidates_updated == 1 and end.memory_ids == rome.memory_ids
    assert live(mem, "sam") == []
    old = mem.store.get_facts(sc("sam"), rome.memory_ids)[0]
    assert old.valid_until == at(40) and old.invalid_at is None, "ended, not deleted: the history stays true"
    assert objects(live(mem, "sam", as_of=at(20))) == ["rome"]


def test_no_longer_with_nothing_to_end_is_kept_as_the_past(mem):
    r = mem.add("I no longer live in Rome.", "sam", at=at(0))
    assert r.status == "stored" and r.candidates_stored == 1
    assert live(mem, "sam") == []
    [rome] = history(mem, "sam")
    assert (rome.predicate, rome.object, rome.valid_until, rome.start_known) == ("lives in", "rome", at(0), False)
    assert rome.valid_until > rome.valid_at, "never an empty window"
    assert objects(live(mem, "sam", as_of=at(-1))) == ["rome"], "it held before it ended"
    again = mem.add("I no longer live in Rome.", "sam", at=at(0))
    assert again.candidates_deduped == 1 and len(history(mem, "sam")) == 1, "said twice, one fact"


def test_used_to_is_history_not_a_live_fact(mem):
    mem.add("I used to live in Madrid.", "sam", at=at(0))
    assert live(mem, "sam") == []
    assert objects(history(mem, "sam")) == ["madrid"]


def test_used_to_ends_a_live_fact_of_the_same_value(mem):
    mem.add("I live in Madrid.", "sam", at=at(0))
    mem.add("I used to live in Madrid.", "sam", at=at(30))
    assert live(mem, "sam") == []


def test_a_value_coming_back_after_a_move_is_live_again(mem):
    mem.add("I live in Madrid.", "sam", at=at(0))
    mem.add("I live in Lisbon.", "sam", at=at(10))
    mem.add("I live in Madrid.", "sam", at=at(20))
    assert objects(live(mem, "sam")) == ["madrid"]
    assert objects(history(mem, "sam")) == ["lisbon", "madrid", "madrid"]


# -- entities --------------------------------------------------------------------------------

def test_typo_resolves_to_the_known_entity_as_an_alias(mem):
    mem.add("I'm looking at the Toyota Corolla Hybrid.", "sam", at=at(0))
    mem.add("yeah the corola hybrid looks great", "sam", at=at(1))
    (entity,) = [e for e in mem.list_entities("sam") if "corol" in e.name]
    assert entity.name == "toyota corolla hybrid"
    assert "corola hybrid" in entity.aliases
    assert {f.object for f in history(mem, "sam")} == {"toyota corolla hybrid"}
    assert [f.fact_id for f in live(mem, "sam", entity="corola hybrid")] == [
        f.fact_id for f in live(mem, "sam", entity="toyota corolla hybrid")]


def test_same_name_of_different_types_stays_two_entities(mem):
    mem.add("I work at Apple.", "sam", at=at(0))
    mem.add("I eat an apple every morning.", "sam", at=at(0))
    apples = [e for e in mem.list_entities("sam") if e.name == "apple"]
    assert sorted(e.type for e in apples) == ["FOOD", "ORG"]
    assert len({e.entity_id for e in apples}) == 2
    assert [e.name for e in mem.list_entities("sam", type="org")] == ["apple"]


def test_entity_names_are_lower_cased_and_unique(mem):
    mem.add("I live in BERLIN.", "sam", at=at(0))
    mem.add("I live in Berlin.", "sam", at=at(1))
    assert [(e.name, e.type) for e in mem.list_entities("sam")] == [("berlin", "PLACE")]


# -- episodes --------------------------------------------------------------------------------

def test_every_fact_cites_the_episode_it_came_from(mem):
    texts = ["I live in Berlin and I love jazz.", "I moved to Lisbon.", "I am allergic to peanuts."]
    for i, text in enumerate(texts):
        mem.add(text, "sam", at=at(i))
    facts = history(mem, "sam")
    assert len(facts) == 4
    for fact in facts:
        episode = mem.store.get_episode(sc("sam"), fact.episode_id)
        assert episode is not None, fact
        assert episode.role == "user"
        assert fact.source_quote.rstrip(".").lower() in episode.content.lower()
    by_object = {f.object: mem.store.get_episode(sc("sam"), f.episode_id).content for f in facts}
    assert by_object == {"berlin": texts[0], "jazz": texts[0], "lisbon": texts[1], "peanuts": texts[2]}


def test_caller_message_id_is_the_episode_id(mem):
    r = mem.add("I live in Berlin and I love jazz.", "sam", at=at(0), chat="c1", message_id="msg-42")
    assert r.episode_id == "msg-42"
    assert {f.episode_id for f in live(mem, "sam")} == {"msg-42"}
    episode = mem.store.get_episode(sc("sam"), "msg-42")
    assert episode.content == "I live in Berlin and I love jazz."
    assert episode.chat == "c1" and episode.at == at(0)


def test_message_without_facts_is_still_kept_as_an_episode(mem):
    r = mem.add("ok thanks!", "sam", at=at(0), message_id="m-chatter")
    assert r.status == "skipped" and r.reason == "no_valid_candidates"
    assert mem.store.get_episode(sc("sam"), "m-chatter").content == "ok thanks!"


def test_reused_message_id_is_a_conflict_and_stores_nothing(mem):
    mem.add("I live in Berlin.", "sam", at=at(0), message_id="m-1")
    with pytest.raises(Conflict, match="m-1"):
        mem.add("I love jazz.", "sam", at=at(1), message_id="m-1")
    assert [f.object for f in live(mem, "sam")] == ["berlin"]
    assert mem.store.get_episode(sc("sam"), "m-1").content == "I live in Berlin."


def test_same_message_id_with_the_same_text_is_harmless(mem):
    first = mem.add("I live in Berlin.", "sam", at=at(0), message_id="m-1")
    again = mem.add("I live in Berlin.", "sam", at=at(0), message_id="m-1")
    assert again.memory_ids == first.memory_ids and again.candidates_deduped == 1


def test_temporary_chat_keeps_facts_but_no_episode(mem):
    r = mem.add("I play the cello.", "sam", at=at(0), chat="tmp", message_id="m-tmp", temporary=True)
    assert r.status == "stored"
    (fact,) = live(mem, "sam")
    assert fact.object == "cello" and fact.episode_id is None
    assert mem.store.get_episode(sc("sam"), "m-tmp") is None


def test_embedding_text_is_anchor_enriched(local_embedder, store_url):
    with Memory(store_url, embedder=None) as mem:
        mem.add("I live in Lisbon and I am allergic to peanuts.", "sam", at=at(0))
        texts = sorted(text for _, _, text in mem.store.pending("fact", 10))
    assert texts == ["user is allergic to peanuts. About: peanuts.", "user lives in lisbon. About: lisbon."]


# -- accept: idempotency and roles -------------------------------------------------------

def test_client_ref_makes_add_idempotent(mem):
    first = mem.add("I play the cello.", "sam", at=at(0), client_ref="turn-1")
    again = mem.add("I play the piano.", "sam", at=at(1), client_ref="turn-1")
    assert again.status == "skipped" and again.reason == "already_ingested"
    assert again.memory_ids == first.memory_ids
    assert again.memory.fact_id == first.memory_ids[0]
    assert again.episode_id == first.episode_id
    assert objects(history(mem, "sam")) == ["cello"]


def test_client_ref_is_per_dataset(mem):
    mem.add("I play the cello.", "sam", client_ref="turn-1")
    other = mem.add("I play the piano.", "alex", client_ref="turn-1")
    assert other.status == "stored"
    assert objects(live(mem, "alex")) == ["piano"]


def test_client_ref_of_a_message_without_facts_is_remembered(mem):
    mem.add("ok thanks!", "sam", client_ref="turn-1")
    again = mem.add("I live in Berlin.", "sam", client_ref="turn-1")
    assert again.reason == "already_ingested" and again.memory_ids == []
    assert live(mem, "sam") == []


@pytest.mark.parametrize("role", ["assistant", "system", "tool"])
def test_non_user_turns_are_kept_as_messages_but_never_mined(mem, role):
    r = mem.add("You live in Porto, I love it.", "sam", role=role, message_id="m-a")
    assert r.status == "skipped" and r.reason == "skipped_non_user_turn"
    assert r.memory_ids == [] and r.candidates_extracted == 0 and r.episode_id == "m-a"
    assert history(mem, "sam") == []
    kept = mem.store.get_episode(sc("sam"), "m-a")
    assert (kept.role, kept.content) == (role, "You live in Porto, I love it.")
    again = mem.add("You live in Porto, I love it.", "sam", role=role, message_id="m-a")
    assert again.reason == "skipped_non_user_turn" and history(mem, "sam") == []


def test_a_temporary_chat_keeps_no_assistant_turn(mem):
    r = mem.add("You live in Porto.", "sam", role="assistant", message_id="m-t", temporary=True)
    assert r.reason == "skipped_non_user_turn" and r.episode_id is None
    assert mem.store.get_episode(sc("sam"), "m-t") is None


def test_default_time_is_now(mem, now):
    mem.add("I live in Berlin.", "sam")
    (fact,) = live(mem, "sam")
    assert abs(fact.valid_at - now) < timedelta(minutes=1)


def test_naive_and_offset_times_are_utc(mem):
    mem.add("I live in Berlin.", "sam", at=datetime(2025, 3, 1, 12, 0))
    mem.add("I love jazz.", "sam", at="2025-03-01T14:00:00+02:00")
    facts = {f.object: f for f in live(mem, "sam")}
    assert facts["berlin"].valid_at == datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    assert facts["jazz"].valid_at == datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


# -- normalise and enforce: a plugin extractor hands over raw candidates ------------------------

class ListExtractor(Extractor):
    """An extractor plugin that returns the candidates it was given."""

    name = "list"

    def __init__(self, candidates):
        self.candidates = candidates

    def extract(self, text, *, at, context=None, known_entities=None):
        return [c.model_copy(deep=True) for c in self.candidates]


def test_a_place_that_is_only_a_time_is_refused(local_embedder, new_memory):
    """A recognizer that reads "we moved in saturday" as a place must not store "lives in · saturday"."""
    cands = [Candidate(predicate="lives in", object=when, object_is_entity=True, entity_type="PLACE")
             for when in ("saturday", "January", "last week", "the 14th")]
    cands.append(Candidate(predicate="lives in", object="Porto Alegre", object_is_entity=True, entity_type="PLACE"))
    with new_memory(extractor=ListExtractor(cands)) as mem:
        r = mem.add("anything", "sam", at=at(0))
        assert (r.candidates_stored, r.candidates_rejected) == (1, 4)
        assert all("is a time, not a place" in why for why in r.rejections)
        assert [f.object for f in live(mem, "sam")] == ["porto alegre"]


def test_candidates_are_normalised_and_enforced(local_embedder, new_memory):
    cands = [
        Candidate(subject="Paris", predicate="is", object="a capital"),
        Candidate(predicate="Resides In!", object="  New   York ", object_is_entity=True, entity_type="city",
                  confidence=1.7, kind="whatever"),
        Candidate(predicate="likes", object="x" * 501),
        Candidate(predicate="  ", object="something"),
        Candidate(predicate="likes", object="", confidence=-2),
    ]
    with new_memory(extractor=ListExtractor(cands)) as mem:
        r = mem.add("anything", "sam", at=at(0))
        assert r.candidates_extracted == 5
        assert r.candidates_stored == 1 and r.candidates_rejected == 4
        assert len(r.rejections) == 4
        (fact,) = live(mem, "sam")
    assert fact.subject == "user"
    assert fact.predicate == "lives in"
    assert fact.object == "new york"
    assert fact.entity_type == "THING"
    assert fact.confidence == 1.0
    assert fact.kind == "attribute"


def test_a_named_and_a_nameless_ending_of_one_slot_in_one_message(local_embedder, new_memory):
    """Two extractors (or a model) may say one break-up twice, "has partner · sarah" and "has partner ·
    (nobody named)": the second finds the slot already ended and is kept as what it is."""
    first = [Candidate(kind="relation", predicate="has partner", object="sarah", object_is_entity=True,
                       entity_type="PERSON")]
    endings = [Candidate(kind="relation", predicate="has partner", object="sarah", ends=True),
               Candidate(kind="relation", predicate="has partner", object="", ends=True)]
    extractor = ListExtractor(first)
    with new_memory(extractor=extractor) as mem:
        mem.add("my girlfriend Sarah", "sam", at=at(0))
        extractor.candidates = endings
        r = mem.add("sarah and i broke up", "sam", at=at(1))
        assert r.status == "stored"
        assert not [f for f in live(mem, "sam") if f.predicate == "has partner"]


def test_confidence_is_clamped_not_filtered_at_write(local_embedder, new_memory):
    cands = [Candidate(predicate="likes", object="jazz", confidence=0.05)]
    with new_memory(extractor=ListExtractor(cands)) as mem:
        mem.add("anything", "sam", at=at(0))
        assert [f.confidence for f in live(mem, "sam")] == [0.05]
        assert mem.recall("jazz", "sam").facts == [], "below the retrieval floor at read time"


# -- embeddings later ---------------------------------------------------------------------------

def test_without_embedder_facts_are_pending_and_filled_later(local_embedder, store_url):
    with Memory(store_url, embedder=None) as plain:
        r = plain.add("I live in Berlin and I love jazz.", "sam", at=at(0))
        plain.add("I play the cello.", "alex", at=at(0))
        assert r.candidates_stored == 2
        assert len(plain.store.pending("fact", 100)) == 3
        assert plain.store.fact_vectors(sc("sam"), r.memory_ids) == {}
        assert plain.recall("Where does the user live?", "sam").facts[0].object == "berlin"

    with Memory(store_url) as mem:
        assert mem.embed_pending(batch=2) == 3
        assert mem.store.pending("fact", 100) == []
        assert mem.embed_pending() == 0
        vectors = mem.store.fact_vectors(sc("sam"), r.memory_ids)
        assert set(vectors) == set(r.memory_ids)
        for vec in vectors.values():
            assert vec.shape == (384,) and abs(float(np.linalg.norm(vec)) - 1) < 1e-3
        res = mem.recall("Where is home for the user?", "sam")
        assert res.facts[0].object == "berlin" and "vector" in res.items[0].signals


def test_embed_pending_needs_an_embedder(new_memory):
    from kenning import ConfigError

    with new_memory(embedder=None) as mem:
        with pytest.raises(ConfigError):
            mem.embed_pending()


def test_embed_pending_fills_entities_so_later_typos_resolve(store_url):
    """Entities written without an embedder get vectors later, like facts."""
    from kenning import Memory

    url = store_url
    with Memory(url, embedder=None) as plain:
        plain.add("I'm looking at the Toyota Corolla Hybrid.", dataset="sam", at="2026-08-16T09:00:00Z")
        assert plain.store.pending("entity", 10)
    with Memory(url) as mem:
        assert mem.embed_pending(project="default", environment="default") >= 1
        assert mem.store.pending("entity", 10) == []
        assert mem.store.pending("fact", 10) == []


def test_embed_pending_of_one_project_leaves_the_others(store_url):
    from kenning import Memory

    url = store_url
    with Memory(url, embedder=None) as plain:
        plain.add("I live in Oslo.", dataset="sam", project="a")
        plain.add("I live in Rome.", dataset="sam", project="b")
    with Memory(url) as mem:
        assert mem.embed_pending(project="a") == 1
        assert [s.project for s, _, _ in mem.store.pending("fact", 10)] == ["b"]


def test_the_offline_extractor_never_stores_an_empty_window(mem):
    mem.add("I've been vegetarian for six years.", "sam", at=at(0))
    mem.add("I'm not vegetarian anymore.", "sam", at=at(0) + timedelta(minutes=5))
    [diet] = [f for f in history(mem, "sam") if f.object == "vegetarian"]
    assert diet.start_known and diet.valid_at.year == at(0).year - 6
    assert diet.valid_until == at(0) + timedelta(minutes=5) > diet.valid_at
    mem.add("I used to live in Chicago before moving to Denver.", "lee", at=at(0))
    [chicago] = [f for f in history(mem, "lee") if f.object == "chicago"]
    assert (chicago.start_known, chicago.valid_until) == (False, at(0))
    assert "chicago" not in objects(live(mem, "lee")), "the past, not a live home"
    assert all(f.valid_until is None or f.valid_until > f.valid_at for f in history(mem, "lee"))
