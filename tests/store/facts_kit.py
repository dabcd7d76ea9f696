"""What the store tests build facts with: unit vectors, a fact, putting it, and listing ids."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import numpy as np

from kenning.model import Fact, Scope
from kenning.store.base import FactQuery

DIM = 8
SAM = Scope("default", "default", "sam")
NOW = datetime.now(timezone.utc)


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim)
    return v / np.linalg.norm(v)


def make_fact(predicate="lives in", obj="berlin", *, valid_at=None, valid_until=None, invalid_at=None,
              text=None, fact_id=None) -> Fact:
    return Fact(fact_id=fact_id or f"f_{uuid.uuid4().hex}", predicate=predicate, object=obj,
                object_is_entity=True, entity_type="PLACE", text=text or f"user {predicate} {obj}",
                valid_at=valid_at or NOW - timedelta(days=30), valid_until=valid_until, invalid_at=invalid_at,
                created_at=NOW)


def put(store, fact, scope=SAM, vector=None, embed_text=None):
    store.insert_fact(scope, fact, embed_text or f"{fact.text}. About: {fact.object}.", vector)
    return fact.fact_id


def ids(store, scope=SAM, **query):
    facts, total = store.list_facts(scope, FactQuery(**query))
    assert total == len(facts) or query.get("limit")
    return {f.fact_id for f in facts}
