"""The write path fed by a capable model: kenning's real requests, answered by a careful stand-in.

``tests/data/llm-write-path/`` holds everyday messages and three conversations written outside the
write path (``inputs.json``), the requests kenning's OpenAI-compatible extractor sent for them
(``requests.json``, logged by ``log_requests.py`` with prompt extract_v3), and the answers that people
who had not read the write path wrote for those requests, as the prompt instructs a model
(``answers-*.json``). A scripted server on loopback replays the answers; each test asserts what the
write path stored from them: endings with nothing to end, windows that are never empty, values of one
message kept together, the user's earlier turns as context, plans, the vocabulary, tolerant parsing.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from llm_server import ScriptedServer, error_reply, message_of, openai_reply

from kenning import Memory
from kenning.extract.openai import OpenAIExtractor
from kenning.model import UNKNOWN_START

DATA = Path(__file__).parent / "data" / "llm-write-path"
INPUTS = json.loads((DATA / "inputs.json").read_text())
ANSWERS = {**json.loads((DATA / "answers-messages.json").read_text()),
           **json.loads((DATA / "answers-conversations.json").read_text())}
MESSAGES = {m["id"]: m for m in INPUTS["messages"]}
CONVERSATIONS = {c["id"]: c for c in INPUTS["conversations"]}


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Replay:
    """A Memory whose model answers each request with the stand-in's answer for its message; ``wrap``
    rewrites the answer's text the way a sloppier model would write the same JSON."""

    def __init__(self, wrap=None):
        self.wrap = wrap
        self.server = ScriptedServer(self._respond).start()
        self.extractor = OpenAIExtractor(base_url=self.server.url + "/v1", model="stand-in",
                                         response_format="json_schema")
        self.mem = Memory(":memory:", embedder=None, extractor=self.extractor)

    def _respond(self, request):
        text = message_of(request)
        if text not in ANSWERS:
            return error_reply(400, f"no prepared answer for {text!r}")
        answer = ANSWERS[text]
        return openai_reply(self.wrap(answer) if self.wrap else answer)

    def message(self, mid: str):
        m = MESSAGES[mid]
        return self.mem.add(m["text"], dataset=mid, at=m["at"])

    def conversation(self, cid: str):
        for i, turn in enumerate(CONVERSATIONS[cid]["turns"]):
            self.mem.add(turn["text"], dataset=cid, at=turn["at"], role=turn["role"], chat=cid,
                         message_id=f"{cid}-{i + 1:02d}")

    def facts(self, dataset: str, **kw):
        return self.mem.list_facts(dataset, limit=100, **kw).facts

    def close(self):
        self.mem.close()
        self.server.stop()


@pytest.fixture(scope="module")
def replay():
    r = Replay()
    for mid in MESSAGES:
        r.message(mid)
    for cid in CONVERSATIONS:
        r.conversation(cid)
    yield r
    r.close()


def pairs(facts) -> set[tuple[str, str]]:
    return {(f.predicate, f.object) for f in facts}


def one(facts, predicate: str, obj: str):
    found = [f for f in facts if f.predicate == predicate and f.object == obj]
    assert len(found) == 1, f"{predicate} · {obj}: {len(found)} facts in {sorted(pairs(facts))}"
    return found[0]


def test_every_user_turn_was_answered_from_the_fixture(replay):
    user_turns = len(MESSAGES) + sum(t["role"] == "user" for c in CONVERSATIONS.values() for t in c["turns"])
    assert len(replay.server.requests) == user_turns
    assert all(message_of(r) in ANSWERS for r in replay.server.requests)


# -- 1. an ending with nothing to end is kept as the past ------------------------------------------------
def test_an_ending_with_nothing_to_end_is_a_fact_of_the_past(replay):
    history = replay.facts("m01", include_invalidated=True)
    deloitte = one(history, "works at", "deloitte")
    assert deloitte.valid_until == utc("2025-09-01T00:00:00Z") and not deloitte.start_known
    assert ("works at", "deloitte") not in pairs(replay.facts("m01")), "ended: not live"
    assert ("works at", "deloitte") in pairs(replay.facts("m01", as_of="2025-08-01T00:00:00Z")), \
        "true before it ended"
    coldplay = one(replay.facts("m03", include_invalidated=True), "likes", "coldplay")
    assert coldplay.valid_until == utc(MESSAGES["m03"]["at"]) and not coldplay.start_known
    smoking = replay.facts("m04", include_invalidated=True)
    assert one(smoking, "smokes", "cigarettes").valid_until < utc(MESSAGES["m04"]["at"]) - timedelta(days=3 * 364)
    assert ("does not smoke", "cigarettes") in pairs(replay.facts("m04"))


# -- 2. no empty or inverted window, anywhere -----------------------------------------------------------
def test_no_stored_fact_has_an_empty_or_inverted_window(replay):
    datasets = [*MESSAGES, *CONVERSATIONS]
    every = [f for d in datasets for f in replay.facts(d, include_invalidated=True)]
    assert len(every) > 150
    bad = [(f.predicate, f.object, f.valid_at, f.valid_until) for f in every
           if f.valid_until is not None and f.valid_until <= f.valid_at]
    assert bad == []
    unknown = [f for f in every if not f.start_known]
    assert unknown and all(f.valid_at == UNKNOWN_START and f.valid_until is not None for f in unknown)


def test_used_to_and_a_duration_keep_their_dates(replay):
    leeds = replay.facts("m06", include_invalidated=True)
    assert one(leeds, "lives in", "leeds").valid_until == one(leeds, "lives in", "bristol").valid_at
    assert pairs(replay.facts("m06")) == {("lives in", "bristol")}
    diet = one(replay.facts("m08"), "follows diet", "vegetarian")
    assert diet.valid_at.year == 2020 and diet.valid_until is None


# -- 3. one message never supersedes its own facts ----------------------------------------------------------
def test_one_message_giving_a_slot_two_values_keeps_both_and_says_so(replay):
    assert {("lives in", "berlin"), ("lives in", "munich")} <= pairs(replay.facts("m32"))
    assert {("prefers units", "celsius"), ("prefers units", "km")} <= pairs(replay.facts("m19"))
    r = Replay()
    try:
        receipt = r.message("m32")
        assert receipt.supersedes == [] and any("'lives in' 2 values" in n for n in receipt.notes)
    finally:
        r.close()


# -- 4. the model reads the user's earlier turns, not the assistant's filler ------------------------------
def test_the_extractor_reads_the_users_previous_turns_of_the_thread(replay):
    dentist = next(r for r in replay.server.requests if message_of(r).startswith("She's a dentist there"))
    prompt = dentist.body["messages"][-1]["content"]
    assert "My sister Ana moved to Porto last weekend." in prompt
    assert "New year, new hobby" in prompt, "more than one earlier turn"
    assert "Got it, thanks for telling me!" not in prompt and "Thanks for letting me know!" not in prompt
    assert ("sister ana works as", "dentist") in pairs(replay.facts("c1"))


# -- 5. plans: the intention now, the new state or the occurrence on its date -------------------------------
def test_a_planned_move_is_an_intention_now_and_a_home_from_its_date(replay):
    said = utc(MESSAGES["m15"]["at"])
    now = pairs(replay.facts("m15", as_of=said + timedelta(days=1)))
    assert ("plans to move to", "lisbon") in now and ("lives in", "lisbon") not in now
    then = pairs(replay.facts("m15", as_of="2026-09-02T00:00:00Z"))
    assert ("lives in", "lisbon") in then and ("plans to move to", "lisbon") not in then


def test_a_planned_trip_has_a_window_that_ends(replay):
    trip = replay.facts("m12", include_invalidated=True)
    flight = one(trip, "is flying to", "tokyo")
    assert (flight.valid_at, flight.valid_until) == (utc("2026-03-14T00:00:00Z"), utc("2026-03-28T00:00:00Z"))
    assert ("plans to fly to", "tokyo") in pairs(replay.facts("m12", as_of="2026-03-01T00:00:00Z"))
    assert not any("tokyo" in f.object for f in replay.facts("m12", as_of="2026-04-01T00:00:00Z"))


def test_a_move_planned_in_a_conversation_happens_and_the_old_home_ends(replay):
    c1 = replay.facts("c1", include_invalidated=True)
    assert one(c1, "lives in", "leeds").valid_at == utc("2026-08-31T00:00:00Z")
    york = pairs(replay.facts("c2", as_of="2026-07-01T00:00:00Z"))
    assert ("lives in", "york") in york and ("lives in", "norwich") not in york
    assert ("lives in", "norwich") in pairs(replay.facts("c2", as_of="2026-05-01T00:00:00Z"))


# -- 6. one vocabulary between the prompt and the write path ----------------------------------------------
def answered(text: str, *facts: dict) -> dict:
    return {text: {"facts": [{"subject": "user", "object_is_entity": True, "entity_type": "FOOD", "kind": "attribute",
                              "confidence": 0.9, "source_quote": text, "valid_at": None, "valid_until": None,
                              "ends": False, "needs_known_entity": False, "text": f"user {f['predicate']} {f['object']}",
                              **f} for f in facts]}}


@pytest.mark.parametrize("said", [{"predicate": "is vegetarian", "object": "vegetarian"},      # extract_v2's way
                                  {"predicate": "follows diet", "object": "vegetarian"},       # extract_v3's
                                  {"predicate": "is", "object": "Vegetarian"}])
def test_a_diet_said_any_way_ends_the_food_it_rules_out(monkeypatch, said):
    monkeypatch.setitem(ANSWERS, "I eat chicken most days.", answered("x", {"predicate": "eats", "object": "chicken"})["x"])
    monkeypatch.setitem(ANSWERS, "I'm vegetarian now.", answered("x", said)["x"])
    r = Replay()
    try:
        r.mem.add("I eat chicken most days.", dataset="d", at="2026-01-01T10:00:00Z")
        r.mem.add("I'm vegetarian now.", dataset="d", at="2026-02-01T10:00:00Z")
        assert pairs(r.facts("d")) == {("follows diet", "vegetarian")}
        chicken = one(r.facts("d", include_invalidated=True), "eats", "chicken")
        assert chicken.valid_until == utc("2026-02-01T10:00:00Z") and chicken.invalid_at is None
    finally:
        r.close()


def test_the_wedding_ends_the_engagement_and_starts_the_marriage(replay):
    after = pairs(replay.facts("c1", as_of="2026-10-20T00:00:00Z"))
    assert ("is married to", "sofia") in after and ("has fiancee", "sofia") not in after
    assert ("has fiancee", "sofia") in pairs(replay.facts("c1", as_of="2026-09-01T00:00:00Z"))
    assert ("has fiance", "josé") in pairs(replay.facts("m21")), "accents folded in the predicate"


def test_names_and_nicknames_are_two_slots_and_the_user_is_never_an_entity(replay):
    assert {("is named", "callum"), ("goes by", "tank")} <= pairs(replay.facts("m20"))
    assert {("is named", "johanna"), ("goes by", "jojo")} <= pairs(replay.facts("m17"))
    for d in ("m17", "m18", "m20", "c2", "c3"):
        names = {f.object for f in replay.facts(d) if f.predicate in ("is named", "goes by")}
        assert names and not names & {e.name for e in replay.mem.list_entities(d)}


def test_the_people_in_the_users_life_and_what_is_said_of_them(replay):
    assert ("mother lives in", "galway") in pairs(replay.facts("m13"))
    assert ("has children", "3") in pairs(replay.facts("m33"))
    assert ("has brother", "1") in pairs(replay.facts("m24"))
    assert not any(f.object in ("brother", "mother", "sister") for d in MESSAGES for f in replay.facts(d))


# -- 7. tolerant, lossless parsing ---------------------------------------------------------------------------
SLOPPY = {
    "prose around it": lambda a: f"Sure! Here are the facts I found:\n{json.dumps(a)}\nLet me know if you need more.",
    "a fence and a comment": lambda a: f"```json\n{json.dumps(a, indent=1)}\n```\n// dates resolved against the message time",
    "single quotes": lambda a: repr(a).replace("None", "null").replace("True", "true").replace("False", "false"),
    "numbers and booleans as strings": lambda a: {"facts": [
        {**f, "confidence": str(f["confidence"]), "ends": str(f["ends"]).lower()} for f in a["facts"]]},
    "facts as an object": lambda a: {"facts": {str(i): f for i, f in enumerate(a["facts"])}},
    "months as words": lambda a: {"facts": [
        {**f, **{k: datetime.fromisoformat(f[k].replace("Z", "+00:00")).strftime("%B %Y")
                 for k in ("valid_at", "valid_until") if f[k] and f[k].endswith("-01T00:00:00Z")}}
        for f in a["facts"]]},
}


@pytest.mark.parametrize("how", list(SLOPPY))
def test_a_sloppily_written_answer_stores_what_the_clean_one_does(replay, how):
    sloppy = Replay(wrap=SLOPPY[how])
    try:
        for mid in ("m01", "m12", "m15", "m22", "m32", "m41", "m48"):
            receipt = sloppy.message(mid)
            assert receipt.extraction_error is None and receipt.candidates_rejected == 0, (how, mid, receipt)
            got = {(f.predicate, f.object, f.valid_at, f.valid_until) for f in sloppy.facts(mid, include_invalidated=True)}
            want = {(f.predicate, f.object, f.valid_at, f.valid_until) for f in replay.facts(mid, include_invalidated=True)}
            assert got == want, (how, mid)
    finally:
        sloppy.close()


def test_the_users_own_name_as_subject_means_the_user():
    named = {"facts": [{**f, "subject": "Margaret"} for f in ANSWERS[CONVERSATIONS["c2"]["turns"][0]["text"]]["facts"]]}
    r = Replay(wrap=lambda a: named)
    try:
        receipt = r.mem.add(CONVERSATIONS["c2"]["turns"][0]["text"], dataset="x", at=CONVERSATIONS["c2"]["turns"][0]["at"])
        assert receipt.candidates_rejected == 0 and receipt.candidates_stored == len(named["facts"])
    finally:
        r.close()


# -- the message is always kept; kenning remine mines it again --------------------------------------------------
def test_a_failed_extraction_keeps_the_message_and_remine_mines_it_once_the_model_works():
    text = MESSAGES["m15"]["text"]
    r = Replay(wrap=lambda answer: "I'd rather not answer in JSON today.")
    try:
        receipt = r.mem.add(text, dataset="d", at=MESSAGES["m15"]["at"], message_id="msg-1")
        assert receipt.reason == "extraction_failed" and "unusable output twice" in receipt.extraction_error
        assert r.facts("d") == [] and r.mem.messages.get("d", "msg-1").content == text

        r.wrap = None   # the model behaves again
        [again] = r.mem.remine("d")
        assert again.extraction_error is None and again.episode_id == "msg-1"
        history = r.facts("d", include_invalidated=True)
        assert ("plans to move to", "lisbon") in pairs(history) and {f.episode_id for f in history} == {"msg-1"}
        assert r.mem.remine("d") == [], "no message left that no fact cites"
        redone = r.mem.remine("d", all_messages=True)
        assert redone[0].candidates_deduped >= 1 and len(r.facts("d", include_invalidated=True)) == len(history)
        with pytest.raises(Exception, match="no message 'nope'"):
            r.mem.remine("d", ["nope"])
    finally:
        r.close()


def test_kenning_remine_on_the_command_line_uses_the_configured_model(tmp_path):
    import subprocess
    import sys

    text = MESSAGES["m15"]["text"]
    r = Replay(wrap=lambda answer: "not JSON")
    try:
        env = {"KENNING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "KENNING_EXTRACTOR": "openai",
               "KENNING_LLM_BASE_URL": r.server.url + "/v1", "KENNING_LLM_MODEL": "stand-in",
               "KENNING_LLM_RESPONSE_FORMAT": "json_schema"}
        db = str(tmp_path / "k.db")

        def cli(*args):
            return subprocess.run([sys.executable, "-m", "kenning.cli", "--db", db, *args], capture_output=True,
                                  text=True, env=env, timeout=120)

        added = cli("add", "--dataset", "d", "--at", MESSAGES["m15"]["at"], text)
        assert added.returncode == 0, added.stderr
        assert "extraction_failed" in added.stdout
        failed = cli("remine", "--dataset", "d", "--json")
        assert failed.returncode == 1 and "1 failed to extract" in failed.stderr
        r.wrap = None
        done = cli("remine", "--dataset", "d", "--json")
        assert done.returncode == 0, done.stderr
        row = json.loads(done.stdout.splitlines()[0])
        assert (row["status"], row["stored"], row["error"]) == ("stored", 2, "")
    finally:
        r.close()


def test_an_ending_with_a_start_and_no_end_ended_when_it_was_said(monkeypatch):
    text = "I quit my job at Acme, I'd been there since 2019."
    monkeypatch.setitem(ANSWERS, text, {"facts": [{
        "subject": "user", "predicate": "works at", "object": "acme", "object_is_entity": True, "entity_type": "ORG",
        "kind": "attribute", "text": "user works at acme", "confidence": 0.9, "source_quote": "I quit my job at Acme",
        "valid_at": "2019-01-01T00:00:00Z", "valid_until": None, "ends": True, "needs_known_entity": False}]})
    r = Replay()
    try:
        r.mem.add(text, dataset="d", at="2026-05-01T10:00:00Z")
        acme = one(r.facts("d", include_invalidated=True), "works at", "acme")
        assert (acme.valid_at, acme.valid_until) == (utc("2019-01-01T00:00:00Z"), utc("2026-05-01T10:00:00Z"))
        assert acme.start_known
    finally:
        r.close()
