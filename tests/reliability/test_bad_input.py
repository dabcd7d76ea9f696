"""Bad input over HTTP, against a real server on loopback: every refusal is a clear 4xx with the one
error shape ``{"error": {"code", "message"}}``, no request hangs (every call has a client timeout),
and nothing is stored (the row count of every table is the same before and after).

Covered: oversize texts (just over the limit, multi-MB), bodies that are not JSON, not UTF-8 or
escape half a surrogate pair, pages out of range on every listing route, NaN / Infinity / huge
numbers in every numeric field, times outside the calendar, broken embedder plugins (NaN, wrong
dimension) and tampered vectors in an import, bad dataset / environment names and credentials.
"""
from __future__ import annotations

import base64
import json


import numpy as np
import pytest
from live_server import LiveServer, module_server

from kenning import Memory
from kenning.errors import DimensionMismatch, EmbeddingError, NonFiniteVector

LIMIT = 100_000
DATASET = "sam"
JSON = {"content-type": "application/json"}

NDJSON = {"Content-Type": "application/x-ndjson"}


def counts(mem: Memory) -> dict[str, int]:
    """Rows in every table of the (SQLite) store: what "nothing stored" is checked against."""
    tables = [r[0] for r in mem.store._q("SELECT name FROM sqlite_master WHERE type = 'table'"
                                         " AND name NOT LIKE 'sqlite_%'")]
    return {t: mem.store._q(f'SELECT count(*) FROM "{t}"')[0][0] for t in tables}


def _seed(mem: Memory) -> None:
    mem.add("I live in Berlin.", DATASET)
    mem.add("I like chess.", DATASET)
    mem.notes.save(DATASET, "Works in the Lisbon office")
    mem.messages.index(DATASET, "We talked about Porto.", message_id="m1")
    mem.core.write(DATASET, "/memories/prefs.md", "likes tea\n")
    mem.documents.write("s1", "a.md", "a document")


@pytest.fixture(scope="module")
def live(tmp_path_factory, hash_embedder):
    """One seeded development-mode server (module scope: the conftest's env cleaning is per test)."""
    with module_server(lambda: Memory(":memory:", embedder=hash_embedder(16)),
                       tmp_path_factory.mktemp("kenning-home")) as server:
        _seed(server.memory)
        yield server


@pytest.fixture
def http(live):
    with live.client() as client:
        client.timeout = 60  # a request that takes longer is a hang
        yield client


def refused(live, send, status: int | tuple[int, ...] | None = None, code: str | None = None) -> dict:
    """Send a request that must be refused: a 4xx (``status`` when given) in the one error shape,
    ``code`` when given, and no row added, changed away or removed anywhere."""
    before = counts(live.memory)
    response = send()
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if status is not None:
        assert response.status_code in ((status,) if isinstance(status, int) else status), response.text[:300]
    error = response.json()["error"]
    assert isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"], error
    if code is not None:
        assert error["code"] == code, error
    assert counts(live.memory) == before, f"something was stored: {error}"
    return error


# -- sizes -----------------------------------------------------------------------------------

def _text_routes(text: str) -> list[tuple[str, str, dict]]:
    return [
        ("POST", "/v1/memory/add", {"text": text, "dataset": DATASET}),
        ("POST", "/memory/add", {"text": text, "dataset": DATASET}),
        ("POST", "/v1/memory/add_turn", {"content": text, "dataset": DATASET}),
        ("POST", f"/v1/datasets/{DATASET}/messages", {"content": text}),
        ("POST", f"/v1/datasets/{DATASET}/notes/extracted", {"texts": ["short", text]}),
        ("PUT", "/v1/documents/s1/big.md", {"text": text}),
        ("PUT", f"/v1/datasets/{DATASET}/core/file", {"path": "/memories/big.md", "text": text}),
        ("POST", f"/v1/datasets/{DATASET}/core/str_replace", {"path": "/memories/prefs.md", "old": "tea",
                                                              "new": text}),
    ]


@pytest.mark.parametrize("size", [LIMIT + 1, 5_000_000])
def test_oversize_texts_are_413_and_nothing_is_stored(live, http, size):
    text = "I live in Oslo. " * (size // 16) + "x" * (size % 16)
    assert len(text) == size
    for method, path, body in _text_routes(text):
        refused(live, lambda: http.request(method, path, json=body), 413, "TOO_LARGE")
    # A note is held to its own, smaller limit; the memory tool answers with its error text.
    refused(live, lambda: http.post(f"/v1/datasets/{DATASET}/notes", json={"text": text}), 413, "TOO_LARGE")
    before = counts(live.memory)
    tool = {"command": {"command": "create", "path": "/memories/big.md", "file_text": text}}
    if size > live.memory.settings.max_body_bytes:   # the server refuses the body before the tool sees it
        refused(live, lambda: http.post(f"/v1/datasets/{DATASET}/memory_tool", json=tool), 413, "TOO_LARGE")
    else:
        r = http.post(f"/v1/datasets/{DATASET}/memory_tool", json=tool)
        assert r.status_code == 200 and r.json()["is_error"] and "at most" in r.json()["content"]
    assert counts(live.memory) == before


def test_a_text_of_exactly_the_limit_is_kept(live, http):
    text = ("I live in Oslo. " * (LIMIT // 16))[:LIMIT]
    r = http.post("/v1/memory/add", json={"text": text, "dataset": "at-limit"})
    assert r.status_code == 200, r.text[:300]
    assert r.json()["status"] == "stored"


def test_a_multi_megabyte_body_of_many_fields_is_answered_up_to_the_body_limit(live, http):
    body = {f"field{i}": "x" * 10 for i in range(120_000)} | {"text": "I like tea.", "dataset": "wide"}
    assert 3_000_000 < len(json.dumps(body)) < live.memory.settings.max_body_bytes
    r = http.post("/v1/memory/add", content=json.dumps(body), headers=JSON)
    assert r.status_code == 200, r.text[:300]  # unknown fields are ignored, the rest is served
    body = {f"field{i}": "x" * 10 for i in range(200_000)} | {"text": "I like coffee.", "dataset": "wide"}
    refused(live, lambda: http.post("/v1/memory/add", content=json.dumps(body), headers=JSON), 413, "TOO_LARGE")


# -- bodies that are not JSON, not UTF-8 or not text -------------------------------------------

def _body_routes(live) -> list[tuple[str, str]]:
    """Every operation with a JSON body, path parameters filled in with harmless values (not the import,
    whose body is JSON lines: its own tests below)."""
    fill = {"dataset": DATASET, "fact_id": "f_none", "note_id": "n_none", "scope_key": "s1", "path": "x.md",
            "message_id": "m_none", "id": "none"}
    out = []
    for path, item in live.app.openapi()["paths"].items():
        for method, op in item.items():
            if "application/json" in op.get("requestBody", {}).get("content", {}):
                out.append((method.upper(), path.format(**fill)))
    assert len(out) >= 15, out
    return out


BAD_BODIES = {
    "invalid UTF-8": (b'{"text": "I live in \xff\xfe Rome", "dataset": "sam", "content": "\xc3\x28", "query": "x"}', 400),
    "truncated JSON": (b'{"text": "I live in Rome", "dataset": ', 422),
    "not JSON": (b"I live in Rome", 422),
    "empty": (b"", 422),
    "a JSON array": (b'["I live in Rome"]', 422),
    "deeply nested": (b'{"command": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", (400, 422)),
    "half a surrogate pair": (b'{"text": "I live in \\ud800 Rome", "dataset": "sam", "content": "\\udc00",'
                              b' "query": "\\ud83d", "texts": ["\\ud800"], "path": "/memories/\\ud800",'
                              b' "old": "tea", "new": "\\ud800", "command": {"command": "create",'
                              b' "path": "/memories/\\ud800", "file_text": "\\ud800"}, "line": 0, "old_path":'
                              b' "/memories/prefs.md", "new_path": "/memories/\\udfff"}', 422),
}


@pytest.mark.parametrize("kind", list(BAD_BODIES))
def test_bodies_that_are_no_json_text_are_refused_everywhere(live, http, kind):
    raw, status = BAD_BODIES[kind]
    for method, path in _body_routes(live):
        if kind in ("empty",) and path.endswith("/forget"):  # its body is optional: an empty one forgets
            continue
        refused(live, lambda: http.request(method, path, content=raw, headers=JSON), status)


def test_a_body_in_another_media_type_is_refused(live, http):
    refused(live, lambda: http.post("/v1/memory/add", content=b'{"text": "I like tea.", "dataset": "sam"}',
                                    headers={"content-type": "text/plain"}), 422)


def test_an_import_that_is_not_utf8_or_escapes_half_a_surrogate_is_refused(live, http):
    raw = b'{"kind": "kenning-export", "version": 1}\n\xff\n'
    refused(live, lambda: http.post("/v1/import", content=raw, headers=NDJSON), 422)
    header = {"kind": "kenning-export", "version": 1, "embedding_model": None, "dim": None, "vectors": False}
    note = {"kind": "note", "project": "default", "environment": "default", "dataset": DATASET, "note_id": "n_x",
            "namespace": "user", "text": "PLACEHOLDER", "created_at": "2026-01-01T00:00:00.000000Z",
            "forgotten_at": None, "superseded_by": None}
    raw = (json.dumps(header) + "\n" + json.dumps(note)).replace("PLACEHOLDER", "\\ud800").encode()
    refused(live, lambda: http.post("/v1/import", content=raw, headers=NDJSON), 422, "INVALID_INPUT")


# -- pages -------------------------------------------------------------------------------------

LISTINGS = [f"/v1/datasets/{DATASET}/facts", "/v1/datasets", "/v1/jobs", f"/v1/datasets/{DATASET}/notes"]
SEARCHES = [f"/v1/datasets/{DATASET}/messages/search?q=porto", f"/v1/datasets/{DATASET}/notes/search?q=lisbon"]


@pytest.mark.parametrize("route", LISTINGS)
@pytest.mark.parametrize("query", ["limit=1000000000", "limit=0", "limit=-1", "limit=" + "9" * 40, "limit=NaN",
                                   "limit=1e3", "limit=", "offset=-1", "offset=9223372036854775808",
                                   "offset=" + "9" * 40, "offset=Infinity", "offset=1.5"])
def test_listing_pages_out_of_range_are_refused(live, http, route, query):
    refused(live, lambda: http.get(f"{route}?{query}"), 422, "INVALID_INPUT")


@pytest.mark.parametrize("route", LISTINGS)
def test_the_last_possible_page_is_empty(live, http, route):
    r = http.get(f"{route}?limit=100&offset=9223372036854775807")
    assert r.status_code == 200, r.text[:300]
    assert (r.json()["facts" if route.endswith("facts") else "datasets"] if isinstance(r.json(), dict)
            else r.json()) == []


@pytest.mark.parametrize("route", SEARCHES)
@pytest.mark.parametrize("limit", ["1000000000", "0", "-1", "9" * 40, "NaN", "inf"])
def test_search_limits_out_of_range_are_refused(live, http, route, limit):
    refused(live, lambda: http.get(f"{route}&limit={limit}"), 422, "INVALID_INPUT")


@pytest.mark.parametrize("limit", ["1000000000", "0", "-1", "9" * 40, "NaN", "Infinity", "-Infinity", "1e400",
                                   "1.5", '"ten"', "null", '"10"x'])
def test_recall_limits_out_of_range_are_refused(live, http, limit):
    raw = f'{{"query": "where do I live", "dataset": "{DATASET}", "limit": {limit}}}'.encode()
    refused(live, lambda: http.post("/v1/recall", content=raw, headers=JSON), 422)


# -- NaN, Infinity and huge numbers in every numeric field ------------------------------------

NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 40, "-" + "9" * 40]
NUMERIC_FIELDS = [  # (method, path, body with NUMBER where the number goes)
    ("POST", "/v1/recall", '{"query": "x", "dataset": "sam", "budget": NUMBER}'),
    ("POST", "/v1/datasets/sam/core/insert", '{"path": "/memories/prefs.md", "line": NUMBER, "text": "x"}'),
    ("PUT", "/v1/datasets/sam/core/file", '{"path": "/memories/prefs.md", "text": "x", "expected_version": NUMBER}'),
    ("POST", "/v1/datasets/sam/core/str_replace",
     '{"path": "/memories/prefs.md", "old": "tea", "new": "coffee", "expected_version": NUMBER}'),
    ("PUT", "/v1/documents/s1/a.md", '{"text": "x", "expected_version": NUMBER}'),
    ("PUT", "/v1/documents/s1/new.md", '{"text": "x", "expires_in": NUMBER}'),
    ("POST", "/v1/tokens", '{"dataset": "sam", "expires_in": NUMBER}'),
    ("POST", "/v1/datasets/sam/notes/extracted", '{"texts": ["a new note"], "dedupe_threshold": NUMBER}'),
    ("POST", "/v1/memory/add", '{"text": "I live in Rome.", "dataset": "sam", "at": NUMBER}'),
    ("POST", "/v1/memory/add_turn", '{"content": "I live in Rome.", "dataset": "sam", "at": NUMBER}'),
    ("POST", "/v1/datasets/sam/messages", '{"content": "I live in Rome.", "at": NUMBER}'),
]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("method,path,body", NUMERIC_FIELDS, ids=[f"{m} {p}:{b[-30:]}" for m, p, b in NUMERIC_FIELDS])
def test_non_finite_and_huge_numbers_are_refused(live, http, method, path, body, number):
    raw = body.replace("NUMBER", number).encode()
    if "budget" in body and number.startswith("9"):
        # a huge budget ("no cut") is a valid one: served, no crash
        assert http.request(method, path, content=raw, headers=JSON).status_code == 200
        return
    refused(live, lambda: http.request(method, path, content=raw, headers=JSON))


@pytest.mark.parametrize("query", ["max_render=NaN", "max_render=inf", "max_render=0", "max_render=-5",
                                   "max_render=-" + "9" * 40])
def test_render_sizes_out_of_range_are_refused(live, http, query):
    refused(live, lambda: http.get(f"/v1/datasets/{DATASET}/core/render?{query}"), 422, "INVALID_INPUT")
    # A huge one is valid (no cut).
    assert http.get(f"/v1/datasets/{DATASET}/core/render?max_render={'9' * 40}").status_code == 200


def test_the_memory_tool_refuses_non_finite_numbers_as_tool_errors(live, http):
    before = counts(live.memory)
    for command in ['{"command": "insert", "path": "/memories/prefs.md", "insert_line": NaN, "insert_text": "x"}',
                    '{"command": "insert", "path": "/memories/prefs.md", "insert_line": 1e400, "insert_text": "x"}',
                    '{"command": "view", "path": "/memories/prefs.md", "view_range": [1, Infinity]}',
                    '{"command": "view", "path": "/memories/prefs.md", "view_range": [NaN, 2]}',
                    '{"command": "create", "path": "/memories/prefs.md", "file_text": "x", "expected_version": NaN}']:
        r = http.post(f"/v1/datasets/{DATASET}/memory_tool", content=f'{{"command": {command}}}'.encode(), headers=JSON)
        assert r.status_code == 200 and r.json()["is_error"], (command, r.text[:300])
    assert counts(live.memory) == before


# -- times ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "10000-01-01T00:00:00Z",
                                "2026-13-01T00:00:00Z", "yesterday", "", "9999-12-31T00:00:00Z"])
def test_message_times_outside_the_calendar_or_in_the_future_are_refused(live, http, at):
    refused(live, lambda: http.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": DATASET, "at": at}),
            422)


@pytest.mark.parametrize("as_of", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "NaN", "-inf",
                                   "2026-02-30T00:00:00Z", "9" * 40])
def test_as_of_times_outside_the_calendar_are_refused(live, http, as_of):
    refused(live, lambda: http.get(f"/v1/datasets/{DATASET}/facts", params={"as_of": as_of}), 422)


def test_a_message_from_the_year_one_is_kept_and_every_listing_still_reads(live, http):
    """A time before the year 1000 was written without its leading zeros and could not be read back:
    every later listing of the dataset failed (500)."""
    r = http.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": "ancient", "at": "0001-01-01T00:00:00Z"})
    assert r.status_code == 200, r.text[:300]
    for path in ["/v1/datasets/ancient/facts", "/v1/datasets/ancient/facts?include_invalidated=true",
                 "/v1/datasets/ancient/facts?as_of=0001-06-01T00:00:00Z", "/v1/datasets?q=ancient",
                 "/v1/export?dataset=ancient"]:
        assert http.get(path).status_code == 200, path
    assert http.post("/v1/recall", json={"query": "where", "dataset": "ancient"}).status_code == 200
    facts = http.get("/v1/datasets/ancient/facts?as_of=0001-06-01T00:00:00Z").json()["facts"]
    assert [f["object"] for f in facts] == ["rome"] and facts[0]["valid_at"].startswith("0001-01-01")


# -- names and credentials ------------------------------------------------------------------------

BAD_NAMES = [" ", "a b", "..", "-lead", "_lead", "x" * 129, "😀", "tab\tname", "nul\x00", "semi;colon", "quote'"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_dataset_names_are_refused_everywhere(live, http, name):
    refused(live, lambda: http.post("/v1/memory/add", json={"text": "I like tea.", "dataset": name}), 422, "INVALID_SCOPE")
    refused(live, lambda: http.post("/v1/memory/add_turn", json={"content": "I like tea.", "dataset": name}), 422,
            "INVALID_SCOPE")
    refused(live, lambda: http.post("/v1/recall", json={"query": "tea", "dataset": name}), 422, "INVALID_SCOPE")
    refused(live, lambda: http.post("/v1/tokens", json={"dataset": name}), 422, "INVALID_SCOPE")
    if "\x00" in name or "\t" in name:
        return  # not in a path
    for method, path, body in [("GET", "facts", None), ("GET", "notes", None), ("GET", "core", None),
                               ("POST", "notes", {"text": "a note"}), ("POST", "messages", {"content": "hi"}),
                               ("PUT", "core/file", {"path": "/memories/a.md", "text": "x"}),
                               ("POST", "memory_tool", {"command": {"command": "view", "path": "/memories"}}),
                               ("DELETE", "facts/f_1", None)]:
        send = lambda: http.request(method, f"/v1/datasets/{name}/{path}", json=body)  # noqa: B023
        refused(live, send, (404, 422) if name == ".." else 422)


@pytest.mark.parametrize("env", ["a b", "..", "x" * 129, "😀".encode(), "-x"])
def test_bad_environment_names_are_refused(live, http, env):
    headers = {"x-kenning-environment": env}
    refused(live, lambda: http.post("/v1/memory/add", json={"text": "I like tea.", "dataset": DATASET},
                                    headers=headers), 422, "INVALID_SCOPE")
    refused(live, lambda: http.get(f"/v1/datasets/{DATASET}/facts", headers=headers), 422, "INVALID_SCOPE")


def test_unknown_datasets_and_ids_are_empty_or_404(live, http):
    assert http.get("/v1/datasets/nobody/facts").json()["facts"] == []
    for send in [lambda: http.delete("/v1/datasets/nobody/facts/f_none"),
                 lambda: http.get("/v1/datasets/nobody/messages/m1"),
                 lambda: http.post("/v1/datasets/nobody/notes/n_none/forget"),
                 lambda: http.get("/v1/datasets/nobody/core/file?path=/memories/prefs.md"),
                 lambda: http.get("/v1/memory/status/req_none"),
                 lambda: http.get("/v1/documents/nobody/a.md"), lambda: http.delete("/v1/documents/nobody/a.md")]:
        refused(live, send, 404, "NOT_FOUND")


def test_routes_and_methods_that_do_not_exist_answer_in_the_error_shape(live, http):
    refused(live, lambda: http.get("/v1/nothing-here"), 404, "NOT_FOUND")
    refused(live, lambda: http.put("/v1/recall", json={}), 405, "METHOD_NOT_ALLOWED")


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer kn_unknown", "Bearer ut_garbage",
                                           "Bearer ut_" + "A" * 20_000, "bearer  kn_x", "Bearer ut_a.b.c",
                                           "Bearer \u00e9t\u00e9".encode("latin-1")])
def test_bad_credentials_are_401_and_store_nothing(live, http, authorization):
    headers = {"authorization": authorization}
    refused(live, lambda: http.post("/v1/memory/add", json={"text": "I like tea.", "dataset": DATASET},
                                    headers=headers), 401, "UNAUTHORIZED")
    refused(live, lambda: http.get(f"/v1/datasets/{DATASET}/facts", headers=headers), 401, "UNAUTHORIZED")


# -- vectors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("broken,error", [("nan", "NON_FINITE_VECTOR"), ("short", "DIMENSION_MISMATCH")])
def test_an_embedder_plugin_that_returns_bad_vectors_stores_nothing(hash_embedder, broken, error):
    with LiveServer(Memory(":memory:", embedder=hash_embedder(16, broken=broken))) as server, server.client() as http:
        http.timeout = 60
        for send in [lambda: http.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": DATASET}),
                     lambda: http.post(f"/v1/datasets/{DATASET}/notes", json={"text": "a note"}),
                     lambda: http.post(f"/v1/datasets/{DATASET}/notes/extracted", json={"texts": ["a", "b"]}),
                     lambda: http.post(f"/v1/datasets/{DATASET}/messages", json={"content": "I live in Rome."}),
                     lambda: http.post("/v1/recall", json={"query": "where", "dataset": DATASET})]:
            refused(server, send, 422, error)


@pytest.mark.parametrize("broken,error", [("nan", NonFiniteVector), ("short", DimensionMismatch)])
def test_the_library_refuses_bad_vectors_before_storing(hash_embedder, broken, error):
    mem = Memory(":memory:", embedder=hash_embedder(16, broken=broken))
    try:
        before = counts(mem)
        for call in [lambda: mem.add("I live in Rome.", DATASET), lambda: mem.notes.save(DATASET, "a note"),
                     lambda: mem.messages.index(DATASET, "hello there"), lambda: mem.recall("where", DATASET)]:
            with pytest.raises(error):
                call()
            assert counts(mem) == before
    finally:
        mem.close()


def test_a_store_refuses_an_embedder_of_another_dimension(tmp_path, hash_embedder):
    path = f"sqlite:///{tmp_path}/k.db"
    Memory(path, embedder=hash_embedder(16)).close()
    with pytest.raises(DimensionMismatch):
        Memory(path, embedder=hash_embedder(8, name="hash-16"))


def _export_with_vectors(embedder_cls, dataset: str) -> list[str]:
    mem = Memory(":memory:", embedder=embedder_cls(16))
    try:
        mem.add("I live in Rome.", dataset)
        return list(mem.export(dataset, include_vectors=True))
    finally:
        mem.close()


def _tamper(lines: list[str], vector: bytes | str | None = None, **header) -> bytes:
    out = []
    for line in lines:
        record = json.loads(line)
        if record["kind"] == "kenning-export":
            record.update(header)
        elif record["kind"] == "fact" and vector is not None:
            record["vector"] = vector if isinstance(vector, str) else base64.b64encode(vector).decode()
        out.append(json.dumps(record))
    return "\n".join(out).encode()


@pytest.mark.parametrize("case", ["nan", "inf", "short", "long", "not base64", "header dim", "header model"])
def test_an_import_with_unusable_vectors_stores_nothing(live, http, hash_embedder, case):
    donor = f"donor-{case.replace(' ', '-')}"
    lines = _export_with_vectors(hash_embedder, donor)
    f4 = lambda values: np.asarray(values, dtype="<f4").tobytes()  # noqa: E731
    body = {
        "nan": lambda: _tamper(lines, f4([np.nan] + [0.25] * 15)),
        "inf": lambda: _tamper(lines, f4([np.inf] + [0.25] * 15)),
        "short": lambda: _tamper(lines, f4([0.25] * 15)),
        "long": lambda: _tamper(lines, f4([0.25] * 17)),
        "not base64": lambda: _tamper(lines, "!!" + base64.b64encode(f4([0.25] * 16)).decode()),
        "header dim": lambda: _tamper(lines, f4([0.25] * 8), dim=8),
        "header model": lambda: _tamper(lines, None, embedding_model="another-model"),
    }[case]()
    error = refused(live, lambda: http.post("/v1/import", content=body, headers=NDJSON), 422)
    assert error["code"] in ("INVALID_INPUT", "DIMENSION_MISMATCH", "EMBEDDING_ERROR"), error
    assert http.get(f"/v1/datasets/{donor}/facts").json()["facts"] == []
    assert http.post("/v1/import", content=_tamper(lines), headers=NDJSON).status_code == 200  # untampered, it imports


def test_an_embedder_error_is_an_embedding_error_class():
    assert issubclass(NonFiniteVector, EmbeddingError) and issubclass(DimensionMismatch, EmbeddingError)


@pytest.mark.parametrize("name", ["alice\n", "alice\r\n", "\nalice"])
def test_a_name_with_a_trailing_or_leading_newline_is_refused_everywhere(name):
    """Names were checked with ``^…$``, and ``$`` also matches before a final newline: "alice\\n" was a
    valid dataset and "organization\\n" a namespace a member could write to."""
    from kenning import InputError, InvalidScope, Memory

    with Memory(":memory:", embedder=None) as mem:
        with pytest.raises(InvalidScope):
            mem.add("I live in Rome.", dataset=name)
        with pytest.raises(InvalidScope):
            mem.list_facts("sam", project=name)
        with pytest.raises(InputError):
            mem.notes.save("sam", "a note", namespace="organization\n")
        with pytest.raises(InputError):
            mem.documents.write("team\n", "a.md", "text")
        with pytest.raises(InputError):
            mem.import_(['{"kind": "kenning-export", "version": 1}',
                         json.dumps({"kind": "note", "project": "default", "environment": "default",
                                     "dataset": name, "note_id": "n1", "namespace": "user", "text": "x",
                                     "created_at": "2026-01-01T00:00:00.000000Z", "forgotten_at": None,
                                     "superseded_by": None})])
        assert mem.datasets().total == 0
