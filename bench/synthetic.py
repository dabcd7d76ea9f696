"""Synthetic stores for the latency benchmark: realistic word statistics, no model time spent.

Texts are 8-14 words drawn from a 5,000-word vocabulary with Zipf frequencies
(so keyword posting lists look like real ones); vectors are random unit vectors
of the bundled model's dimension (a million real embeddings would take an hour
and measure nothing else). A dataset's rows are a third each facts, messages
and notes; every fact is a ``likes`` fact, so a question about likes puts the
whole dataset in the slot signal (the worst case for that read).
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
    """Writes synthetic rows straight through the store contract, one transaction per dataset."""

    def __init__(self, store, dim: int, seed: int = 7):
        self.store, self.dim = store, dim
        self.rng = np.random.default_rng(seed)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        self.words = ["".join(self.rng.choice(letters, size=self.rng.integers(3, 9))) for _ in range(5_000)]
        ranks = np.arange(1, len(self.words) + 1)
        self.weights = (1 / ranks) / (1 / ranks).sum()

    def fill(self, scope, n: int) -> None:
        from kenning.model import Episode, Fact, Note

        rng, store = self.rng, self.store
        vectors = rng.standard_normal((n, self.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        lengths = rng.integers(8, 15, size=n)
        picks = rng.choice(len(self.words), size=int(lengths.sum()), p=self.weights)
        now = datetime.now(timezone.utc)
        at = 0
        with store.transaction(scope):
            for i in range(n):
                text = " ".join(self.words[j] for j in picks[at:at + lengths[i]])
                at += lengths[i]
                when = START + timedelta(minutes=i)
                kind = i % 3
                if kind == 0:
                    obj = " ".join(text.split()[:2]) + f" {i}"
                    fact = Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate="likes", object=obj,
                                text=f"user likes {text}", valid_at=when, created_at=now)
                    store.insert_fact(scope, fact, f"{fact.text}. About: user.", vectors[i])
                elif kind == 1:
                    store.insert_episode(scope, Episode(episode_id=f"m{i}", role="user", content=text, chat="c1",
                                                        at=when, created_at=now), vectors[i])
                else:
                    store.insert_note(scope, Note(note_id=f"n_{uuid.uuid4().hex}", text=text, created_at=now),
                                      vectors[i])
