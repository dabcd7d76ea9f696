"""Erasure: a fact with the words it came from, a message with what it taught, everything holding a text,
or a whole person, removed from every place that holds them, with a receipt and a log entry.

Deleting is soft (``delete_fact``: the history keeps the fact); erasing keeps nothing. Each verb works out
an :class:`~kenning.store.base.ErasurePlan` first (what a dry run shows), carries it out in one
transaction, then compacts: the store's files, indexes and log drop the bytes (``Settings.erase_compaction``).
The log keeps ids, counts and SHA-256 hashes, never the erased text.
"""
from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import timeutil
from .errors import InputError, NotFound
from .notes import ORG_DATASET, ORGANIZATION
from .model import ErasurePage, ErasureReceipt, ErasureRecord, Fact, Scope
from .services import check_page
from .store.base import ErasurePlan, FactQuery, Found
from .store.erasing import ERASABLE_TABLES
from .write import check_id, message_context, message_embed_text

if TYPE_CHECKING:
    from .services import Services

MARK = "[erased]"                    # what stands where quoted words were cut out of a message
MIN_CONTENT_CHARS = 2                # erase by content refuses a shorter text (it would match nearly everything)
MAX_CONTENT_CHARS = 1_000
_LEFT_OVER = re.compile(r"[\W_]+")   # what a redacted message may hold besides marks and still say nothing
# The tables each kind of removal touches: what compaction rewrites.
TABLES = {"facts": ("facts",), "restored": ("facts",), "entities": ("entities",), "messages": ("episodes",),
          "redacted": ("episodes",), "notes": ("notes",), "core_files": ("core_files",),
          "core_file_versions": ("core_file_versions",), "documents": ("documents",), "jobs": ("jobs",),
          "quotes": ("facts",), "ingests": ("ingests",)}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def spans_of(text: str, phrases: Sequence[str], keep: Sequence[str] = ()) -> list[tuple[int, int]]:
    """Where any of ``phrases`` occurs in ``text`` (case-insensitively), merged where they overlap; an
    occurrence that overlaps one of ``keep`` (the words something that stays stands on) is left out."""
    folded = text.casefold()
    if len(folded) != len(text):   # a character whose folding changes length: fold per character's own width
        folded = text.lower()

    def occurrences(words: Sequence[str]) -> list[tuple[int, int]]:
        found = []
        for phrase in {p.casefold() if len(p.casefold()) == len(p) else p.lower() for p in words if p and p.strip()}:
            start = folded.find(phrase)
            while start != -1:
                found.append((start, start + len(phrase)))
                start = folded.find(phrase, start + 1)
        return found

    kept = occurrences(keep)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(occurrences(phrases)):
        if any(s < end and e > start for s, e in kept):
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, phrases: Sequence[str], keep: Sequence[str] = ()) -> str:
    """``text`` with every occurrence of ``phrases`` (but those overlapping ``keep``) replaced by :data:`MARK`."""
    out, last = [], 0
    for start, end in spans_of(text, phrases, keep):
        out += [text[last:start], MARK]
        last = end
    return "".join(out) + text[last:]


def drop_lines(text: str, phrase: str) -> str:
    """``text`` without every line that holds ``phrase`` (or part of a match spanning lines)."""
    spans = spans_of(text, [phrase])
    if not spans:
        return text
    kept, offset = [], 0
    for line in text.splitlines(keepends=True):
        start, end = offset, offset + len(line)
        offset = end
        if not any(s < end and e > start for s, e in spans):
            kept.append(line)
    return "".join(kept)


def checked_dry_run(dry_run: object) -> bool:
    """``dry_run`` itself, refused unless a bool: "yes" or 1 must not decide whether data goes for good."""
    if not isinstance(dry_run, bool):
        raise InputError(f"dry_run must be True (only say what would go) or False (erase), got {dry_run!r}")
    return dry_run


def says_nothing(text: str) -> bool:
    return not _LEFT_OVER.sub("", text.replace(MARK, ""))


class Erasure:
    """``mem.erase``: the erase verbs, the erasure log and compaction."""

    def __init__(self, services: "Services"):
        self._s = services

    # -- the verbs ---------------------------------------------------------------------------------
    def fact(self, dataset: str, fact_id: str, *, dry_run: bool = False, by: str | None = None,
             project: str | None = None, environment: str | None = None) -> ErasureReceipt:
        """Erase a fact and every version of its slot value in the history (same predicate and object, in any
        state), and cut the quoted words (and the value) out of each message they came from: the message is
        redacted, embedded and indexed again; other facts from it stay, citing the redacted message. A value
        the erased fact had superseded is live again."""
        scope = self._s.scope(dataset, project, environment)
        check_id(fact_id, "fact_id")
        store = self._s.store
        exact = checked_dry_run(dry_run) and not store.in_transaction()
        try:
            with store.transaction(scope):
                if not store.get_facts(scope, [fact_id]):
                    raise NotFound(f"no fact {fact_id!r} in dataset {dataset!r}")
                versions = store.slot_versions(scope, [fact_id])
                plan, texts = ErasurePlan(facts=[f.fact_id for f in versions]), {f"fact:{f.fact_id}": f.text for f in versions}
                self._redact_sources(scope, versions, plan, texts)
                receipt, tables = self._finish(scope, "fact", plan, texts, dry_run, by, exact=exact)
        except _DryRun as dry:   # rolled back: nothing was erased or logged
            return dry.receipt
        return self._compacted(receipt, tables)

    def message(self, dataset: str, message_id: str, *, dry_run: bool = False, by: str | None = None,
                project: str | None = None, environment: str | None = None) -> ErasureReceipt:
        """Erase a message (its vector and keyword-index entries too), every fact that cites it in any state,
        and the turns that carried it. A value one of those facts had superseded is live again."""
        scope = self._s.scope(dataset, project, environment)
        check_id(message_id, "message_id")
        store = self._s.store
        exact = checked_dry_run(dry_run) and not store.in_transaction()
        try:
            with store.transaction(scope):
                said = store.get_episode(scope, message_id)
                if said is None:
                    raise NotFound(f"no message {message_id!r} in dataset {dataset!r}")
                cited = self._citing(scope, [message_id])
                plan = ErasurePlan(facts=[f.fact_id for f in cited], messages=[message_id], job_messages=[message_id])
                texts = {f"message:{message_id}": said.content, **{f"fact:{f.fact_id}": f.text for f in cited}}
                receipt, tables = self._finish(scope, "message", plan, texts, dry_run, by, exact=exact)
        except _DryRun as dry:   # rolled back: nothing was erased or logged
            return dry.receipt
        return self._compacted(receipt, tables)

    def content(self, dataset: str, text: str, *, dry_run: bool = False, document_scopes: Sequence[str] = (),
                organization: bool = False, by: str | None = None, project: str | None = None,
                environment: str | None = None) -> ErasureReceipt:
        """Erase everything in the dataset that holds ``text`` (case-insensitively): facts whose sentence,
        value or quote holds it, messages (with the facts citing them),
        notes (forgotten ones too), entities named by it and aliases holding it, the lines of core files and
        of their earlier versions, queued and finished turns, and documents under ``document_scopes`` (the
        keys this person's documents live under; documents belong to no dataset). With ``organization``, the
        project's organization memory (its notes and core files, shared by every user) too: its ids come
        as ``organization/<id>``. Run it with ``dry_run`` first: the receipt counts and names what would go."""
        scope = self._s.scope(dataset, project, environment)
        if not isinstance(text, str) or len(text.strip()) < MIN_CONTENT_CHARS:
            raise InputError(f"text must hold at least {MIN_CONTENT_CHARS} characters besides spaces: erase by "
                             "content removes everything that contains it")
        if len(text) > MAX_CONTENT_CHARS:
            raise InputError(f"text is {len(text)} characters; erase by content takes at most {MAX_CONTENT_CHARS}")
        if isinstance(document_scopes, str):
            document_scopes = [document_scopes]
        from .documents import check_name
        scopes = [check_name("scope_key", key) for key in document_scopes]
        store = self._s.store
        exact = checked_dry_run(dry_run) and not store.in_transaction()
        try:
            with store.transaction(scope):
                plan, texts = self._content_plan(scope, text, scopes)
                extra: dict[str, list[str]] = {}
                if organization:   # the project's shared notes and core files, named with their place
                    home = scope._replace(dataset=ORG_DATASET)
                    with store.transaction(home):
                        shared, shared_texts = self._content_plan(home, text, ())
                        done = describe(shared) if dry_run and not exact else store.erase(home, shared)
                        done.pop("restored", None)
                        extra = {kind: [f"{ORGANIZATION}/{i}" for i in ids] for kind, ids in done.items()}
                        texts.update({f"{ORGANIZATION}/{k}": v for k, v in shared_texts.items() if k != "query"})
                receipt, tables = self._finish(scope, "content", plan, texts, dry_run, by, extra, exact=exact)
        except _DryRun as dry:   # rolled back: nothing was erased or logged
            return dry.receipt
        return self._compacted(receipt, tables)

    def dataset(self, dataset: str, *, dry_run: bool = False, by: str | None = None, project: str | None = None,
                environment: str | None = None) -> ErasureReceipt:
        """Erase one end user: every row of the dataset (facts and their history, entities, messages, notes,
        core files and their versions, turns, idempotency receipts), then compact. The receipt counts the
        rows per kind (it names the dataset, not each row); the log keeps the entry. The organization
        memory, shared by the project's users, is not the dataset's (``content(..., organization=True)``)."""
        return self._whole(dataset, dry_run, by, project, environment)[0]

    def _whole(self, dataset: str, dry_run: bool, by: str | None, project: str | None,
               environment: str | None) -> tuple[ErasureReceipt, dict[str, int]]:
        """``dataset``'s receipt, and the rows removed per table (what ``delete_dataset`` answers)."""
        checked_dry_run(dry_run)
        scope = self._s.scope(dataset, project, environment)
        store = self._s.store
        at = timeutil.now()
        if dry_run:
            with store.reading(scope):
                rows = store.count_rows(scope)
            return ErasureReceipt(erasure_id=None, kind="dataset", dataset=dataset, dry_run=True,
                                  removed=by_kind(rows), ids={}, at=at), rows
        with store.transaction(scope):
            rows = store.delete_dataset(scope)
            erasure_id = f"er_{uuid.uuid4().hex}"
            self._log(scope, erasure_id, "dataset", by_kind(rows), {}, {}, by, at)
        physical = self._compact([t for t in rows if t in ERASABLE_TABLES])
        return ErasureReceipt(erasure_id=erasure_id, kind="dataset", dataset=dataset, dry_run=False,
                              removed=by_kind(rows), ids={}, physical=physical, at=at), rows

    # -- the log and compaction ------------------------------------------------------------------
    def log(self, dataset: str | None = None, limit: int = 50, offset: int = 0, *, project: str | None = None,
            environment: str | None = None) -> ErasurePage:
        """The erasure log, newest first: of one dataset, or (None) of the project and environment."""
        check_page(limit, offset)
        project, environment = self._s.tenant(project, environment)
        if dataset is not None:
            self._s.scope(dataset, project, environment)
        with self._s.store.reading():
            rows, total = self._s.store.erasures(project, environment, dataset, limit, offset)
        return ErasurePage(erasures=[ErasureRecord.model_validate(r) for r in rows], total=total, limit=limit,
                           offset=offset)

    def compact(self) -> bool:
        """Make every erasure still pending leave the store's files (``kenning compact``; what
        ``erase_compaction="deferred"`` leaves for a quiet hour). False if something must wait (see the log)."""
        return self._s.store.compact(None)

    # -- the parts ---------------------------------------------------------------------------------
    def _content_plan(self, scope: Scope, text: str, document_scopes: Sequence[str]) -> tuple[ErasurePlan, dict]:
        """What erasing ``text`` from one dataset takes, and the erased texts (for the log's hashes)."""
        found = self._s.store.containing(scope, text, document_scopes)
        plan = ErasurePlan(aliases=text)
        by_kind: dict[str, list[Found]] = {}
        for item in found:
            by_kind.setdefault(item.kind, []).append(item)
        plan.messages = [m.id for m in by_kind.get("message", [])]
        plan.job_messages = list(plan.messages)
        cited = self._citing(scope, plan.messages)
        plan.facts = list(dict.fromkeys([f.id for f in by_kind.get("fact", [])] + [f.fact_id for f in cited]))
        plan.notes = [n.id for n in by_kind.get("note", [])]
        plan.entities = [e.id for e in by_kind.get("entity", [])]
        plan.jobs = [j.id for j in by_kind.get("job", [])]
        plan.documents = [d.extra for d in by_kind.get("document", [])]
        for item in by_kind.get("core_file", []):
            plan.core[item.extra] = drop_lines(item.text, text)
        for item in by_kind.get("core_file_version", []):
            plan.core_versions[item.extra] = drop_lines(item.text, text)
        texts = {f"{item.kind}:{item.id}": item.text for item in found}
        texts.update({f"fact:{f.fact_id}": f.text for f in cited})
        texts["query"] = text.casefold()
        return plan, texts

    def _citing(self, scope: Scope, message_ids: Sequence[str]) -> list[Fact]:
        """Every fact, in any state, mined from these messages."""
        out: list[Fact] = []
        for message_id in message_ids:
            offset = 0
            while True:
                page, total = self._s.store.list_facts(scope, FactQuery(
                    message_id=message_id, include_invalidated=True, limit=500, offset=offset))
                out += page
                offset += len(page)
                if not page or offset >= total:
                    break
        return out

    def _redact_sources(self, scope: Scope, erased: list[Fact], plan: ErasurePlan, texts: dict[str, str]) -> None:
        """Cut each erased fact's quote and value out of the message it cites; a message left saying nothing,
        that no other fact cites, goes whole."""
        store, embedder = self._s.store, self._s.embedder
        gone = set(plan.facts)
        sources: dict[str, list[Fact]] = {}
        for fact in erased:
            if fact.episode_id:
                sources.setdefault(fact.episode_id, []).append(fact)
        for episode_id, facts in sources.items():
            said = store.get_episode(scope, episode_id)
            if said is None:
                continue
            others = [f for f in self._citing(scope, [episode_id]) if f.fact_id not in gone]
            # Each erased fact's quote and value, but where one holds a value a fact that stays says (the same
            # one under another predicate, or another one in the same sentence): those words stay, for it.
            phrases = [p for fact in facts for p in (fact.source_quote, fact.object)]
            keep = [o.object for o in others if o.object]
            content = redact(said.content, phrases, keep)
            plan.job_messages.append(episode_id)
            if content == said.content:
                continue
            if says_nothing(content) and not others:
                plan.messages.append(episode_id)   # goes whole, and is logged as a message
                texts[f"message:{episode_id}"] = said.content
                continue
            texts[f"quote:{episode_id}"] = "\n".join(said.content[s:e] for s, e in spans_of(said.content, phrases, keep))
            embed = message_embed_text(content)
            vector = embedder.embed(embed) if embedder is not None else None
            plan.redactions[episode_id] = (content, embed, vector)
            for other in others:
                quote = redact(other.source_quote, phrases, keep)
                if quote != other.source_quote:
                    plan.quotes[other.fact_id] = quote

    def _finish(self, scope: Scope, kind: str, plan: ErasurePlan, texts: dict[str, str], dry_run: bool,
                by: str | None, extra: dict[str, list[str]] | None = None, *,
                exact: bool = False) -> tuple[ErasureReceipt, list[str]]:
        """Inside the erasure's transaction: carry the plan out, keep the neighbours' keyword context true,
        log it; compact once committed. A dry run carries it out too and is rolled back (:class:`_DryRun`),
        so its receipt is what the erasure would do, entities and restored facts included; inside a
        caller's own transaction, which must not be rolled back, it can only describe the plan."""
        at = timeutil.now()
        store = self._s.store
        extra = extra or {}
        if dry_run and not exact:
            ids = describe(plan)
            for k, v in extra.items():
                ids[k] = ids.get(k, []) + v
            return ErasureReceipt(erasure_id=None, kind=kind, dataset=scope.dataset, dry_run=True,
                                  removed={k: len(v) for k, v in ids.items()},
                                  ids={k: v for k, v in ids.items() if k != "redacted"},
                                  redacted=ids.get("redacted", []), at=at), []
        touched = list(dict.fromkeys([*plan.messages, *plan.redactions]))
        followers = {}
        for episode_id in touched:   # the message after each holds its end in its keyword context
            said = store.get_episode(scope, episode_id)
            after = store.following_message(scope, said) if said is not None else None
            if after is not None and after.episode_id not in plan.messages:
                followers[after.episode_id] = after
        done = store.erase(scope, plan)
        for after in followers.values():
            store.set_episode_context(scope, after.episode_id,
                                      message_context(store, scope, after.chat, after.at, after.created_at))
        redacted, restored = done.pop("redacted", []), done.pop("restored", [])
        for k, v in extra.items():
            done[k] = done.get(k, []) + v
        if plan.quotes:
            done["quotes"] = list(plan.quotes)
        removed = {k: len(v) for k, v in done.items() if k != "quotes"}
        removed["redacted"] = len(redacted)
        if dry_run:
            raise _DryRun(ErasureReceipt(erasure_id=None, kind=kind, dataset=scope.dataset, dry_run=True,
                                         removed=removed, ids={k: v for k, v in done.items() if k != "quotes"},
                                         redacted=redacted, restored=restored, at=at))
        erasure_id = f"er_{uuid.uuid4().hex}"
        hashes = {key: sha256(value) for key, value in texts.items()}
        self._log(scope, erasure_id, kind, removed, {**done, "redacted": redacted, "restored": restored}, hashes,
                  by, at)
        tables = [t for k in [*done, *(("redacted",) if redacted else ())] for t in TABLES.get(k, ())]
        receipt = ErasureReceipt(erasure_id=erasure_id, kind=kind, dataset=scope.dataset, dry_run=False,
                                 removed=removed, ids={k: v for k, v in done.items() if k != "quotes"},
                                 redacted=redacted, restored=restored, at=at)
        return receipt, tables

    def _compacted(self, receipt: ErasureReceipt, tables: Sequence[str]) -> ErasureReceipt:
        """After the erasure's transaction has committed (a checkpoint or VACUUM cannot run inside one)."""
        if not receipt.dry_run:
            receipt.physical = self._compact(tables) if tables else "done"
        return receipt

    def _compact(self, tables: Sequence[str]) -> str:
        if self._s.settings.erase_compaction != "immediate":
            return "pending"
        return "done" if self._s.store.compact(list(dict.fromkeys(tables))) else "pending"

    def _log(self, scope: Scope, erasure_id: str, kind: str, removed: dict[str, int], ids: dict[str, list[str]],
             hashes: dict[str, str], by: str | None, at) -> None:
        record = ErasureRecord(erasure_id=erasure_id, kind=kind, dataset=scope.dataset, by=by, at=at,
                               removed=removed, ids={k: v for k, v in ids.items() if v}, hashes=hashes)
        self._s.store.log_erasure(scope.project, scope.environment, record.model_dump(mode="json"))


class _DryRun(Exception):
    """Raised inside a dry run's transaction once its receipt is known, so everything it did is rolled back."""

    def __init__(self, receipt: ErasureReceipt):
        super().__init__("dry run")
        self.receipt = receipt


def by_table(removed: dict[str, int]) -> dict[str, int]:
    """A dataset erasure's counts per table, as ``delete_dataset`` answers (the inverse of :func:`by_kind`)."""
    return {"episodes" if kind == "messages" else kind: n for kind, n in removed.items()}


def by_kind(rows: dict[str, int]) -> dict[str, int]:
    """Rows per table as the receipts count them (a message is an ``episodes`` row)."""
    return {"messages" if table == "episodes" else table: n for table, n in rows.items()}


def describe(plan: ErasurePlan) -> dict[str, list[str]]:
    """A plan's ids per kind, as a dry run's receipt names them."""
    out = {"facts": list(dict.fromkeys(plan.facts)), "messages": list(dict.fromkeys(plan.messages)),
           "redacted": [m for m in plan.redactions if m not in plan.messages], "notes": plan.notes,
           "entities": plan.entities, "core_files": [f"{ns}:{p}" for ns, p in plan.core],
           "core_file_versions": [f"{ns}:{p}@{v}" for ns, p, v in plan.core_versions],
           "documents": [f"{k}:{p}" for k, p in plan.documents], "jobs": plan.jobs}
    return {k: v for k, v in out.items() if v}
