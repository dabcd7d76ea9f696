"""The read path: hybrid retrieval over live facts and the rendered context block.

Signals, each a ranked list: exact vector similarity over the dataset's live
facts, BM25 keyword search, entity anchors named in the query, and the slot a
question asks about ("where … live" → ``lives in``). They are fused by weighted
reciprocal rank fusion; recency breaks ties. Only live facts at or above the
confidence floor come back, and each result says which signals found it.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from datetime import datetime

import numpy as np
from pydantic import BaseModel, Field

from . import timeutil
from .embed.base import Embedder
from .model import Fact, Scope
from .store.base import FactQuery, Store

RRF_K = 20
WEIGHTS = {"vector": 1.0, "keyword": 0.7, "entity": 0.9, "slot": 1.2}
DEPTH = 50
STOPWORDS = frozenset("""a an the of to in on at for and or is are was were be been do does did what which
 who whom whose where when why how user user's users their they them he she his her it its this that
 any some about know tell me you your my i we our has have had there any all with from by as can could
 would should will into than then so if not no yes please""".split())
# Questions name slots in words of their own; map the common ones to predicates.
SLOT_HINTS = [
    (r"\b(?:live|living|lives|reside|home|city|based|address)\b", ("lives in",)),
    (r"\b(?:work|works|job|employer|company|profession|occupation|career|do for a living)\b", ("works at", "works as")),
    (r"\b(?:allerg\w*)\b", ("is allergic to",)),
    (r"\b(?:kids?|children|child|sons?|daughters?)\b", ("has child", "has son", "has daughter")),
    (r"\b(?:wife|husband|partner|spouse|married)\b", ("has wife", "has husband", "has partner", "is married to")),
    (r"\b(?:name|called)\b", ("is named",)),
    (r"\b(?:age|old|born)\b", ("is aged", "was born on")),
    (r"\b(?:from|origin|grew up|hometown)\b", ("is from", "grew up in")),
    (r"\b(?:languages?|speak)\b", ("speaks",)),
    (r"\b(?:eat|diet|food|vegetarian|vegan)\b", ("follows diet", "does not eat", "eats", "is allergic to", "likes")),
    (r"\b(?:pets?|dog|cat)\b", ("has dog", "has cat", "has")),
    (r"\b(?:study|studies|university|degree|school)\b", ("studies", "studies at")),
    (r"\b(?:drive|car)\b", ("drives", "owns")),
    (r"\b(?:like|likes|enjoy|favorite|favourite|hobbies|hobby|love)\b", ("likes",)),
    (r"\b(?:goal|goals|want|plans?|training)\b", ("wants to", "is training for")),
]


class RecallItem(BaseModel):
    kind: str
    id: str
    text: str
    score: float
    signals: dict[str, float] = Field(default_factory=dict)
    fact: Fact | None = None
    episode_id: str | None = None


class RecallResult(BaseModel):
    query: str
    context: str
    facts: list[Fact] = Field(default_factory=list)
    notes: list = Field(default_factory=list)
    messages: list = Field(default_factory=list)
    items: list[RecallItem] = Field(default_factory=list)


def query_terms(query: str) -> str:
    return " ".join(w for w in re.findall(r"\w+", query.lower()) if w not in STOPWORDS)


class Recaller:
    def __init__(self, store: Store, embedder: Embedder | None, floor: float, budget_chars: int):
        self.store, self.embedder, self.floor, self.budget = store, embedder, floor, budget_chars

    def recall(self, scope: Scope, query: str, limit: int = 10, budget: int | None = None,
               at: datetime | None = None) -> RecallResult:
        at = at or timeutil.now()
        ranked: dict[str, list[tuple[str, float]]] = {}
        if self.embedder is not None:
            ids, matrix = self.store.live_matrix(scope, at)
            if len(ids):
                scores = matrix @ self.embedder.embed(query)
                top = np.argsort(-scores)[:DEPTH]
                ranked["vector"] = [(ids[i], float(scores[i])) for i in top]
        terms = query_terms(query)
        if terms:
            ranked["keyword"] = self.store.keyword_search(scope, terms, at, DEPTH)
        ranked["entity"] = self._entity_hits(scope, query)
        ranked["slot"] = self._slot_hits(scope, query, at)

        fused: dict[str, float] = {}
        signals: dict[str, dict[str, float]] = {}
        for name, hits in ranked.items():
            for rank, (fid, raw) in enumerate(hits):
                fused[fid] = fused.get(fid, 0.0) + WEIGHTS[name] / (RRF_K + rank + 1)
                signals.setdefault(fid, {})[name] = round(raw, 4)
        facts = {f.fact_id: f for f in self.store.get_facts(scope, list(fused))}
        live = [f for f in facts.values() if f.live_at(at) and f.invalid_at is None and f.confidence >= self.floor]
        live.sort(key=lambda f: (-fused[f.fact_id], -f.valid_at.timestamp()))
        live = live[:limit]
        items = [RecallItem(kind="fact", id=f.fact_id, text=f.text, score=round(fused[f.fact_id], 6),
                            signals=signals[f.fact_id], fact=f, episode_id=f.episode_id) for f in live]
        return RecallResult(query=query, context=render_context(live, budget or self.budget),
                            facts=live, items=items)

    def _entity_hits(self, scope: Scope, query: str) -> list[tuple[str, float]]:
        q = " " + " ".join(re.findall(r"\w+", query.lower())) + " "
        hits: list[tuple[str, float]] = []
        for entity in self.store.entities(scope):
            names = [entity.name, *entity.aliases]
            if any(" " + " ".join(re.findall(r"\w+", n)) + " " in q for n in names if n):
                facts, _ = self.store.list_facts(scope, FactQuery(entity=entity.entity_id, limit=100))
                hits.extend((f.fact_id, 1.0) for f in facts)
        return hits

    def _slot_hits(self, scope: Scope, query: str, at: datetime) -> list[tuple[str, float]]:
        wanted: list[str] = []
        low = query.lower()
        for rx, predicates in SLOT_HINTS:
            if re.search(rx, low):
                wanted.extend(p for p in predicates if p not in wanted)
        if not wanted:
            return []
        facts = self.store.facts_in_slot(scope, wanted, at)
        order = {p: i for i, p in enumerate(wanted)}
        facts = [f for f in facts if f.live_at(at)]
        facts.sort(key=lambda f: (order[f.predicate], -f.valid_at.timestamp()))
        return [(f.fact_id, 1.0) for f in facts]


def render_context(facts: list[Fact], budget_chars: int) -> str:
    """Facts grouped by anchor (best group first), one line each, within the budget."""
    if not facts:
        return ""
    groups: OrderedDict[str, list[Fact]] = OrderedDict()
    for f in facts:
        groups.setdefault(f.anchor, []).append(f)
    lines = ["User facts:"]
    used = len(lines[0])
    for anchor, group in groups.items():
        for f in group:
            line = f"- {f.predicate}: {f.object}" if f.object else f"- {f.predicate}"
            line += f" (since {f.valid_at.date().isoformat()})"
            if f.valid_until is not None:
                line = line[:-1] + f", until {f.valid_until.date().isoformat()})"
            if used + len(line) + 1 > budget_chars:
                return "\n".join(lines)
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)
