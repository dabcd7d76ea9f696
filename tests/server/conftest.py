"""Fixtures for the HTTP tests: servers in development mode and with keys."""
from __future__ import annotations

import pytest
from live_server import LiveServer

from kenning import Memory


@pytest.fixture
def dev_server():
    with LiveServer(Memory(":memory:")) as live:
        yield live


@pytest.fixture
def keyed_server(tmp_path, monkeypatch):
    """A server with API keys (so no development mode) and a secret for user tokens."""
    from kenning.server.auth import hash_key

    monkeypatch.setenv("KENNING_SECRET", "test-secret-0123456789abcdef")
    mem = Memory(f"sqlite:///{tmp_path}/k.db")
    keys = {"service": "kn_acme_service", "member": "kn_acme_member", "other": "kn_other_service"}
    mem.store.put_api_key(hash_key(keys["service"]), "acme", "service")
    mem.store.put_api_key(hash_key(keys["member"]), "acme", "member")
    mem.store.put_api_key(hash_key(keys["other"]), "other", "service")
    with LiveServer(mem) as live:
        live.keys = keys
        yield live
