"""The write path: one pipeline behind ``add`` (and, later, the queued ``add_turn``).

accept → extract → normalise/enforce → canonicalise predicate → resolve entity
→ decide (supersede / dedup / insert) → embed → commit, with a receipt that
counts what happened to every candidate. Extraction and most embedding run
before the transaction; every read that a decision depends on runs inside it,
so two writers of one dataset never decide on the same stale state.
"""
from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from . import conflicts
from . import predicates as preds
from . import timeutil
from .config import Settings
from .embed.base import Embedder
from .errors import (Conflict, DuplicateFact, EmptyText, ExtractionError, InputError, InvalidTime, QuotaExceeded,
                     TextTooLarge)
from .extract import dates
from .extract.base import Candidate, Extractor
from .model import (ENTITY_TYPES, FACT_KINDS, MAX_OBJECT_CHARS, UNKNOWN_START, AddResult, Entity, Episode, Fact,
                    Scope)
from .store.base import Store

ROLES = ("user", "assistant", "system", "tool")
EMBED_PREFIX_CHARS = 2000
FUTURE_SKEW = timedelta(days=1)   # clocks differ; a message from next year is a bug
EVENT_SAME_DAYS = timedelta(days=2)   # the same event told twice: its dates resolve a day or two apart
CONTEXT_TURN_CHARS = 1000   # of each previous user turn an extractor reads (the end, where "she" was named)
KNOWN_ENTITIES = 200   # entity names handed to it for typo correction
ONE_OFF_DAYS = timedelta(days=1)   # a planned occurrence without an end lasts its day
USER_WORDS = frozenset({"user", "the user", "i", "me", "myself", "the person", "person"})
NAME_SLOTS = ("is named", "goes by")


CONTEXT_CHARS = 300  # how much of the message before a message travels with it


def check_text(text: str, limit: int, what: str) -> str:
    """Text kenning will keep: a non-empty string within the size limit, or a clear error."""
    if not isinstance(text, str):
        raise InputError(f"{what} must be a string, not {type(text).__name__}")
    if len(text) > limit:
        raise TextTooLarge(f"{what} is {len(text):,} characters; the limit is {limit:,}. "
                           "Split it and save the parts one by one")
    if not text.strip():
        raise EmptyText(f"{what} is empty; pass the words to keep")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # half a surrogate pair: a Python str, but no text a store can keep
        raise InputError(f"{what} holds an unpaired surrogate (U+{ord(text[exc.start]):04X} at {exc.start}); "
                         "pass valid Unicode") from None
    return text


def check_room(store: Store, settings: Settings, scope: Scope, chars: int) -> None:
    """A dataset's storage quota: refuse a write that would take it past ``max_dataset_chars``."""
    used = store.usage(scope)
    if used + chars > settings.max_dataset_chars:
        raise QuotaExceeded(f"dataset {scope.dataset!r} stores {used:,} characters and this write adds {chars:,}; "
                            f"the quota is {settings.max_dataset_chars:,} (KENNING_MAX_DATASET_CHARS): forget or "
                            "delete some memories first")


MAX_ID_CHARS = 256   # a chat, message_id or client_ref: a name, not a payload


def check_id(value: str | None, what: str) -> str | None:
    """An optional identifier: a non-empty string of at most MAX_ID_CHARS characters."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} must be a non-empty string, not {value!r}")
    if len(value) > MAX_ID_CHARS:
        raise InputError(f"{what} is {len(value):,} characters; an identifier holds at most {MAX_ID_CHARS}")
    return value


def check_role(role: str) -> str:
    if role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return role


def message_context(store: Store, scope: Scope, chat: str | None, at: datetime, sent: datetime) -> str:
    """What keyword search reads beside a message: the day it was said ("what did I do in May
    2023" finds it), then the end of the previous message in the chat (a reply is understood with
    what it answers)."""
    previous = store.previous_message(scope, chat, at, sent)
    return f"{timeutil.date_words(at)} {previous.content[-CONTEXT_CHARS:] if previous is not None else ''}".rstrip()


def message_embed_text(text: str) -> str:
    """A message's vector reads its own opening (the model sees 256 tokens; never tokenise 100k
    characters). The message before it helps keyword search only: in a vector it drags a reply
    towards the previous topic ("I love ramen." after a car would match questions about the car)."""
    return text[:EMBED_PREFIX_CHARS]


def embed_text(predicate: str, obj: str, text: str, object_is_entity: bool) -> str:
    """The anchor-enriched text a fact's vector is computed from."""
    anchor = obj if object_is_entity else "user"
    return f"{text}. About: {anchor}."


def object_key(obj: str) -> str:
    """A comparison key that ignores plural -s and articles ("peanuts" = "peanut")."""
    words = re.sub(r"^(?:the|a|an) ", "", obj.lower()).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


@dataclass
class _Plan:
    """One candidate on its way through the decisions."""

    cand: Candidate
    predicate: str
    obj: str
    etype: str | None
    valid_at: datetime
    valid_until: datetime | None
    entity_id: str | None = None
    outcome: str = "pending"   # stored | updated | deduped | rejected
    fact_id: str | None = None
    note: str | None = None
    supersedes: list[str] = field(default_factory=list)


@dataclass
class Message:
    """One message on its way through the pipeline (what ``add`` was given, and what it found)."""
    scope: Scope
    text: str
    at: datetime | str | None = None
    role: str = "user"
    client_ref: str | None = None
    chat: str | None = None
    message_id: str | None = None
    temporary: bool = False
    finish: Callable[[AddResult], None] | None = None
    sent: datetime | None = None    # when kenning accepted it (a queued turn: when add_turn took it): the
    # order of turns that share a timestamp, kept as the message's created_at
    candidates: list[Candidate] = field(default_factory=list)
    plans: list = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    message_text: str | None = None
    extraction_error: str | None = None
    notes: list[str] = field(default_factory=list)
    mine: set[str] = field(default_factory=set)   # the facts this message stored: it never supersedes them


class WritePipeline:
    def __init__(self, store: Store, extractor: Extractor, embedder: Embedder | None, settings: Settings,
                 registry: preds.PredicateRegistry):
        self.store, self.extractor, self.embedder = store, extractor, embedder
        self.settings, self.registry = settings, registry

    # -- step 1: accept -------------------------------------------------------------
    def add(self, scope: Scope, text: str, *, at: datetime | None = None, role: str = "user",
            client_ref: str | None = None, chat: str | None = None, message_id: str | None = None,
            temporary: bool = False, finish: Callable[[AddResult], None] | None = None) -> AddResult:
        """Run the pipeline; ``finish`` is called with the receipt inside the transaction that
        stores the effects (a queued job marks itself done there: both commit or neither)."""
        msg = Message(scope, text, at, role, client_ref, chat, message_id, temporary, finish)
        early = self._accept(msg)
        if early is not None:
            return early
        if msg.role == "user":
            self._extract(msg)
        self._plan(msg)
        return self._commit(msg, self._prefetch(scope, msg.plans, msg.message_text))

    def add_many(self, messages: list["Message"]) -> list[AddResult | Exception]:
        """Several messages (of different datasets, or in order within one) through one parser
        batch and one embedding batch, each then committed on its own: the queue workers' path.
        A message that fails gets its exception in its place; the others go on."""
        out: list[AddResult | Exception | None] = [None] * len(messages)
        todo = []
        for i, msg in enumerate(messages):
            try:
                early = self._accept(msg)
            except Exception as exc:  # noqa: BLE001 - reported per message
                out[i] = exc
                continue
            if early is not None:
                out[i] = early
            else:
                todo.append(i)
        batched = hasattr(self.extractor, "extract_many") and not self.extractor.wants_context
        mined = [i for i in todo if messages[i].role == "user"]
        if batched and mined:
            try:
                found = self.extractor.extract_many([messages[i].text for i in mined], at=[messages[i].at for i in mined])
            except Exception:  # noqa: BLE001 - retried one by one below, where each error is its own
                batched = False
            else:
                for i, cands in zip(mined, found):
                    messages[i].candidates = cands
        texts: set[str] = set()
        for i in todo:
            msg = messages[i]
            try:
                if not batched and msg.role == "user":
                    self._extract(msg)
                self._plan(msg)
                texts |= self._embed_texts(msg.scope, msg.plans, msg.message_text)
            except Exception as exc:  # noqa: BLE001
                out[i] = exc
        vectors = self._embed(texts)
        for i in todo:
            if out[i] is None:
                try:
                    out[i] = self._commit(messages[i], dict(vectors))
                except Exception as exc:  # noqa: BLE001
                    out[i] = exc
        return out  # type: ignore[return-value]

    def _accept(self, msg: "Message") -> AddResult | None:
        """Checks, and the answers that need no extraction (a non-user turn, a repeat)."""
        check_text(msg.text, self.settings.max_text_chars, "text")
        check_role(msg.role)
        check_room(self.store, self.settings, msg.scope, len(msg.text))
        for value, what in ((msg.chat, "chat"), (msg.message_id, "message_id"), (msg.client_ref, "client_ref")):
            check_id(value, what)
        msg.at = self.message_time(msg.at)
        msg.sent = msg.sent or timeutil.now()
        if msg.role != "user" and msg.temporary:
            return AddResult(status="skipped", reason="skipped_non_user_turn")
        if msg.client_ref is not None:
            earlier = self.store.get_ingest(msg.scope, msg.client_ref)
            if earlier is not None:
                return self._already(msg.scope, earlier)
        return None

    def _extract(self, msg: "Message") -> None:
        """The extractor's candidates for a user turn. If it fails (a model that is down or answers
        nonsense), the message is still kept, without facts, and the receipt and the job say why: it can
        be mined again later (``Memory.remine``). A temporary chat keeps no message, so there the error
        is raised for the caller (or the queue) to retry."""
        try:
            msg.candidates = self.extractor.extract(
                msg.text, at=msg.at, context=self._context(msg.scope, msg.chat, msg.at, msg.sent, exclude=msg.message_id),
                known_entities=self._known_entities(msg.scope))
        except ExtractionError as exc:
            if msg.temporary:
                raise
            msg.candidates, msg.extraction_error = [], str(exc) or type(exc).__name__

    def _plan(self, msg: "Message") -> None:
        msg.plans, msg.rejected = self._normalise(msg.candidates, msg.at, self._user_names(msg.scope, msg.at))
        msg.message_text = None if msg.temporary else message_embed_text(msg.text)

    def _user_names(self, scope: Scope, at: datetime) -> set[str]:
        """The names the user goes by: a model that writes "Maya" as a fact's subject means the user."""
        return {preds.fold(f.object) for f in self.store.facts_in_slot(scope, list(NAME_SLOTS), at)}

    def _commit(self, msg: "Message", vectors: dict[str, np.ndarray]) -> AddResult:
        scope, text, at, plans = msg.scope, msg.text, msg.at, msg.plans
        context = "" if msg.temporary else message_context(self.store, scope, msg.chat, at, msg.sent)
        episode_id = msg.message_id or f"ep_{uuid.uuid4().hex}"
        result = AddResult(status="skipped", candidates_extracted=len(msg.candidates),
                           episode_id=None if msg.temporary else episode_id,
                           rejections=msg.rejected, candidates_rejected=len(msg.rejected),
                           extraction_error=msg.extraction_error)
        with self.store.transaction(scope):
            if msg.client_ref is not None:
                earlier = self.store.get_ingest(scope, msg.client_ref)
                if earlier is not None:
                    return self._already(scope, earlier)
            if not msg.temporary:
                known = self.store.get_episode(scope, episode_id)
                if known is not None and known.content != text:
                    raise Conflict(f"message_id {episode_id!r} already names a different message in this dataset; "
                                   "use a new message_id for a new message")
                if known is None:
                    self.store.insert_episode(scope, Episode(
                        episode_id=episode_id, role=msg.role, content=text, chat=msg.chat, at=at,
                        created_at=msg.sent),
                        vectors.get(msg.message_text), context=context, embed_text=msg.message_text)
            for plan in plans:
                self._decide(scope, plan, at, episode_id if not msg.temporary else None, vectors, msg)
            self._fill(result, plans)
            result.notes = list(msg.notes)
            if msg.role != "user":  # kept as a message for recall, never mined: the person did not say it
                result.reason = "skipped_non_user_turn"
            elif msg.extraction_error is not None:
                result.reason = "extraction_failed"
            if msg.client_ref is not None:
                self.store.record_ingest(scope, msg.client_ref, {
                    "memory_ids": result.memory_ids, "episode_id": episode_id}, at)
            if msg.finish is not None:
                msg.finish(result)
        if result.memory_ids:
            first = self.store.get_facts(scope, result.memory_ids[:1])
            result.memory = first[0] if first else None
        return result

    @staticmethod
    def message_time(at: datetime | str | None) -> datetime:
        at = timeutil.to_utc(at, field="at") or timeutil.now()
        if at > timeutil.now() + FUTURE_SKEW:
            raise InvalidTime(f"message time {at.isoformat()} lies in the future; pass when the message was "
                              "said (default: now)")
        return at

    def _context(self, scope: Scope, chat: str | None, at: datetime, sent: datetime | None,
                 exclude: str | None = None) -> list[str]:
        """The user's previous turns in this thread, oldest first, for extractors that read context
        (``Settings.extract_context_turns`` of them). Only the user's: an assistant's "Got it, thanks!"
        says nothing about who "she" is, and what the assistant said is never the user's fact."""
        n = self.settings.extract_context_turns
        if not self.extractor.wants_context or n == 0:
            return []
        turns = self.store.previous_messages(scope, chat, at, n, role="user", exclude=exclude, sent=sent)
        return [t.content[-CONTEXT_TURN_CHARS:] for t in reversed(turns)]

    def _known_entities(self, scope: Scope) -> list[str]:
        if not self.extractor.wants_context:
            return []
        return [e.name for e in self.store.entities(scope)][-KNOWN_ENTITIES:]

    def _already(self, scope: Scope, earlier: dict) -> AddResult:
        ids = earlier.get("memory_ids", [])
        facts = self.store.get_facts(scope, ids[:1])
        return AddResult(status="skipped", reason="already_ingested", memory_ids=ids,
                         memory=facts[0] if facts else None, episode_id=earlier.get("episode_id"))

    # -- step 3: normalise and enforce ----------------------------------------------------
    def _normalise(self, candidates: list[Candidate], at: datetime,
                   names: set[str] = frozenset()) -> tuple[list[_Plan], list[str]]:
        names = set(names) | {preds.fold(c.object).strip() for c in candidates
                              if preds.normalise(c.predicate) in NAME_SLOTS and c.object.strip()}
        plans, rejected = [], []
        for c in candidates:
            if c.rejected:
                rejected.append(c.rejected)
                continue
            if not _is_user(c.subject, names):
                rejected.append(f"subject {c.subject!r} is not the user")
                continue
            predicate = preds.normalise(c.predicate)
            obj = re.sub(r"\s+", " ", c.object).strip()
            predicate, obj, c.object_is_entity = preds.canonical_pair(predicate, obj, c.object_is_entity,
                                                                      raw=c.predicate)
            if c.object_is_entity:
                obj = obj.lower()
            if not predicate:
                rejected.append("empty predicate")
                continue
            if not obj and not preds.is_negated(predicate) and predicate != "does" and not c.ends:
                rejected.append(f"empty object for {predicate!r}")
                continue
            if len(obj) > MAX_OBJECT_CHARS:
                rejected.append(f"object of {predicate!r} is {len(obj)} characters (limit {MAX_OBJECT_CHARS})")
                continue
            etype = (c.entity_type or "THING").upper() if c.object_is_entity else None
            if etype is not None and etype not in ENTITY_TYPES:
                etype = "THING"
            if etype == "PLACE" and dates.only_time(obj):
                rejected.append(f"object of {predicate!r} is a time, not a place: {obj!r}")
                continue
            c.kind = c.kind if c.kind in FACT_KINDS else "attribute"
            c.confidence = min(1.0, max(0.0, float(c.confidence)))
            c.text = (c.text or f"user {predicate} {obj}").strip()
            valid_at, valid_until = _window(c, at)
            plan = _Plan(c, predicate, obj, etype, valid_at, valid_until)
            plans.extend(self._as_planned(plan, at) if not c.ends and valid_at > at else [plan])
            plans.extend(self._state_after(plan, candidates))
        return plans, rejected

    def _as_planned(self, plan: _Plan, at: datetime) -> list[_Plan]:
        """A plan, stored as what is true now and what will be: the intention, live from the message
        until its date ("plans to move to · portland"); and from its date the new value of a state slot
        ("lives in · portland"), or for a one-off occurrence (a trip, a race, a wedding: a verb of
        :data:`~kenning.predicates.OCCURRENCE_VERBS`, or any plan given an end) that occurrence over its
        window, which ends (its own end, or the end of its day)."""
        c, label = plan.cand, preds.intention(plan.predicate)
        if plan.predicate.startswith(preds.INTENDING):
            # the intention itself, already worded so ("plans to visit · japan" in May): live until its date
            return [_Plan(c.model_copy(update={"kind": "plan"}), label, plan.obj, plan.etype, at, plan.valid_at)]
        out = [_Plan(c.model_copy(update={"kind": "plan", "text": _retold(c.text, plan.predicate, label, plan.obj)}),
                     label, plan.obj, plan.etype, at, plan.valid_at)]
        state = plan.predicate in preds.STATE_KINDS or self.registry.is_one_value(plan.predicate)
        if not state and (plan.valid_until is not None or preds.is_occurrence(plan.predicate)):
            out.append(_Plan(c.model_copy(update={"kind": "event"}), plan.predicate, plan.obj, plan.etype,
                             plan.valid_at, plan.valid_until or plan.valid_at + ONE_OFF_DAYS))
        else:   # a new state, or something that lasts once it starts ("picks up · model 3")
            kind = preds.STATE_KINDS.get(plan.predicate, "attribute" if c.kind == "plan" else c.kind)
            out.append(_Plan(c.model_copy(update={"kind": kind}), plan.predicate, plan.obj, plan.etype,
                             plan.valid_at, plan.valid_until))
        return out

    @staticmethod
    def _state_after(plan: _Plan, candidates: list[Candidate]) -> list[_Plan]:
        """An event that starts a state ("got married to · sofia") also gives that state from its date,
        unless the message already gave it."""
        state = preds.STATE_AFTER_EVENT.get(plan.predicate)
        if state is None or plan.cand.ends or plan.cand.kind not in ("event", "plan"):
            return []
        if any(preds.normalise(c.predicate) == state or (not c.ends and c.kind != "event" and
                                                          c.object.strip().lower() == plan.obj) for c in candidates):
            return []   # the message gave the state itself, maybe in other words ("has cat · nacho")
        kind = preds.STATE_KINDS.get(state, "relation" if state.startswith(("has ", "is married")) else "attribute")
        return [_Plan(plan.cand.model_copy(update={"kind": kind, "text": f"user {state} {plan.obj}"}), state,
                      plan.obj, plan.etype, plan.valid_at, None)]

    # -- embeddings computed before the transaction -----------------------------------------
    def _prefetch(self, scope: Scope, plans: list[_Plan], message_text: str | None) -> dict[str, np.ndarray]:
        """Everything this message needs embedded, in one batch: the message, objects, labels, facts."""
        return self._embed(self._embed_texts(scope, plans, message_text))

    def _embed_texts(self, scope: Scope, plans: list[_Plan], message_text: str | None) -> set[str]:
        if self.embedder is None:
            return set()
        texts = {message_text} if message_text else set()
        if not plans:
            return texts
        for p in plans:
            texts.add(p.obj)
            texts.add(p.predicate)
            texts.add(embed_text(p.predicate, p.obj, p.cand.text, p.etype is not None))
        texts.update(label for label, _ in self.store.predicate_labels(scope))
        return texts

    def _embed(self, texts) -> dict[str, np.ndarray]:
        texts = [t for t in dict.fromkeys(texts) if t]
        if self.embedder is None or not texts:
            return {}
        return dict(zip(texts, self.embedder.embed_batch(texts)))

    def _vec(self, vectors: dict[str, np.ndarray], text: str) -> np.ndarray | None:
        if self.embedder is None:
            return None
        if text not in vectors:
            vectors.update(self._embed([text]))
        return vectors[text]

    # -- steps 4-6: canonicalise, resolve, decide ------------------------------------------------
    def _decide(self, scope: Scope, plan: _Plan, at: datetime, episode_id: str | None,
                vectors: dict[str, np.ndarray], msg: "Message | None" = None) -> None:
        mine = msg.mine if msg is not None else set()
        self._settle(scope, plan, at, episode_id, vectors, mine, msg.notes if msg is not None else [])
        if plan.fact_id and plan.outcome in ("stored", "updated"):
            mine.add(plan.fact_id)

    def _settle(self, scope: Scope, plan: _Plan, at: datetime, episode_id: str | None,
                vectors: dict[str, np.ndarray], mine: set[str], notes: list[str]) -> None:
        plan.predicate = self._canonical_predicate(scope, plan, vectors)
        if plan.cand.needs_known_entity and plan.etype is not None:
            # an opinion names a known thing, of whatever type it was first stored as
            known = next((e for e in self.store.entities(scope)
                          if e.name == plan.obj or _fuzzy_alias(plan.obj, e.name)), None)
            if known is not None:
                plan.etype = known.type
        if plan.etype is not None:
            entity, created = self._resolve_entity(scope, plan, vectors, at)
            if plan.cand.needs_known_entity and created:
                plan.outcome, plan.note = "rejected", f"opinion about {plan.obj!r}, which was never discussed"
                return
            if created:
                self.store.insert_entity(scope, entity, self._vec(vectors, entity.name))
            if entity.name != plan.obj:
                plan.cand.text = re.sub(re.escape(plan.obj), entity.name, plan.cand.text)
                plan.obj = entity.name
            plan.entity_id = entity.entity_id
        elif plan.cand.needs_known_entity:
            plan.outcome, plan.note = "rejected", "opinion about something never discussed"
            return

        if plan.cand.ends and self._end(scope, plan, at, mine):
            return
        if plan.valid_until is not None and plan.valid_until <= at:
            # A fact of the past (an ending with nothing live to end, "I used to …"): kept with its window;
            # said again, it is the same fact.
            before_end = plan.valid_until - timedelta(microseconds=1)
            twin = self._same_value(plan, [f for f in self.store.facts_in_slot(scope, [plan.predicate], before_end)
                                           if f.valid_until is not None], vectors)
            if twin is not None:
                plan.outcome, plan.fact_id = "deduped", twin.fact_id
                return
        slot = self.store.facts_in_slot(scope, [plan.predicate], at)
        if plan.cand.kind == "event":
            # an event is one occurrence: the gym on Monday and the gym on Thursday are two visits
            slot = [f for f in slot if f.kind != "event" or abs(f.valid_at - plan.valid_at) <= EVENT_SAME_DAYS]
        same = self._same_value(plan, slot, vectors)
        if same is not None and same.valid_until is None and plan.valid_until is not None and plan.valid_until <= at \
                and same.fact_id not in mine and self._close(scope, same, plan.valid_until):
            # "I used to live in Madrid" while Madrid is live: that value has ended.
            plan.outcome, plan.fact_id = "updated", same.fact_id
            return
        if same is not None and (same.valid_until is None or plan.valid_until is not None):
            plan.outcome, plan.fact_id = "deduped", same.fact_id
            return

        fact_id = f"f_{uuid.uuid4().hex}"
        contradicted = []
        opposite = preds.opposite(plan.predicate)
        past = plan.valid_until is not None and plan.valid_until <= at
        if opposite and not past:
            contradicted = [f for f in self.store.facts_in_slot(scope, [opposite], at)
                            if object_key(f.object) == object_key(plan.obj)]
        others = [f for f in slot if f is not same] if self.registry.is_one_value(plan.predicate) else []
        together = [f for f in others if f.fact_id in mine and _overlap(f, plan)]
        others = [f for f in others if f.fact_id not in mine]
        if together:
            # One message giving one slot two values ("keep it short and skip the small talk", "Berlin in
            # the week, Munich at weekends") means both: they never supersede each other.
            others = [f for f in others if f.fact_id not in mine]
            notes.append(f"one message gave {plan.predicate!r} {len(together) + 1} values "
                         f"({', '.join([*(f.object for f in together), plan.obj])}); all are kept")
        if same is not None:
            others.append(same)  # an ended value coming back: the open fact replaces it
        if plan.valid_until is None and self.registry.is_one_value(plan.predicate):
            # A backfilled value (an older message arriving late, or racing writers committing out of
            # order) fits into the history too: it ends where the next superseded value starts, and cuts
            # the one whose window it falls into. Without them, two values would hold at one time.
            others += [f for f in self.store.facts_in_slot(scope, [plan.predicate], plan.valid_at, superseded=True)
                       if f.invalid_at is not None]
        if plan.cand.kind == "plan" and plan.valid_until is not None and plan.valid_at <= at:
            # A new intention for a one-value slot replaces the earlier one ("moving to Seattle instead").
            contradicted += [f for f in others if f.kind == "plan" and f.valid_until is not None]
        if plan.valid_until is None:
            for old in others:
                if plan.valid_at < old.valid_at:
                    if old.valid_until is None and old.valid_at < at and self._start_unsaid(scope, old):
                        # Said later and dated back ("I live in Berlin", then days later "I moved to Madrid
                        # last month"): the later word on the present wins. The old value's start was only
                        # when it was mentioned, so it becomes unknown; it held until the move.
                        self.store.update_fact(scope, old.fact_id, valid_at=UNKNOWN_START)
                        contradicted.append(old.model_copy(update={"valid_at": UNKNOWN_START}))
                        continue
                    # An older value, or one that holds until a planned change: it ends where the other starts.
                    plan.valid_until = min(plan.valid_until or old.valid_at, old.valid_at)
                    continue
                contradicted.append(old)
        for old in contradicted:
            self._supersede(scope, old, plan, fact_id, at)
        rivals = conflicts.rival_slots(plan.predicate)
        if rivals:
            for old in self.store.facts_in_slot(scope, rivals, at):
                if old.valid_until is None and old.valid_at <= at and (
                        conflicts.diet_conflict(plan.predicate, plan.obj, old)
                        or conflicts.partner_upgrade(plan.predicate, plan.obj, old)):
                    self._close(scope, old, plan.valid_at)
        fact = Fact(
            fact_id=fact_id, predicate=plan.predicate, object=plan.obj, object_is_entity=plan.etype is not None,
            entity_type=plan.etype, text=plan.cand.text, kind=plan.cand.kind, confidence=plan.cand.confidence,
            source_quote=plan.cand.source_quote, valid_at=plan.valid_at, valid_until=plan.valid_until,
            episode_id=episode_id, created_at=timeutil.now())
        etext = embed_text(fact.predicate, fact.object, fact.text, fact.object_is_entity)
        try:
            self.store.insert_fact(scope, fact, etext, self._vec(vectors, etext), entity_id=plan.entity_id)
        except DuplicateFact:
            twin = self._same_value(plan, self.store.facts_in_slot(scope, [plan.predicate], at), vectors)
            plan.outcome, plan.fact_id = "deduped", twin.fact_id if twin else None
            return
        plan.fact_id = fact_id
        plan.outcome = "updated" if plan.supersedes else "stored"

    def _live(self, scope: Scope, at: datetime, limit: int = 2000) -> list[Fact]:
        ids = [fid for fid, _ in self.store.live_fact_ids(scope, at, limit)]
        return self.store.get_facts(scope, ids) if ids else []

    def _end(self, scope: Scope, plan: _Plan, at: datetime, mine: set[str]) -> bool:
        """An ending ("I gave up the cello", "we broke up") ends the live facts it names, however
        they were worded: they get ``valid_until``, never ``invalid_at`` (they were true until then).
        False when nothing live matches: the caller keeps the ending as a fact of the past."""
        end = plan.valid_until or at
        ended = [f for f in self._live(scope, max(at, end))
                 if f.valid_until is None and f.fact_id not in mine and conflicts.ended_by(plan.predicate, plan.obj, f)]
        ended = [f for f in ended if self._close(scope, f, end)]
        if not ended:
            return False
        plan.outcome, plan.fact_id = "updated", ended[0].fact_id
        return True

    def _close(self, scope: Scope, fact: Fact, end: datetime) -> bool:
        """End ``fact`` at ``end``, never before it starts. A fact whose start was only when it was first
        mentioned (its message's time) and whose ending is dated earlier ("I'm vegetarian" in May, then "I
        stopped being vegetarian in March") has a start nobody said: it becomes unknown. A fact whose
        stated start lies after the end is another period: left alone (False)."""
        if end > fact.valid_at:
            self.store.update_fact(scope, fact.fact_id, valid_until=end)
            return True
        if self._start_unsaid(scope, fact):
            self.store.update_fact(scope, fact.fact_id, valid_at=UNKNOWN_START, valid_until=end)
            return True
        return False

    def _start_unsaid(self, scope: Scope, fact: Fact) -> bool:
        """Whether the fact's start is only when it was first mentioned (its message's time), not a date said."""
        said = self.store.get_episode(scope, fact.episode_id) if fact.episode_id else None
        return said is not None and said.at == fact.valid_at

    def _supersede(self, scope: Scope, old: Fact, plan: _Plan, new_id: str, at: datetime) -> None:
        plan.supersedes.append(old.fact_id)
        if old.valid_at >= plan.valid_at and old.valid_at > at:
            # A planned value replaced by another plan from no later a date: it never comes to hold.
            self.store.update_fact(scope, old.fact_id, invalid_at=min(at, timeutil.now()), superseded_by=new_id)
            return
        if plan.valid_at > at:
            # A planned change: the old value stays true until the new one starts.
            self.store.update_fact(scope, old.fact_id, valid_until=plan.valid_at, superseded_by=new_id)
            return
        until = plan.valid_at if plan.valid_at > old.valid_at and (
            old.valid_until is None or old.valid_until > plan.valid_at) else None
        self.store.update_fact(scope, old.fact_id, invalid_at=min(at, timeutil.now()), valid_until=until,
                               superseded_by=new_id)

    def _same_value(self, plan: _Plan, slot: list[Fact], vectors) -> Fact | None:
        key = object_key(plan.obj)
        for f in slot:
            if object_key(f.object) == key:
                return f
        if self.embedder is None or not slot or plan.etype is not None or not key:
            return None  # entities were already resolved: a different entity is a different value;
                         # a nameless ending ("we broke up") names no value to compare
        mine = self._vec(vectors, plan.obj)
        best, best_score = None, self.settings.dedup_threshold
        for f in slot:
            if not object_key(f.object):
                continue
            score = float(mine @ self._vec(vectors, f.object))
            if score >= best_score:
                best, best_score = f, score
        return best

    def _canonical_predicate(self, scope: Scope, plan: _Plan, vectors) -> str:
        """Take an existing label of the same kind when it means the same; never invent one."""
        p = plan.predicate
        if self.embedder is None or self.registry.is_known(p):
            return p
        labels = [label for label, kind in self.store.predicate_labels(scope)
                  if kind == plan.cand.kind and label != p and preds.is_negated(label) == preds.is_negated(p)]
        if not labels:
            return p
        mine = self._vec(vectors, p)
        scores = [(float(mine @ self._vec(vectors, label)), label) for label in labels]
        score, label = max(scores)
        return label if score >= self.settings.predicate_threshold else p

    def _resolve_entity(self, scope: Scope, plan: _Plan, vectors, at: datetime) -> tuple[Entity, bool]:
        """exact name+type → same-type cosine ≥ threshold → fuzzy alias → new. Types never mix."""
        same_type = self.store.entities(scope, plan.etype)
        for e in same_type:
            if e.name == plan.obj or plan.obj in e.aliases:
                return e, False
        if self.embedder is not None and same_type:
            ids, matrix = self.store.entity_vectors(scope, plan.etype)
            if len(ids):
                scores = matrix @ self._vec(vectors, plan.obj)
                i = int(np.argmax(scores))
                if scores[i] >= self.settings.entity_threshold:
                    entity = next(e for e in same_type if e.entity_id == ids[i])
                    self.store.add_alias(scope, entity.entity_id, plan.obj)
                    return entity, False
        for e in same_type:
            if _fuzzy_alias(plan.obj, e.name):
                self.store.add_alias(scope, e.entity_id, plan.obj)
                return e, False
        entity = Entity(entity_id=f"e_{uuid.uuid4().hex}", name=plan.obj, type=plan.etype, created_at=timeutil.now())
        return entity, True

    # -- step 8: the receipt -------------------------------------------------------------
    def _fill(self, result: AddResult, plans: list[_Plan]) -> None:
        for p in plans:
            if p.outcome == "stored":
                result.candidates_stored += 1
            elif p.outcome == "updated":
                result.candidates_updated += 1
            elif p.outcome == "deduped":
                result.candidates_deduped += 1
                if p.fact_id:
                    result.deduplicated_against.append(p.fact_id)
            elif p.outcome == "rejected":
                result.candidates_rejected += 1
                result.rejections.append(p.note or "rejected")
            if p.outcome in ("stored", "updated") and p.fact_id and p.fact_id not in result.memory_ids:
                result.memory_ids.append(p.fact_id)
            result.supersedes.extend(p.supersedes)
        if result.memory_ids:
            result.status = "stored"
        elif result.deduplicated_against:
            result.status, result.reason = "skipped", "duplicate"
            result.memory_ids = list(dict.fromkeys(result.deduplicated_against))
        else:
            result.status, result.reason = "skipped", "no_valid_candidates"


def _overlap(fact: Fact, plan: _Plan) -> bool:
    """Whether a stored fact's window and a candidate's share a moment."""
    return (fact.valid_until is None or fact.valid_until > plan.valid_at) and (
        plan.valid_until is None or plan.valid_until > fact.valid_at)


def _is_user(subject: str, names: set[str]) -> bool:
    """The user, however a model wrote them: "user", "I", or the user's own name ("Maya", "Maya Chen")."""
    who = preds.fold(subject).strip()
    return who in USER_WORDS or who in names or who in {n.split()[0] for n in names if n}


def _window(c: Candidate, at: datetime) -> tuple[datetime, datetime | None]:
    """A candidate's validity window, never empty or inverted. An ending holds until it ended
    (``valid_until``; an earlier prompt gave that time in ``valid_at``, still read) and from its start
    when the message gave one; a window whose start was not said, or is no earlier than its end, has an
    unknown start (:data:`UNKNOWN_START`)."""
    start, until = timeutil.to_utc(c.valid_at), timeutil.to_utc(c.valid_until)
    if c.ends:
        end = until or start or at
        return (start if until is not None and start is not None and start < until else UNKNOWN_START), end
    start = start or at
    if until is not None and until <= start:
        start = UNKNOWN_START
    return start, until


def _retold(text: str, predicate: str, label: str, obj: str) -> str:
    """A fact's sentence with its predicate replaced ("user lives in portland" → "user plans to move to
    portland"), or, where the sentence does not hold the predicate, the plain one."""
    return text.replace(predicate, label, 1) if predicate and predicate in text else f"user {label} {obj}"


def _fuzzy_alias(short: str, long: str) -> bool:
    """'corola hybrid' → 'toyota corolla hybrid': every word of a 2+ word name
    matches a word of the other within one edit, at least one word exactly."""
    from difflib import SequenceMatcher

    a, b = short.split(), long.split()
    if len(a) > len(b):
        a, b = b, a
    if len(a) < 2:
        return False
    exact = 0
    for word in a:
        best = max(SequenceMatcher(None, word, other).ratio() for other in b)
        if word in b:
            exact += 1
        elif best < 0.8 or len(word) < 4:
            return False
    return exact >= 1
