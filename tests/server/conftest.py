"""Fixtures for the HTTP tests: servers in development mode and with keys."""
from __future__ import annotations

import pytest
from live_server import LiveServer

from kenning import Memory


@pytest.fixture
def dev_server():
    with LiveServer(Memory(":memory:")) as live:
        yield live
