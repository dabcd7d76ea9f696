"""One end user's memory as an agent framework reaches it: what every adapter under ``kenning.integrations``
is built on.

A framework gives an agent tools and a place to keep its conversation; kenning's promises must survive
that glue. So an adapter never passes a dataset name it was not bound to (one dataset per end user), a
user token's memory (``mem.as_user(...)`` in process, or ``Memory(url, api_key=user_token)`` over HTTP)
is checked against the binding here and by kenning itself on every call, writes carry a ``client_ref``
derived from what the framework already identifies (a retried turn is stored once), and turns go in
through ``add_turn``, which queues and returns: the reply never waits for extraction.

``memory`` is anything with kenning's API: ``Memory(...)`` (embedded or PostgreSQL), the HTTP client
``Memory("http://…", api_key=…)``, or either's ``as_user(dataset)``. The framework adapters run on
worker threads where the framework is async (``asyncio.to_thread``), so one synchronous client serves both.
"""
from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime
from typing import Any, Literal

from ..errors import InputError, NotFound, PermissionDenied
from ..services import MAX_QUERY_CHARS
from ..model import CoreFile, Episode, MessagePage, Note, NoteHit, RecallResult, Receipt

__all__ = ["UserMemoryBinding", "turn_ref"]

ROLES = ("user", "assistant", "system", "tool")


def turn_ref(*parts: object) -> str:
    """A ``client_ref`` for a turn from what identifies it in the framework (a thread and a message id, or
    a thread, a position and the text): the same turn handed over twice is stored once."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return f"turn_{digest[:32]}"


class UserMemoryBinding:
    """kenning's API for one dataset (one end user), in the handful of verbs agents use.

    ``namespace`` is where ``remember`` saves notes (``user``, ``agent:<id>``, …). A memory that is already
    one user's (``as_user``) must be that user's: binding it to another dataset is refused here, before any
    call, with :class:`~kenning.errors.PermissionDenied`.
    """

    def __init__(self, memory: Any, dataset: str, *, namespace: str = "user", project: str | None = None,
                 environment: str | None = None):
        if not isinstance(dataset, str) or not dataset:
            raise InputError("dataset must name the end user whose memory this is")
        bound = getattr(memory, "dataset", None)   # a UserMemory (as_user) knows whose it is
        if bound is not None and bound != dataset:
            raise PermissionDenied(f"this memory belongs to dataset {bound!r}; it cannot act for {dataset!r}",
                                   getattr(memory, "read_permission", "memory:read"))
        services = getattr(memory, "services", None)
        if services is not None:   # in process: a bad name fails now, not inside the model's loop
            services.scope(dataset, project, environment)
        from ..notes import check_namespace

        self.memory, self.dataset, self.namespace = memory, dataset, check_namespace(namespace)
        self.where = {k: v for k, v in (("project", project), ("environment", environment)) if v is not None}

    # -- read ---------------------------------------------------------------------------------------
    def recall(self, query: str, limit: int = 10, *, as_of: datetime | str | None = None) -> RecallResult:
        """Recall for ``query``; a query longer than recall takes (a pasted document as the user's message) is
        cut to its first :data:`~kenning.services.MAX_QUERY_CHARS` characters rather than failing the turn."""
        kwargs = {"as_of": as_of} if as_of is not None else {}
        if isinstance(query, str):
            query = query[:MAX_QUERY_CHARS]
        return self.memory.recall(query, self.dataset, limit, **kwargs, **self.where)

    def context(self, query: str, limit: int = 10) -> str:
        """Recall's context block for ``query``: "" when nothing is remembered that bears on it."""
        return self.recall(query, limit).context

    def core(self) -> str:
        """The user's core memory files rendered for a system prompt ("" when there are none)."""
        return self.memory.core.render(self.dataset, **self.where)

    # -- write --------------------------------------------------------------------------------------
    def remember(self, text: str) -> Note:
        """Save ``text`` as a note; a text already kept returns the note that keeps it."""
        return self.memory.notes.save(self.dataset, text, self.namespace, **self.where)

    def forget(self, memory_id: str) -> Literal["note", "fact"]:
        """Forget a note, or delete a fact, by its id (what recall's items carry). Both leave every search
        and stay in the history. An id of neither raises :class:`~kenning.errors.NotFound`."""
        try:
            self.memory.notes.forget(self.dataset, memory_id, **self.where)
            return "note"
        except NotFound:
            pass
        try:
            self.memory.delete_fact(self.dataset, memory_id, **self.where)
            return "fact"
        except NotFound:
            raise NotFound(f"no note or fact {memory_id!r} in this user's memory") from None

    def add_turn(self, role: str, content: str, *, chat: str | None = None, client_ref: str | None = None,
                 at: datetime | str | None = None, message_id: str | None = None) -> Receipt:
        """Queue one turn and return at once (a user turn is mined by a worker; others are kept as said).
        ``message_id`` of a message already kept (``index_message``) with the same words: that message is
        mined, not kept twice."""
        ids = {"message_id": message_id} if message_id is not None else {}
        return self.memory.add_turn(self.dataset, role, content, chat=chat, client_ref=client_ref, at=at,
                                    **ids, **self.where)

    # -- exact records: core files of the binding's namespace, and its notes ranked ----------------------
    # What a key-value store built on kenning (LangGraph's BaseStore) keeps its exact values in: versioned
    # files, one per key, beside notes that carry their text into search and recall.
    def read_file(self, path: str) -> CoreFile | None:
        """The core file at ``path`` in the binding's namespace; None when there is none."""
        try:
            return self.memory.core.read(self.dataset, path, self.namespace, **self.where)
        except NotFound:
            return None

    def write_file(self, path: str, text: str, expected_version: int | None = None) -> CoreFile:
        """Create or overwrite at a new version (the old ones stay in the history); with ``expected_version``
        (0: absent) only if the file is still at it, else :class:`~kenning.errors.MemoryConflict`."""
        return self.memory.core.write(self.dataset, path, text, expected_version, self.namespace, **self.where)

    def remove_file(self, path: str) -> bool:
        """Delete the file (its versions stay in the history); False when there was none."""
        try:
            self.memory.core.remove(self.dataset, path, self.namespace, **self.where)
            return True
        except NotFound:
            return False

    def files(self) -> list[CoreFile]:
        """Every core file of the binding's namespace, contents included."""
        return self.memory.core.list(self.dataset, self.namespace, **self.where)

    def search_notes(self, query: str, limit: int = 10) -> list[NoteHit]:
        """The namespace's notes that answer ``query``, best first, ranked as recall ranks them."""
        return self.memory.notes.search(self.dataset, query, limit, self.namespace, **self.where)

    # -- a chat's messages, as a framework's conversation store keeps them ----------------------------
    # What a session (the Agents SDK's Session) is built on: messages kept now, in order, and taken back.
    def index_message(self, role: str, content: str, *, chat: str | None = None, message_id: str | None = None,
                      at: datetime | str | None = None) -> Episode:
        """Keep one message now, not mined (the next turn reads it at once); the ``message_id`` of a message
        already kept with the same words returns that message, with other words raises ``Conflict``."""
        return self.memory.messages.index(self.dataset, content, role=role, chat=chat, message_id=message_id,
                                          at=at, **self.where)

    def thread(self, chat: str | None, limit: int = 100, offset: int = 0) -> MessagePage:
        """A stretch of one chat's messages, oldest first, with the chat's ``total``."""
        return self.memory.messages.thread(self.dataset, chat, limit=limit, offset=offset, **self.where)

    def delete_message(self, message_id: str) -> dict[str, int]:
        """Remove a message for good, with the facts mined from it (counts per kind); an unknown id raises
        :class:`~kenning.errors.NotFound`."""
        return self.memory.messages.delete(self.dataset, message_id, **self.where)

    def delete_chat(self, chat: str) -> dict[str, int]:
        """``delete_message`` for every message of ``chat`` (none: all zeros)."""
        return self.memory.messages.delete_chat(self.dataset, chat, **self.where)

    # -- the same, awaitable -----------------------------------------------------------------------
    async def arecall(self, query: str, limit: int = 10, *, as_of: datetime | str | None = None) -> RecallResult:
        return await asyncio.to_thread(self.recall, query, limit, as_of=as_of)

    async def acontext(self, query: str, limit: int = 10) -> str:
        return await asyncio.to_thread(self.context, query, limit)

    async def acore(self) -> str:
        return await asyncio.to_thread(self.core)

    async def aremember(self, text: str) -> Note:
        return await asyncio.to_thread(self.remember, text)

    async def aforget(self, memory_id: str) -> Literal["note", "fact"]:
        return await asyncio.to_thread(self.forget, memory_id)

    async def aadd_turn(self, role: str, content: str, *, chat: str | None = None, client_ref: str | None = None,
                        at: datetime | str | None = None, message_id: str | None = None) -> Receipt:
        return await asyncio.to_thread(self.add_turn, role, content, chat=chat, client_ref=client_ref, at=at,
                                       message_id=message_id)
