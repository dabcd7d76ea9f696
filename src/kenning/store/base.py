"""The storage contracts: one small contract per resource, and ``Store``, which is all of them.

Every dataset operation takes a :class:`~kenning.model.Scope` first, tenant-wide ones (documents,
jobs, datasets) a project and environment, and lookups by id are scoped too: a store never answers
across scopes, so no caller checks the scope of what comes back. Writes that must be atomic run inside
``with store.transaction(scope):``, which also serialises the writers of
one dataset so decisions (supersede, dedup) see a consistent state. The
partial unique index on live facts stays the backstop: ``insert_fact``
raises :class:`~kenning.errors.DuplicateFact` when a twin slips through.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..errors import StoreError
from ..model import ChatSummary, CoreFile, CoreFileVersion, DatasetSummary, Document, Entity, Episode, Fact, Job, Note, Scope


@dataclass(frozen=True)
class FactQuery:
    q: str | None = None
    limit: int = 50
    offset: int = 0
    include_invalidated: bool = False
    as_of: datetime | None = None
    entity: str | None = None
    kind: str | None = None               # only facts of this kind (event, plan, relation, …)
    entity_type: str | None = None        # only facts whose object is an entity of this type
    message_id: str | None = None         # only facts mined from this message (episode)
    order: str = "time"                   # time (valid_at), anchor (then slot), slot (predicate, then time)


class Lifecycle(ABC):
    """Opening, closing and transactions; what the store declares about itself.

    A store says what it can do instead of being probed: ``parallel_reads`` (independent reads may
    run side by side on pooled connections) and its migrations, applied on open. ``location`` names
    where the data lives, for people (a file path, a server).
    """

    parallel_reads: bool = False

    @contextmanager
    def reading(self, *scopes: Scope) -> Iterator[None]:
        """Reads of ``scopes`` inside the block may go to a read replica (one that has replayed this
        store's own writes to them); a store without replicas reads where it always does."""
        yield

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the data lives, for people: a file path, ":memory:", a server's address."""

    @abstractmethod
    def applied_migrations(self) -> list[tuple[str, datetime | None]]:
        """(migration, when it was applied, where the store records it) for every migration, in order."""

    @property
    @abstractmethod
    def migrated_now(self) -> list[str]:
        """The migrations this open applied (empty when the schema was already current)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def transaction(self, scope: Scope | None = None) -> AbstractContextManager[None]:
        """All or nothing; ``scope`` names the dataset whose writers it serialises (None: a store-wide one)."""

    @abstractmethod
    def check_embedding_model(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different dimension later."""

    @abstractmethod
    def embedding_dim(self) -> int | None: ...

    @abstractmethod
    def embedding_model(self) -> str | None:
        """The name of the embedder whose vectors the store holds; None before the first."""


class FactStore(ABC):
    """Facts: the write path's decisions (slots, twins, supersession) and the read path's fact signals.

    Every method works inside one dataset's Scope; a fact of another scope is never returned or
    changed. ``list_facts`` serves the listing API (live, as of a time, or the whole history).
    """

    @abstractmethod
    def insert_fact(self, scope: Scope, fact: Fact, embed_text: str, vector: np.ndarray | None,
                    entity_id: str | None = None) -> None:
        """Insert one fact; raises DuplicateFact if a live twin exists."""

    @abstractmethod
    def update_fact(self, scope: Scope, fact_id: str, *, invalid_at: datetime | None = None,
                    valid_until: datetime | None = None, superseded_by: str | None = None,
                    valid_at: datetime | None = None) -> None:
        """Close a fact's window or mark it superseded/deleted (``valid_at``: a start found to be unknown,
        when an ending dates before it); scope fields never change."""

    @abstractmethod
    def get_facts(self, scope: Scope, fact_ids: list[str]) -> list[Fact]: ...

    @abstractmethod
    def facts_in_slot(self, scope: Scope, predicates: list[str], at: datetime,
                      limit: int | None = None, superseded: bool = False) -> list[Fact]:
        """Facts with one of ``predicates`` that are live at ``at`` or start after it; with ``limit``,
        the newest ``limit`` of those live at ``at``. ``superseded`` adds the superseded ones (not the
        deleted) whose window, up to the earlier of ``valid_until`` and ``invalid_at``, runs past ``at``:
        the history a backfilled value has to fit into."""

    @abstractmethod
    def live_fact_ids(self, scope: Scope, at: datetime, limit: int, predicates: list[str] | None = None,
                      entity_ids: list[str] | None = None) -> list[tuple[str, str]]:
        """(fact_id, predicate) of facts live at ``at`` in those slots or about those entities, newest first."""

    @abstractmethod
    def entity_graph(self, scope: Scope, entity_ids: list[str], at: datetime, hops: int,
                     limit: int) -> list[tuple[str, str | None, int]]:
        """(fact_id, episode_id, hop) of live facts about ``entity_ids`` (hop 0) and about the
        entities reached from them in up to ``hops`` steps, nearest first, then newest. Two
        entities are one step apart when live facts about them came from the same message."""

    @abstractmethod
    def fact_vectors(self, scope: Scope, fact_ids: list[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def message_vectors(self, scope: Scope, episode_ids: list[str]) -> dict[str, np.ndarray]:
        """The vectors of those messages that have one."""

    @abstractmethod
    def predicate_labels(self, scope: Scope) -> list[tuple[str, str]]:
        """Distinct (predicate, kind) pairs the dataset uses."""

    @abstractmethod
    def list_facts(self, scope: Scope, query: FactQuery) -> tuple[list[Fact], int]: ...

    @abstractmethod
    def keyword_search(self, scope: Scope, query: str, at: datetime, limit: int) -> list[tuple[str, float]]:
        """(fact_id, score) of live facts matching ``query``'s words, best first."""

    @abstractmethod
    def fact_state(self, fact_id: str, project: str, environment: str) -> tuple[Scope, Fact, bool] | None:
        """(scope, fact, has a vector) of a fact id in this project and environment; None elsewhere."""


class EntityStore(ABC):
    """Entities: the people, places and things of a dataset, with aliases and name vectors.

    Resolution (``find_entities`` by name or alias, ``entity_vectors`` for near spellings) never
    mixes types; the write path decides, the store keeps.
    """

    @abstractmethod
    def entities(self, scope: Scope, type: str | None = None) -> list[Entity]: ...

    @abstractmethod
    def entity_vectors(self, scope: Scope, type: str) -> tuple[list[str], np.ndarray]:
        """Ids and unit vectors of the dataset's embedded entities of one type."""

    @abstractmethod
    def insert_entity(self, scope: Scope, entity: Entity, vector: np.ndarray | None) -> None: ...

    @abstractmethod
    def add_alias(self, scope: Scope, entity_id: str, alias: str) -> None: ...

    @abstractmethod
    def find_entities(self, scope: Scope, names: list[str]) -> list[Entity]:
        """Entities whose name or one of whose aliases is in ``names``."""


class MessageStore(ABC):
    """Messages (episodes) and the idempotency receipts of the turns that brought them.

    A message keeps the one before it in its chat as searchable context; ``message_neighbors``
    lets recall lift the turns next to a strong hit.
    """

    @abstractmethod
    def get_ingest(self, scope: Scope, client_ref: str) -> dict | None: ...

    @abstractmethod
    def record_ingest(self, scope: Scope, client_ref: str, receipt: dict, at: datetime) -> None: ...

    @abstractmethod
    def insert_episode(self, scope: Scope, episode: Episode, vector: np.ndarray | None = None, *,
                       context: str = "", embed_text: str | None = None) -> None:
        """Keep a message; ``context`` is the message before it in its chat (searched along with it)."""

    @abstractmethod
    def previous_message(self, scope: Scope, chat: str | None, at: datetime,
                         sent: datetime | None = None) -> Episode | None:
        """The latest message of ``chat`` said at or before ``at`` (and, said at ``at``, kept before ``sent``)."""

    @abstractmethod
    def previous_messages(self, scope: Scope, chat: str | None, at: datetime, n: int, role: str | None = None,
                          exclude: str | None = None, sent: datetime | None = None) -> list[Episode]:
        """Up to ``n`` latest messages of ``chat`` said at or before ``at`` (of ``role`` only, when given;
        never the message ``exclude``), latest first: what an extractor reads as a message's context. A
        chat's order is the time each message was said, then the order kenning accepted them
        (``created_at``): with ``sent``, a message said at ``at`` but accepted from ``sent`` on is not
        before (the reply to a turn that shares its timestamp)."""

    @abstractmethod
    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None: ...

    @abstractmethod
    def get_episodes(self, scope: Scope, episode_ids: list[str]) -> list[Episode]: ...

    @abstractmethod
    def chats(self, scope: Scope, limit: int, offset: int) -> tuple[list[ChatSummary], int]:
        """The dataset's conversations, latest activity first: each chat, and the messages of no chat as one
        (``chat`` None), with their counts and first and last times; and how many there are."""

    @abstractmethod
    def chat_messages(self, scope: Scope, chat: str | None, limit: int, offset: int) -> tuple[list[Episode], int]:
        """One conversation's messages in the order they were said (``chat`` None: the messages of no chat)."""

    @abstractmethod
    def episode_keyword_search(self, scope: Scope, query: str, limit: int,
                               exclude_chat: str | None = None) -> list[tuple[str, float]]: ...

    @abstractmethod
    def message_neighbors(self, scope: Scope, episode_ids: list[str],
                          exclude_chat: str | None = None) -> dict[str, list[str]]:
        """For each message, the messages just before and after it in its chat (by time, then insertion);
        a message of ``exclude_chat``, or without a chat, has none (it is absent from the answer)."""


class NoteStore(ABC):
    """Archival notes: saved texts per namespace, forgotten rather than deleted.

    ``list_notes`` and the searches see remembered notes unless asked for forgotten ones.
    """

    @abstractmethod
    def insert_note(self, scope: Scope, note: Note, vector: np.ndarray | None) -> None: ...

    @abstractmethod
    def get_notes(self, scope: Scope, note_ids: list[str]) -> list[Note]: ...

    @abstractmethod
    def list_notes(self, scope: Scope, namespaces: list[str] | None, include_forgotten: bool, limit: int,
                   offset: int) -> tuple[list[Note], int]: ...

    @abstractmethod
    def forget_note(self, scope: Scope, note_id: str, at: datetime, superseded_by: str | None) -> None: ...

    @abstractmethod
    def note_keyword_search(self, scope: Scope, query: str, limit: int,
                            namespaces: list[str] | None = None) -> list[tuple[str, float]]: ...


class VectorStore(ABC):
    """Vector search within a dataset, and vectors filled in later for rows stored without one.

    Search is exact (cosine over the dataset's rows): a dataset is small, and an approximate index
    would cross datasets. ``set_vector`` writes only while the row's text is unchanged.
    """

    @abstractmethod
    def vector_search(self, scope: Scope, kind: str, query: np.ndarray, k: int, *, at: datetime | None = None,
                      exclude_chat: str | None = None, namespaces: list[str] | None = None,
                      floor: float = -1.0) -> list[tuple[str, float]]:
        """Exact cosine top-k within one dataset: ``kind`` fact (live at ``at``), episode (not in
        ``exclude_chat``) or note (remembered, in ``namespaces``); (id, similarity ≥ floor), best first."""

    @abstractmethod
    def pending(self, kind: str, limit: int, project: str | None = None, environment: str | None = None,
                dataset: str | None = None) -> list[tuple[Scope, str, str]]:
        """(scope, id, text) of rows of ``kind`` (fact, entity, episode, note) without a vector."""

    @abstractmethod
    def set_vector(self, kind: str, scope: Scope, key: str, text: str, vector: np.ndarray) -> bool:
        """Write a vector only if the row's text is still ``text`` (an edited row stays pending)."""


class CoreFileStore(ABC):
    """Core memory files: small texts edited by the memory tool, with every version kept.

    Versions of a path never repeat, deletions included, so ``expected_version`` checks stay sound.
    """

    @abstractmethod
    def core_get(self, scope: Scope, namespace: str, path: str) -> CoreFile | None: ...

    @abstractmethod
    def core_list(self, scope: Scope, namespace: str) -> list[CoreFile]: ...

    @abstractmethod
    def core_count(self, scope: Scope, namespace: str) -> int:
        """How many files the namespace holds."""

    @abstractmethod
    def core_put(self, scope: Scope, namespace: str, path: str, content: str, op: str,
                 keep: int | None = None) -> CoreFile:
        """Write at the next version of the path and record it in the history; with ``keep``, only the
        newest ``keep`` versions of the path stay (version numbers still never repeat)."""

    @abstractmethod
    def core_delete(self, scope: Scope, namespace: str, path: str, op: str = "delete", keep: int | None = None) -> None: ...

    @abstractmethod
    def core_history(self, scope: Scope, namespace: str, path: str, limit: int | None = None, offset: int = 0,
                     newest_first: bool = False) -> list[CoreFileVersion]:
        """The kept versions of a path, by version (``newest_first``: the other way), a page of them."""


class DocumentStore(ABC):
    """Versioned documents of a project, placed by ``scope_key`` rather than by dataset.

    Tenant-wide (project and environment); an expired document reads as absent until purged.
    """

    @abstractmethod
    def doc_get(self, project: str, environment: str, scope_key: str, path: str, now: datetime) -> Document | None: ...

    @abstractmethod
    def doc_put(self, project: str, environment: str, scope_key: str, path: str, text: str,
                expected_version: int | None, expires_at: datetime | None, now: datetime) -> Document:
        """Write if the live version is ``expected_version`` (None: absent), else DocumentConflict."""

    @abstractmethod
    def doc_list(self, project: str, environment: str, scope_key: str, prefix: str, now: datetime) -> list[Document]: ...

    @abstractmethod
    def doc_delete(self, project: str, environment: str, scope_key: str, path: str, now: datetime) -> bool: ...

    @abstractmethod
    def doc_purge(self, now: datetime, project: str | None = None, environment: str | None = None) -> int: ...


class JobQueue(ABC):
    """The durable queue of turns that ``add_turn`` accepts and workers run.

    ``claim`` hands out the oldest runnable job of a dataset whose earlier jobs are done, under a
    lease; a worker ``renew``s the leases of the jobs it is still running; ``finish`` commits only
    for the worker that holds the lease (else LeaseLost).
    """

    @abstractmethod
    def enqueue(self, job: Job) -> tuple[Job, bool]:
        """Store a job; with a client_ref already queued in its dataset, return that job and False."""

    @abstractmethod
    def claim(self, worker: str, lease_seconds: float, now: datetime) -> Job | None:
        """Lease the oldest runnable job (per-dataset arrival order; expired leases are runnable)."""

    @abstractmethod
    def finish(self, request_id: str, worker: str, result: dict | None, error: str | None = None) -> None:
        """Mark done/failed in the caller's transaction; LeaseLost if ``worker`` lost the lease."""

    @abstractmethod
    def renew(self, worker: str, request_ids: list[str], lease_seconds: float, now: datetime) -> set[str]:
        """Extend to ``now + lease_seconds`` the leases ``worker`` still holds among ``request_ids`` (one
        statement); returns those ids. A job finished, or reclaimed once its lease ran out, is left out."""

    @abstractmethod
    def get_job(self, request_id: str, project: str, environment: str) -> Job | None:
        """A job of this project and environment; None for another tenant's id."""

    @abstractmethod
    def count_jobs(self, statuses: tuple[str, ...], project: str | None = None,
                   environment: str | None = None, dataset: str | None = None) -> int: ...

    @abstractmethod
    def list_jobs(self, project: str, environment: str, dataset: str | None = None, status: str | None = None,
                  limit: int = 50, offset: int = 0) -> list[Job]:
        """Jobs of one project and environment, newest first."""

    @abstractmethod
    def retry_failed(self, project: str | None = None, environment: str | None = None,
                     dataset: str | None = None) -> int: ...


class DatasetStore(ABC):
    """The datasets (end users) of a project and environment, and erasing one."""

    @abstractmethod
    def datasets(self, project: str, environment: str, q: str | None, limit: int,
                 offset: int) -> tuple[list[DatasetSummary], int]:
        """Datasets holding anything, by name (``q``: a substring of the name), with their counts."""

    @abstractmethod
    def usage(self, scope: Scope) -> int:
        """Characters the dataset stores (messages, notes, facts, core-file versions, jobs), for quotas."""

    @abstractmethod
    def delete_dataset(self, scope: Scope) -> dict[str, int]:
        """Erase every row of one dataset in one transaction; the rows removed, per table."""

    @abstractmethod
    def following_message(self, scope: Scope, episode: Episode) -> Episode | None:
        """The message said right after ``episode`` in its chat (the one whose keyword context is its end)."""

    @abstractmethod
    def set_episode_context(self, scope: Scope, episode_id: str, context: str) -> None:
        """Replace what keyword search reads beside a message (its neighbour was removed)."""

    @abstractmethod
    def delete_messages(self, scope: Scope, episode_ids: Sequence[str] | None = None, *,
                        chat: str | None = None) -> dict[str, int]:
        """Remove messages (these ids, or every message of ``chat``) in one transaction, with the facts that
        cite them and the jobs that carried them; a fact one of them superseded takes its place again.
        The rows removed (``messages``, ``facts``, ``entities`` no fact names any more, ``jobs``) and the facts made live again (``restored``)."""


@dataclass
class ErasurePlan:
    """What one erasure changes in a dataset, worked out before it runs (and shown as is by a dry run).

    Removed for good: ``facts`` (a fact one of them superseded is live again), ``messages``, ``notes``,
    ``documents`` (scope key, path), ``jobs`` and the jobs carrying ``job_messages``, and ``entities`` no
    remaining fact names (besides those the removed facts leave unnamed). Rewritten in place:
    ``redactions`` (message id → content, embedded text, vector), ``quotes`` (fact id → source quote),
    ``core`` ((namespace, path) → content) and ``core_versions`` ((namespace, path, version) → content);
    ``aliases``: entity aliases holding this text are dropped."""
    facts: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    redactions: dict[str, tuple[str, str, "np.ndarray | None"]] = field(default_factory=dict)
    quotes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    core: dict[tuple[str, str], str] = field(default_factory=dict)
    core_versions: dict[tuple[str, str, int], str] = field(default_factory=dict)
    documents: list[tuple[str, str]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    job_messages: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    aliases: str | None = None


@dataclass(frozen=True)
class Found:
    """A row holding an erased text: its id and the text (for the erasure log's hash; never stored)."""
    kind: str
    id: str
    text: str
    extra: tuple = ()


class ErasureStore(ABC):
    """Erasure: rows removed or rewritten for good, an erasure log, and compaction (the bytes of what was
    removed leave the store's files, indexes and log)."""

    @abstractmethod
    def slot_versions(self, scope: Scope, fact_ids: Sequence[str]) -> list[Fact]:
        """These facts and every other version of their slot value (same predicate and object, in any state:
        live, ended, superseded, deleted): a value's whole history."""

    @abstractmethod
    def containing(self, scope: Scope, text: str, document_scopes: Sequence[str] = ()) -> list[Found]:
        """Every row of the dataset whose text holds ``text`` case-insensitively: facts (text, object, quote),
        messages, notes (forgotten too), entities (name or alias), core files and their versions (``extra``:
        namespace, path[, version]), jobs (their message), and documents under ``document_scopes``."""

    @abstractmethod
    def in_transaction(self) -> bool:
        """Whether the calling thread is inside a transaction of this store (a dry run rolls back only a
        transaction of its own)."""

    @abstractmethod
    def count_rows(self, scope: Scope) -> dict[str, int]:
        """The dataset's rows per table (what erasing it would remove)."""

    @abstractmethod
    def erase(self, scope: Scope, plan: ErasurePlan) -> dict[str, list[str]]:
        """Carry out ``plan`` inside the caller's transaction; the ids removed per kind, and ``restored``."""

    @abstractmethod
    def log_erasure(self, project: str, environment: str, record: dict) -> None:
        """Append one erasure-log entry (an ``ErasureRecord`` as JSON values: ids, counts, hashes, no text)."""

    @abstractmethod
    def erasures(self, project: str, environment: str, dataset: str | None, limit: int,
                 offset: int) -> tuple[list[dict], int]:
        """Erasure-log entries, newest first (of one dataset, or of the project and environment)."""

    @abstractmethod
    def compact(self, tables: Sequence[str] | None = None) -> bool:
        """Make removed rows' bytes leave the files (``tables``: those touched; None: every table), and mark
        the log's pending entries compacted. False when something could not be done now (a reader holds
        the SQLite WAL); the next compaction tries again."""


KEY_ID_CHARS = 16   # a key's id: the first hex digits of its hash (public: it names the key, proves nothing)


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    project: str
    role: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None = None


class KeyStore(ABC):
    """API keys (only their hashes are stored) and the dashboard's sign-in sessions.

    A key is named by its ``key_id`` (the first :data:`KEY_ID_CHARS` hex digits of its hash), which
    user tokens and sessions carry, so revoking a key ends everything it granted.
    """

    @abstractmethod
    def put_api_key(self, key_hash: str, project: str, role: str, name: str | None = None) -> None: ...

    @abstractmethod
    def find_api_key(self, key_hash: str) -> ApiKey | None:
        """The live key with this hash."""

    @abstractmethod
    def api_key_live(self, key_id: str) -> bool:
        """Whether the key with this id exists and is not revoked."""

    @abstractmethod
    def list_api_keys(self, project: str | None = None, include_revoked: bool = False) -> list[ApiKey]:
        """Keys by creation time, of one project or all."""

    @abstractmethod
    def revoke_api_key(self, key_id: str, project: str | None = None) -> bool:
        """Revoke a live key (of ``project``, when given); False when there is none such."""

    @abstractmethod
    def count_api_keys(self) -> int: ...

    @abstractmethod
    def put_session(self, session_hash: str, principal: dict, key_id: str | None, expires_at: datetime) -> None:
        """Keep a sign-in: the principal it stands for (JSON values), the key that granted it."""

    @abstractmethod
    def find_session(self, session_hash: str) -> tuple[dict, str | None] | None:
        """(principal, key id) of an unexpired session."""

    @abstractmethod
    def delete_session(self, session_hash: str) -> None: ...


class TransferStore(ABC):
    """Export and import rows in kenning.transfer's record format."""

    @abstractmethod
    def export_rows(self, kinds: Sequence[str], project: str, environment: str, dataset: str | None,
                    vectors: bool) -> Iterator[tuple[str, dict]]:
        """(kind, row) of every row of ``kinds`` in the project and environment, read from one snapshot.

        A row holds its placing column (``dataset``, or ``scope_key`` for documents) and the fields
        :data:`kenning.transfer.RECORDS` names, as JSON values: times as ``timeutil.dump`` text, and with
        ``vectors`` a ``vector`` (float32 array, or None while pending) for the kinds that have one.
        ``dataset`` narrows the dataset tables to one dataset; documents belong to none. Order: by the
        placing column (code point order), then insertion order, so importing rows in this order reproduces it.
        """

    @abstractmethod
    def import_row(self, kind: str, project: str, environment: str, row: dict, vector: np.ndarray | None) -> bool:
        """Insert one row in the form ``export_rows`` gives, exactly, unless the store already holds its key
        (or a row that must stay unique, like a live twin): then leave the store as it is and return False.
        Call inside ``transaction``; a row the schema refuses raises StoreError."""

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Around a bulk import's batches (each its own ``transaction``): a backend may defer index upkeep to
        the end, and one whose other writers never wait for a store-wide transaction may join the batches
        into one transaction."""
        yield

    def maintain(self) -> None:
        """After a bulk import has committed: whatever upkeep makes the new rows fast to read at once."""

    def import_rows(self, kind: str, project: str, environment: str,
                    rows: Sequence[tuple[dict, np.ndarray | None]]) -> int:
        """:meth:`import_row` for a batch of rows of one kind, in order; returns how many were written
        (the rest were already there). A row the schema refuses raises StoreError with ``row_index`` set
        to its place in ``rows``. Backends override it with a bulk path (PostgreSQL: COPY)."""
        written = 0
        for i, (row, vector) in enumerate(rows):
            try:
                written += self.import_row(kind, project, environment, row, vector)
            except StoreError as exc:
                exc.row_index = i
                raise
        return written


class Store(Lifecycle, FactStore, EntityStore, MessageStore, NoteStore, VectorStore, CoreFileStore, DocumentStore,
            JobQueue, DatasetStore, ErasureStore, KeyStore, TransferStore):
    """A tenant-scoped store: every contract above. Implementations: SQLite (embedded), PostgreSQL."""
