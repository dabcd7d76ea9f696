"""A real kenning server on loopback (uvicorn in a thread), shared by the HTTP tests."""
from __future__ import annotations

import socket
import threading
import time

import httpx
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
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error")
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
