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
