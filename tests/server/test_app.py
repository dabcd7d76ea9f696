"""The HTTP API against a real server on loopback: routes, auth, tokens, error bodies."""
from __future__ import annotations

import base64
import json
import time


def test_development_mode_serves_the_library(dev_server):
    assert dev_server.auth.dev_mode
    with dev_server.client() as c:
        r = c.post("/memory/add", json={"text": "I live in Berlin.", "dataset": "sam", "at": "2026-07-01T10:00:00Z"})
        assert r.status_code == 200 and r.json()["status"] == "stored"
        c.post("/v1/memory/add", json={"text": "I moved to Lisbon last month.", "dataset": "sam",
                                       "at": "2026-09-03T10:00:00Z"})
        page = c.get("/v1/datasets/sam/facts").json()
        assert [f["object"] for f in page["facts"]] == ["lisbon"] and page["total"] == 1
        history = c.get("/v1/datasets/sam/facts", params={"include_invalidated": True}).json()
        # one naming of a fact's state (Fact.state_at), as of the listing's time
        assert {(f["object"], f["state"]) for f in history["facts"]} == {("berlin", "superseded"), ("lisbon", "live")}
        as_of = c.get("/v1/datasets/sam/facts", params={"as_of": "2026-07-15T00:00:00Z"}).json()
        assert [(f["object"], f["state"]) for f in as_of["facts"]] == [("berlin", "live")]
        from kenning.model import FactPage
        assert FactPage.model_validate(as_of).facts[0].state == "live"      # the Python SDK keeps the server's word
        res = c.post("/v1/recall", json={"query": "Where does the user live?", "dataset": "sam"}).json()
        assert res["facts"][0]["object"] == "lisbon" and "lisbon" in res["context"]
        assert [e["name"] for e in c.get("/v1/datasets/sam/entities").json()] == ["berlin", "lisbon"]
        fact_id = page["facts"][0]["fact_id"]
        assert c.delete(f"/v1/datasets/sam/facts/{fact_id}").status_code == 204
        assert c.get("/v1/datasets/sam/facts").json()["total"] == 0


def test_add_turn_and_status(dev_server):
    with dev_server.client() as c:
        r = c.post("/v1/memory/add_turn", json={"dataset": "sam", "role": "user", "content": "I play the cello."})
        receipt = r.json()
        assert receipt["status"] == "processing" and receipt["memory_id"] is None
        dev_server.memory.flush(timeout=30)
        s = c.get(f"/v1/memory/status/{receipt['request_id']}").json()
        assert s["processing_status"] == "done" and s["memory_id"]
        m = c.get(f"/v1/memory/status/{s['memory_id']}").json()
        assert m == {"memory_id": s["memory_id"], "stored": True, "live": True, "searchable": True}


def test_notes_messages_core_documents_routes(dev_server):
    with dev_server.client() as c:
        note = c.post("/v1/datasets/sam/notes", json={"text": "Works in the Lisbon office"}).json()
        hits = c.get("/v1/datasets/sam/notes/search", params={"q": "where does sam work"}).json()
        assert hits[0]["note"]["note_id"] == note["note_id"]
        assert c.post(f"/v1/datasets/sam/notes/{note['note_id']}/forget").status_code == 204
        assert c.get("/v1/datasets/sam/notes").json() == []
        c.post("/v1/datasets/sam/messages", json={"content": "Planning the Kyoto trip", "message_id": "m1",
                                                  "chat": "c1"})
        assert c.get("/v1/datasets/sam/messages/m1").json()["content"] == "Planning the Kyoto trip"
        assert c.get("/v1/datasets/sam/messages/search", params={"q": "japan travel"}).json()[0]["message_id"] == "m1"
        out = c.post("/v1/datasets/sam/memory_tool", json={"command": {
            "command": "create", "path": "/memories/a.md", "file_text": "hello"}}).json()
        assert out == {"content": "File created successfully at: /memories/a.md", "is_error": False}
        bad = c.post("/v1/datasets/sam/memory_tool", json={"command": {"command": "view", "path": "/etc"}}).json()
        assert bad["is_error"] is True
        assert c.get("/v1/datasets/sam/core/file", params={"path": "/memories/a.md"}).json()["version"] == 1
        assert "hello" in c.get("/v1/datasets/sam/core/render").json()["text"]
        doc = c.put("/v1/documents/run1/plan.md", json={"text": "step 1"}).json()
        assert doc["version"] == 1
        stale = c.put("/v1/documents/run1/plan.md", json={"text": "step 2"})
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "MEMORY_DOCUMENT_CONFLICT"
        assert c.put("/v1/documents/run1/plan.md", json={"text": "step 2", "expected_version": 1}).json()["version"] == 2


def test_error_bodies_are_stable_and_traceless(dev_server):
    with dev_server.client() as c:
        r = c.delete("/v1/datasets/sam/facts/f_nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND"
        r = c.post("/memory/add", json={"text": "x" * 100_001, "dataset": "sam"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "TOO_LARGE"
        r = c.post("/memory/add", json={"dataset": "sam"})
        assert r.status_code == 422 and r.json()["error"]["code"] == "INVALID_INPUT"
        r = c.post("/v1/recall", json={"query": "", "dataset": "sam"})
        assert r.status_code == 422 and "Traceback" not in r.text
        r = c.get("/v1/datasets/a b/facts")
        assert r.status_code == 422 and r.json()["error"]["code"] == "INVALID_SCOPE"
        assert set(r.json()) == {"error"} and set(r.json()["error"]) == {"code", "message"}


def test_openapi_lists_the_routes(dev_server):
    with dev_server.client() as c:
        paths = c.get("/openapi.json").json()["paths"]
    for route in ("/memory/add", "/v1/memory/add_turn", "/v1/memory/status/{id}", "/v1/recall",
                  "/v1/datasets/{dataset}/facts", "/v1/datasets/{dataset}/memory_tool", "/v1/tokens"):
        assert route in paths


# -- authentication -------------------------------------------------------------------------------

def test_no_credentials_no_data(keyed_server):
    assert not keyed_server.auth.dev_mode
    with keyed_server.client() as c:
        for method, path in (("get", "/v1/datasets/sam/facts"), ("post", "/v1/recall"),
                             ("get", "/v1/documents/run1"), ("post", "/v1/tokens")):
            r = c.request(method, path, json={"query": "x", "dataset": "sam"} if method == "post" else None)
            assert r.status_code == 401, path
            assert r.json()["error"]["code"] == "UNAUTHORIZED"
    with keyed_server.client("kn_acme_wrong") as c:
        assert c.get("/v1/datasets/sam/facts").status_code == 401


def test_projects_never_meet(keyed_server):
    with keyed_server.client(keyed_server.keys["service"]) as acme, keyed_server.client(keyed_server.keys["other"]) as other:
        acme.post("/memory/add", json={"text": "I live in Berlin.", "dataset": "sam"})
        assert acme.get("/v1/datasets/sam/facts").json()["total"] == 1
        assert other.get("/v1/datasets/sam/facts").json()["total"] == 0
        fact_id = acme.get("/v1/datasets/sam/facts").json()["facts"][0]["fact_id"]
        assert other.delete(f"/v1/datasets/sam/facts/{fact_id}").status_code == 404
        assert acme.get("/v1/datasets/sam/facts").json()["total"] == 1


def test_member_key_reads_but_never_writes(keyed_server):
    with keyed_server.client(keyed_server.keys["member"]) as c:
        assert c.get("/v1/datasets/sam/facts").status_code == 200
        r = c.post("/memory/add", json={"text": "I live in Berlin.", "dataset": "sam"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "PERMISSION_DENIED"
        assert c.post("/v1/tokens", json={"dataset": "sam"}).status_code == 403


def _token(server, dataset="alex", role="member", expires_in=600):
    with server.client(server.keys["service"]) as c:
        r = c.post("/v1/tokens", json={"dataset": dataset, "role": role, "expires_in": expires_in})
        assert r.status_code == 200
        return r.json()["token"]


def test_user_token_sees_its_dataset_and_organization_only(keyed_server):
    with keyed_server.client(keyed_server.keys["service"]) as svc:
        svc.post("/memory/add", json={"text": "I live in Berlin.", "dataset": "sam"})
        svc.post("/v1/datasets/sam/notes", json={"text": "Answers in English", "namespace": "organization"})
    token = _token(keyed_server, "alex", "admin")
    with keyed_server.client(token) as c:
        assert c.post("/memory/add", json={"text": "I live in Oslo.", "dataset": "alex"}).status_code == 200
        assert [f["object"] for f in c.get("/v1/datasets/alex/facts").json()["facts"]] == ["oslo"]
        for path in ("/v1/datasets/sam/facts", "/v1/datasets/sam/notes", "/v1/datasets/sam/entities"):
            r = c.get(path)
            assert r.status_code == 403 and r.json()["error"]["code"] == "PERMISSION_DENIED", path
        assert c.post("/v1/recall", json={"query": "where", "dataset": "sam"}).status_code == 403
        assert c.get("/v1/documents/run1").status_code == 403
        org = c.get("/v1/datasets/alex/notes", params={"namespace": "organization"}).json()
        assert [n["text"] for n in org] == ["Answers in English"]
        assert c.post("/v1/tokens", json={"dataset": "alex"}).status_code == 403


def test_member_user_cannot_change_organization_memory(keyed_server):
    token = _token(keyed_server, "alex", "member")
    with keyed_server.client(token) as c:
        r = c.post("/v1/datasets/alex/notes", json={"text": "New policy", "namespace": "organization"})
        assert r.status_code == 403 and "ai.admin" in r.json()["error"]["message"]
        assert c.post("/v1/datasets/alex/notes", json={"text": "Mine"}).status_code == 200


def test_forged_and_expired_tokens_are_refused(keyed_server):
    token = _token(keyed_server, "alex")
    payload, signature = token[3:].split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["d"] = "sam"
    forged = "ut_" + base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode() + "." + signature
    with keyed_server.client(forged) as c:
        assert c.get("/v1/datasets/sam/facts").status_code == 401
    short = _token(keyed_server, "alex", expires_in=1)
    time.sleep(1.2)
    with keyed_server.client(short) as c:
        r = c.get("/v1/datasets/alex/facts")
        assert r.status_code == 401 and "expired" in r.json()["error"]["message"]


def test_a_server_side_error_names_no_file_or_address(dev_server, monkeypatch, caplog):
    """A store error's text names the database (a file path, a PostgreSQL address): the log keeps it, the
    answer says only what kind of error it was."""
    from kenning.errors import StoreError

    def broken(*args, **kwargs):
        raise StoreError("SQLite error on /srv/secret/place/k.db: disk I/O error")

    monkeypatch.setattr(dev_server.memory.store, "list_facts", broken)
    with dev_server.client() as c:
        r = c.get("/v1/datasets/sam/facts")
    assert r.status_code == 500
    assert r.json()["error"] == {"code": "STORE_ERROR", "message": "internal error; the server log has the details"}
    assert "/srv/secret" not in r.text
    assert "/srv/secret/place/k.db" in caplog.text


def test_a_refused_limit_names_the_bound_and_what_was_sent(dev_server):
    with dev_server.client() as c:
        cases = [(c.get("/v1/datasets/sam/facts?limit=200"), "query.limit: at most 100, got 200; page through with offset"),
                 (c.post("/v1/recall", json={"dataset": "sam", "query": "x", "limit": 500}), "limit: at most 100, got 500"),
                 (c.get("/v1/datasets/sam/facts?offset=-1"), "query.offset: at least 0, got -1"),
                 (c.get("/v1/datasets/sam/messages/search?q=" + "a" * 2100),
                  "query.q: at most 2000 characters, got 2,100 characters")]
        for r, message in cases:
            assert r.status_code == 422 and r.json()["error"]["message"].startswith(message), r.text


def test_a_refused_form_or_a_missing_body_is_said_in_words(dev_server):
    """Not "String should match pattern '…'" nor ": Field required": what the field takes, and what came."""
    with dev_server.client() as c:
        cases = [(c.post("/v1/datasets/sam/erase/content", json={"text": " a ", "dry_run": True}),
                  "text: must be a text of at least two characters that are not spaces, got ' a '"),
                 (c.post("/v1/datasets/sam/erase"), "body: this operation takes a JSON object"),
                 (c.post("/v1/datasets/sam/erase", json={}), "dry_run: Field required"),
                 (c.get("/v1/datasets/sam/notes?namespace=nobody"),
                  "query.namespace: must be user, organization, project, or agent:"),
                 (c.post("/v1/recall", json={"dataset": "bad name", "query": "x"}),
                  "dataset: must be a name of letters, digits")]
        for r, message in cases:
            assert r.status_code == 422 and r.json()["error"]["message"].startswith(message), r.text
