"""Shared fixtures: real stores, the real bundled embedder (loaded once), a fake embedder plugin.

No mocks of kenning's own parts: stores are real SQLite (in memory or files under
``tmp_path``), the embedder is the bundled ONNX model, and the fake embedder is a
real :class:`kenning.Embedder` subclass handed to ``Memory`` the way a plugin is.
"""
from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone

import numpy as np
import pytest

from kenning import Embedder, Memory, Settings


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
