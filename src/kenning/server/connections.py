"""Connections: deadlines and a bound that uvicorn's HTTP protocol does not have.

uvicorn closes idle keep-alive connections, but a connection that sends half a request line and stops is
kept forever, and its ``limit_concurrency`` counts such connections: 600 of them made every other client
get 503 (issue 31, finding 4). Here a request's head must arrive within ``header_timeout`` seconds of
the connection opening (or of the previous response), else the connection is closed; and when more than
``max_connections`` are open, the one waiting longest for a request head is closed to make room, never a
connection with a request under way. How many requests run at once is bounded separately, by
:class:`InFlightLimit`, so slow sockets cannot use up that bound either.
"""
from __future__ import annotations

import asyncio
import json
import resource
from collections import OrderedDict

from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config import Settings
from .errors import body


def guarded_protocol(header_timeout: float, max_connections: int) -> type[H11Protocol]:
    """An h11 protocol class with a request-head deadline and a connection bound (one per server)."""
    waiting: OrderedDict[H11Protocol, None] = OrderedDict()   # connections with no request under way, oldest first

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._wait_for_head()
            while len(self.connections) > max_connections and waiting:
                oldest, _ = waiting.popitem(last=False)
                oldest._close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:   # a whole head came: a request runs
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait_for_head()   # the next request's head gets the same deadline

        def connection_lost(self, exc) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _wait_for_head(self) -> None:
            self._stop_waiting()
            waiting[self] = None
            self._deadline = self.loop.call_later(header_timeout, self._head_late)

        def _stop_waiting(self) -> None:
            waiting.pop(self, None)
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _head_late(self) -> None:
            self._deadline = None
            if self.cycle is None or self.cycle.response_complete:
                self._close()

        def _close(self) -> None:
            self._stop_waiting()
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


def uvicorn_options(settings: Settings) -> dict:
    """How uvicorn serves kenning (``kenning serve``, ``kenning mcp --http`` and the tests' live server): no
    ``server`` banner, idle keep-alive connections closed after 5 s, request heads within
    ``header_timeout``, at most ``max_connections`` open (the longest-waiting idle one closed for a new
    one); requests at once are bounded by :class:`InFlightLimit` in the app, not here."""
    room_for_files(settings.max_connections)
    return {"server_header": False, "timeout_keep_alive": 5, "limit_concurrency": None,
            "http": guarded_protocol(settings.header_timeout, settings.max_connections)}


def room_for_files(connections: int) -> None:
    """Raise the soft open-file limit toward the hard one so ``connections`` sockets fit beside the store."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = connections + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        target = want if hard == resource.RLIM_INFINITY else min(want, hard)
        if target > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class InFlightLimit:
    """At most ``max_requests`` HTTP requests run at once; the next gets 503 with Retry-After."""

    def __init__(self, app, max_requests: int):
        self.app, self.max_requests, self.running = app, max_requests, 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.running >= self.max_requests:
            payload = json.dumps(body("BUSY", f"the server is running {self.max_requests:,} requests at once; "
                                              "retry in a second")).encode()
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                                    (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            return
        self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1
