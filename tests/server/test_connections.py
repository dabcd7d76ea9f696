"""Issue 31, finding 4: sockets that send half a request and stop cannot keep other clients out."""
from __future__ import annotations

import socket
import time

import httpx

from kenning import Memory, Settings
from tests.live_server import LiveServer


def half_requests(port: int, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /v1/health HT")
        out.append(s)
    return out


def closed_by_server(s: socket.socket, wait: float) -> bool:
    s.settimeout(wait)
    try:
        return s.recv(1024) == b""
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def test_half_sent_requests_do_not_lock_out_other_clients(tmp_path):
    """600 stalled sockets (more than the server keeps open) and a client that behaves still gets answers."""
    settings = Settings(home=tmp_path, max_connections=200, header_timeout=30, worker_threads=0)
    with LiveServer(Memory(f"sqlite:///{tmp_path / 'k.db'}", settings=settings)) as server:
        stalled = half_requests(server.port, 600)
        try:
            with server.client() as client:
                for _ in range(5):
                    assert client.get("/v1/health").status_code == 200
            # the longest-waiting stalled sockets were closed to make room: at most max_connections stay
            time.sleep(0.5)
            gone = sum(closed_by_server(s, 0.01) for s in stalled)
            assert gone >= 600 - 200
        finally:
            for s in stalled:
                s.close()


def test_a_request_head_must_arrive_in_time(tmp_path):
    settings = Settings(home=tmp_path, header_timeout=1, worker_threads=0)
    with LiveServer(Memory(f"sqlite:///{tmp_path / 'k.db'}", settings=settings)) as server:
        slow, silent = half_requests(server.port, 1)[0], socket.create_connection(("127.0.0.1", server.port))
        try:
            assert closed_by_server(slow, 5) and closed_by_server(silent, 5)
            # a kept-alive connection gets the same deadline for its next head, and a prompt one is served
            with httpx.Client(base_url=server.url) as client:
                assert client.get("/v1/health").status_code == 200
                time.sleep(0.2)
                assert client.get("/v1/health").status_code == 200
        finally:
            slow.close()
            silent.close()


def test_requests_at_once_are_bounded_with_a_503_that_says_when_to_retry(tmp_path):
    import asyncio

    from kenning.server.connections import InFlightLimit

    started = asyncio.Event()
    release = asyncio.Event()

    async def app(scope, receive, send):
        started.set()
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    limited = InFlightLimit(app, max_requests=1)
    sent: list[dict] = []

    async def collect(message):
        sent.append(message)

    async def run():
        first = asyncio.create_task(limited({"type": "http"}, None, collect))
        await started.wait()
        await limited({"type": "http"}, None, collect)          # the second waits for nothing: 503 now
        release.set()
        await first
        await limited({"type": "http"}, None, collect)          # the slot is free again
    asyncio.run(run())
    statuses = [m["status"] for m in sent if m["type"] == "http.response.start"]
    assert statuses == [503, 200, 200]
    assert (b"retry-after", b"1") in sent[0]["headers"]
