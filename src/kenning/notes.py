"""Archival notes: free text saved on purpose, searched with the recall ranking.

Forgetting hides a note from every search but keeps it (and what superseded
it) for the history. ``save_extracted`` skips near-duplicates of notes already
kept, embedding the whole batch in one call.
"""
from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING

import numpy as np

from . import timeutil
from .errors import InputError, NotFound
from .model import Note, NoteHit
from .write import check_room, check_text, message_embed_text
from .services import check_query, check_page

if TYPE_CHECKING:
    from .services import Services

NAMESPACE = re.compile(r"(?:user|organization|project|(?:agent|chat|project):[\w.@-]{1,128})")   # fullmatch it
ORGANIZATION = "organization"
ORG_DATASET = "_organization"  # where a project's organization memory lives (no user dataset can be named so)


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE.fullmatch(namespace):
        raise InputError(f"namespace {namespace!r} is not one of: user, organization, agent:<id>, chat:<id>, "
                         "project:<id>")
    return namespace


def home_scope(scope, namespace: str):
    """Organization memory is shared by the project's users; everything else is the dataset's own."""
    return scope._replace(dataset=ORG_DATASET) if namespace == ORGANIZATION else scope


class Notes:
    def __init__(self, services: "Services"):
        self._s = services

    def _text(self, text: str) -> str:
        return check_text(text, self._s.settings.max_note_chars, "note")

    def save(self, dataset: str, text: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> Note:
        """Keep ``text``; saving a text the namespace already holds returns that note."""
        scope = home_scope(self._s.scope(dataset, project, environment), check_namespace(namespace))
        saved = self._save(scope, namespace, [self._text(text)], None)
        if saved:
            return saved[0]
        notes = self._s.store.list_notes(scope, [namespace], False, 100_000, 0)[0]
        return next(n for n in notes if n.text == text)

    def save_extracted(self, dataset: str, texts: list[str], namespace: str = "user",
                       dedupe_threshold: float | None = None, *, project: str | None = None,
                       environment: str | None = None) -> list[Note]:
        """Save the texts that are not within ``dedupe_threshold`` cosine of a kept note (or of
        each other); returns the notes saved. One embedder call for the whole batch, outside the
        store transaction; at most ``max_notes_per_call`` texts."""
        scope = home_scope(self._s.scope(dataset, project, environment), check_namespace(namespace))
        if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
            raise InputError("save_extracted takes a list of texts")
        cap = self._s.settings.max_notes_per_call
        if len(texts) > cap:
            raise InputError(f"save_extracted takes at most {cap:,} texts per call, not {len(texts):,}; "
                             "send them in smaller batches (nothing was saved)")
        texts = [self._text(t) for t in texts]
        threshold = self._s.settings.note_dedupe_threshold if dedupe_threshold is None else dedupe_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise InputError(f"dedupe_threshold must be a cosine similarity above 0 and at most 1 (1: drop "
                             f"only identical meanings), not {threshold!r}")
        return self._save(scope, namespace, texts, float(threshold))

    def _save(self, scope, namespace: str, texts: list[str], threshold: float | None) -> list[Note]:
        """Embed, dedupe, then write in one short transaction. ``threshold`` None: exact twins only."""
        check_room(self._s.store, self._s.settings, scope, sum(len(t) + len(namespace) for t in texts))
        embedder = self._s.embedder
        # Notes kept without a vector are embedded in the same call, so they count for the dedupe too.
        pending = self._pending(scope, namespace) if embedder else []
        batch = [message_embed_text(t) for t in texts] + [text for _, text in pending]
        vectors = embedder.embed_batch(batch) if embedder and batch else None
        near = self._stored_near(scope, namespace, vectors[:len(texts)]) if vectors is not None and threshold \
            else None
        # The vectors kept so far (the pending notes' fresh ones, then the batch's saved ones) in one
        # preallocated matrix: each text costs one product, not a stack that grows with the batch.
        kept, count = None, 0
        if vectors is not None:
            kept = np.empty((len(vectors), vectors.shape[1]), dtype=np.float32)
            count = len(pending)
            kept[:count] = vectors[len(texts):]
        saved: list[Note] = []
        with self._s.store.transaction(scope):
            for (note_id, text), vec in zip(pending, vectors[len(texts):] if vectors is not None else []):
                self._s.store.set_vector("note", scope, note_id, text, vec)
            existing = {n.text for n in self._s.store.list_notes(scope, [namespace], False, 100_000, 0)[0]}
            for i, text in enumerate(texts):
                vec = vectors[i] if vectors is not None else None
                if text in existing:
                    continue
                if near is not None and (near[i] >= threshold or (
                        count and float(np.max(kept[:count] @ vec)) >= threshold)):
                    continue
                note = Note(note_id=f"n_{uuid.uuid4().hex}", text=text, namespace=namespace,
                            created_at=timeutil.now())
                self._s.store.insert_note(scope, note, vec)
                saved.append(note)
                existing.add(text)
                if vec is not None:
                    kept[count] = vec
                    count += 1
        return saved

    def _stored_near(self, scope, namespace: str, vectors) -> list[float]:
        """For each vector, the cosine of the closest note the namespace already keeps (read before
        the write transaction, so a large batch never holds the dataset's writers back)."""
        out = []
        for vec in vectors:
            best = self._s.store.vector_search(scope, "note", vec, 1, namespaces=[namespace])
            out.append(best[0][1] if best else -1.0)
        return out

    def _pending(self, scope, namespace: str) -> list[tuple[str, str]]:
        waiting = self._s.store.pending("note", 10_000, scope.project, scope.environment, scope.dataset)
        notes = {n.note_id: n for n in self._s.store.get_notes(scope, [key for _, key, _ in waiting])}
        return [(key, text) for _, key, text in waiting if key in notes and notes[key].namespace == namespace
                and notes[key].forgotten_at is None]

    def search(self, dataset: str, query: str, limit: int = 10, namespace: str | list[str] | None = None, *,
               project: str | None = None, environment: str | None = None) -> list[NoteHit]:
        scope = self._s.scope(dataset, project, environment)
        with self._s.store.reading(scope, home_scope(scope, ORGANIZATION)):
            return self._search(scope, query, limit, namespace)

    def _search(self, scope, query: str, limit: int, namespace) -> list[NoteHit]:
        check_query(query, limit)
        if namespace is not None and not isinstance(namespace, (str, list, tuple)):
            raise InputError(f"namespace must be a name or a list of names, not {type(namespace).__name__}")
        spaces = None if namespace is None else [check_namespace(n) for n in
                                                 ([namespace] if isinstance(namespace, str) else namespace)]
        hits: list[NoteHit] = []
        # The dataset's own notes, and the organization's (which live in the project's shared scope).
        for where, wanted in ((scope, None if spaces is None else [s for s in spaces if s != ORGANIZATION]),
                              (home_scope(scope, ORGANIZATION), [ORGANIZATION])):
            if wanted == [] or (spaces is not None and where is not scope and ORGANIZATION not in spaces):
                continue
            fused, signals = self._s.reader.rank(where, query, kinds=("note",), namespaces=wanted)
            order = sorted(fused, key=lambda item: -fused[item])[:limit]
            hits += [NoteHit(note=n, score=round(fused["note", n.note_id], 6), signals=signals["note", n.note_id])
                     for n in self._s.store.get_notes(where, [key for _, key in order]) if n.forgotten_at is None]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def list(self, dataset: str, namespace: str | None = None, include_forgotten: bool = False, limit: int = 50,
             offset: int = 0, *, project: str | None = None, environment: str | None = None) -> list[Note]:
        scope = self._s.scope(dataset, project, environment)
        check_page(limit, offset)
        spaces = None if namespace is None else [check_namespace(namespace)]
        home = home_scope(scope, namespace or "user")
        with self._s.store.reading(home):
            return self._s.store.list_notes(home, spaces, include_forgotten, limit, offset)[0]

    def forget(self, dataset: str, note_id: str, superseded_by: str | None = None, *,
               project: str | None = None, environment: str | None = None) -> None:
        scope = self._s.scope(dataset, project, environment)
        if not self._s.store.get_notes(scope, [note_id]):   # an organization note lives in the shared scope
            scope = home_scope(scope, ORGANIZATION)
        with self._s.store.transaction(scope):
            if not self._s.store.get_notes(scope, [note_id]):
                raise NotFound(f"no note {note_id!r} in dataset {dataset!r}")
            if superseded_by is not None and not self._s.store.get_notes(scope, [superseded_by]):
                raise NotFound(f"superseded_by {superseded_by!r} is not a note of dataset {dataset!r}")
            self._s.store.forget_note(scope, note_id, timeutil.now(), superseded_by)
