"""One API suite, run against the library in process (on each store) and against a real server through the SDK."""
from __future__ import annotations

import pytest

from kenning import Memory


@pytest.fixture(params=["library-sqlite", "library-postgres", "http-sqlite", "http-postgres"])
def api(request):
    where, backend = request.param.split("-")
    url = request.getfixturevalue("pg_url") if backend == "postgres" else ":memory:"
    if where == "library":
        mem = Memory(url)
        yield mem
        mem.close()
        return
    from live_server import LiveServer

    with LiveServer(Memory(url)) as live:
        client = Memory(live.url)
        yield client
        client.close()
