"""The read path: hybrid retrieval over facts, notes and messages, and the context block.

Each memory kind contributes ranked lists ("signals"): exact vector similarity
within the dataset, BM25 keyword search, and for facts the entities named in
the query and the slot a question asks about ("where … live" → ``lives in``).
Lists are fused by weighted reciprocal rank fusion; the weights and depths are
a named preset measured on LoCoMo (bench/locomo.py), not guesses. Only live
facts at or above the confidence floor come back, and every item says which
signals found it and with what raw score.
"""
from __future__ import annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from . import timeutil
from .embed.base import Embedder
from .model import Episode, Fact, MessageHit, Note, RecallItem, RecallResult, Scope
from .store.base import Store

STOPWORDS = frozenset("""a an the of to in on at for and or is are was were be been do does did what which
 who whom whose where when why how user user's users their they them he she his her it its this that
 any some about know tell me you your my i we our has have had there all with from by as can could
 would should will into than then so if not no yes please did ever""".split())
MAX_QUERY_TERMS = 64
REDUNDANT = 0.5  # weight of a second item from the same message
TOKEN_PIECES = re.compile(r"\w+|[^\w\s]")
MIN_KEYWORD = 0.05  # BM25 below this means the words are everywhere: no evidence either way
MIN_COSINE = 0.2    # a message or note this far from the query is unrelated to it (facts are few and
                    # distilled: a broad "what do you know about the user" should still list them)
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
    (r"\b(?:pets?|dog|cat)\b", ("has dog", "has cat", "has pet", "has")),
    (r"\b(?:study|studies|university|degree|school)\b", ("studies", "studies at")),
    (r"\b(?:drive|car)\b", ("drives", "owns")),
    (r"\b(?:like|likes|enjoy|favorite|favourite|hobbies|hobby|love)\b", ("likes",)),
    (r"\b(?:goal|goals|want|plans?|training)\b", ("wants to", "is training for")),
]


@functools.lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    """The side-by-side reads' threads, made on the first parallel recall: importing starts nothing."""
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="kenning-recall")


@dataclass(frozen=True)
class Preset:
    """How signals are weighed and how deep each list is read: a named, measured strategy."""

    name: str
    weights: dict[tuple[str, str], float] = field(default_factory=dict)
    rrf_k: int = 20
    depth: int = 50
    fusion: str = "rrf"        # rrf: weight / (k + rank); linear: weight * score / best score of the list
    neighbors: int = 0         # the turns next to the top n messages share their score


# Measured with bench/locomo.py (see docs in the closing note of the recall issue): keyword evidence
# over messages (with the message before as context) leads, the vector and the turns next to the
# best hits follow; facts at half weight add their distilled form without crowding out messages.
HYBRID = Preset("hybrid", {
    ("fact", "vector"): 0.5, ("fact", "keyword"): 0.35, ("fact", "entity"): 0.45, ("fact", "slot"): 0.6,
    ("message", "vector"): 0.6, ("message", "keyword"): 1.0, ("message", "neighbor"): 0.6,
    ("note", "vector"): 0.6, ("note", "keyword"): 1.0,
}, rrf_k=5, neighbors=10)
DENSE = Preset("dense", {("fact", "vector"): 1.0, ("message", "vector"): 1.0, ("note", "vector"): 1.0})
PRESETS = {p.name: p for p in (HYBRID, DENSE)}


# "the user" as an assistant asks about the person, in the first person the person wrote their notes and
# messages in: "Where does the user live?" reads like "Where do I live?" to an embedder, not like "I live…".
_FIRST_PERSON = [
    (re.compile(r"\b(?:the\s+)?user's\b", re.I), lambda m: "my"),
    (re.compile(r"\b(does|did)\s+the\s+user\b", re.I), lambda m: "do I" if m.group(1).lower() == "does" else "did I"),
    (re.compile(r"\bis\s+the\s+user\b", re.I), lambda m: "am I"),
    (re.compile(r"\bhas\s+the\s+user\b", re.I), lambda m: "have I"),
    (re.compile(r"\b(was|can|could|will|would|should)\s+the\s+user\b", re.I), lambda m: f"{m.group(1)} I"),
    (re.compile(r"\b(about|for|to|with|of|tell|know|remind|help|ask)\s+the\s+user\b", re.I), lambda m: f"{m.group(1)} me"),
    (re.compile(r"\bthe\s+user\b", re.I), lambda m: "I"),
]


def first_person(query: str) -> str:
    """The query with "the user" put in the first person (the same text when it names no user)."""
    for pattern, repl in _FIRST_PERSON:
        query = pattern.sub(repl, query)
    return query


def query_terms(query: str) -> str:
    words = [w for w in re.findall(r"\w+", query.lower()) if w not in STOPWORDS]
    return " ".join(list(dict.fromkeys(words))[:MAX_QUERY_TERMS])


def fuse(ranked: dict[tuple[str, str], list[tuple[str, float]]], preset: Preset):
    """Weighted reciprocal rank fusion over (kind, signal) lists → {(kind, id): score}, signals."""
    fused: dict[tuple[str, str], float] = {}
    signals: dict[tuple[str, str], dict[str, float]] = {}
    for (kind, signal), hits in ranked.items():
        weight = preset.weights.get((kind, signal), 0.0)
        if not weight:
            continue
        best = max((raw for _, raw in hits), default=0.0)
        for rank, (key, raw) in enumerate(hits):
            item = (kind, key)
            if preset.fusion == "linear":
                part = weight * (raw / best if best > 0 else 0.0)
            else:
                part = weight / (preset.rrf_k + rank + 1)
            fused[item] = fused.get(item, 0.0) + part
            signals.setdefault(item, {})[signal] = round(raw, 4)
    return fused, signals


class Recaller:
    def __init__(self, store: Store, embedder: Embedder | None, floor: float, budget: int,
                 preset: Preset = HYBRID, unit: str = "chars"):
        self.store, self.embedder, self.floor, self.budget = store, embedder, floor, budget
        self.preset, self.unit = preset, unit

    def embed_query(self, query: str) -> np.ndarray | None:
        return None if self.embedder is None else self.embedder.embed(query[:2000])

    # -- the one ranking behind recall, messages.search and notes.search ------------------
    def rank(self, scope: Scope, query: str, kinds=("fact", "note", "message"), at: datetime | None = None,
             exclude_chat: str | None = None, namespaces: list[str] | None = None):
        at = at or timeutil.now()
        # Notes and messages are the person's own words, and facts read "user lives in …": the question
        # is embedded once, in the first person ("Where do I live?"), which meets both.
        qvec = self.embed_query(first_person(query))
        terms = query_terms(query)
        depth = self.preset.depth
        reads: dict[tuple[str, str], Callable[[], list[tuple[str, float]]]] = {}
        store = self.store
        if "fact" in kinds:
            if qvec is not None:
                reads["fact", "vector"] = lambda: store.vector_search(scope, "fact", qvec, depth, at=at)
            if terms:
                reads["fact", "keyword"] = lambda: _evidence(store.keyword_search(scope, terms, at, depth))
            reads["fact", "entity"] = lambda: self._entity_hits(scope, query)
            reads["fact", "slot"] = lambda: self._slot_hits(scope, query, at)
        if "message" in kinds:
            if qvec is not None:
                reads["message", "vector"] = lambda: store.vector_search(
                    scope, "episode", qvec, depth, exclude_chat=exclude_chat, floor=MIN_COSINE)
            if terms:
                reads["message", "keyword"] = lambda: _evidence(
                    store.episode_keyword_search(scope, terms, depth, exclude_chat=exclude_chat))
        if "note" in kinds:
            if qvec is not None:
                reads["note", "vector"] = lambda: store.vector_search(
                    scope, "note", qvec, depth, namespaces=namespaces, floor=MIN_COSINE)
            if terms:
                reads["note", "keyword"] = lambda: _evidence(
                    store.note_keyword_search(scope, terms, depth, namespaces=namespaces))
        ranked = self._run(reads)
        fused, signals = fuse(ranked, self.preset)
        if "message" in kinds and self.preset.neighbors:
            self._add_neighbors(scope, fused, signals, exclude_chat)
        return fused, signals

    def _run(self, reads: dict) -> dict:
        """Run the signal reads; a store whose reads are independent round trips (a server) runs
        them side by side, so a recall waits for the slowest read, not for their sum."""
        if not self.store.parallel_reads or len(reads) < 2:
            return {key: read() for key, read in reads.items()}
        futures = {key: _pool().submit(read) for key, read in reads.items()}
        return {key: future.result() for key, future in futures.items()}

    def _add_neighbors(self, scope: Scope, fused, signals, exclude_chat: str | None) -> None:
        """A turn next to a strong hit often holds the rest of the answer (the reply to a question,
        the question to a reply): it gets part of its neighbour's score, so it can rise above weak
        hits but never above the hit itself on that evidence alone."""
        share = self.preset.weights.get(("message", "neighbor"), 0.0)
        top = sorted((item for item in fused if item[0] == "message"), key=lambda item: -fused[item])
        parents = [key for _, key in top[: self.preset.neighbors]]
        if not share or not parents:
            return
        seen: set[str] = set()
        # Best hits first; a hit that itself gained as a neighbour passes on its raised score.
        for parent, around in self.store.message_neighbors(scope, parents, exclude_chat=exclude_chat).items():
            for key in around:
                if key in seen:
                    continue
                seen.add(key)
                extra = share * fused["message", parent]
                fused["message", key] = fused.get(("message", key), 0.0) + extra
                signals.setdefault(("message", key), {})["neighbor"] = round(extra, 4)

    def recall(self, scope: Scope, query: str, limit: int = 10, budget: int | None = None,
               at: datetime | None = None) -> RecallResult:
        at = at or timeutil.now()
        fused, signals = self.rank(scope, query, at=at)
        order = sorted(fused, key=lambda item: -fused[item])
        # Only the best of each kind can reach the answer: load those, with room for filtered ones.
        head = {kind: [k for knd, k in order if knd == kind][: limit * 2 + 5] for kind in ("fact", "note", "message")}
        facts = {f.fact_id: f for f in self.store.get_facts(scope, head["fact"])}
        notes = {n.note_id: n for n in self.store.get_notes(scope, head["note"])}
        episodes = {e.episode_id: e for e in self.store.get_episodes(scope, head["message"])}

        items: list[RecallItem] = []
        for kind, key in order:
            score, sig = round(fused[kind, key], 6), signals[kind, key]
            if kind == "fact":
                f = facts.get(key)
                if f is None or f.invalid_at is not None or not f.live_at(at) or f.confidence < self.floor:
                    continue
                items.append(RecallItem(kind="fact", id=key, text=f.text, score=score, signals=sig, fact=f,
                                        episode_id=f.episode_id))
            elif kind == "note":
                n = notes.get(key)
                if n is None or n.forgotten_at is not None:
                    continue
                items.append(RecallItem(kind="note", id=key, text=n.text, score=score, signals=sig, note=n))
            else:
                e = episodes.get(key)
                if e is None:
                    continue
                hit = message_hit(e, score, sig)
                items.append(RecallItem(kind="message", id=key, text=e.content, score=score, signals=sig,
                                        message=hit, message_id=key, episode_id=key))
        # Each kind keeps its own ranked list of ``limit``; ``items`` is the one fused ranking.
        result = RecallResult(query=query, context="",
                              facts=[i.fact for i in items if i.fact is not None][:limit],
                              notes=[i.note for i in items if i.note is not None][:limit],
                              messages=[i.message for i in items if i.message is not None][:limit],
                              items=_diverse(items)[:limit])
        result.context = render_context(result.facts, result.notes, result.messages, budget or self.budget,
                                        self.unit)
        return result

    def _entity_hits(self, scope: Scope, query: str) -> list[tuple[str, float]]:
        """Facts about the entities the query names (by name or alias), looked up by the query's n-grams."""
        words = re.findall(r"[\w'&.+#-]+", query.lower())[:MAX_QUERY_TERMS]
        grams = {" ".join(words[i:i + n]) for n in range(1, 6) for i in range(len(words) - n + 1)}
        grams = {g for g in grams if g not in STOPWORDS}
        entities = self.store.find_entities(scope, sorted(grams))
        if not entities:
            return []
        found = self.store.live_fact_ids(scope, timeutil.now(), self.preset.depth,
                                         entity_ids=[e.entity_id for e in entities])
        return [(fact_id, 1.0) for fact_id, _ in found]

    def _slot_hits(self, scope: Scope, query: str, at: datetime) -> list[tuple[str, float]]:
        wanted: list[str] = []
        low = query.lower()
        for rx, predicates in SLOT_HINTS:
            if re.search(rx, low):
                wanted.extend(p for p in predicates if p not in wanted)
        if not wanted:
            return []
        order = {p: i for i, p in enumerate(wanted)}
        found = self.store.live_fact_ids(scope, at, self.preset.depth, predicates=wanted)
        found.sort(key=lambda hit: order[hit[1]])  # stable: newest first within a slot
        return [(fact_id, 1.0) for fact_id, _ in found]


def _evidence(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return [h for h in hits if h[1] >= MIN_KEYWORD]


def message_hit(e: Episode, score: float, signals: dict[str, float]) -> MessageHit:
    return MessageHit(message_id=e.episode_id, chat=e.chat, role=e.role, at=e.at, text=e.content,
                      score=score, signals=signals)


def _diverse(items: list[RecallItem]) -> list[RecallItem]:
    """A fact and the message it came from say one thing: after the best item of a source, every
    other item of that source counts half, so the first places go to items that bring something new."""
    seen: set[str] = set()
    for item in sorted(items, key=lambda i: (-i.score, i.kind != "fact")):
        source = item.episode_id or item.message_id
        if source and source in seen:
            item.score = round(item.score * REDUNDANT, 6)
        elif source:
            seen.add(source)
        if item.message is not None:
            item.message.score = item.score
    return sorted(items, key=lambda i: (-i.score, i.kind != "fact"))


def count_tokens(text: str) -> int:
    """A model-neutral token estimate: words, numbers and punctuation marks each count one,
    long words one per six characters (close to what BPE tokenizers give for English)."""
    return sum(max(1, -(-len(piece) // 6)) for piece in TOKEN_PIECES.findall(text))


def render_context(facts: list[Fact], notes: list[Note], messages: list[MessageHit], budget: int,
                   unit: str = "chars") -> str:
    """Facts grouped by anchor (best group first), then notes, then messages; within the budget
    (characters, or estimated tokens). Deterministic: the same inputs give the same block."""
    measure = len if unit == "chars" else count_tokens
    newline = 1 if unit == "chars" else 0
    sections: list[tuple[str, list[str]]] = []
    if facts:
        groups: OrderedDict[str, list[Fact]] = OrderedDict()
        for f in facts:
            groups.setdefault(f.anchor, []).append(f)
        lines = []
        for group in groups.values():
            for f in group:
                line = f"- {f.predicate}: {f.object}" if f.object else f"- {f.predicate}"
                # an event happened on its date; anything else holds from it
                window = f"{'on' if f.kind == 'event' else 'since'} {f.valid_at.date().isoformat()}"
                if f.valid_until is not None:
                    window += f", until {f.valid_until.date().isoformat()}"
                lines.append(f"{line} ({window})")
        sections.append(("User facts:", lines))
    if notes:
        sections.append(("Notes:", [f"- {_one_line(n.text)}" for n in notes]))
    if messages:
        sections.append(("Earlier messages:", [f"- [{m.at.date().isoformat()}] {m.role}: {_one_line(m.text)}"
                                               for m in messages]))
    out: list[str] = []
    used = -newline  # "\n".join: n lines take n - 1 newlines
    for header, lines in sections:
        block, size = [header], used + newline + measure(header)
        for line in lines:
            if size + newline + measure(line) > budget:
                break
            block.append(line)
            size += newline + measure(line)
        if len(block) > 1 and size <= budget:
            out.extend(block)
            used = size
    return "\n".join(out)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
