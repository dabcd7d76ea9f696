"""Per-tenant request rates (issue 16, item 10): a user token is counted per dataset, a key per project;
past the rate a caller gets 429 with Retry-After before any work is done, and the SDK waits and retries."""
from __future__ import annotations

import time

import pytest
from live_server import LiveServer

from kenning import ConfigError, Memory, RateLimited, Settings
from kenning.server.auth import hash_key


def _server(tmp_path, monkeypatch, **limits) -> LiveServer:
    monkeypatch.setenv("KENNING_SECRET", "test-secret-0123456789abcdef")
    mem = Memory(f"sqlite:///{tmp_path}/k.db", settings=Settings(**limits))
    mem.store.put_api_key(hash_key("kn_acme_svc"), "acme", "service")
    mem.store.put_api_key(hash_key("kn_beta_svc"), "beta", "service")
    return LiveServer(mem)


def test_a_user_token_past_its_rate_waits_and_no_one_else_does(tmp_path, monkeypatch):
    with _server(tmp_path, monkeypatch, rate_limit_user="5/minute", rate_limit_key="50/minute") as live:
        with live.client("kn_acme_svc") as svc:
            flood = svc.post("/v1/tokens", json={"dataset": "flood"}).json()["token"]
            calm = svc.post("/v1/tokens", json={"dataset": "calm"}).json()["token"]
        with live.client(flood) as user:
            codes = [user.get("/v1/datasets/flood/facts").status_code for _ in range(7)]
            assert codes == [200] * 5 + [429] * 2
            refused = user.post("/v1/memory/add", json={"text": "I live in Oslo.", "dataset": "flood"})
            assert refused.status_code == 429 and refused.json()["error"]["code"] == "RATE_LIMITED"
            assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert live.memory.list_facts("flood", project="acme").total == 0            # the refused add did nothing
        with live.client(calm) as other:                                             # another dataset's token
            assert other.get("/v1/datasets/calm/facts").status_code == 200
        with live.client("kn_acme_svc") as svc:                                      # the project's key
            assert svc.get("/v1/datasets").status_code == 200


def test_a_key_is_counted_per_project(tmp_path, monkeypatch):
    with _server(tmp_path, monkeypatch, rate_limit_key="3/minute") as live:
        with live.client("kn_acme_svc") as acme, live.client("kn_beta_svc") as beta:
            assert [acme.get("/v1/datasets").status_code for _ in range(4)] == [200, 200, 200, 429]
            assert beta.get("/v1/datasets").status_code == 200
            assert acme.get("/v1/health").status_code == 200                           # the health check is free


def test_no_door_and_no_environment_escapes_the_count(tmp_path, monkeypatch):
    """Issue 31, finding 7: the unversioned /memory/add was never counted (and read its body before
    authenticating), and a fresh X-Kenning-Environment got a fresh counter."""
    with _server(tmp_path, monkeypatch, rate_limit_key="3/minute") as live:
        with live.client("kn_acme_svc") as acme:
            add = {"text": "I live in Oslo.", "dataset": "sam"}
            codes = [acme.post("/memory/add", json=add).status_code for _ in range(2)]
            codes += [acme.get("/v1/datasets", headers={"X-Kenning-Environment": f"env{i}"}).status_code
                      for i in range(3)]
            assert codes == [200, 200, 200, 429, 429]
            assert acme.post("/memory/add", json=add).status_code == 429
        with live.client() as anonymous:                                   # no credential: 401 before the body
            refused = anonymous.post("/memory/add", content=b"{not json")
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "UNAUTHORIZED"


def test_every_api_route_is_behind_the_guard(tmp_path, monkeypatch):
    """Each route the app serves is an API route the guard authenticates and counts, a dashboard page (its
    own session check), the health check or the API documentation: a new door cannot skip the count."""
    from kenning.server.dashboard.render import is_page
    from kenning.server.guard import API, ASSETS, DOCS, PUBLIC

    from starlette.routing import Mount

    with _server(tmp_path, monkeypatch) as live:
        app = live.app

    def walk(routes):
        for route in routes:
            inner = getattr(route, "original_router", None)
            if inner is not None:
                yield from walk(inner.routes)
            elif not isinstance(route, Mount):          # /static and the docs' assets: files, no route code
                yield route.path

    paths = list(walk(app.routes))
    assert "/memory/add" in paths and len(paths) > 40
    loose = [p for p in paths if not (p.startswith(API) or p in PUBLIC or p in DOCS or p in ASSETS or is_page(p))]
    assert loose == []


def test_the_sdk_waits_out_a_short_retry_after_and_raises_a_long_one(tmp_path, monkeypatch):
    with _server(tmp_path, monkeypatch, rate_limit_key="2/second") as live:
        with Memory(live.url, api_key="kn_acme_svc") as remote:
            began = time.monotonic()
            for _ in range(5):
                remote.list_facts("sam")                                               # past 2/s: it waits
            assert time.monotonic() - began >= 1.0
    with _server(tmp_path / "b", monkeypatch, rate_limit_key="1/hour") as live:
        with Memory(live.url, api_key="kn_acme_svc") as remote:
            remote.list_facts("sam")
            with pytest.raises(RateLimited) as info:
                remote.list_facts("sam")
            assert info.value.retry_after > 60


def test_a_bad_rate_setting_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="invalid rate limit"):
        _server(tmp_path, monkeypatch, rate_limit_user="lots")
