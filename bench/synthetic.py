"""Synthetic stores for the latency benchmark: realistic word statistics, no model time spent.

Texts are 8-14 words drawn from a 5,000-word vocabulary with Zipf frequencies
(so keyword posting lists look like real ones); vectors are random unit vectors
of the bundled model's dimension (a million real embeddings would take an hour
and measure nothing else). A dataset's rows are a third each facts, messages
and notes; every fact is a ``likes`` fact, so a question about likes puts the
whole dataset in the slot signal (the worst case for that read).

Rows go in through the store's bulk import (``import_rows``: PostgreSQL's COPY),
the path ``kenning import`` takes, as export records.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import numpy as np

QUERIES = ["Where does the user live?", "What does the user do for work?", "Does the user have any pets?",
           "What food does the user like?", "When did the user move?", "What is the user training for?",
           "Which languages does the user speak?", "What car is the user looking at?"]
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


class Filler:
    """Writes synthetic rows through the store's bulk import, one transaction per call."""

    def __init__(self, store, dim: int, seed: int = 7):
        self.store, self.dim = store, dim
        self.rng = np.random.default_rng(seed)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        self.words = ["".join(self.rng.choice(letters, size=self.rng.integers(3, 9))) for _ in range(5_000)]
        ranks = np.arange(1, len(self.words) + 1)
        self.weights = (1 / ranks) / (1 / ranks).sum()

    def rows(self, dataset: str, n: int) -> dict[str, list[tuple[dict, np.ndarray]]]:
        """``n`` rows of one dataset as export records by kind: (row, vector)."""
        from kenning import timeutil

        rng = self.rng
        vectors = rng.standard_normal((n, self.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        lengths = rng.integers(8, 15, size=n)
        picks = rng.choice(len(self.words), size=int(lengths.sum()), p=self.weights)
        now = timeutil.dump(datetime.now(timezone.utc))
        out: dict[str, list] = {"fact": [], "episode": [], "note": []}
        at = 0
        for i in range(n):
            text = " ".join(self.words[j] for j in picks[at:at + lengths[i]])
            at += lengths[i]
            when = timeutil.dump(START + timedelta(minutes=i))
            kind = i % 3
            if kind == 0:
                fact_text = f"user likes {text}"
                out["fact"].append(({
                    "dataset": dataset, "fact_id": f"f_{uuid.uuid4().hex}", "subject": "user", "predicate": "likes",
                    "object": " ".join(text.split()[:2]) + f" {i}", "object_is_entity": False, "entity_id": None,
                    "entity_type": None, "text": fact_text, "kind": "preference", "confidence": 0.9,
                    "source_quote": "", "valid_at": when, "valid_until": None, "invalid_at": None,
                    "superseded_by": None, "episode_id": None, "created_at": now,
                    "embed_text": f"{fact_text}. About: user."}, vectors[i]))
            elif kind == 1:
                out["episode"].append(({
                    "dataset": dataset, "episode_id": f"m{i}", "role": "user", "chat": "c1", "content": text,
                    "context": "", "embed_text": text, "at": when, "created_at": now}, vectors[i]))
            else:
                out["note"].append(({
                    "dataset": dataset, "note_id": f"n_{uuid.uuid4().hex}", "namespace": "user", "text": text,
                    "created_at": now, "forgotten_at": None, "superseded_by": None}, vectors[i]))
        return out

    def fill(self, scope, n: int) -> None:
        self.fill_many(scope.project, scope.environment, [(scope.dataset, n)])

    def fill_many(self, project: str, environment: str, datasets: list[tuple[str, int]]) -> None:
        """Several datasets' rows in one bulk write per kind (one transaction)."""
        batches: dict[str, list] = {"fact": [], "episode": [], "note": []}
        for dataset, n in datasets:
            for kind, rows in self.rows(dataset, n).items():
                batches[kind] += rows
        with self.store.transaction(None):
            for kind, rows in batches.items():
                self.store.import_rows(kind, project, environment, rows)
