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

import contextvars
import functools
import re
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from . import predicates as preds
from . import timeutil, vocabulary, when
from .embed.base import Embedder
from .model import Episode, Fact, MessageHit, Note, RecallItem, RecallResult, Scope
from .store.base import FactQuery, Store
from .store.matrices import pinned

STOPWORDS = frozenset("""a an the of to in on at for and or is are was were be been do does did what which
 who whom whose where when why how user user's users their they them he she his her it its this that
 any some about know tell me you your my i we our has have had there all with from by as can could
 would should will into than then so if not no yes please did ever now still currently anymore nowadays""".split())
MAX_QUERY_TERMS = 64
REDUNDANT = 0.5  # weight of a second item from the same message
TOKEN_PIECES = re.compile(r"\w+|[^\w\s]")
MIN_KEYWORD = 0.05  # BM25 below this means the words are everywhere: no evidence either way
AS_OF_DEPTH = 4    # a point-in-time recall reads its lists this many times deeper
AS_OF_FACTS = 2000  # the facts live at an as_of time that a recall ranks (a person's facts are hundreds)
ADJUST_DEPTH = 60  # candidates of each kind read to adjust their scores (time, conversation, slot)
# A question about the present: the latest word on the matter is the answer ("I sold my bike" after
# "I cycle to work"), and an instruction given later replaces one given before ("use am/pm now").
NOW = re.compile(r"\b(?:now|still|currently|anymore|any\s+more|these\s+days|at\s+the\s+moment|nowadays|"
                 r"no\s+longer|today|right\s+now|latest|current|these\s+days)\b", re.I)
RECENCY_POOL = 8   # the best messages and facts among which the newest is preferred
# A question about what the assistant said ("What did you recommend?", "the assistant's advice"): the
# assistant's turns are the evidence there; any other question is about the person, who said it themselves.
ABOUT_ASSISTANT = re.compile(
    r"\b(?:assistant|assistant's|chatbot|bot)\b|\byou\s+(?:said|say|told|tell|suggest|recommend|promis|offer|remind|"
    r"propos|advis|answer|repl|mention|explain|wrote|write|gave|give|list|plan)\w*|\byour\s+(?:advice|"
    r"suggestion|answer|reply|recommendation|idea|plan|list|promise)s?\b", re.I)
DIRECT = re.compile(r"\s*(?:and\s+|so\s+)?(?:where|what|who|whom|which|how)\b")
PAST = re.compile(r"\b(?:did|was|were|had|used\s+to|ago|before|previously|formerly|first|last\s+\w+)\b", re.I)
MIN_COSINE = 0.2    # a message or note this far from the query is unrelated to it (facts are few and
                    # distilled: a broad "what do you know about the user" should still list them)
# Questions name slots in words of their own: each vocabulary row's question words map to its predicates
# (kenning/vocabulary/facts.toml). The flag marks a slot that holds the person's present state (where they
# live, whom they live with, what they do): asked about directly, its live fact is the answer, above older
# messages naming other values.
SLOT_HINTS = vocabulary.load().slot_hints()


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
    when_boost: float = 0.0    # "when …?": messages and facts that say when something happened gain this share
    window_boost: float = 0.0  # "… in May 2023?": items from that stretch of time gain this share
    session_prior: float = 0.0  # a message gains this share of its conversation's best scores (mean of 3)
    slot_now: float = 0.0      # a present-tense slot question: the slot's live fact is lifted to the top
    question_penalty: float = 0.0  # a message that only asks ("What do you love about it?") loses this share
    other_voice: float = 0.0   # a question about the person: what the assistant (or a tool) said loses this share
    per_chat: int = 0          # after this many messages of one conversation, the next ones count half
    hops: int = 2              # the entity graph is walked this far from the entities a query names
    own_name: bool = False     # the person's own name in a question reads as "the user" ("When is Dan's birthday?")
    recency: float = 0.0       # "… now?", "does she still …?": the newest of the best candidates gains this share
    feedback: float = 0.0      # the best messages' mean vector, this many times, joins the query's for a second
    feedback_top: int = 3      # vector read (pseudo-relevance feedback: "camping" finds the other camping trips)


# Chosen on the LoCoMo dev conversations with bench/locomo_tune.py, each setting kept only where the
# leave-one-conversation-out figure agreed (docs/benchmarks.md): keyword evidence over messages (with
# the day and the message before as context) leads, the vector, a second vector read moved towards
# the best hits, and the turns next to them follow; facts at half weight add their distilled form
# without crowding out messages. recency and own_name were set on the life-story questions
# (bench/life_questions.py), where LoCoMo cannot see them.
HYBRID = Preset("hybrid", {
    ("fact", "vector"): 0.5, ("fact", "keyword"): 0.35, ("fact", "entity"): 0.45, ("fact", "slot"): 0.6,
    ("message", "vector"): 0.6, ("message", "keyword"): 1.0, ("message", "neighbor"): 0.3,
    ("message", "feedback"): 0.6, ("note", "vector"): 0.6, ("note", "keyword"): 1.0,
}, rrf_k=5, neighbors=10, when_boost=0.3, window_boost=0.5, session_prior=0.3, slot_now=0.2, question_penalty=0.6,
    feedback=1.0, recency=1.0, own_name=True, other_voice=0.5)
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
             exclude_chat: str | None = None, namespaces: list[str] | None = None, loaded: dict | None = None,
             as_of: datetime | None = None):
        """{(kind, id): score} and each item's signals; ``loaded`` collects the rows read on the way.
        With ``as_of``, only what was true and what had been said by then takes part."""
        with pinned():   # one change-version read of the dataset for all of this ranking's matrix reads
            return self._rank(scope, query, kinds, at, exclude_chat, namespaces, loaded, as_of)

    def _rank(self, scope: Scope, query: str, kinds, at: datetime | None, exclude_chat: str | None,
              namespaces: list[str] | None, loaded: dict | None, as_of: datetime | None):
        at = as_of or at or timeutil.now()
        loaded = {} if loaded is None else loaded
        if self.preset.own_name:
            query = self._as_the_user(scope, query, at)
        # Notes and messages are the person's own words, and facts read "user lives in …": the question
        # is embedded once, in the first person ("Where do I live?"), which meets both. (Embedding on
        # another thread while the keyword reads run here measured no faster: the reads are short.)
        qvec = self.embed_query(first_person(query))
        terms = query_terms(query)
        depth = self.preset.depth * (AS_OF_DEPTH if as_of is not None else 1)  # later rows are read, then dropped
        store = self.store
        reads: dict[tuple[str, str], Callable[[], list[tuple[str, float]]]] = {}
        by_vector: dict[tuple[str, str], Callable[[np.ndarray], list[tuple[str, float]]]] = {}
        if "fact" in kinds and as_of is None:
            by_vector["fact", "vector"] = lambda q: store.vector_search(scope, "fact", q, depth, at=at)
            if terms:
                reads["fact", "keyword"] = lambda: _evidence(store.keyword_search(scope, terms, at, depth), depth)
            reads["fact", "entity"] = lambda: self._entity_hits(scope, query, at)
            reads["fact", "slot"] = lambda: self._slot_hits(scope, query, at)
        if "message" in kinds:
            by_vector["message", "vector"] = lambda q: store.vector_search(
                scope, "episode", q, depth, exclude_chat=exclude_chat, floor=MIN_COSINE)
            if terms:
                reads["message", "keyword"] = lambda: _evidence(
                    store.episode_keyword_search(scope, terms, depth, exclude_chat=exclude_chat), depth)
        if "note" in kinds:
            by_vector["note", "vector"] = lambda q: store.vector_search(
                scope, "note", q, depth, namespaces=namespaces, floor=MIN_COSINE)
            if terms:
                reads["note", "keyword"] = lambda: _evidence(
                    store.note_keyword_search(scope, terms, depth, namespaces=namespaces), depth)
        vector_reads = {key: functools.partial(read, qvec) for key, read in by_vector.items()} if qvec is not None else {}
        if getattr(store, "cached_vectors", False):
            ranked = self._run(reads, here=vector_reads)   # the I/O side by side, the NumPy here meanwhile
        else:
            ranked = self._run(reads | vector_reads)
        if "fact" in kinds and as_of is not None:
            ranked["fact", "as_of"] = self._facts_as_of(scope, as_of, qvec, terms, query)
        if as_of is not None:
            ranked.update(ranked.pop(("fact", "as_of"), {}))
            self._said_by(scope, ranked, as_of, loaded)
        if ("fact", "entity") in ranked:
            walked = ranked.pop(("fact", "entity"))
            # nearer entities first (the list is ordered by hop); a fact's message is found with it
            ranked["fact", "entity"] = [(fact_id, 1.0 / (1 + hop)) for fact_id, _, hop in walked]
            if "message" in kinds:
                said = {}
                for _, episode_id, hop in walked:
                    if episode_id and episode_id not in said:
                        said[episode_id] = 1.0 / (1 + hop)
                ranked["message", "graph"] = list(said.items())
        fused, signals = fuse(ranked, self.preset)
        if "message" in kinds and qvec is not None and self.preset.feedback:
            self._feedback(scope, qvec, fused, signals, exclude_chat, as_of)
        if "message" in kinds and self.preset.neighbors:
            self._add_neighbors(scope, fused, signals, exclude_chat)
        self._adjust(scope, query, at, fused, signals, ranked.get(("fact", "slot"), []), loaded,
                     about_person="fact" in kinds)
        return fused, signals

    def _adjust(self, scope: Scope, query: str, at: datetime, fused, signals, slot_hits, loaded,
                about_person: bool = True) -> None:
        """Structure the lists cannot see, applied to the best candidates once they are read:
        when a question asks *when*, what says when; a time window the question names; the
        conversation a message belongs to; and for a question about the present, the live fact of
        the slot it asks about."""
        p = self.preset
        asks = p.when_boost and when.asks_when(query)
        window = when.time_window(query, at) if p.window_boost else None
        if p.window_boost and window is None and (event := when.relative_to_event(query)) is not None:
            window = self._event_window(scope, *event, at)
        recent = bool(p.recency and NOW.search(query))
        # a recall answers questions about the person; a search of the messages finds whoever said it
        others = bool(p.other_voice) and about_person and not ABOUT_ASSISTANT.search(query)
        if not (asks or window or recent or others or p.session_prior or p.question_penalty or (p.slot_now and slot_hits)):
            return
        messages = sorted((k for kind, k in fused if kind == "message"), key=lambda k: -fused["message", k])
        facts = sorted((k for kind, k in fused if kind == "fact"), key=lambda k: -fused["fact", k])
        episodes = {e.episode_id: e for e in self.store.get_episodes(scope, messages[:ADJUST_DEPTH])}
        # facts are read only where a fact's kind, time or slot can change its place
        needs_facts = asks or window or recent or (p.slot_now and slot_hits)
        rows = {f.fact_id: f for f in self.store.get_facts(scope, facts[:ADJUST_DEPTH])} if needs_facts else {}
        loaded.update({("message", k): e for k, e in episodes.items()})
        loaded.update({("fact", k): f for k, f in rows.items()})

        def lift(item, share, signal):
            fused[item] *= 1 + share
            signals[item][signal] = round(share, 4)
        for key, e in episodes.items():
            if others and e.role != "user":     # "Got it, thanks!" is near every question, and says nothing
                fused["message", key] *= 1 - p.other_voice
                signals["message", key]["role"] = round(-p.other_voice, 4)
            if p.question_penalty and _only_asks(e.content):
                fused["message", key] *= 1 - p.question_penalty
                signals["message", key]["question"] = round(-p.question_penalty, 4)
            if asks and when.says_when(e.content):
                lift(("message", key), p.when_boost, "time")
            if window and window.holds(e.at):
                lift(("message", key), p.window_boost, "window")
        for key, f in rows.items():
            if asks and (f.kind == "event" or when.says_when(f.source_quote or "")):
                lift(("fact", key), p.when_boost, "time")
            if window and window.overlaps(f.valid_at, f.valid_until):
                lift(("fact", key), p.window_boost, "window")
        if recent:
            # Among the best few, newer counts more: the newest gains the full share, the oldest none.
            pool = sorted(((kind, k) for kind, k in fused if (kind == "message" and k in episodes)
                           or (kind == "fact" and k in rows)), key=lambda item: -fused[item])[:RECENCY_POOL]
            said = {item: (episodes[item[1]].at if item[0] == "message" else rows[item[1]].valid_at) for item in pool}
            by_time = sorted(pool, key=lambda item: said[item])
            for rank, item in enumerate(by_time):
                share = p.recency * rank / max(1, len(by_time) - 1)
                fused[item] *= 1 + share
                signals[item]["recency"] = round(share, 4)
        if p.session_prior:
            by_chat: dict[str, list[float]] = {}
            for key in messages[:ADJUST_DEPTH]:
                e = episodes.get(key)
                if e is not None and e.chat is not None:
                    by_chat.setdefault(e.chat, []).append(fused["message", key])
            prior = {chat: sum(scores[:3]) / 3 for chat, scores in by_chat.items()}  # sorted: best first
            for key, e in episodes.items():
                if e.chat in prior:
                    extra = p.session_prior * prior[e.chat]
                    fused["message", key] += extra
                    signals["message", key]["session"] = round(extra, 4)
        present = set(slot_predicates(query, present=True)) if p.slot_now and slot_hits else set()
        if present:
            top = max(fused.values())
            now_hits = [key for key, _ in slot_hits if key in rows and rows[key].predicate in present]
            for rank, key in enumerate(now_hits[:3]):
                item = ("fact", key)
                if item in fused:   # the slot's live facts, in slot order, just above everything else
                    fused[item] = max(fused[item], top * (1 + p.slot_now) - rank * 1e-6)
                    signals[item]["now"] = round(p.slot_now, 4)

    def _event_window(self, scope: Scope, side: str, clause: str, at: datetime) -> "when.Window | None":
        """The stretch before or after an event the question names ("before she moved to Edinburgh"),
        dated by the fact that best matches it, or else the message."""
        terms = query_terms(clause)
        if not terms:
            return None
        facts = self.store.get_facts(scope, [k for k, _ in self.store.keyword_search(scope, terms, at, 1)])
        if facts:
            return when.around(side, facts[0].valid_at)
        said = self.store.get_episodes(scope, [k for k, _ in self.store.episode_keyword_search(scope, terms, 1)])
        return when.around(side, said[0].at) if said else None

    def _as_the_user(self, scope: Scope, query: str, at: datetime) -> str:
        """The query with the person's own name (their live "is named" fact) read as "the user": in
        their own memory the name is on every other line and tells nothing, while "my birthday"
        meets what they wrote."""
        named = self.store.facts_in_slot(scope, ["is named"], at, limit=1)
        name = named[0].object.strip() if named else ""
        if len(name) < 2:
            return query
        query = re.sub(rf"\b{re.escape(name)}'s\b", "the user's", query, flags=re.I)
        return re.sub(rf"\b{re.escape(name)}\b", "the user", query, flags=re.I)

    def _facts_as_of(self, scope: Scope, as_of: datetime, qvec, terms: str, query: str) -> dict:
        """The signal lists over the facts live at ``as_of`` (superseded since included): the
        listing's as_of, ranked here, since the stores' indexes hold only what is live now."""
        facts = self.store.list_facts(scope, FactQuery(as_of=as_of, limit=AS_OF_FACTS))[0]
        out: dict[tuple[str, str], list[tuple[str, float]]] = {}
        if qvec is not None and facts:
            vectors = self.store.fact_vectors(scope, [f.fact_id for f in facts])
            scored = [(key, float(np.dot(v, qvec))) for key, v in vectors.items()]
            out["fact", "vector"] = sorted(scored, key=lambda h: -h[1])[: self.preset.depth]
        words = set(terms.split())
        if words:
            hits = [(f.fact_id, float(len(words & set(re.findall(r"\w+", f.text.lower()))))) for f in facts]
            out["fact", "keyword"] = sorted((h for h in hits if h[1] > 0), key=lambda h: -h[1])[: self.preset.depth]
        wanted = slot_predicates(query)
        out["fact", "slot"] = [(f.fact_id, 1.0) for f in sorted(
            (f for f in facts if f.predicate in wanted),
            key=lambda f: (preds.names_nobody(f.object), wanted.index(f.predicate), -f.valid_at.timestamp()))]
        return out

    def _said_by(self, scope: Scope, ranked: dict, as_of: datetime, loaded: dict) -> None:
        """Messages said after ``as_of`` and notes saved after it leave the lists."""
        for (kind, signal), hits in list(ranked.items()):
            if kind == "message":
                rows = {e.episode_id: e for e in self.store.get_episodes(scope, [k for k, _ in hits])}
                loaded.update({("message", k): e for k, e in rows.items() if e.at <= as_of})
            elif kind == "note":
                rows = {n.note_id: n for n in self.store.get_notes(scope, [k for k, _ in hits])}
                rows = {k: n for k, n in rows.items() if n.created_at <= as_of}
            else:
                continue
            ranked[kind, signal] = [(k, raw) for k, raw in hits
                                    if k in rows and (kind == "note" or rows[k].at <= as_of)][: self.preset.depth]

    def _run(self, reads: dict, here: dict | None = None) -> dict:
        """Run the signal reads; a store whose reads are independent round trips (a server) runs
        them side by side, so a recall waits for the slowest read, not for their sum. ``here``: reads
        that run in this thread meanwhile (CPU work that threads would only make wait for each other)."""
        here = here or {}
        if not self.store.parallel_reads or len(reads) < 2:
            return {key: read() for key, read in (reads | here).items()}
        # each read runs in a copy of this context, so the recall's pinned versions reach it
        futures = {key: _pool().submit(contextvars.copy_context().run, read) for key, read in reads.items()}
        done = {key: read() for key, read in here.items()}
        return {key: future.result() for key, future in futures.items()} | done

    def _feedback(self, scope: Scope, qvec: np.ndarray, fused, signals, exclude_chat: str | None,
                  as_of: datetime | None) -> None:
        """A second vector read, for the query moved towards its best messages: the evidence an
        answer needs is often several messages on one topic, and the first hits name it better
        than the question does. Its list joins the fusion like any other."""
        weight = self.preset.weights.get(("message", "feedback"), 0.0)
        top = sorted((k for kind, k in fused if kind == "message"), key=lambda k: -fused["message", k])
        vectors = self.store.message_vectors(scope, top[: self.preset.feedback_top])
        if not weight or not vectors:
            return
        moved = qvec + self.preset.feedback * np.mean(list(vectors.values()), axis=0)
        moved = moved / (np.linalg.norm(moved) or 1.0)
        hits = self.store.vector_search(scope, "episode", moved.astype(np.float32), self.preset.depth,
                                        exclude_chat=exclude_chat, floor=MIN_COSINE)
        if as_of is not None:
            said = {e.episode_id for e in self.store.get_episodes(scope, [k for k, _ in hits]) if e.at <= as_of}
            hits = [h for h in hits if h[0] in said]
        part, _ = fuse({("message", "feedback"): hits}, self.preset)
        for item, extra in part.items():
            fused[item] = fused.get(item, 0.0) + extra
            signals.setdefault(item, {})["feedback"] = round(dict(hits)[item[1]], 4)

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
               at: datetime | None = None, as_of: datetime | None = None,
               shared: Scope | None = None) -> RecallResult:
        """``shared``: a scope whose notes rank beside the dataset's own (the organization's)."""
        at = as_of or at or timeutil.now()
        loaded: dict = {}
        fused, signals = self.rank(scope, query, at=at, loaded=loaded, as_of=as_of)
        shared_notes: dict[str, Note] = {}
        if shared is not None and shared != scope and self.store.usage(shared):  # nothing stored there: no reads
            extra, extra_signals = self.rank(shared, query, kinds=("note",), as_of=as_of)
            fused.update(extra)
            signals.update(extra_signals)
            shared_notes = {n.note_id: n for n in self.store.get_notes(
                shared, [k for _, k in sorted(extra, key=lambda i: -extra[i])[: limit * 2 + 5]])}
        order = sorted(fused, key=lambda item: -fused[item])
        # Only the best of each kind can reach the answer: load those, with room for filtered ones.
        head = {kind: [k for knd, k in order if knd == kind and (knd, k) not in loaded][: limit * 2 + 5]
                for kind in ("fact", "note", "message")}
        facts = {f.fact_id: f for f in self.store.get_facts(scope, head["fact"])}
        notes = {n.note_id: n for n in self.store.get_notes(scope, head["note"])} | shared_notes
        episodes = {e.episode_id: e for e in self.store.get_episodes(scope, head["message"])}
        for (kind, key), row in loaded.items():
            (facts if kind == "fact" else episodes)[key] = row

        items: list[RecallItem] = []
        room = {kind: limit * 2 + 5 for kind in ("fact", "note", "message")}   # enough to re-rank by source
        # A text said again (a stock reply, a pasted note) is shown once, where it ranks best; the query's own
        # words, kept as a message (a framework stores the turn before it recalls for it), answer nothing.
        said: set[str] = {" ".join(query.lower().split())}
        for kind, key in order:
            if not room[kind]:
                continue
            score, sig = round(fused[kind, key], 6), signals[kind, key]
            if kind == "fact":
                f = facts.get(key)
                if f is None or (as_of is None and f.invalid_at is not None) or not f.live_at(at) \
                        or f.confidence < self.floor:
                    continue
                items.append(RecallItem(kind="fact", id=key, text=f.text, score=score, signals=sig, fact=f.seen_at(at),
                                        episode_id=f.episode_id))
                room[kind] -= 1
            elif kind == "note":
                n = notes.get(key)
                if n is None or n.forgotten_at is not None or n.created_at > at or _again(n.text, said):
                    continue
                items.append(RecallItem(kind="note", id=key, text=n.text, score=score, signals=sig, note=n))
                room[kind] -= 1
            else:
                e = episodes.get(key)
                # a tool's call or output (an agent framework's item, kept verbatim) is not the conversation
                if e is None or e.at > at or e.role == "tool" or _again(e.content, said):
                    continue
                hit = message_hit(e, score, sig)
                items.append(RecallItem(kind="message", id=key, text=e.content, score=score, signals=sig,
                                        message=hit, message_id=key, episode_id=key))
                room[kind] -= 1
        # Each kind keeps its own ranked list of ``limit``; ``items`` is the one fused ranking.
        result = RecallResult(query=query, context="",
                              facts=[i.fact for i in items if i.fact is not None][:limit],
                              notes=[i.note for i in items if i.note is not None][:limit],
                              messages=[i.message for i in items if i.message is not None][:limit],
                              items=self._person_first(query, _diverse(items, self.preset.per_chat))[:limit])
        result.context = render_context(result.facts, result.notes, result.messages, budget or self.budget,
                                        self.unit)
        return result

    def _person_first(self, query: str, items: list[RecallItem]) -> list[RecallItem]:
        """For a question about the person, a reply with no word of the question in it ("Got it,
        thanks!", "Noted.") says nothing about them: it goes below every message they wrote and every
        fact and note about them, in the same order, whatever its vector says (a short stock reply sits
        near every question). A reply that shares the question's words keeps its place, less the
        other-voice share (``_adjust``)."""
        theirs = [i.score for i in items if i.message is None or i.message.role == "user"]
        if not (self.preset.other_voice and theirs) or ABOUT_ASSISTANT.search(query):
            return items
        floor = min(theirs)
        terms = query_terms(query).split()
        for i in items:
            if i.message is not None and i.message.role != "user" and i.score >= floor \
                    and not _shares_a_word(i.text, terms):
                i.score = round(floor * i.score / (i.score + floor), 6)
                i.message.score = i.score
        return sorted(items, key=lambda i: (-i.score, i.kind != "fact"))

    def _entity_hits(self, scope: Scope, query: str, at: datetime) -> list[tuple[str, str | None, int]]:
        """Facts about the entities the query names (by name or alias, looked up by the query's
        n-grams) and about the entities one or two steps from them in the graph: "what does my
        sister's husband do" reaches the husband through the sister."""
        words = re.findall(r"[\w'&.+#-]+", query.lower())[:MAX_QUERY_TERMS]
        grams = {" ".join(words[i:i + n]) for n in range(1, 6) for i in range(len(words) - n + 1)}
        grams = {g for g in grams if g not in STOPWORDS}
        entities = self.store.find_entities(scope, sorted(grams))
        if not entities:
            return []
        return self.store.entity_graph(scope, [e.entity_id for e in entities], at, self.preset.hops,
                                       self.preset.depth)

    def _slot_hits(self, scope: Scope, query: str, at: datetime) -> list[tuple[str, float]]:
        wanted = slot_predicates(query)
        if not wanted:
            return []
        order = {p: i for i, p in enumerate(wanted)}
        found = self.store.live_fact_ids(scope, at, self.preset.depth, predicates=wanted)
        nameless = {f.fact_id for f in self.store.get_facts(scope, [k for k, _ in found])
                    if preds.names_nobody(f.object)}
        # stable: newest first within a slot; "has child · kids" after "has daughter · isla"
        found.sort(key=lambda hit: (hit[0] in nameless, order[hit[1]]))
        return [(fact_id, 1.0) for fact_id, _ in found]


def slot_predicates(query: str, present: bool = False) -> list[str]:
    """The slots a question asks about, most likely first ("where … live" → ``lives in``); with
    ``present``, only the slots of the person's present state, and only for a direct question
    about the present ("Where does she live now?", not "Where did she live?" or "Would she move?")."""
    low = query.lower()
    if present and (PAST.search(low) or not DIRECT.match(low)):
        return []
    wanted: list[str] = []
    for rx, predicates, state in SLOT_HINTS:
        if (state or not present) and re.search(rx, low):
            wanted.extend(p for p in predicates if p not in wanted)
    return wanted


def _evidence(hits: list[tuple[str, float]], depth: int) -> list[tuple[str, float]]:
    """Keyword hits that are evidence. BM25 gives a word in most rows a weight near zero: such hits
    are dropped, but only where the words filled the list (they are everywhere); a short list
    picked its rows out (in a store of three notes every word is in "most rows")."""
    if len(hits) < depth:
        return hits
    return [h for h in hits if h[1] >= MIN_KEYWORD]


def message_hit(e: Episode, score: float, signals: dict[str, float]) -> MessageHit:
    return MessageHit(message_id=e.episode_id, chat=e.chat, role=e.role, at=e.at, text=e.content,
                      score=score, signals=signals)


_ASKING = re.compile(r"\[shares a photo:[^\]]*\]|\s+")


@functools.lru_cache(maxsize=8192)
def _only_asks(text: str) -> bool:
    """A message whose every sentence is a question or a short exclamation: it asks, it tells little."""
    body = _ASKING.sub(" ", text).strip()
    if not body.endswith("?"):
        return False
    told = [s for s in re.split(r"(?<=[.!?])\s+", body) if not s.endswith("?") and len(s.split()) > 6]
    return not told


def _shares_a_word(text: str, terms: list[str]) -> bool:
    """Whether the text itself (not the context it is searched with: its day, the turn before) has a
    word of the query, or one of its longer words' first five letters ("Canadian" for "Canada")."""
    words = set(re.findall(r"\w+", text.lower()))
    stems = {w[:5] for w in words if len(w) >= 5}
    return any(t in words or (len(t) >= 5 and t[:5] in stems) for t in terms)


def _again(text: str, said: set[str]) -> bool:
    """Whether this text (in any case and spacing) was already taken; takes it if not."""
    key = " ".join(text.lower().split())
    if key in said:
        return True
    said.add(key)
    return False


def _diverse(items: list[RecallItem], per_chat: int = 0) -> list[RecallItem]:
    """A fact and the message it came from say one thing: after the best item of a source, every
    other item of that source counts half, so the first places go to items that bring something new.
    With ``per_chat``, so do the messages of one conversation past its first ``per_chat``."""
    seen: set[str] = set()
    chats: dict[str, int] = {}
    for item in sorted(items, key=lambda i: (-i.score, i.kind != "fact")):
        source = item.episode_id or item.message_id
        if source and source in seen:
            item.score = round(item.score * REDUNDANT, 6)
        elif source:
            seen.add(source)
        chat = item.message.chat if item.message is not None else None
        if per_chat and chat is not None:
            chats[chat] = chats.get(chat, 0) + 1
            if chats[chat] > per_chat:
                item.score = round(item.score * REDUNDANT, 6)
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
                window = f"{'on' if f.kind == 'event' else 'since'} {f.valid_at.date().isoformat()}" \
                    if f.start_known else ""
                if f.valid_until is not None:
                    window += f"{', ' if window else ''}until {f.valid_until.date().isoformat()}"
                lines.append(f"{line} ({window})" if window else line)
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
