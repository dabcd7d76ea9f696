"""The embedder contract: one method to implement, checks written once.

A provider implements ``_embed(texts) -> ndarray`` and declares ``name`` and
``dim``; :meth:`Embedder.embed_batch` validates every vector (shape, finite
numbers) so no provider can hand the store a truncated or NaN vector.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import DimensionMismatch, EmbeddingError, InputError, NonFiniteVector


def check_vectors(vectors: np.ndarray, dim: int, *, what: str = "embedding") -> np.ndarray:
    """Return ``vectors`` as float32 (n, dim) or raise; never truncate or pad."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise DimensionMismatch(
            f"{what} has dimension {arr.shape[-1] if arr.ndim else 0}, but this store holds "
            f"{dim}-dimensional vectors; use the embedder the store was created with "
            f"or a new store"
        )
    if not np.isfinite(arr).all():
        raise NonFiniteVector(f"{what} contains NaN or infinite values; refusing to store it")
    return arr


class Embedder(ABC):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    name: str = "embedder"
    dim: int = 0

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Provider hook: (len(texts), dim) float32 array, rows L2-normalised."""

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not all(isinstance(t, str) for t in texts):
            raise EmbeddingError("embed_batch takes a list of strings")
        for t in texts:  # half a surrogate pair is no text: a tokenizer fails on it with a TypeError
            try:
                t.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(f"text holds an unpaired surrogate (U+{ord(t[exc.start]):04X}); pass valid "
                                 "Unicode") from None
        return check_vectors(self._embed(texts), self.dim, what=f"{self.name} output")

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]


class CachedEmbedder(Embedder):
    """Wraps an embedder with an LRU cache: labels and names repeat constantly."""

    def __init__(self, inner: Embedder, size: int = 4096):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self.inner.embed_batch(missing)))
        with self._lock:
            for t in texts:
                self._cache[t] = found[t]
                self._cache.move_to_end(t)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return np.stack([found[t] for t in texts])
