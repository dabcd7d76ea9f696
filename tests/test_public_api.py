"""The public surface that outside checks call: names, signatures and receipt fields (DESIGN.md)."""
from __future__ import annotations

import inspect

import pytest

import kenning
from kenning import AddResult, Fact, FactPage, Memory, RecallResult

# name -> (parameters in order after self, defaults the contract names)
CONTRACT = {
    "add": (["text", "dataset", "at", "client_ref", "role", "chat", "message_id"],
            {"at": None, "client_ref": None, "role": "user", "chat": None, "message_id": None}),
    "recall": (["query", "dataset", "limit"], {"limit": 10}),
    "list_facts": (["dataset", "q", "limit", "offset", "include_invalidated", "as_of", "entity"],
                   {"q": None, "limit": 50, "offset": 0, "include_invalidated": False, "as_of": None,
                    "entity": None}),
    "list_entities": (["dataset"], {}),
    "delete_fact": (["dataset", "fact_id"], {}),
    "embed_pending": ([], {}),
}


def test_all_names_exist():
    assert kenning.__all__, "kenning must declare its public names"
    assert len(kenning.__all__) == len(set(kenning.__all__))
    for name in kenning.__all__:
        assert hasattr(kenning, name), name
    for name in ("Memory", "AddResult", "Fact", "Entity", "FactPage", "RecallResult", "KenningError"):
        assert name in kenning.__all__


def test_version():
    assert isinstance(kenning.__version__, str) and kenning.__version__.count(".") >= 1


@pytest.mark.parametrize("method", sorted(CONTRACT))
def test_memory_method_signature(method):
    names, defaults = CONTRACT[method]
    fn = getattr(Memory, method)
    assert callable(fn)
    params = list(inspect.signature(fn).parameters.values())[1:]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert positional[:len(names)] == names
    by_name = {p.name: p for p in params}
    for name, default in defaults.items():
        assert by_name[name].default == default, name
    for name in names:
        if name not in defaults:
            assert by_name[name].default is inspect.Parameter.empty, f"{name} is required"


@pytest.mark.parametrize("method", sorted(set(CONTRACT) - {"embed_pending"}))
def test_every_dataset_method_takes_project_and_environment(method):
    params = inspect.signature(getattr(Memory, method)).parameters
    for name in ("project", "environment"):
        assert name in params and params[name].default is None, (method, name)


def test_embed_pending_takes_project_and_environment():
    params = inspect.signature(Memory.embed_pending).parameters
    assert "project" in params and "environment" in params


def test_memory_is_a_context_manager():
    assert hasattr(Memory, "__enter__") and hasattr(Memory, "__exit__") and hasattr(Memory, "close")


RECEIPT_FIELDS = ["status", "memory", "memory_ids", "reason", "candidates_extracted", "candidates_stored",
                  "candidates_updated", "candidates_deduped", "candidates_rejected", "deduplicated_against",
                  "supersedes"]
FACT_FIELDS = ["fact_id", "subject", "predicate", "object", "object_is_entity", "entity_type", "text", "kind",
               "confidence", "source_quote", "valid_at", "valid_until", "invalid_at", "superseded_by",
               "episode_id", "created_at"]


def test_add_result_has_every_receipt_field():
    for name in RECEIPT_FIELDS:
        assert name in AddResult.model_fields, name


def test_fact_has_every_contract_field():
    for name in FACT_FIELDS:
        assert name in Fact.model_fields, name
    assert "anchor" not in Fact.model_fields, "anchor is derived, never stored"


def test_result_types_have_their_fields():
    for name in ("facts", "total"):
        assert name in FactPage.model_fields
    for name in ("context", "facts", "notes", "messages", "items"):
        assert name in RecallResult.model_fields


def test_a_real_round_trip_returns_the_contract_types(mem):
    r = mem.add("I live in Lisbon.", dataset="sam", at=None, client_ref=None, role="user", chat=None,
                message_id=None)
    assert isinstance(r, AddResult)
    assert r.status in ("stored", "skipped")
    for name in RECEIPT_FIELDS:
        getattr(r, name)
    assert isinstance(r.memory, Fact) and r.memory.id == r.memory_ids[0]
    assert r.memory.subject == "user" and r.memory.anchor == "lisbon"
    dumped = r.model_dump()
    assert set(RECEIPT_FIELDS) <= set(dumped)

    page = mem.list_facts("sam", q=None, limit=50, offset=0, include_invalidated=False, as_of=None, entity=None)
    assert isinstance(page, FactPage) and page.total == 1
    res = mem.recall("Where does the user live?", dataset="sam", limit=10)
    assert isinstance(res, RecallResult)
    assert res.context.startswith("User facts:\n- lives in: lisbon")
    item = res.items[0]
    assert item.kind == "fact" and item.episode_id == r.memory.episode_id and item.signals
    entities = mem.list_entities("sam")
    assert [(e.name, e.type) for e in entities] == [("lisbon", "PLACE")]
    assert mem.delete_fact("sam", r.memory_ids[0]) is None
    assert mem.list_facts("sam").total == 0
    assert mem.embed_pending() == 0


def test_importing_the_sdk_starts_no_threads_and_loads_no_engine():
    """The HTTP client and the result types load without the stores, the ranking engine, the models
    or any thread; ``kenning.Memory`` still resolves (on first use)."""
    import subprocess
    import sys

    code = ("import sys, threading, kenning, kenning.client; from kenning.model import RecallResult; "
            "heavy = [m for m in ('kenning.recall', 'kenning.store.sqlite', 'kenning.memory', 'spacy', "
            "'onnxruntime') if m in sys.modules]; "
            "print(threading.active_count(), heavy, kenning.Memory.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 [] Memory"
