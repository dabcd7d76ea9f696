"""Request bodies over the server's limit are refused with 413 before they are read; imports stream freely."""
from __future__ import annotations

import json

from live_server import LiveServer

from kenning import Memory, Settings


def test_oversize_bodies_are_refused_early_and_nothing_is_stored():
    mem = Memory(":memory:", embedder=None, settings=Settings(max_body_bytes=50_000))
    with LiveServer(mem) as live, live.client() as c:
        big = json.dumps({"text": "I live in Berlin. " + "x" * 60_000, "dataset": "sam"})
        r = c.post("/v1/memory/add", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "TOO_LARGE"

        def chunks():                                       # no Content-Length: counted as it arrives
            yield b'{"text": "I live in Berlin. '
            for _ in range(20):
                yield b"y" * 5_000
            yield b'", "dataset": "sam"}'
        r = c.post("/v1/memory/add", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "TOO_LARGE"
        assert c.post("/v1/memory/add", json={"text": "I live in Porto.", "dataset": "sam"}).status_code == 200
        assert [f.object for f in live.memory.list_facts("sam").facts] == ["porto"]

        source = Memory(":memory:", embedder=None)
        for i in range(300):
            source.notes.save("alex", f"note {i} " + "z" * 200)
        lines = "".join(source.export("alex"))
        source.close()
        assert len(lines) > 50_000
        r = c.post("/v1/import", content=lines, headers={"Content-Type": "application/x-ndjson"})   # streams: no limit
        assert r.status_code == 200, r.text
        assert len(live.memory.notes.list("alex", limit=100, offset=200)) == 100
