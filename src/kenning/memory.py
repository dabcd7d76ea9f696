"""``Memory``: the public face. Configuration and provider choice happen here, once."""
from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path

from . import predicates as preds
from . import timeutil
from .config import Settings
from .embed.base import CachedEmbedder, Embedder
from .errors import ConfigError, InputError, NotFound, RateLimited
from .extract.base import Extractor
from .model import JOB_STATUSES, AddResult, DatasetPage, Entity, FactPage, Job, MemoryStatus, Receipt, RecallResult
from .recall import Recaller
from .store.base import FactQuery, Store
from .store.sqlite import SQLiteStore
from .jobs import WorkerThreads
from .messages import Messages
from .notes import ORGANIZATION, Notes, home_scope
from .core_files import Core
from .documents import Documents
from .erasure import Erasure, by_table
from .services import Services, check_page, check_query, fact_filters
from .write import EMBED_PREFIX_CHARS, WritePipeline, check_id, check_role, check_room, check_text
from . import transfer

@functools.lru_cache(maxsize=4)
def _local_embedder(threads: int) -> Embedder:
    """One loaded model per process: every Memory shares it."""
    from .embed.local import LocalEmbedder

    return CachedEmbedder(LocalEmbedder(threads=threads))


def _shared_encoder(embedder: Embedder | None):
    """The bundled model under ``embedder``, for the learned extractor to read messages with (one forward pass
    serves both); None when the memory embeds with something else (the extractor loads its own)."""
    from .embed.local import LocalEmbedder

    inner = embedder.inner if isinstance(embedder, CachedEmbedder) else embedder
    return inner if isinstance(inner, LocalEmbedder) else None


IN_MEMORY = (":memory:", "sqlite://", "sqlite:///:memory:")


def sqlite_file(url: str | None, settings: Settings) -> Path | None:
    """The SQLite file a store URL names (None: in memory, PostgreSQL, a server, or not a store URL)."""
    if url is None:
        return Path(settings.default_db_path)
    if url in IN_MEMORY:
        return None
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):]).expanduser()
    return Path(url).expanduser() if "://" not in url else None


def open_store(url: str | None, settings: Settings) -> Store:
    if settings.replicas and not (url or "").startswith(("postgres://", "postgresql://")):
        raise ConfigError(f"read replicas serve PostgreSQL stores (postgresql://…), not {url or 'the embedded store'}")
    if url in IN_MEMORY:
        return SQLiteStore(":memory:")
    path = sqlite_file(url, settings)
    if path is not None:
        return SQLiteStore(path)
    if url.startswith(("postgres://", "postgresql://")):
        from .store.postgres import PostgresStore  # psycopg loads only for PostgreSQL stores

        return PostgresStore(url, ann_index=settings.ann_index, parallel_reads=settings.parallel_reads,
                             replicas=settings.replicas, replica_max_lag=settings.replica_max_lag_seconds,
                             replica_wait=settings.replica_wait_seconds)
    if url.startswith(("http://", "https://")):
        raise ConfigError(f"{url} is a server, not a store; use Memory('{url}') for the same API over HTTP")
    raise ConfigError(f"unknown store URL {url!r}; use sqlite:///path, postgresql://…, :memory: or a file path")


class Memory:
    """Long-term memory for one application: facts about each dataset's user.

    ``Memory()`` is embedded (SQLite under ``$KENNING_HOME``, the bundled
    embedder, the offline parse extractor); ``Memory(":memory:")`` is throwaway.
    """

    def __new__(cls, url: str | None = None, *args, api_key: str | None = None, **kwargs):
        """``Memory("http://host:port", api_key=…)`` is the same API over HTTP (kenning.client)."""
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            from .client import RemoteMemory

            return RemoteMemory(url, api_key)
        return super().__new__(cls)

    def __init__(self, url: str | None = None, *, settings: Settings | None = None,
                 embedder: Embedder | str | None = "local", extractor: Extractor | str | None = None,
                 project: str | None = None, environment: str | None = None, api_key: str | None = None,
                 replicas: Sequence[str] | None = None):
        """``replicas``: PostgreSQL read replicas of ``url`` (libpq URLs); recall and listings read there."""
        self.settings = settings or Settings.from_env(project=project, environment=environment)
        if replicas is not None:
            self.settings = self.settings.model_copy(update={"replicas": tuple(replicas)})
        self.store = open_store(url, self.settings)
        if embedder == "local":
            embedder = _local_embedder(self.settings.onnx_threads)
        elif isinstance(embedder, str):
            raise ConfigError(f"unknown embedder {embedder!r}; pass 'local', None or an Embedder")
        self.embedder: Embedder | None = embedder
        if embedder is not None:
            self.store.check_embedding_model(embedder.name, embedder.dim)
        if extractor is None:   # the configured one (KENNING_EXTRACTOR): how serve, worker and remine get a model
            extractor = self.settings.extractor
        if extractor == "parse":
            from .extract.parse import ParseExtractor

            extractor = ParseExtractor(budget_seconds=self.settings.extract_budget_seconds)
        elif extractor == "learned":
            from .extract.learned.extractor import LearnedExtractor

            extractor = LearnedExtractor(encoder=_shared_encoder(embedder))
        elif extractor == "combined":   # the rules' facts, and the trained extractor's where they add one
            from .extract.combined import CombinedExtractor
            from .extract.learned.extractor import LearnedExtractor
            from .extract.parse import ParseExtractor

            extractor = CombinedExtractor(ParseExtractor(budget_seconds=self.settings.extract_budget_seconds),
                                          LearnedExtractor(encoder=_shared_encoder(embedder)))
        elif isinstance(extractor, str):
            from .extract.llm import build_extractor  # "openai", "anthropic"; anything else: ConfigError

            extractor = build_extractor(extractor, self.settings)
        self.extractor = extractor
        self.registry = preds.PredicateRegistry().extended(self.settings.one_value_predicates,
                                                           self.settings.many_value_predicates)
        writer = WritePipeline(self.store, extractor, self.embedder, self.settings, self.registry)
        reader = Recaller(self.store, self.embedder, self.settings.retrieval_floor,
                          self.settings.context_budget_chars, unit=self.settings.context_budget_unit)
        self.services = Services(self.settings, self.store, self.embedder, extractor, self.registry, writer, reader)
        self.messages = Messages(self.services)
        self.notes = Notes(self.services)
        self.erase = Erasure(self.services)
        self.core = Core(self.services)
        self.documents = Documents(self.services)
        self.workers = WorkerThreads(self.services, self.settings.worker_threads, self.settings.job_lease_seconds)

    # -- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        """Stop the embedded workers (a job in flight finishes first), then close the store."""
        self.workers.close()
        close = getattr(self.extractor, "close", None)
        if callable(close):
            close()  # a model extractor's HTTP connections
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- write -------------------------------------------------------------------------
    def add(self, text: str, dataset: str, at: datetime | str | None = None, client_ref: str | None = None,
            role: str = "user", chat: str | None = None, message_id: str | None = None, *,
            temporary: bool = False, project: str | None = None, environment: str | None = None) -> AddResult:
        """Mine ``text`` for durable facts about the user and store them now."""
        return self.services.writer.add(self.services.scope(dataset, project, environment), text, at=at, role=role,
                                client_ref=client_ref, chat=chat, message_id=message_id, temporary=temporary)

    def remine(self, dataset: str, message_ids: Sequence[str] | None = None, *, all_messages: bool = False,
               limit: int | None = None, offset: int = 0, project: str | None = None,
               environment: str | None = None) -> list[AddResult]:
        """Mine kept user messages again, in the order they were said, through the write path (whatever is
        already stored is deduplicated, never stored twice): after an extraction failed (the receipt's
        ``extraction_error``, a failed job), or with a better extractor. ``message_ids``: those messages;
        otherwise the dataset's user messages that no fact cites, or every user message with
        ``all_messages``; of those, in the order said, ``limit`` (1-100; default all) from ``offset``. Returns one
        receipt per message."""
        check_page(1 if limit is None else limit, offset)   # a page of at most 100 messages when one is asked for
        scope = self.services.scope(dataset, project, environment)
        store = self.store
        if message_ids is not None:
            ids = list(dict.fromkeys(check_id(i, "message_id") for i in message_ids))   # each message once
            found = {e.episode_id: e for e in store.get_episodes(scope, ids)}
            missing = [i for i in ids if i not in found]
            if missing:
                raise NotFound(f"no message {missing[0]!r} in dataset {dataset!r}")
            episodes = [found[i] for i in ids]
        else:
            episodes, seen = [], 0
            while True:
                chats, total = store.chats(scope, 100, seen)
                for chat in chats:
                    start = 0
                    while True:
                        page, count = store.chat_messages(scope, chat.chat, 500, start)
                        episodes += page
                        start += len(page)
                        if not page or start >= count:
                            break
                seen += len(chats)
                if not chats or seen >= total:
                    break
            if not all_messages:
                episodes = [e for e in episodes if e.role == "user" and store.list_facts(scope, FactQuery(
                    include_invalidated=True, limit=1, message_id=e.episode_id))[1] == 0]
        episodes = sorted((e for e in episodes if e.role == "user"), key=lambda e: e.at)
        episodes = episodes[offset:] if limit is None else episodes[offset:offset + limit]
        return [self.services.writer.add(scope, e.content, at=e.at, role="user", chat=e.chat,
                                         message_id=e.episode_id) for e in episodes]

    def as_user(self, dataset: str, role: str = "member", *, project: str | None = None,
                environment: str | None = None) -> "UserMemory":
        """This memory as one end user bound to ``dataset`` may use it (see kenning.permissions)."""
        from .permissions import UserMemory

        return UserMemory(self, dataset, role, project=project, environment=environment)

    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", *, project: str | None = None,
                    environment: str | None = None) -> str:
        """Run one call of Anthropic's memory tool on the dataset's core files; returns the tool's text.

        A failed command raises :class:`~kenning.errors.MemoryToolError`; send ``exc.text`` back to the
        model as the tool result with ``is_error: true``.
        """
        return self.core.memory_tool(dataset, command, namespace, project=project, environment=environment)

    # -- asynchronous ingestion -----------------------------------------------------------
    def add_turn(self, dataset: str, role: str, content: str, thread: str | None = None,
                 client_ref: str | None = None, at: datetime | str | None = None, chat: str | None = None,
                 temporary: bool = False, message_id: str | None = None, *, project: str | None = None,
                 environment: str | None = None) -> Receipt:
        """Queue one turn durably and return at once; a worker runs it through the ``add`` pipeline."""
        scope = self.services.scope(dataset, project, environment)
        check_text(content, self.settings.max_text_chars, "content")
        check_role(role)
        for value, what in ((chat or thread, "chat"), (message_id, "message_id"), (client_ref, "client_ref")):
            check_id(value, what)
        when = self.services.writer.message_time(at)
        if role != "user":
            # Not mined, so nothing to wait for: kept as a message now (what the assistant said or
            # promised can be recalled), answered at once like a repeat.
            done = self.services.writer.add(scope, content, at=when, role=role, client_ref=client_ref,
                                            chat=chat or thread, message_id=message_id, temporary=temporary)
            return Receipt(status="skipped", reason=done.reason, result=done,
                           already_exists=done.reason == "already_ingested")
        check_room(self.store, self.settings, scope, len(content))
        waiting = self.store.count_jobs(("queued", "distilling"), *scope)
        if waiting >= self.settings.max_open_jobs:
            raise RateLimited(f"dataset {scope.dataset!r} has {waiting:,} turns waiting (the limit is "
                              f"{self.settings.max_open_jobs:,}, KENNING_MAX_OPEN_JOBS); retry when they are done",
                              retry_after=5)
        now = timeutil.now()
        job = Job(request_id=f"req_{uuid.uuid4().hex}", project=scope.project, environment=scope.environment,
                  dataset=scope.dataset, role=role, content=content, chat=chat or thread, at=when,
                  temporary=temporary, message_id=message_id, client_ref=client_ref, created_at=now, updated_at=now)
        job, created = self.store.enqueue(job)
        if not created:
            return Receipt(status="skipped", reason="already_ingested", request_id=job.request_id,
                           already_exists=True, processing_status=job.status)
        self.workers.ensure_started()
        self.workers.notify()
        return Receipt(status="processing", processing_status="queued", request_id=job.request_id)

    def status(self, request_id: str | None = None, *, memory_id: str | None = None,
               project: str | None = None, environment: str | None = None) -> Receipt | MemoryStatus:
        """A queued turn's progress and, when done, its receipt; or whether a memory is searchable."""
        project, environment = self.services.tenant(project, environment)
        if (request_id is None) == (memory_id is None):
            raise InputError("pass a request_id or memory_id=…")
        if memory_id is not None:
            state = self.store.fact_state(memory_id, project, environment)
            if state is None:
                return MemoryStatus(memory_id=memory_id, stored=False)
            _, fact, embedded = state
            live = fact.invalid_at is None and fact.live_at(timeutil.now())
            return MemoryStatus(memory_id=memory_id, stored=True, live=live,
                                searchable=live and (embedded or self.embedder is None))
        job = self.store.get_job(request_id, project, environment)
        if job is None:
            raise NotFound(f"no request {request_id!r} in project {project!r}, environment {environment!r}")
        status = {"queued": "processing", "distilling": "processing"}.get(job.status, job.status)
        result = job.result
        return Receipt(status=status, processing_status=job.status, request_id=job.request_id,
                       processing_error=job.error, result=result, reason=result.reason if result else None,
                       memory_id=(result.memory_ids[0] if result and result.memory_ids else None))

    def flush(self, timeout: float | None = None) -> None:
        """Wait until no job of this project and environment is queued or running."""
        deadline = None if timeout is None else time.monotonic() + timeout
        open_jobs = ("queued", "distilling")
        project, environment = self.settings.project, self.settings.environment
        while self.store.count_jobs(open_jobs, project, environment):
            if self.workers.count < 1:
                raise ConfigError("no worker runs here (worker_threads=0): start `kenning worker` to drain the queue")
            self.workers.ensure_started()
            self.workers.notify()
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"jobs still open after {timeout}s")
            self.services.job_done.wait(0.05)
            self.services.job_done.clear()

    def retry_failed(self, dataset: str | None = None, *, project: str | None = None,
                     environment: str | None = None) -> int:
        """Queue failed jobs again (their turns were kept); returns how many."""
        project, environment = self.services.tenant(project, environment)
        if dataset is not None:
            self.services.scope(dataset, project, environment)
        count = self.store.retry_failed(project, environment, dataset)
        if count:
            self.workers.ensure_started()
            self.workers.notify()
        return count

    def jobs(self, dataset: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0, *,
             project: str | None = None, environment: str | None = None) -> list[Job]:
        """Queued turns of this project and environment (or one dataset), newest first, with their errors."""
        check_page(limit, offset)
        if status is not None and status not in JOB_STATUSES:
            raise InputError(f"status must be one of {', '.join(JOB_STATUSES)}, not {status!r}")
        project, environment = self.services.tenant(project, environment)
        if dataset is not None:
            self.services.scope(dataset, project, environment)
        return self.store.list_jobs(project, environment, dataset, status, limit, offset)

    def delete_dataset(self, dataset: str, *, project: str | None = None,
                       environment: str | None = None) -> dict[str, int]:
        """Erase one end user's memory for good (facts and their history, entities, messages, notes,
        core files and their versions, queued turns), in one transaction; no other dataset is touched.
        Returns the rows removed per kind. Unlike ``delete_fact`` this keeps no history. It is
        ``erase.dataset`` (logged and compacted like every erasure), answering with the counts alone."""
        return by_table(self.erase.dataset(dataset, project=project, environment=environment).removed)

    def datasets(self, q: str | None = None, limit: int = 50, offset: int = 0, *, project: str | None = None,
                 environment: str | None = None) -> DatasetPage:
        """The datasets (end users) that hold anything, by name, with their counts; ``q`` filters by name."""
        check_page(limit, offset)
        project, environment = self.services.tenant(project, environment)
        self.services.scope("x", project, environment)   # valid project and environment names
        with self.store.reading():
            rows, total = self.store.datasets(project, environment, (q or "").strip() or None, limit, offset)
        return DatasetPage(datasets=rows, total=total, limit=limit, offset=offset)

    def embed_pending(self, batch: int = 256, *, project: str | None = None, environment: str | None = None,
                      progress: Callable[[str, int], None] | None = None) -> int:
        """Compute vectors for facts (and entities, messages, notes) stored without one; returns how many
        facts got one. ``progress(kind, n)`` hears of each batch written (a command line's progress bar).

        Without ``project``/``environment`` every tenant of the store is filled: this is
        maintenance of the store, not a read of anyone's data.
        """
        if self.embedder is None:
            raise ConfigError("no embedder configured; create Memory(embedder='local') to fill vectors")
        if not isinstance(batch, int) or batch < 1:
            raise InputError(f"batch must be a positive integer, not {batch!r}")
        for kind in ("entity", "episode", "note"):
            self._fill(kind, batch, project, environment, progress)
        return self._fill("fact", batch, project, environment, progress)

    def _fill(self, kind: str, batch: int, project, environment, progress=None) -> int:
        written = 0
        while True:
            pending = self.store.pending(kind, batch, project, environment)
            if not pending:
                return written
            vectors = self.embedder.embed_batch([text[:EMBED_PREFIX_CHARS] for _, _, text in pending])
            wrote = sum(self.store.set_vector(kind, scope, key, text, vec)
                        for (scope, key, text), vec in zip(pending, vectors))
            written += wrote
            if progress is not None:
                progress(kind, wrote)
            if not wrote:  # every text changed under us: stop rather than spin
                return written

    # -- export and import ----------------------------------------------------------------
    def export(self, dataset: str | None = None, *, include_vectors: bool = False, project: str | None = None,
               environment: str | None = None) -> Iterator[str]:
        """Every row of ``dataset`` (None: of every dataset, the organization's and documents included) as
        JSON lines, each ending in a newline: a header, then facts with their whole history, entities,
        messages, ingests, notes, core files with every version, documents. ``include_vectors`` carries
        the embeddings (base64 float32); without them an import computes them again. See kenning.transfer.
        """
        project, environment = self.services.tenant(project, environment)
        transfer.check_scope(project, environment, dataset)
        return transfer.export_lines(self.store, project, environment, dataset, include_vectors)

    def import_(self, lines: Iterable[str], *, embed: bool | None = None, project: str | None = None,
                environment: str | None = None, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
        """Restore an export into this store, into the projects and datasets it names, in one transaction:
        a malformed line, or one a live write would refuse (oversize text, a core-file path outside
        /memories), raises InputError naming it and nothing is written. Rows already here are
        skipped (counted under ``skipped``). Rows that came without vectors get them at the end, so recall
        on the restored store finds what it found before (``embed=None``, the default: when this store has
        an embedder; ``embed=False`` leaves them to ``embed_pending()``; ``progress`` as there). Returns
        how many rows of each kind were written.
        With ``project`` (and ``environment``), records of any other tenant are refused.
        """
        if embed is None:
            embed = self.embedder is not None
        if embed and self.embedder is None:
            raise ConfigError("import_(embed=True) needs an embedder; create Memory(embedder='local') "
                              "or import now and run embed_pending() later")
        s = self.settings
        tenant = None if project is None and environment is None else \
            (project or s.project, environment or s.environment)
        counts, tenants = transfer.import_lines(self.store, lines, transfer.Limits(s.max_text_chars, s.max_note_chars,
                                                                                   s.max_core_chars), tenant)
        for project, environment in sorted(tenants) if embed else ():
            self.embed_pending(project=project, environment=environment, progress=progress)
        return counts

    # -- read ------------------------------------------------------------------------
    def recall(self, query: str, dataset: str, limit: int = 10, budget: int | None = None, *,
               as_of: datetime | str | None = None, project: str | None = None,
               environment: str | None = None) -> RecallResult:
        """The facts, notes and messages that answer ``query``, ranked, with a context block for the
        prompt; the organization's notes rank beside the dataset's own. With ``as_of``, recall as of
        that time: the facts live then (superseded since included), what had been said and saved by then."""
        check_query(query, limit)
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise InputError(f"budget must be a positive number of {self.settings.context_budget_unit}, not {budget!r}")
        scope = self.services.scope(dataset, project, environment)
        shared = home_scope(scope, ORGANIZATION)
        with self.store.reading(scope, shared):
            return self.services.reader.recall(scope, query, limit=limit, budget=budget,
                                               as_of=timeutil.to_utc(as_of, field="as_of"), shared=shared)

    def list_facts(self, dataset: str, q: str | None = None, limit: int = 50, offset: int = 0,
                   include_invalidated: bool = False, as_of: datetime | str | None = None,
                   entity: str | None = None, *, kind: str | None = None, entity_type: str | None = None,
                   message_id: str | None = None, order: str = "time", project: str | None = None,
                   environment: str | None = None) -> FactPage:
        """Facts in time order: live now, live ``as_of`` a time, or the whole history.

        Narrow them by ``kind`` (event, plan, …), by the ``entity_type`` of their object, or to the ones
        mined from one message (``message_id``); ``order`` is ``time``, ``anchor`` (the user's own facts,
        then each entity's) or ``slot`` (by predicate).
        """
        check_page(limit, offset)
        query = FactQuery(q=q, limit=limit, offset=offset, include_invalidated=include_invalidated,
                          as_of=timeutil.to_utc(as_of, field="as_of"), entity=entity,
                          **fact_filters(kind, entity_type, message_id, order))
        scope = self.services.scope(dataset, project, environment)
        with self.store.reading(scope):
            facts, total = self.store.list_facts(scope, query)
        return FactPage(facts=[f.seen_at(query.as_of) for f in facts], total=total, limit=limit, offset=offset)

    def list_entities(self, dataset: str, *, type: str | None = None, project: str | None = None,
                      environment: str | None = None) -> list[Entity]:
        scope = self.services.scope(dataset, project, environment)
        with self.store.reading(scope):
            return self.store.entities(scope, type.upper() if type else None)

    def delete_fact(self, dataset: str, fact_id: str, *, project: str | None = None,
                    environment: str | None = None) -> None:
        """Soft delete: the fact leaves every live view but stays in the history."""
        scope = self.services.scope(dataset, project, environment)
        with self.store.transaction(scope):
            found = self.store.get_facts(scope, [fact_id])
            if not found:
                raise NotFound(f"no fact {fact_id!r} in dataset {dataset!r}")
            if found[0].invalid_at is None:
                self.store.update_fact(scope, fact_id, invalid_at=timeutil.now())
