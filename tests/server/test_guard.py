"""Attacks from a web page on a server running on loopback (security issue, item 3), each reproduced
against a real server: DNS rebinding in development mode, a cross-site no-cors import, a cross-site
write, and framing."""
from __future__ import annotations

import json

from kenning import Memory

NOTE = {"kind": "note", "project": "default", "environment": "default", "dataset": "victim", "note_id": "n1",
        "namespace": "user", "text": "planted", "created_at": "2026-01-01T00:00:00.000000Z", "forgotten_at": None,
        "superseded_by": None}
EXPORT = json.dumps({"kind": "kenning-export", "version": 1}) + "\n" + json.dumps(NOTE) + "\n"


def test_development_mode_refuses_a_foreign_host_name(dev_server):
    with dev_server.client() as c:
        r = c.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": "sam"},
                   headers={"Host": "evil.example"})
        assert r.status_code == 421 and r.json()["error"]["code"] == "HOST_NOT_ALLOWED"
        assert c.get("/v1/health", headers={"Host": "evil.example:8420"}).status_code == 421
        for host in ("127.0.0.1:8420", "localhost", "LOCALHOST:1", "[::1]:8420"):
            assert c.get("/v1/health", headers={"Host": host}).status_code == 200, host
    assert dev_server.memory.list_facts("sam").total == 0


def test_a_keyed_server_serves_any_host_name(keyed_server):
    with keyed_server.client(keyed_server.keys["service"]) as c:
        assert c.get("/v1/health", headers={"Host": "memory.example.com"}).status_code == 200


def test_a_no_cors_import_from_another_site_plants_nothing(dev_server):
    """What a page can send without CORS: text/plain, and (here) no Origin check to lean on."""
    with dev_server.client() as c:
        r = c.post("/v1/import", content=EXPORT, headers={"Content-Type": "text/plain"})
        assert r.status_code == 415 and r.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
        assert c.post("/v1/import", content=EXPORT).status_code == 415   # no type at all
        assert dev_server.memory.notes.list("victim") == []
        ok = c.post("/v1/import", content=EXPORT, headers={"Content-Type": "application/x-ndjson"})
        assert ok.status_code == 200 and dev_server.memory.notes.list("victim")[0].text == "planted"


def test_a_write_from_another_origin_is_refused(dev_server):
    with dev_server.client() as c:
        host = c.base_url.netloc.decode()
        for origin in ("https://evil.example", "null", f"http://{host}.evil.example"):
            r = c.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": "sam"},
                       headers={"Origin": origin})
            assert r.status_code == 403 and r.json()["error"]["code"] == "CROSS_ORIGIN", origin
            assert c.delete("/v1/datasets/sam", headers={"Origin": origin}).status_code == 403
        assert c.get("/v1/datasets", headers={"Origin": "https://evil.example"}).status_code == 200   # reads: CORS
        same = c.post("/v1/memory/add", json={"text": "I live in Rome.", "dataset": "sam"},
                      headers={"Origin": f"http://{host}"})
        assert same.status_code == 200
    assert [f.object for f in dev_server.memory.list_facts("sam").facts] == ["rome"]


def test_no_page_or_answer_may_be_framed(dev_server):
    with dev_server.client() as c:
        for path in ("/", "/v1/health", "/v1/datasets", "/no/such/page", "/static/htmx.min.js"):
            r = c.get(path)
            assert r.headers["x-frame-options"] == "DENY", path
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"], path
            assert r.headers["x-content-type-options"] == "nosniff", path
        refused = c.post("/v1/memory/add", json={}, headers={"Origin": "https://evil.example"})
        assert refused.headers["x-frame-options"] == "DENY"


def test_the_sdk_imports_through_the_typed_route(dev_server):
    with Memory(dev_server.url) as remote:
        assert remote.import_(EXPORT.splitlines(keepends=True))["note"] == 1


def test_answers_carry_no_server_banner(dev_server):
    with dev_server.client() as c:
        assert "server" not in c.get("/v1/health").headers


CORE = {"kind": "core_file", "project": "default", "environment": "default", "dataset": "victim",
        "namespace": "user", "path": "/memories/notes.md", "content": "hello", "version": 1,
        "created_at": "2026-01-01T00:00:00.000000Z", "updated_at": "2026-01-01T00:00:00.000000Z"}
NDJSON = {"Content-Type": "application/x-ndjson"}


def _export(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in ({"kind": "kenning-export", "version": 1}, *rows))


def test_an_import_cannot_plant_what_a_live_write_refuses(dev_server):
    """Issue 16, item 5: core files outside /memories and oversize rows came in through /v1/import."""
    with dev_server.client() as c:
        for path in ("/etc/passwd", "/memories/../../x", "/memories/\uff0e\uff0e/x"):
            r = c.post("/v1/import", content=_export({**CORE, "path": path}), headers=NDJSON)
            assert r.status_code == 422 and "nothing was imported" in r.json()["error"]["message"], path
        big = c.post("/v1/import", content=_export({**CORE, "content": "x" * 5_000_000}), headers=NDJSON)
        assert big.status_code == 413 and "a live write allows 100,000" in big.json()["error"]["message"]
        assert dev_server.memory.core.render("victim") == ""
        assert c.post("/v1/import", content=_export(CORE), headers=NDJSON).status_code == 200
        assert "hello" in dev_server.memory.core.render("victim")


def test_an_import_streams_up_to_its_byte_cap(tmp_path):
    from live_server import LiveServer

    from kenning import Settings

    with LiveServer(Memory(":memory:", settings=Settings(max_import_bytes=50_000))) as live, live.client() as c:
        def chunks(n):
            yield _export().encode()
            for i in range(n):
                yield (json.dumps({**NOTE, "note_id": f"n{i}"}) + "\n").encode()

        over = c.post("/v1/import", content=chunks(400), headers=NDJSON)          # ~95 KB, chunked
        assert over.status_code == 413 and "over 50,000 bytes" in over.json()["error"]["message"]
        assert live.memory.notes.list("victim") == []
        fits = c.post("/v1/import", content=chunks(100), headers=NDJSON)
        assert fits.status_code == 200 and fits.json()["note"] == 100


def test_a_key_imports_into_its_own_project_only(keyed_server):
    with keyed_server.client(keyed_server.keys["other"]) as c:
        r = c.post("/v1/import", content=_export({**NOTE, "project": "acme"}), headers=NDJSON)
        assert r.status_code == 403 and "another project" in r.json()["error"]["message"]
    assert keyed_server.memory.notes.list("victim", project="acme") == []


def test_an_unauthenticated_request_learns_nothing_from_body_validation(keyed_server):
    """Issue 16, item 11: an unauthenticated malformed body got 422 (naming the route's fields), not 401."""
    with keyed_server.client() as anon:
        for method, path, payload in [("POST", "/v1/memory/add", {"nonsense": 1}), ("POST", "/v1/recall", None),
                                      ("PUT", "/v1/datasets/sam/core/x", {"text": []}),
                                      ("GET", "/v1/datasets/sam/facts?limit=-5", None)]:
            r = anon.request(method, path, json=payload)
            assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHORIZED", (method, path)
            assert r.headers["www-authenticate"].startswith("Bearer")
        bad = anon.post("/v1/memory/add", content=b"{not json", headers={"Authorization": "Bearer kn_wrong",
                                                                          "Content-Type": "application/json"})
        assert bad.status_code == 401
        assert anon.get("/v1/health").status_code == 200
    with keyed_server.client(keyed_server.keys["service"]) as c:           # with a key, validation speaks
        assert c.post("/v1/memory/add", json={"nonsense": 1}).status_code == 422


def test_the_api_docs_need_credentials_when_keys_exist(keyed_server):
    with keyed_server.client() as anon:
        assert anon.get("/openapi.json").status_code == 401 and anon.get("/docs").status_code == 401
    with keyed_server.client(keyed_server.keys["member"]) as c:
        assert c.get("/openapi.json").json()["info"]["title"] == "kenning"
    import httpx
    from test_dashboard import sign_in

    with httpx.Client(base_url=keyed_server.url, timeout=30) as browser:    # a signed-in browser opens /docs
        sign_in(browser, keyed_server.keys["member"])
        assert browser.get("/docs").status_code == 200


def test_public_docs_can_be_configured(tmp_path, monkeypatch):
    from live_server import LiveServer

    from kenning import Settings
    from kenning.server.auth import hash_key

    mem = Memory(f"sqlite:///{tmp_path}/k.db", settings=Settings(public_docs=True))
    mem.store.put_api_key(hash_key("kn_x_svc"), "x", "service")
    with LiveServer(mem) as live, live.client() as anon:
        assert anon.get("/openapi.json").status_code == 200
        assert anon.get("/v1/datasets").status_code == 401


def test_pages_and_answers_carry_a_restrictive_content_policy(dev_server):
    with dev_server.client() as c:
        page = c.get("/").headers["content-security-policy"]
        assert "default-src 'none'" in page and "script-src 'self'" in page and "form-action 'self'" in page
        assert "frame-ancestors 'none'" in page and "unsafe" not in page
        assert c.get("/v1/datasets").headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
        assert "frame-ancestors 'none'" in c.get("/docs").headers["content-security-policy"]


def test_an_error_page_may_load_its_own_stylesheet(dev_server):
    """A 404 page for an unknown path is HTML: it gets the pages' policy, which lets it load /static."""
    with dev_server.client() as c:
        r = c.get("/no/such/page", headers={"Accept": "text/html"})
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
        assert "style-src 'self'" in r.headers["content-security-policy"] and "/static/style.css" in r.text
        api = c.get("/v1/no-such-route")
        assert api.status_code == 404 and api.headers["content-security-policy"].startswith("default-src 'none';")


def test_browsers_get_an_icon_and_head_answers_as_get_does(dev_server):
    with dev_server.client() as c:
        icon = c.get("/favicon.ico", follow_redirects=True)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        assert 'rel="icon"' in c.get("/").text
        for path in ("/", "/v1/health", "/static/style.css"):
            got, head = c.get(path), c.head(path)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b"" and head.headers["content-type"] == got.headers["content-type"], path
            assert head.headers.get("content-length") == got.headers.get("content-length"), path
