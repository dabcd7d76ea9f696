"""A real kenning server on loopback (uvicorn in a thread), shared by the HTTP tests."""
from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager

import httpx
import pytest
import uvicorn

from kenning import Memory
from kenning.server import build


class LiveServer:
    def __init__(self, memory: Memory, host: str = "127.0.0.1"):
        self.app, self.memory, self.auth = build(memory=memory, host=host)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        from kenning.server import uvicorn_options

        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error",
                                **uvicorn_options(memory.settings))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
        self.memory.close()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@contextmanager
def module_server(make_memory, home):
    """A LiveServer that outlives one test, on ``make_memory()`` built with the KENNING_ variables
    cleared and KENNING_HOME at ``home`` for its whole life (the suite's conftest does so per test only)."""
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("KENNING_")]:
            mp.delenv(key)
        mp.setenv("KENNING_HOME", str(home))
        with LiveServer(make_memory()) as server:
            yield server
