"""The Python SDK over HTTP: parity with the library, the conformance scenarios, errors, async."""
from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import uuid
from pathlib import Path

import pytest

from kenning import InputError, Memory, MemoryToolError, NotFound, PermissionDenied
from kenning.client import AsyncMemory, RemoteMemory

DATA = Path(__file__).resolve().parents[1] / "data"
PARTS = ("messages", "notes", "core", "documents")


def _public(obj) -> dict[str, list]:
    """Public methods and their parameters (names, kinds, defaults, annotations); returns differ by
    design (the builder returns a Call, the client what the server answered)."""
    return {name: list(inspect.signature(getattr(obj, name)).parameters.values()) for name in dir(obj)
            if not name.startswith("_") and callable(getattr(obj, name))}


def test_parity_every_public_method_with_the_same_signature():
    local = Memory(":memory:")
    remote = RemoteMemory("http://127.0.0.1:9")
    aremote = AsyncMemory("http://127.0.0.1:9")
    skip = {"close", "as_user", "flush"}  # lifecycle: same names, transport-specific bodies
    for other in (remote, aremote):
        mine, theirs = _public(local), _public(other)
        for name, sig in mine.items():
            if name in skip:
                continue
            assert name in theirs, f"{type(other).__name__} lacks {name}"
            assert theirs[name] == sig, f"{name}: {theirs[name]} != {sig}"
        for part in PARTS:
            mine_p, theirs_p = _public(getattr(local, part)), _public(getattr(other, part))
            for name, sig in mine_p.items():
                assert name in theirs_p, f"{type(other).__name__}.{part} lacks {name}"
                assert theirs_p[name] == sig, f"{part}.{name}: {theirs_p[name]} != {sig}"
        for name in ("flush", "as_user"):
            assert name in theirs
    local.close()


def test_memory_with_an_http_url_is_the_sdk(dev_server):
    mem = Memory(dev_server.url)
    assert isinstance(mem, RemoteMemory)
    r = mem.add("I live in Berlin.", "sam")
    assert r.status == "stored" and mem.list_facts("sam").facts[0].object == "berlin"
    mem.close()


def _scenarios():
    spec = importlib.util.spec_from_file_location("check_scenarios", DATA / "check_scenarios.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scenarios = [json.loads(line) for line in (DATA / "scenarios-dev.jsonl").read_text().splitlines() if line]
    return module, scenarios


def test_all_scenarios_pass_through_the_sdk(dev_server):
    """The conformance scenarios of the library, through a real server on loopback."""
    module, scenarios = _scenarios()
    mem = Memory(dev_server.url)
    failures = []
    for scenario in scenarios:
        try:
            module.run_scenario(mem, scenario, f"{scenario['id']}-{uuid.uuid4().hex[:6]}")
        except module.Failure as exc:
            failures.append(f"{scenario['id']}: {exc}")
    mem.close()
    assert not failures, failures


def test_errors_come_back_as_library_types(dev_server):
    mem = Memory(dev_server.url)
    with pytest.raises(NotFound):
        mem.delete_fact("sam", "f_nope")
    with pytest.raises(MemoryToolError) as info:
        mem.memory_tool("sam", {"command": "view", "path": "/memories/none.md"})
    assert info.value.text == "The path /memories/none.md does not exist. Please provide a valid path."
    mem.close()


def test_sdk_as_user_and_documents_and_core(keyed_server):
    svc = RemoteMemory(keyed_server.url, keyed_server.keys["service"])
    svc.add("I live in Berlin.", "sam")
    doc = svc.documents.write("run1", "a/b.md", "x")
    assert svc.documents.read("run1", "a/b.md").version == doc.version == 1
    svc.core.write("sam", "/memories/p.md", "hello world")
    assert svc.core.str_replace("sam", "/memories/p.md", "world", "there").content == "hello there"
    alex = svc.as_user("alex")
    alex.add("I live in Oslo.", "alex")
    assert [f.object for f in alex.list_facts("alex").facts] == ["oslo"]
    with pytest.raises(PermissionDenied):
        alex.list_facts("sam")
    with pytest.raises(PermissionDenied):
        alex.documents.read("run1", "a/b.md")
    svc.close()
    alex.close()


def test_messages_delete_over_http_as_the_user_and_not_as_another(keyed_server):
    svc = RemoteMemory(keyed_server.url, keyed_server.keys["service"])
    said = svc.add("I moved to Lisbon.", "sam", chat="c1")
    svc.messages.index("sam", "Lovely city!", role="assistant", chat="c1")
    kept = svc.add("I play the cello.", "sam", chat="c2")
    sam, ana = svc.as_user("sam"), svc.as_user("ana")
    with pytest.raises(PermissionDenied):
        ana.messages.delete("sam", said.episode_id)
    with pytest.raises(PermissionDenied):
        ana.messages.delete_chat("sam", "c1")
    assert sam.messages.delete("sam", said.episode_id) == {"messages": 1, "facts": 1, "entities": 1, "jobs": 0,
                                                                "restored": 0}
    with pytest.raises(NotFound):
        sam.messages.delete("sam", said.episode_id)
    assert sam.messages.delete_chat("sam", "c1")["messages"] == 1
    assert [f.episode_id for f in sam.list_facts("sam").facts] == [kept.episode_id]
    for client in (svc, sam, ana):
        client.close()


def test_export_import_over_http(keyed_server, tmp_path):
    svc = RemoteMemory(keyed_server.url, keyed_server.keys["service"])
    svc.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z")
    svc.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z")
    lines = list(svc.export("sam"))
    assert lines[0].startswith('{"kind": "kenning-export"') or '"kenning-export"' in lines[0]
    fresh = Memory(f"sqlite:///{tmp_path}/fresh.db")
    fresh.import_(lines)
    assert [f.object for f in fresh.list_facts("sam", project="acme").facts] == ["lisbon"]
    assert list(fresh.export("sam", project="acme")) == lines
    fresh.close()
    other = RemoteMemory(keyed_server.url, keyed_server.keys["other"])
    with pytest.raises(PermissionDenied):
        other.import_(lines)          # acme's rows cannot be imported with another project's key
    heard: list[tuple[str, int]] = []
    assert svc.import_(lines, progress=lambda kind, n: heard.append((kind, n)))["skipped"] > 0
    assert heard == [], "nothing new was imported, so nothing to report"
    assert svc.embed_pending(progress=lambda kind, n: heard.append((kind, n))) == 0 and heard == []
    svc.close()
    other.close()


def test_async_client(dev_server):
    async def go():
        async with AsyncMemory(dev_server.url) as mem:
            r = await mem.add("I love ramen.", "sam")
            assert r.status == "stored"
            res = await mem.recall("What food does the user like?", "sam")
            assert res.facts[0].object == "ramen"
            t = await mem.add_turn("sam", "user", "I live in Porto.")
            await mem.flush(timeout=30)
            s = await mem.status(t.request_id)
            assert s.processing_status == "done"
            note = await mem.notes.save("sam", "Prefers short answers")
            assert (await mem.notes.list("sam"))[0].note_id == note.note_id
    asyncio.run(go())


def test_remine_over_http_is_the_services_call(keyed_server):
    svc = RemoteMemory(keyed_server.url, keyed_server.keys["service"])
    svc.add("I live in Berlin.", "sam", message_id="m1")
    svc.add("thanks, that helped!", "sam", message_id="m2")
    [again] = svc.remine("sam")
    assert (again.episode_id, again.status, again.extraction_error) == ("m2", "skipped", None), \
        "only the user message that no fact cites"
    every = svc.remine("sam", all_messages=True)
    assert [r.episode_id for r in every] == ["m1", "m2"] and every[0].candidates_deduped == 1
    assert [r.episode_id for r in svc.remine("sam", ["m1", "m1"])] == ["m1"], "each message once"
    assert [r.episode_id for r in svc.remine("sam", all_messages=True, limit=1, offset=1)] == ["m2"]
    with pytest.raises(InputError):
        svc.remine("sam", limit=101)
    with pytest.raises(NotFound):
        svc.remine("sam", ["nope"])
    alex = svc.as_user("alex")
    with pytest.raises(PermissionDenied):
        alex.remine("alex")
    member = RemoteMemory(keyed_server.url, keyed_server.keys["member"])
    with pytest.raises(PermissionDenied):
        member.remine("sam")
    for client in (svc, alex, member):
        client.close()


BAD_SEGMENTS = ["..", ".", "", "victim/facts", "a/b"]


def _url_calls(m, bad):
    """Every SDK method that puts a caller's name or id into a URL path, with ``bad`` in that place."""
    return {
        "delete_fact id": lambda: m.delete_fact("victim", bad),
        "delete_fact dataset": lambda: m.delete_fact(bad, "f_1"),
        "list_facts": lambda: m.list_facts(bad),
        "list_entities": lambda: m.list_entities(bad),
        "delete_dataset": lambda: m.delete_dataset(bad),
        "remine": lambda: m.remine(bad),
        "memory_tool": lambda: m.memory_tool(bad, {"command": "view", "path": "/memories"}),
        "messages.get id": lambda: m.messages.get("victim", bad),
        "messages.get dataset": lambda: m.messages.get(bad, "m1"),
        "messages.chats": lambda: m.messages.chats(bad),
        "messages.thread": lambda: m.messages.thread(bad, "c1"),
        "messages.search": lambda: m.messages.search(bad, "x"),
        "messages.index": lambda: m.messages.index(bad, "x"),
        "messages.delete id": lambda: m.messages.delete("victim", bad),
        "messages.delete dataset": lambda: m.messages.delete(bad, "m1"),
        "messages.delete_chat chat": lambda: m.messages.delete_chat("victim", bad),
        "messages.delete_chat dataset": lambda: m.messages.delete_chat(bad, "c1"),
        "notes.forget id": lambda: m.notes.forget("victim", bad),
        "notes.save": lambda: m.notes.save(bad, "x"),
        "notes.list": lambda: m.notes.list(bad),
        "notes.search": lambda: m.notes.search(bad, "x"),
        "core.read": lambda: m.core.read(bad, "/memories/a.md"),
        "core.list": lambda: m.core.list(bad),
        "core.render": lambda: m.core.render(bad),
        "documents.read scope": lambda: m.documents.read(bad, "plan.md"),
        "documents.list": lambda: m.documents.list(bad),
        "documents.delete scope": lambda: m.documents.delete(bad, "plan.md"),
    }


@pytest.mark.parametrize("bad", BAD_SEGMENTS)
def test_the_sdk_refuses_an_id_or_name_that_would_resolve_to_another_route(bad):
    """`delete_fact("victim", "..")` once became DELETE /v1/datasets/victim: refused before any request
    (the client points at a closed port, so a request would fail otherwise)."""
    m = RemoteMemory("http://127.0.0.1:9")
    refused = []
    for name, call in _url_calls(m, bad).items():
        try:
            call()
        except InputError:
            refused.append(name)
        except Exception as exc:  # noqa: BLE001 - listed below
            refused.append(f"{name}: {type(exc).__name__}")
    m.close()
    assert refused == list(_url_calls(m, bad)), refused


@pytest.mark.parametrize("path", ["../scope-b/plan.md", "a/../../b", "./plan.md", "a/./b.md", ""])
def test_the_sdk_refuses_a_document_path_with_dot_or_empty_parts(path):
    m = RemoteMemory("http://127.0.0.1:9")
    for call in (lambda: m.documents.read("scope-a", path), lambda: m.documents.write("scope-a", path, "x"),
                 lambda: m.documents.delete("scope-a", path)):
        with pytest.raises(InputError):
            call()
    m.close()


def test_the_server_refuses_dot_segments_sent_as_they_are(keyed_server):
    import http.client
    from urllib.parse import urlsplit

    svc = RemoteMemory(keyed_server.url, keyed_server.keys["service"])
    svc.add("I live in Berlin.", "victim")
    svc.documents.write("scope-b", "plan.md", "secret plan")
    where = urlsplit(keyed_server.url)
    for method, path in [("DELETE", "/v1/datasets/victim/facts/.."), ("DELETE", "/v1/datasets/victim/facts/%2e%2e"),
                         ("GET", "/v1/documents/scope-a/../scope-b/plan.md"),
                         ("GET", "/v1/documents/scope-a/%2E%2E/scope-b/plan.md"),
                         ("DELETE", "/v1/datasets/victim/facts/.")]:
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
        conn.request(method, path, headers={"Authorization": f"Bearer {keyed_server.keys['service']}"})
        answer = conn.getresponse()
        assert (answer.status, json.loads(answer.read())["error"]["code"]) == (400, "INVALID_INPUT"), path
        conn.close()
    assert [f.object for f in svc.list_facts("victim").facts] == ["berlin"], "nothing was erased"
    svc.close()


def test_note_search_over_http_takes_a_list_of_namespaces_as_the_library_does(dev_server):
    with Memory(dev_server.url) as mem:
        mem.notes.save("sam", "likes green tea", namespace="agent:x")
        mem.notes.save("sam", "likes black tea")
        both = mem.notes.search("sam", "tea", namespace=["user", "agent:x"])
        assert sorted(h.note.text for h in both) == ["likes black tea", "likes green tea"]
        assert [h.note.text for h in mem.notes.search("sam", "tea", namespace="agent:x")] == ["likes green tea"]
