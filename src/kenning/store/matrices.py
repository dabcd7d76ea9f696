"""Exact per-dataset vector search over cached matrices, shared by the SQL stores.

One user's memory is small (thousands of rows): a NumPy product over the dataset's matrix is exact
and takes well under a millisecond, where reading the vectors again for every query (SQLite BLOBs,
pgvector values) costs several. The matrices are cached per dataset and kind, each stamped with the
store's change version of that dataset (:meth:`MatrixSearch._version`); a read whose version differs
loads them again, so a write by any process is seen by the next read.

A backend provides ``_version(scope)`` and ``_matrix_rows(kind, scope)``:
``fact`` → rows of live-or-future facts (``fact_id``, ``embedding``, ``valid_at``, ``valid_until``),
``episode`` → (``episode_id``, ``embedding``, ``chat``) in (time, insertion) order, ``note`` →
(``note_id``, ``embedding``, ``namespace``) of unforgotten notes, ``order`` → (``episode_id``, ``chat``)
of every message in (time, insertion) order; and ``_time_key(at)``, the form its windows compare in.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

import numpy as np

from .. import timeutil
from ..model import Scope

MATRIX_CACHE_SIZE = 256   # (dataset, kind) entries: at 10,000 rows and 384 dimensions one is ~15 MB
_PINNED: ContextVar[dict | None] = ContextVar("kenning_pinned_versions", default=None)
_UNSEEN = object()


@contextmanager
def pinned() -> Iterator[None]:
    """Within the block (and in threads running a copy of its context), each store reads a dataset's change
    version once: one recall sees one state of its matrices and pays one round trip for it, not one per read."""
    token = _PINNED.set({})
    try:
        yield
    finally:
        _PINNED.reset(token)


class MatrixSearch:
    """The Store contract's vector reads (vector_search, message_vectors, message_neighbors) over
    cached per-dataset matrices; mixed into a store that provides the hooks above."""

    cached_vectors = True   # vector reads are NumPy over memory once loaded: recall runs them in its own thread

    def _matrix_cache_init(self) -> None:
        self._matrix_cache: OrderedDict[tuple, tuple] = OrderedDict()
        self._matrix_lock = threading.Lock()

    def _version(self, scope: Scope):
        raise NotImplementedError

    def _matrix_rows(self, kind: str, scope: Scope) -> list:
        raise NotImplementedError

    def _time_key(self, at: datetime):
        return at

    def _cached(self, key: tuple, scope: Scope, load):
        """``load()`` once per change of the dataset: the value cached under ``key`` while the version holds."""
        pins = _PINNED.get()
        if pins is None:
            version = self._version(scope)
        else:
            version = pins.get((id(self), scope), _UNSEEN)
            if version is _UNSEEN:
                version = pins[id(self), scope] = self._version(scope)
        with self._matrix_lock:
            hit = self._matrix_cache.get(key)
            if hit and hit[0] == version:
                self._matrix_cache.move_to_end(key)
                return hit[1]
        value = load()   # outside the lock: another dataset's read need not wait for this one
        with self._matrix_lock:
            self._matrix_cache[key] = (version, value)
            self._matrix_cache.move_to_end(key)
            while len(self._matrix_cache) > MATRIX_CACHE_SIZE:
                self._matrix_cache.popitem(last=False)
        return value

    def _drop_cached(self, scope: Scope | None = None) -> None:
        """Forget the cached matrices (of one dataset, or all): after an erasure, its vectors leave this
        process's memory at once, not when the next read of the dataset finds the version changed."""
        with self._matrix_lock:
            if scope is None:
                self._matrix_cache.clear()
                return
            for key in [k for k in self._matrix_cache if scope in k]:
                del self._matrix_cache[key]

    # -- the matrices -----------------------------------------------------------------------
    def live_matrix(self, scope: Scope, at: datetime) -> tuple[list[str], np.ndarray]:
        def load():
            rows = self._matrix_rows("fact", scope)
            ids, matrix = matrix_of(rows, "fact_id", self.embedding_dim())
            windows = [(r["valid_at"], r["valid_until"]) for r in rows]
            # Usually every window is open-ended and already started: then no per-row check is needed.
            latest = max((va for va, _ in windows), default=None)
            open_ended = all(vu is None for _, vu in windows)
            return ids, matrix, windows, latest, open_ended
        ids, matrix, windows, latest, open_ended = self._cached(("fact", scope), scope, load)
        t = self._time_key(at)
        if open_ended and (latest is None or latest <= t):
            return ids, matrix
        keep = [i for i, (va, vu) in enumerate(windows) if va <= t and (vu is None or vu > t)]
        if len(keep) == len(ids):
            return ids, matrix
        return [ids[i] for i in keep], matrix[keep]

    def episode_matrix(self, scope: Scope) -> tuple[list[str], np.ndarray, list]:
        def load():
            rows = self._matrix_rows("episode", scope)
            ids, matrix = matrix_of(rows, "episode_id", self.embedding_dim())
            return ids, matrix, [r["chat"] for r in rows]
        return self._cached(("episode", scope), scope, load)

    def note_matrix(self, scope: Scope) -> tuple[list[str], np.ndarray, list]:
        def load():
            rows = self._matrix_rows("note", scope)
            ids, matrix = matrix_of(rows, "note_id", self.embedding_dim())
            return ids, matrix, [r["namespace"] for r in rows]
        return self._cached(("note", scope), scope, load)

    # -- the contract's reads ------------------------------------------------------------------
    def vector_search(self, scope: Scope, kind: str, query: np.ndarray, k: int, *, at: datetime | None = None,
                      exclude_chat: str | None = None, namespaces: list[str] | None = None,
                      floor: float = -1.0) -> list[tuple[str, float]]:
        """Exact search with NumPy over the dataset's cached matrix (per-user memory is small)."""
        keep = None
        if kind == "fact":
            ids, matrix = self.live_matrix(scope, at or timeutil.now())
        elif kind == "episode":
            ids, matrix, chats = self.episode_matrix(scope)
            if exclude_chat is not None:
                keep = np.array([c != exclude_chat for c in chats], dtype=bool)
        elif kind == "note":
            ids, matrix, spaces = self.note_matrix(scope)
            if namespaces is not None:
                keep = np.array([s in namespaces for s in spaces], dtype=bool)
        else:
            from ..errors import InputError

            raise InputError(f"vector_search covers fact, episode and note, not {kind!r}")
        if k < 1 or self.embedding_dim() is None:
            return []
        self._check(query)
        return top_k(ids, matrix, query, k, keep, floor)

    def message_vectors(self, scope: Scope, episode_ids: list[str]) -> dict[str, np.ndarray]:
        ids, matrix, _ = self.episode_matrix(scope)   # the cached matrix: no vector is read twice
        where = self._cached(("episode-index", scope), scope, lambda: {key: i for i, key in enumerate(ids)})
        return {key: matrix[where[key]] for key in episode_ids if key in where}

    def message_neighbors(self, scope: Scope, episode_ids: list[str],
                          exclude_chat: str | None = None) -> dict[str, list[str]]:
        """For each given message (in the order given), the messages just before and after it in its chat,
        by (time, insertion order); messages of ``exclude_chat``, and messages without a chat, have none."""
        def load():  # every chat's messages in order, embedded or not (a neighbour needs no vector)
            chats: dict[str | None, list[str]] = {}
            where: dict[str, tuple[str | None, int]] = {}
            for r in self._matrix_rows("order", scope):
                key, chat = r["episode_id"], r["chat"]
                where[key] = (chat, len(chats.setdefault(chat, [])))
                chats[chat].append(key)
            return where, chats
        if not episode_ids:
            return {}
        where, chats = self._cached(("order", scope), scope, load)
        out: dict[str, list[str]] = {}
        for key in episode_ids:
            if key not in where or where[key][0] is None or where[key][0] == exclude_chat:
                continue   # a message without a chat belongs to no conversation: it has no neighbours
            chat, i = where[key]
            turns = chats[chat]
            out[key] = [turns[j] for j in (i - 1, i + 1) if 0 <= j < len(turns)]
        return out


def top_k(ids: list[str], matrix: np.ndarray, query: np.ndarray, k: int, keep=None,
          floor: float = -1.0) -> list[tuple[str, float]]:
    if not len(ids):
        return []
    scores = matrix @ np.asarray(query, dtype=np.float32)
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    k = min(k, len(ids))
    part = np.argpartition(-scores, k - 1)[:k]
    order = part[np.argsort(-scores[part])]
    return [(ids[i], float(scores[i])) for i in order if np.isfinite(scores[i]) and scores[i] >= floor]


def matrix_of(rows, key: str, dim: int | None) -> tuple[list[str], np.ndarray]:
    """(ids, float32 matrix) of rows whose ``embedding`` is float32 bytes or an array."""
    if not rows:
        return [], np.zeros((0, dim or 0), dtype=np.float32)
    ids = [r[key] for r in rows]
    first = rows[0]["embedding"]
    if isinstance(first, (bytes, memoryview)):
        matrix = np.frombuffer(b"".join(r["embedding"] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    else:
        matrix = np.stack([_array(r["embedding"]) for r in rows])
    return ids, matrix


def _array(value) -> np.ndarray:
    if hasattr(value, "to_numpy"):  # pgvector's Vector
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
