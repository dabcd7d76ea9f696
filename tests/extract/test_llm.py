"""The model-backed extractors against scripted servers on loopback (tests/llm_server.py).

Real HTTP on 127.0.0.1: the servers replay prepared answers, good and bad (truncated JSON, wrong
types, another subject, 500/429 then success, a 400 refusing json_schema, a hang past the timeout),
and record what the client sent. ``LocalModel`` plays the quirks of real local servers (llama-cpp-python
refusing json_schema with a 500, hanging without max_tokens, chat templates that drop the system message).
The scenarios of the write path run through both providers with
answers prepared once from the rule extractor (tests/data/llm-scenario-responses.json, written by
tests/data/make_llm_responses.py).
"""
from __future__ import annotations

import importlib.util
import json
import re
import socket
import time
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kenning import Memory, Settings
from kenning.errors import ConfigError, ExtractionError
from kenning.extract.anthropic import AnthropicExtractor
from kenning.extract.llm import (DEFAULT_MAX_TOKENS, EXTRACT_KINDS, FACT_FIELDS, FACT_SCHEMA, PROMPT_VERSION,
                                 LLMExtractor, MalformedOutput, RetryPolicy, load_prompt, parse_answer, stored_kind)
from kenning.extract.openai import OpenAIExtractor
from kenning.model import ENTITY_TYPES, FACT_KINDS
from llm_server import (INSTRUCTIONS_MARK, LLAMA_CPP_PYTHON_JSON_SCHEMA_ERROR, LocalModel, Reply, ScriptedServer,
                        anthropic_reply, error_reply, fact, fixture_responder, llama_cpp_python, message_of,
                        openai_reply, wire_format)

AT = datetime(2026, 8, 20, 10, 0, tzinfo=timezone.utc)
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)
ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parents[1] / "data"
BERLIN = fact("lives in", "berlin", entity_type="PLACE", source_quote="I live in Berlin.")


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def openai_ex(server, **kw) -> OpenAIExtractor:
    kw = {"model": "gpt-test", "api_key": "sk-test", "timeout": 2.0, "retry": FAST, **kw}
    return OpenAIExtractor(base_url=server.url + "/v1", **kw)


def anthropic_ex(server, **kw) -> AnthropicExtractor:
    kw = {"model": "claude-test", "api_key": "ak-test", "timeout": 2.0, "retry": FAST, **kw}
    return AnthropicExtractor(base_url=server.url, **kw)


# -- OpenAI-compatible: the request ---------------------------------------------------------------
def test_openai_request_and_candidates(server):
    server.push(openai_reply({"facts": [BERLIN | {"valid_at": "2026-07-20T00:00:00Z"}]}))
    ex = openai_ex(server)
    got = ex.extract("I live in Berlin.", at=AT, context=["hi", "I work at Acme."], known_entities=["acme", "lisbon"])

    assert len(got) == 1 and got[0].rejected is None
    c = got[0]
    assert (c.subject, c.predicate, c.object, c.entity_type) == ("user", "lives in", "berlin", "PLACE")
    assert c.valid_at == datetime(2026, 7, 20, tzinfo=timezone.utc) and c.valid_until is None
    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    body = req.body
    assert body["model"] == "gpt-test" and body["temperature"] == 0
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    prompt = body["messages"][1]["content"]
    assert "2026-08-20T10:00:00Z (Thursday)" in prompt
    assert "acme, lisbon" in prompt
    assert '- "I work at Acme."' in prompt
    assert message_of(req) == "I live in Berlin."
    assert PROMPT_VERSION in ex.name and ex.prompt_version == PROMPT_VERSION and ex.wants_context


def test_openai_without_key_sends_no_authorization(server):
    server.push(openai_reply({"facts": []}))
    assert openai_ex(server, api_key=None).extract("ok thanks", at=AT) == []
    assert "authorization" not in server.requests[0].headers


# -- bad answers ---------------------------------------------------------------------------------------
def test_a_cut_answer_is_asked_again_with_more_room(server):
    truncated = json.dumps({"facts": [BERLIN]})[:40]      # cut, though the server did not say so
    server.push(openai_reply(truncated), openai_reply({"facts": [BERLIN]}))
    got = openai_ex(server, max_tokens=500).extract("I live in Berlin.", at=AT)

    assert [c.object for c in got] == ["berlin"]
    assert len(server.requests) == 2
    first, again = (r.body for r in server.requests)
    assert again["messages"] == first["messages"], "the same question, not a complaint about the cut"
    assert (first["max_tokens"], again["max_tokens"]) == (500, 2000)


def test_an_answer_cut_twice_keeps_every_fact_that_arrived_whole(server):
    whole = json.dumps({"facts": [BERLIN, fact("likes", "tea")]})
    cut = whole[:-5]                                        # the second fact is not whole
    server.push(openai_reply(json.dumps({"facts": [BERLIN]})[:-3], finish_reason="length"),
                openai_reply(cut, finish_reason="length"))
    got = openai_ex(server, max_tokens=100).extract("I live in Berlin.", at=AT)
    assert [c.object for c in got] == ["berlin"]
    assert [r.body["max_tokens"] for r in server.requests] == [100, 400]


def test_an_answer_cut_before_any_fact_is_whole_is_an_error_naming_the_setting(server):
    server.push(*[openai_reply('{"facts": [{"subject": "user", "pred', finish_reason="length")] * 2)
    with pytest.raises(ExtractionError, match=r"cut off before any fact was whole.*room for 8192 tokens.*"
                                              r"raise KENNING_LLM_MAX_TOKENS"):
        openai_ex(server).extract("I live in Berlin.", at=AT)


def test_wrong_shape_is_reasked(server):
    server.push(openai_reply({"facts": "berlin"}), openai_reply({"result": []}))
    with pytest.raises(ExtractionError, match=r'"facts" list'):
        openai_ex(server).extract("I live in Berlin.", at=AT)
    assert '"facts" must be a list' in server.requests[1].body["messages"][-1]["content"]


def test_wrong_types_reject_that_fact_only(server):
    server.push(openai_reply({"facts": [BERLIN, fact("is aged", 34), fact("likes", "ramen", confidence="high"),
                                        fact("likes", "tea", valid_at="last week"), "peanuts",
                                        fact("likes", "jazz", object=["jazz"]), fact("likes", "rain", confidence="lots")]}))
    got = openai_ex(server).extract("I live in Berlin.", at=AT)
    assert [c.rejected is None for c in got] == [True, True, True, False, False, False, False]
    assert (got[1].object, got[2].confidence) == ("34", 0.9), "a number for an age, a worded confidence: read"
    reasons = [c.rejected for c in got[3:]]
    assert "'valid_at' 'last week' is not a date" in reasons[0]
    assert "not an object" in reasons[1]
    assert "'object' must be a string" in reasons[2]
    assert "'confidence' must be a number" in reasons[3]


def test_other_subject_passes_through(server):
    server.push(openai_reply({"facts": [fact("lives in", "porto", subject="sister")]}))
    (c,) = openai_ex(server).extract("My sister lives in Porto.", at=AT)
    assert c.subject == "sister" and c.rejected is None  # the write path rejects and counts it


def test_markdown_fence_is_accepted(server):
    server.push(openai_reply("```json\n" + json.dumps({"facts": [BERLIN]}) + "\n```"))
    assert [c.object for c in openai_ex(server).extract("I live in Berlin.", at=AT)] == ["berlin"]


# -- transient failures: bounded retries -----------------------------------------------------------------
@pytest.mark.parametrize("status", [500, 429, 503])
def test_transient_status_then_success(server, status):
    server.push(error_reply(status, "busy", headers={"retry-after": "0"}), openai_reply({"facts": [BERLIN]}))
    assert [c.object for c in openai_ex(server).extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert len(server.requests) == 2


def test_retries_are_bounded(server):
    server.push(*[error_reply(503, "overloaded")] * 5)
    with pytest.raises(ExtractionError, match=r"failed after 3 attempts: HTTP 503"):
        openai_ex(server).extract("I live in Berlin.", at=AT)
    assert len(server.requests) == 3


def test_hang_past_timeout_is_retried(server):
    server.push(Reply(200, openai_reply({"facts": []}).body, delay=3.0), openai_reply({"facts": [BERLIN]}))
    start = time.monotonic()
    got = openai_ex(server, timeout=0.2).extract("I live in Berlin.", at=AT)
    assert [c.object for c in got] == ["berlin"]
    assert time.monotonic() - start < 2.0


def test_hang_every_time_raises(server):
    server.push(*[Reply(200, {}, delay=3.0)] * 2)
    ex = openai_ex(server, timeout=0.2, retry=RetryPolicy(attempts=2, base_delay=0.01))
    with pytest.raises(ExtractionError, match=r"failed after 2 attempts: no answer within 0.2 s"):
        ex.extract("I live in Berlin.", at=AT)


def test_unreachable_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = OpenAIExtractor(base_url=f"http://127.0.0.1:{port}/v1", model="m", retry=FAST)
    with pytest.raises(ExtractionError, match="cannot reach"):
        ex.extract("I live in Berlin.", at=AT)


def test_auth_error_is_not_retried_and_says_what_to_set(server):
    server.push(error_reply(401, "invalid api key"))
    with pytest.raises(ExtractionError, match="KENNING_LLM_API_KEY"):
        openai_ex(server).extract("I live in Berlin.", at=AT)
    assert len(server.requests) == 1


def test_other_400_is_not_a_format_fallback(server):
    server.push(error_reply(400, "maximum context length exceeded"))
    with pytest.raises(ExtractionError, match="HTTP 400.*maximum context length"):
        openai_ex(server).extract("I live in Berlin.", at=AT)
    assert len(server.requests) == 1


# -- structured output fallback ------------------------------------------------------------------------
def test_json_schema_refused_falls_back_to_json_object_and_remembers(server):
    server.push(error_reply(400, "response_format type 'json_schema' is not supported by this model"),
                openai_reply({"facts": [BERLIN]}), openai_reply({"facts": []}))
    ex = openai_ex(server)
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    first, second = server.requests[0].body, server.requests[1].body
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": FACT_SCHEMA}
    assert "JSON Schema" in second["messages"][0]["content"]  # the schema travels in the prompt as well
    assert ex.response_format == "json_object+schema"

    ex.extract("ok thanks", at=AT)
    assert len(server.requests) == 3 and wire_format(server.requests[2].body) == "json_object+schema"


def test_json_object_refused_too_falls_back_to_the_prompt_alone(server):
    # LM Studio: "'response_format.type' must be 'json_schema' or 'text'", after a model without schema support
    server.push(error_reply(400, "json_schema unsupported"),
                error_reply(400, "'response_format.type' must be 'json_schema' or 'text'"),
                error_reply(400, "'response_format.type' must be 'json_schema' or 'text'"),
                openai_reply({"facts": [BERLIN]}))
    ex = openai_ex(server)
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert [wire_format(r.body) for r in server.requests] == ["json_schema", "json_object+schema", "json_object",
                                                              "none"]
    assert "response_format" not in server.requests[3].body and ex.response_format == "none"
    assert "JSON Schema" in server.requests[3].body["messages"][0]["content"]


# -- real servers' quirks (LocalModel in tests/llm_server.py) --------------------------------------------
def answer_berlin(message):
    return {"facts": [BERLIN]} if message == "I live in Berlin." else {"facts": []}


@pytest.mark.parametrize("status, message", [
    (500, LLAMA_CPP_PYTHON_JSON_SCHEMA_ERROR),                              # llama-cpp-python
    (400, "Invalid schema for response_format 'facts': 'enum' is not supported"),
    (422, "json_schema: unknown variant `json_schema`, expected `text` or `json_object`"),
    (501, "structured output is not implemented for this backend"),
    (500, "KeyError: 'schema'"),
])
def test_a_refusal_that_names_the_format_steps_down_whatever_its_status(server, status, message):
    server.push(error_reply(status, message), openai_reply({"facts": [BERLIN]}))
    ex = openai_ex(server, retry=RetryPolicy(attempts=3, base_delay=5.0))   # a retry would cost 5 s
    start = time.monotonic()
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert time.monotonic() - start < 3.0                                  # no backoff, no retry burnt
    assert [wire_format(r.body) for r in server.requests] == ["json_schema", "json_object+schema"]
    assert ex.response_format == "json_object+schema"


def test_llama_cpp_python_500_steps_down_without_burning_the_retries():
    model = llama_cpp_python(answer_berlin)
    with ScriptedServer(model) as server:
        ex = openai_ex(server)
        assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
        assert [(wire_format(r.body)) for r in server.requests] == ["json_schema", "json_object+schema"]
        assert ex.extract("ok thanks", at=AT) == []                        # remembered: one request
        assert len(server.requests) == 3
        assert server.requests[1].body["response_format"] == {"type": "json_object", "schema": FACT_SCHEMA}


def test_a_500_that_does_not_name_the_format_is_still_retried(server):
    server.push(error_reply(500, "CUDA error: out of memory"), openai_reply({"facts": [BERLIN]}))
    ex = openai_ex(server)
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert [wire_format(r.body) for r in server.requests] == ["json_schema", "json_schema"]
    assert ex.response_format == "json_schema"


def test_without_a_response_format_a_500_naming_a_schema_is_retried(server):
    server.push(*[error_reply(500, "schema cache busy")] * 3)
    with pytest.raises(ExtractionError, match="failed after 3 attempts: HTTP 500"):
        openai_ex(server, response_format="none").extract("I live in Berlin.", at=AT)
    assert len(server.requests) == 3


def test_max_tokens_is_sent_so_a_local_model_stops():
    # without max_tokens this server generates past the client's timeout
    with ScriptedServer(LocalModel(answer_berlin, hang_without_max_tokens=5.0)) as server:
        start = time.monotonic()
        got = openai_ex(server, timeout=1.0, max_tokens=300).extract("I live in Berlin.", at=AT)
        assert [c.object for c in got] == ["berlin"] and time.monotonic() - start < 1.0
        assert server.requests[0].body["max_tokens"] == 300


def test_the_answer_cut_at_max_tokens_names_the_setting(server, caplog):
    server.push(*[openai_reply(json.dumps({"facts": [BERLIN, BERLIN]})[:-30], finish_reason="length")] * 2)
    with caplog.at_level("INFO", logger="kenning.extract"):
        assert [c.object for c in openai_ex(server, max_tokens=64).extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert "cut off at 64 tokens; asking again with 256" in caplog.text
    assert "kept the 1 fact that arrived whole (raise KENNING_LLM_MAX_TOKENS)" in caplog.text


def test_a_server_that_wants_max_completion_tokens_gets_it(server):
    server.push(error_reply(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                 "Use 'max_completion_tokens' instead."),
                openai_reply({"facts": [BERLIN]}), openai_reply({"facts": []}))
    ex = openai_ex(server, max_tokens=500)
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    ex.extract("ok thanks", at=AT)
    first, second, third = (r.body for r in server.requests)
    assert first["max_tokens"] == 500 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 500 and "max_tokens" not in second
    assert third["max_completion_tokens"] == 500 and wire_format(second) == "json_schema"


@pytest.mark.parametrize("setting, expected", [
    ("auto", {"type": "json_schema", "json_schema": {"name": "facts", "strict": True, "schema": FACT_SCHEMA}}),
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "facts", "strict": True, "schema": FACT_SCHEMA}}),
    ("json_object", {"type": "json_object", "schema": FACT_SCHEMA}),
    ("none", None),
])
def test_each_response_format_setting_sends_its_body(server, setting, expected):
    server.push(openai_reply({"facts": [BERLIN]}))
    ex = openai_ex(server, response_format=setting)
    assert ex.response_format_setting == setting
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    body = server.requests[0].body
    assert body.get("response_format") == expected
    schema_in_prompt = "valid against this JSON Schema" in body["messages"][0]["content"]
    assert schema_in_prompt == (expected is None or expected["type"] == "json_object")


def test_the_response_format_setting_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("KENNING_LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("KENNING_LLM_MODEL", "qwen2.5-0.5b-instruct")
    monkeypatch.setenv("KENNING_LLM_RESPONSE_FORMAT", "json_object")
    monkeypatch.setenv("KENNING_LLM_MAX_TOKENS", "512")
    monkeypatch.setenv("KENNING_LLM_INSTRUCTIONS", "user")
    server.push(openai_reply({"facts": [BERLIN]}))
    with Memory(":memory:", embedder=None, extractor="openai") as mem:
        ex = mem.extractor
        assert (ex.response_format_setting, ex.max_tokens, ex.instructions) == ("json_object", 512, "user")
        assert mem.add("I live in Berlin.", dataset="sam", at=AT).status == "stored"
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_object", "schema": FACT_SCHEMA} and body["max_tokens"] == 512
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_a_chosen_json_schema_does_not_step_down_and_says_what_to_set():
    with ScriptedServer(llama_cpp_python()) as server:
        with pytest.raises(ExtractionError, match=r"HTTP 500.*KENNING_LLM_RESPONSE_FORMAT to json_object or none"):
            openai_ex(server, response_format="json_schema").extract("I live in Berlin.", at=AT)
        assert len(server.requests) == 1                                    # neither retried nor stepped


def test_a_chosen_json_object_may_drop_only_the_schema(server):
    # OpenAI's older models take json_object but no "schema" key in it
    server.push(error_reply(400, "Unknown parameter: 'response_format.schema'."), openai_reply({"facts": [BERLIN]}),
                error_reply(400, "response_format json_object is not supported"))
    ex = openai_ex(server, response_format="json_object")
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert [wire_format(r.body) for r in server.requests] == ["json_object+schema", "json_object"]
    with pytest.raises(ExtractionError, match="KENNING_LLM_RESPONSE_FORMAT to none"):
        ex.extract("I live in Berlin.", at=AT)
    assert len(server.requests) == 3


@pytest.mark.parametrize("placement, roles", [("system", ["system", "user"]), ("user", ["user"]),
                                              ("both", ["system", "user"])])
def test_instructions_in_the_system_message_the_user_turn_or_both(server, placement, roles):
    server.push(openai_reply("Sorry, I can't help with that."), openai_reply({"facts": [BERLIN]}))
    ex = openai_ex(server, instructions=placement)
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT, context=["hi"])] == ["berlin"]
    first, reask = (r.body["messages"] for r in server.requests)
    assert [m["role"] for m in first] == roles
    assert [m["role"] for m in reask] == roles + ["assistant", "user"]     # the re-ask keeps the layout
    user = first[-1]["content"]
    assert (INSTRUCTIONS_MARK in user) == (placement != "system")
    assert (placement != "user") == (first[0]["role"] == "system" and INSTRUCTIONS_MARK in first[0]["content"])
    if placement != "system":
        assert user.startswith(load_prompt().system[:80]) and user.index(INSTRUCTIONS_MARK) < user.rindex("<message>")
    assert message_of(server.requests[0]) == "I live in Berlin." and '- "hi"' in user


def test_a_template_that_drops_the_system_message():
    # e.g. llama-cpp-python's gemma format: the model never sees the system message and chats instead
    with ScriptedServer(LocalModel(answer_berlin, drops_system=True)) as server:
        with pytest.raises(ExtractionError, match="unusable output twice.*not valid JSON"):
            openai_ex(server).extract("I live in Berlin.", at=AT)
        assert len(server.requests) == 2

        got = openai_ex(server, instructions="user").extract("I live in Berlin.", at=AT)
        assert [c.object for c in got] == ["berlin"] and len(server.requests) == 3
        assert INSTRUCTIONS_MARK in server.requests[2].body["messages"][0]["content"]


def test_llama_cpp_python_with_a_system_dropping_template_end_to_end():
    """The failure of issue 14 in one server: json_schema → 500, no max_tokens → hang, system dropped."""
    model = llama_cpp_python(answer_berlin, drops_system=True, hang=5.0)
    with ScriptedServer(model) as server:
        ex = openai_ex(server, timeout=1.0, instructions="user")
        start = time.monotonic()
        assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
        assert time.monotonic() - start < 1.5 and len(server.requests) == 2
        assert [m["role"] for m in model.seen[-1]] == ["user"]


def test_anthropic_max_tokens_and_instructions_in_the_user_turn(server):
    server.push(anthropic_reply({"facts": [BERLIN]}))
    ex = anthropic_ex(server, max_tokens=700, instructions="user")
    assert [c.object for c in ex.extract("I live in Berlin.", at=AT)] == ["berlin"]
    body = server.requests[0].body
    assert body["max_tokens"] == 700 and "system" not in body
    assert INSTRUCTIONS_MARK in body["messages"][0]["content"] and message_of(server.requests[0]) == "I live in Berlin."


def test_bad_max_tokens_and_instructions_are_config_errors():
    with pytest.raises(ConfigError, match="KENNING_LLM_MAX_TOKENS"):
        OpenAIExtractor(base_url="http://localhost:1/v1", model="m", max_tokens=0)
    with pytest.raises(ConfigError, match="KENNING_LLM_INSTRUCTIONS"):
        AnthropicExtractor(model="m", instructions="developer")
    with pytest.raises(ConfigError, match="KENNING_LLM_RESPONSE_FORMAT"):
        OpenAIExtractor(base_url="http://localhost:1/v1", model="m", response_format="json")
    legacy = OpenAIExtractor(base_url="http://localhost:1/v1", model="m", response_format="text")
    assert legacy.response_format == "none"


# -- the kinds: the same candidates as the offline extractor --------------------------------------------
KINDS_ANSWER = {"facts": [
    fact("has husband", "tom", kind="relation", entity_type="PERSON", source_quote="my husband Tom"),
    fact("goes", "climbing", kind="routine", entity_type="SKILL", text="user goes climbing every weekend"),
    fact("lives in", "portland", kind="plan", entity_type="PLACE", valid_at="2027-03-01T00:00:00Z"),
    fact("ran", "first 10k", kind="event", entity_type="EVENT", valid_at="2026-08-13T10:00:00Z"),
    fact("plays", "cello", kind="skill", entity_type="SKILL", ends=True),
    fact("owns", "jeep", kind="possession", entity_type="PRODUCT"),
]}


def test_the_schema_and_the_prompt_speak_every_kind():
    kind = FACT_SCHEMA["properties"]["facts"]["items"]["properties"]["kind"]
    assert kind["enum"] == list(EXTRACT_KINDS)
    for name in ("attribute", "relation", "preference", "possession", "skill", "routine", "plan", "event"):
        assert name in EXTRACT_KINDS and f"`{name}`" in load_prompt().system
    assert all(stored_kind(k) in FACT_KINDS for k in EXTRACT_KINDS)


def test_kinds_map_to_the_candidates_the_store_knows(server):
    server.push(openai_reply(KINDS_ANSWER))
    got = openai_ex(server).extract("...", at=AT)
    assert all(c.rejected is None for c in got)
    tom, climbing, portland, run, cello, jeep = got
    assert (tom.kind, tom.predicate, tom.object, tom.entity_type) == (stored_kind("relation"), "has husband", "tom",
                                                                       "PERSON")
    assert climbing.kind == stored_kind("routine") and climbing.text == "user goes climbing every weekend"
    assert portland.kind == "plan" and portland.valid_at == datetime(2027, 3, 1, tzinfo=timezone.utc) > AT
    assert (run.kind, run.predicate, run.object) == ("event", "ran", "first 10k")
    assert run.valid_at == AT - timedelta(days=7)
    assert cello.ends and cello.kind == "skill" and jeep.kind == "possession"
    assert all(c.kind in FACT_KINDS for c in got)


def test_stored_kind_spellings():
    for kind in (*FACT_KINDS, *EXTRACT_KINDS):
        assert stored_kind(kind) in FACT_KINDS
    assert stored_kind(" Relation ") == stored_kind("relation")
    if {"relation", "routine"} <= set(FACT_KINDS):      # the earlier names read as today's
        assert (stored_kind("relationship"), stored_kind("habit")) == ("relation", "routine")
    assert stored_kind("mood") == "mood"   # unknown: passes through, the write path maps it


def test_prompt_examples_cover_the_kinds_endings_and_dates():
    examples = re.findall(r'^\{"facts": \[(?:\]\}|.*?^\]\})', load_prompt().system, flags=re.S | re.M)
    facts = [f for e in examples for f in json.loads(e)["facts"]]
    assert {f["kind"] for f in facts} >= {"attribute", "relation", "preference", "possession", "skill", "routine",
                                          "plan", "event"}
    assert any(f["ends"] for f in facts)
    assert all(f["entity_type"] == "PERSON" for f in facts
               if f["kind"] == "relation" and f["predicate"].startswith("has ") and f["object_is_entity"])
    assert all(f["valid_at"] for f in facts if f["kind"] in ("plan", "event"))


# -- Anthropic -----------------------------------------------------------------------------------------
def test_anthropic_request_and_tool_call(server):
    server.push(anthropic_reply({"facts": [BERLIN]}, text="Recording."))
    ex = anthropic_ex(server)
    (c,) = ex.extract("I live in Berlin.", at=AT, context=["hello"], known_entities=["lisbon"])
    assert (c.predicate, c.object) == ("lives in", "berlin")

    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "ak-test" and req.headers["anthropic-version"] == "2023-06-01"
    body = req.body
    assert body["model"] == "claude-test" and body["temperature"] == 0 and body["max_tokens"] > 0
    assert body["tool_choice"] == {"type": "tool", "name": "record_facts"}
    assert body["tools"][0]["name"] == "record_facts" and body["tools"][0]["input_schema"]["required"] == ["facts"]
    assert "durable facts" in body["system"]
    prompt = body["messages"][0]["content"]
    assert "2026-08-20T10:00:00Z" in prompt and "lisbon" in prompt and '- "hello"' in prompt
    assert PROMPT_VERSION in ex.name


def test_anthropic_bad_tool_input_is_answered_with_an_error_tool_result(server):
    server.push(anthropic_reply({"fact": []}), anthropic_reply({"facts": [BERLIN]}))
    assert [c.object for c in anthropic_ex(server).extract("I live in Berlin.", at=AT)] == ["berlin"]
    follow = server.requests[1].body["messages"]
    assert [m["role"] for m in follow] == ["user", "assistant", "user"]
    assert follow[1]["content"][0]["type"] == "tool_use"
    result = follow[2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert result["tool_use_id"] == "toolu_scripted" and '"facts" list' in result["content"]


def test_anthropic_without_tool_call_twice_raises(server):
    server.push(anthropic_reply(text="Sure! Berlin."), anthropic_reply(text="Berlin."))
    with pytest.raises(ExtractionError, match="no record_facts tool call"):
        anthropic_ex(server).extract("I live in Berlin.", at=AT)
    assert server.requests[1].body["messages"][-1]["role"] == "user"


def test_anthropic_overloaded_then_success(server):
    server.push(error_reply(529, "overloaded"), error_reply(500, "oops"), anthropic_reply({"facts": [BERLIN]}))
    assert [c.object for c in anthropic_ex(server).extract("I live in Berlin.", at=AT)] == ["berlin"]
    assert len(server.requests) == 3


def test_anthropic_auth_error_names_its_variable(server):
    server.push(error_reply(401, "invalid x-api-key"))
    with pytest.raises(ExtractionError, match="KENNING_ANTHROPIC_API_KEY"):
        anthropic_ex(server).extract("I live in Berlin.", at=AT)


# -- through Memory ------------------------------------------------------------------------------------
def test_memory_counts_rejected_candidates_and_stores_none_of_them(server):
    server.push(openai_reply({"facts": [BERLIN, fact("lives in", "porto", subject="my sister"),
                                        fact("likes", "ramen", confidence=[0.9])]}))
    with Memory(":memory:", embedder=None, extractor=openai_ex(server)) as mem:
        r = mem.add("I live in Berlin, my sister lives in Porto.", dataset="sam", at=AT)
        assert r.status == "stored"
        assert (r.candidates_extracted, r.candidates_stored, r.candidates_rejected) == (3, 1, 2)
        assert any("not the user" in reason for reason in r.rejections)
        assert [f.object for f in mem.list_facts("sam").facts] == ["berlin"]


def test_memory_passes_known_entities_and_thread_context(server):
    server.push(openai_reply({"facts": [BERLIN]}), openai_reply({"facts": []}))
    with Memory(":memory:", embedder=None, extractor=openai_ex(server)) as mem:
        mem.add("I live in Berlin.", dataset="sam", at=AT)
        mem.add("ok thanks", dataset="sam", at=AT.replace(hour=11))
    prompt = server.requests[1].body["messages"][1]["content"]
    assert "Entities already known for this user: berlin" in prompt
    assert '- "I live in Berlin."' in prompt and "2026-08-20T11:00:00Z" in prompt
    assert message_of(server.requests[1]) == "ok thanks"


def test_an_extraction_error_keeps_the_message_and_says_why(server):
    server.push(openai_reply("no JSON here"), openai_reply("still none"))
    with Memory(":memory:", embedder=None, extractor=openai_ex(server)) as mem:
        r = mem.add("I live in Berlin.", dataset="sam", at=AT, message_id="m1")
        assert (r.status, r.reason, r.episode_id) == ("skipped", "extraction_failed", "m1")
        assert "unusable output twice" in r.extraction_error
        assert mem.list_facts("sam").total == 0
        assert [h.message_id for h in mem.messages.search("sam", "Berlin")] == ["m1"], "the message is kept"


# -- configuration -------------------------------------------------------------------------------------
def test_settings_read_llm_variables():
    s = Settings.from_env({"KENNING_LLM_BASE_URL": "http://localhost:11434/v1", "KENNING_LLM_MODEL": "llama3.1",
                           "KENNING_LLM_API_KEY": "sk-secret", "KENNING_LLM_TIMEOUT": "2.5",
                           "KENNING_ANTHROPIC_API_KEY": "ak-secret", "KENNING_ANTHROPIC_MODEL": "claude-x"})
    assert (s.llm_base_url, s.llm_model, s.llm_api_key, s.llm_timeout) == (
        "http://localhost:11434/v1", "llama3.1", "sk-secret", 2.5)
    assert (s.anthropic_base_url, s.anthropic_api_key, s.anthropic_model) == (
        "https://api.anthropic.com", "ak-secret", "claude-x")
    assert "secret" not in repr(s)
    assert Settings().llm_timeout == 30
    with pytest.raises(ConfigError, match="llm_timeout"):
        Settings.from_env({"KENNING_LLM_TIMEOUT": "0"})
    d = Settings()
    assert (d.llm_max_tokens, d.llm_response_format, d.llm_instructions) == (DEFAULT_MAX_TOKENS, "auto", "system")
    s = Settings.from_env({"KENNING_LLM_MAX_TOKENS": "900", "KENNING_LLM_RESPONSE_FORMAT": "none",
                           "KENNING_LLM_INSTRUCTIONS": "both"})
    assert (s.llm_max_tokens, s.llm_response_format, s.llm_instructions) == (900, "none", "both")
    for var, value in (("KENNING_LLM_MAX_TOKENS", "0"), ("KENNING_LLM_RESPONSE_FORMAT", "yaml"),
                       ("KENNING_LLM_INSTRUCTIONS", "developer")):
        with pytest.raises(ConfigError, match=var.removeprefix("KENNING_").lower()):
            Settings.from_env({var: value})


def test_memory_builds_openai_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("KENNING_LLM_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("KENNING_LLM_MODEL", "llama3.1")
    monkeypatch.setenv("KENNING_LLM_TIMEOUT", "3")
    server.push(openai_reply({"facts": [BERLIN]}))
    with Memory(":memory:", embedder=None, extractor="openai") as mem:
        assert isinstance(mem.extractor, OpenAIExtractor) and mem.extractor.timeout == 3.0
        assert mem.add("I live in Berlin.", dataset="sam", at=AT).status == "stored"
    assert server.requests[0].body["model"] == "llama3.1"


def test_memory_builds_anthropic_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("KENNING_ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("KENNING_ANTHROPIC_API_KEY", "ak-env")
    monkeypatch.setenv("KENNING_LLM_MODEL", "claude-from-llm-model")
    with Memory(":memory:", embedder=None, extractor="anthropic") as mem:
        assert isinstance(mem.extractor, AnthropicExtractor)
        assert mem.extractor.model == "claude-from-llm-model" and mem.extractor.api_key == "ak-env"


@pytest.mark.parametrize("env, provider, needs", [
    ({}, "openai", ["KENNING_LLM_BASE_URL", "KENNING_LLM_MODEL"]),
    ({"KENNING_LLM_BASE_URL": "http://localhost:8000/v1"}, "openai", ["KENNING_LLM_MODEL"]),
    ({"KENNING_LLM_BASE_URL": "https://api.openai.com/v1", "KENNING_LLM_MODEL": "gpt-4o-mini"}, "openai",
     ["KENNING_LLM_API_KEY"]),
    ({"KENNING_LLM_MODEL": "claude"}, "anthropic", ["KENNING_ANTHROPIC_API_KEY"]),
    ({"KENNING_ANTHROPIC_API_KEY": "k"}, "anthropic", ["KENNING_ANTHROPIC_MODEL"]),
])
def test_missing_configuration_names_the_variable(monkeypatch, env, provider, needs):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError) as err:
        Memory(":memory:", embedder=None, extractor=provider)
    for var in needs:
        assert var in str(err.value)


def test_unknown_extractor_and_bad_urls():
    with pytest.raises(ConfigError, match="'parse', 'learned', 'openai', 'anthropic'"):
        Memory(":memory:", embedder=None, extractor="gpt")
    with pytest.raises(ConfigError, match="KENNING_LLM_BASE_URL"):
        OpenAIExtractor(base_url="localhost:11434", model="m")
    with pytest.raises(ConfigError, match="response_format"):
        OpenAIExtractor(base_url="http://localhost:1/v1", model="m", response_format="yaml")
    with Memory(":memory:", embedder=None) as mem:
        assert not isinstance(mem.extractor, LLMExtractor)   # the offline extractor is the default


@pytest.mark.parametrize("base, url", [
    ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
    ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
    ("http://localhost:8080/v1/", "http://localhost:8080/v1/chat/completions"),
    ("https://host/v1beta/openai/", "https://host/v1beta/openai/chat/completions"),
    ("http://host/v1/chat/completions", "http://host/v1/chat/completions"),
])
def test_openai_endpoint_from_base_url(base, url):
    assert OpenAIExtractor(base_url=base, model="m").url == url


def test_anthropic_endpoint_from_base_url():
    assert AnthropicExtractor(model="m").url == "https://api.anthropic.com/v1/messages"
    assert AnthropicExtractor(model="m", base_url="https://gw.example/anthropic").url == \
        "https://gw.example/anthropic/v1/messages"


# -- the prompt and the parser ---------------------------------------------------------------------------
def test_prompt_ships_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "extract/prompts/*.md" in pyproject["tool"]["setuptools"]["package-data"]["kenning"]
    prompt = load_prompt()
    assert prompt.version == PROMPT_VERSION
    assert all(t in prompt.system for t in ENTITY_TYPES)
    assert "<!--" not in prompt.system and "{{message}}" in prompt.user_template
    with pytest.raises(ConfigError):
        load_prompt("extract_v0")


def test_prompt_examples_follow_the_schema():
    examples = re.findall(r'^\{"facts": \[(?:\]\}|.*?^\]\})', load_prompt().system, flags=re.S | re.M)
    assert len(examples) == 5
    for example in examples:
        data = json.loads(example)
        for item in data["facts"]:
            assert set(item) == set(FACT_FIELDS)
        assert all(c.rejected is None and c.subject == "user" for c in parse_answer(data))


def test_message_with_placeholders_is_rendered_verbatim():
    text = load_prompt().render("my {{context}} and {{known_entities}}", at=AT)
    assert "my {{context}} and {{known_entities}}" in text


def test_parser_details():
    (c,) = parse_answer([{"predicate": "lives in", "object": "berlin", "valid_at": "2026-09-01",
                          "entity_type": "SPACESHIP", "extra": 1}])
    assert c.subject == "user" and c.valid_at == datetime(2026, 9, 1, tzinfo=timezone.utc)
    assert c.entity_type == "SPACESHIP"  # the write path maps unknown types to THING
    assert parse_answer('{"facts": []}') == []
    rejected = parse_answer({"facts": [{"object": "x"}, fact("likes", "x", confidence=True),
                                       fact("likes", "x", ends="perhaps"), fact("likes", "x", entity_type=3)]})
    assert [bool(c.rejected) for c in rejected] == [True] * 4
    with pytest.raises(MalformedOutput, match="empty"):
        parse_answer("  ")
    with pytest.raises(MalformedOutput, match="a string"):
        parse_answer('"facts"')
    with pytest.raises(MalformedOutput):
        parse_answer('{"facts": [NaN')


def test_retry_policy_delays():
    p = RetryPolicy(attempts=3, base_delay=0.5, max_delay=3)
    assert [p.delay(n) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 3]
    assert p.delay(1, "2") == 2.0 and p.delay(1, "60") == 3 and p.delay(1, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.5
    with pytest.raises(ConfigError):
        RetryPolicy(attempts=0)


# -- the write-path scenarios through each provider --------------------------------------------------------
SHARED = ROOT.parent / "shared"
SCENARIOS = next((p for p in (DATA / "scenarios-dev.jsonl", SHARED / "data/scenarios-dev.jsonl") if p.is_file()),
                 DATA / "scenarios-dev.jsonl")   # the project's copy: see tests/test_scenarios.py
CHECKER = next((p for p in (SHARED / "tools/check_scenarios.py", DATA / "check_scenarios.py") if p.is_file()),
               DATA / "check_scenarios.py")
RESPONSES = DATA / "llm-scenario-responses.json"


def _scenarios() -> list:
    if not SCENARIOS.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"missing {SCENARIOS}"))]
    rows = [json.loads(line) for line in SCENARIOS.read_text().splitlines() if line.strip()]
    return [pytest.param(row, id=row["id"]) for row in rows]


@pytest.fixture(scope="module")
def responses() -> dict:
    return json.loads(RESPONSES.read_text())


@pytest.fixture(scope="module")
def checker():
    spec = importlib.util.spec_from_file_location("check_scenarios_llm", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scenario_servers(responses):
    with ScriptedServer(fixture_responder(responses, "openai")) as o, \
            ScriptedServer(fixture_responder(responses, "anthropic")) as a:
        yield {"openai": o, "anthropic": a}


def test_fixture_answers_every_user_turn(responses):
    for line in SCENARIOS.read_text().splitlines():
        for turn in json.loads(line)["turns"] if line.strip() else []:
            if turn.get("role", "user") == "user":
                assert turn["content"] in responses, f"regenerate {RESPONSES.name}: {turn['content']!r} missing"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("scenario", _scenarios())
def test_scenario_through_llm(scenario, provider, scenario_servers, checker, local_embedder):
    server = scenario_servers[provider]
    make = openai_ex if provider == "openai" else anthropic_ex
    extractor = make(server)
    before = len(server.requests)
    with Memory(":memory:", extractor=extractor) as mem:
        try:
            checker.run_scenario(mem, scenario, dataset=f"{scenario['id']}-llm")
        except checker.Failure as exc:
            pytest.fail(f"scenario {scenario['id']} via {provider}: {exc}", pytrace=False)
    extractor.close()
    user_turns = [t for t in scenario["turns"] if t.get("role", "user") == "user"]
    sent = server.requests[before:]
    assert all(r.body.get("temperature") == 0 for r in sent)
    # one request per mined turn, except turns an idempotency key stops before extraction
    assert len(sent) <= len(user_turns) and (sent or not user_turns)


def test_memory_stores_a_models_relations_routines_plans_events_and_endings(server):
    first = [f if not f["ends"] else f | {"ends": False} for f in KINDS_ANSWER["facts"]]   # cello still played
    server.push(openai_reply({"facts": first}),
                openai_reply({"facts": [fact("plays", "cello", kind="skill", entity_type="SKILL", ends=True,
                                             source_quote="I gave up the cello")]}))
    with Memory(":memory:", embedder=None, extractor=openai_ex(server)) as mem:
        r = mem.add("My husband Tom and I go climbing every weekend, we move to Portland in March, last week I ran "
                    "my first 10k, I own a Jeep and I play the cello.", dataset="sam", at=AT)
        assert r.candidates_stored == 7, "the plan is two facts: the intention and the move"
        live = {(f.kind, f.predicate, f.object) for f in mem.list_facts("sam").facts}
        assert {("relation", "has husband", "tom"), ("routine", "goes", "climbing"), ("event", "ran", "first 10k"),
                ("skill", "plays", "cello")} <= {(stored_kind(k), p, o) for k, p, o in live}
        assert ("plan", "plans to move to", "portland") in live                 # the intention, live now
        assert not any(p == "lives in" for _, p, _ in live)                    # the move shows from its date on
        later = {(f.predicate, f.object) for f in mem.list_facts("sam", as_of="2027-03-02T00:00:00Z").facts}
        assert ("lives in", "portland") in later and ("plans to move to", "portland") not in later
        run = next(f for f in mem.list_facts("sam").facts if f.predicate == "ran")
        assert run.valid_at == AT - timedelta(days=7)
        assert any(e.name == "tom" and e.type == "PERSON" for e in mem.list_entities("sam"))

        mem.add("I gave up the cello.", dataset="sam", at=AT + timedelta(days=5))
        assert "cello" not in {f.object for f in mem.list_facts("sam").facts}  # the ending ended it
