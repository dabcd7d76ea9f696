"""One API suite, run against the library in process and against a real server through the SDK."""
from __future__ import annotations

import pytest

from kenning import Memory


@pytest.fixture(params=["library", "http"])
def api(request):
    if request.param == "library":
        mem = Memory(":memory:")
        yield mem
        mem.close()
        return
    from live_server import LiveServer

    with LiveServer(Memory(":memory:")) as live:
        client = Memory(live.url)
        yield client
        client.close()
