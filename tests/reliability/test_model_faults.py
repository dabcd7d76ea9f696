"""Model faults end to end: queued turns, the OpenAI-compatible extractor, a scripted model server on loopback.

For each fault (a hang past the timeout, HTTP 500, truncated JSON, facts about someone else) a turn goes
through ``add_turn`` and a worker: the call is retried within its bounds, then the job fails with an error
that says what happened, the turn is kept, and ``retry_failed()`` recovers it once the server behaves.
Facts about another subject never fail the job and are never stored. On both stores.
"""
from __future__ import annotations

import pytest

from kenning import Settings
from kenning.extract.llm import RetryPolicy
from kenning.extract.openai import OpenAIExtractor
from llm_server import Reply, ScriptedServer, error_reply, fact, openai_reply

ATTEMPTS = 2
BERLIN = fact("lives in", "berlin", entity_type="PLACE", source_quote="I live in Berlin.")
FAULTS = {
    "hang": (lambda: Reply(200, openai_reply({"facts": [BERLIN]}).body, delay=1.5), "no answer within"),
    "http-500": (lambda: error_reply(500, "internal error"), "HTTP 500"),
    "truncated-json": (lambda: openai_reply('{"facts": [{"predicate": "lives in", "obj'), "JSON"),
}


@pytest.fixture
def model():
    with ScriptedServer() as server:
        yield server


def memory_with(new_memory, model):
    extractor = OpenAIExtractor(base_url=model.url + "/v1", model="m", api_key="k", timeout=0.3,
                                retry=RetryPolicy(attempts=ATTEMPTS, base_delay=0.01, max_delay=0.02))
    return new_memory(extractor=extractor, embedder=None, settings=Settings(worker_threads=1))


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_fails_the_job_within_bounds_keeps_the_turn_and_retry_recovers(new_memory, model, fault):
    reply, words = FAULTS[fault]
    model.push(*[reply() for _ in range(2 * ATTEMPTS)])   # enough bad answers for every try, re-asks included
    mem = memory_with(new_memory, model)
    r = mem.add_turn("sam", "user", "I live in Berlin.", message_id="m1")
    mem.flush(timeout=60)
    status = mem.status(r.request_id)
    assert (status.status, status.processing_status) == ("failed", "failed")
    assert words in status.processing_error
    assert len(model.requests) <= 2 * ATTEMPTS                 # bounded: retries and one re-ask, no more
    job = mem.store.get_job(r.request_id, *mem.services.tenant())
    assert job.content == "I live in Berlin." and job.message_id == "m1"   # the turn is kept
    assert mem.list_facts("sam").total == 0

    model.requests.clear()
    model._script.clear()
    model.responder = lambda request: openai_reply({"facts": [BERLIN]})   # the server behaves again
    assert mem.retry_failed() == 1
    mem.flush(timeout=60)
    assert mem.status(r.request_id).processing_status == "done"
    assert [f.object for f in mem.list_facts("sam").facts] == ["berlin"]
    assert mem.messages.get("sam", "m1").content == "I live in Berlin."
    assert mem.retry_failed() == 0                              # nothing left to retry


def test_facts_about_someone_else_are_counted_never_stored(new_memory, model):
    model.responder = lambda request: openai_reply({"facts": [fact("lives in", "porto", subject="sister"), BERLIN]})
    mem = memory_with(new_memory, model)
    r = mem.add_turn("sam", "user", "My sister lives in Porto and I live in Berlin.")
    mem.flush(timeout=60)
    status = mem.status(r.request_id)
    assert status.processing_status == "done"
    assert status.result.candidates_rejected == 1 and status.result.candidates_stored == 1
    facts = mem.list_facts("sam", include_invalidated=True).facts
    assert [(f.subject, f.object) for f in facts] == [("user", "berlin")]
