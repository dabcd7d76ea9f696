"""Who may read and change what.

Two kinds of principal. The service principal (a backend holding the service
key; a plain ``Memory``) may do anything for any dataset. A user principal is
bound to one dataset and has a role in the organization: it reads and changes
only its own memories (facts, messages, notes and core files of its dataset, in
the namespaces ``user``, ``agent:*``, ``chat:*``, ``project:*``), reads the
organization's memory, and changes organization memory only with the manage
permission. Nobody reads another user's memory, admins included; documents
belong to the service alone.

``mem.as_user(dataset, role=…)`` returns a :class:`UserMemory`: the same API,
enforcing this, refusing with :class:`~kenning.errors.PermissionDenied` that
names the missing permission.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from .errors import InputError, NotFound, PermissionDenied
from .model import DatasetPage, MemoryStatus
from .notes import ORG_DATASET, ORGANIZATION, check_namespace
from .services import check_page

if TYPE_CHECKING:
    from .memory import Memory

ROLES = ("owner", "admin", "member")


def role_permissions(role: str, read: str, admin: str) -> frozenset[str]:
    if role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return frozenset({read, admin}) if role in ("owner", "admin") else frozenset({read})


class UserMemory:
    """The memory API as one end user may use it."""

    def __init__(self, memory: "Memory", dataset: str, role: str = "member", *, project: str | None = None,
                 environment: str | None = None):
        self.project = project or memory.settings.project
        self.environment = environment or memory.settings.environment
        memory.services.scope(dataset, self.project, self.environment)  # valid names
        self._m = memory
        self.dataset = dataset
        self.role = role
        self.read_permission = memory.settings.permission_read
        self.admin_permission = memory.settings.permission_admin
        self.permissions = role_permissions(role, self.read_permission, self.admin_permission)
        self.notes = _UserNotes(self)
        self.core = _UserCore(self)
        self.messages = _UserMessages(self)
        self.documents = _NoDocuments(self)
        self.erase = _UserErase(self)

    # -- checks ------------------------------------------------------------------------------
    def _need(self, permission: str, what: str) -> None:
        if permission not in self.permissions:
            raise PermissionDenied(f"{what} needs the {permission!r} permission, which role {self.role!r} lacks",
                                   permission)

    def _own(self, dataset: str, what: str) -> None:
        self._need(self.read_permission, what)
        if dataset != self.dataset:
            raise PermissionDenied(f"{what}: this user may use dataset {self.dataset!r} only, not {dataset!r}",
                                   self.read_permission)

    def _space(self, dataset: str, namespace: str, write: bool, what: str) -> None:
        self._own(dataset, what)
        if check_namespace(namespace) == ORGANIZATION and write:
            self._need(self.admin_permission, f"{what} in organization memory")

    def _plain(self, kwargs: dict) -> dict:
        """A user cannot step into another project or environment by passing one."""
        for name in ("project", "environment"):
            if kwargs.get(name) not in (None, getattr(self, name)):
                raise PermissionDenied(f"this user belongs to {name} {getattr(self, name)!r}", self.read_permission)
        return {**kwargs, "project": self.project, "environment": self.environment}

    # -- facts ---------------------------------------------------------------------------------
    def add(self, text: str, dataset: str, *args, **kwargs):
        self._own(dataset, "add")
        return self._m.add(text, dataset, *args, **self._plain(kwargs))

    def add_turn(self, dataset: str, *args, **kwargs):
        self._own(dataset, "add_turn")
        return self._m.add_turn(dataset, *args, **self._plain(kwargs))

    def recall(self, query: str, dataset: str, *args, **kwargs):
        self._own(dataset, "recall")
        return self._m.recall(query, dataset, *args, **self._plain(kwargs))

    def list_facts(self, dataset: str, *args, **kwargs):
        self._own(dataset, "list_facts")
        return self._m.list_facts(dataset, *args, **self._plain(kwargs))

    def list_entities(self, dataset: str, **kwargs):
        self._own(dataset, "list_entities")
        return self._m.list_entities(dataset, **self._plain(kwargs))

    def delete_fact(self, dataset: str, fact_id: str, **kwargs):
        self._own(dataset, "delete_fact")
        return self._m.delete_fact(dataset, fact_id, **self._plain(kwargs))

    def datasets(self, q: str | None = None, limit: int = 50, offset: int = 0, **kwargs):
        """A user sees one dataset: their own (when it holds anything and matches ``q``)."""
        self._need(self.read_permission, "datasets")
        check_page(limit, offset)
        kwargs, mine, at = self._plain(kwargs), [], 0
        while True:   # the name search is by substring: page through the names that contain this one
            page = self._m.datasets(self.dataset, limit=100, offset=at, **kwargs)
            mine += [d for d in page.datasets if d.dataset == self.dataset]
            at += 100
            if mine or at >= page.total:
                break
        mine = [d for d in mine if not q or q.strip().lower() in d.dataset.lower()]
        return DatasetPage(datasets=mine[offset:offset + limit], total=len(mine), limit=limit, offset=offset)

    def remine(self, dataset: str, *args, **kwargs):
        """Mining a dataset's messages again spends the project's model: the service's call."""
        raise PermissionDenied("remine is for the service principal only", self.admin_permission)

    def delete_dataset(self, dataset: str, **kwargs):
        """Erasing a whole dataset is the service's call, never a user principal's (admins included)."""
        raise PermissionDenied("delete_dataset is for the service principal only", self.admin_permission)

    def jobs(self, dataset: str | None = None, *args, **kwargs):
        self._own(dataset if dataset is not None else self.dataset, "jobs")
        return self._m.jobs(self.dataset, *args, **self._plain(kwargs))

    def retry_failed(self, dataset: str | None = None, **kwargs):
        self._own(dataset if dataset is not None else self.dataset, "retry_failed")
        return self._m.retry_failed(self.dataset, **self._plain(kwargs))

    def status(self, request_id: str | None = None, *, memory_id: str | None = None):
        """Another dataset's request or memory is answered exactly as one that does not exist, so the answer
        never tells a user that an id belongs to someone else."""
        self._need(self.read_permission, "status")
        if request_id is not None:
            job = self._m.store.get_job(request_id, self.project, self.environment)
            if job is None or job.dataset != self.dataset:
                raise NotFound(f"no request {request_id!r} in project {self.project!r}, environment "
                               f"{self.environment!r}")
        if memory_id is not None:
            state = self._m.store.fact_state(memory_id, self.project, self.environment)
            if state is not None and state[0].dataset != self.dataset:
                return MemoryStatus(memory_id=memory_id, stored=False)
        return self._m.status(request_id, memory_id=memory_id, project=self.project, environment=self.environment)

    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", **kwargs) -> str:
        return self.core.memory_tool(dataset, command, namespace, **kwargs)


class _UserPart:
    def __init__(self, user: UserMemory):
        self._u = user


class _UserNotes(_UserPart):
    def save(self, dataset: str, text: str, namespace: str = "user", **kw):
        self._u._space(dataset, namespace, True, "notes.save")
        return self._u._m.notes.save(dataset, text, namespace, **self._u._plain(kw))

    def save_extracted(self, dataset: str, texts: list[str], namespace: str = "user", *args, **kw):
        self._u._space(dataset, namespace, True, "notes.save_extracted")
        return self._u._m.notes.save_extracted(dataset, texts, namespace, *args, **self._u._plain(kw))

    def search(self, dataset: str, query: str, limit: int = 10, namespace=None, **kw):
        spaces = [namespace] if isinstance(namespace, str) else namespace
        for ns in spaces or []:
            self._u._space(dataset, ns, False, "notes.search")
        self._u._own(dataset, "notes.search")
        return self._u._m.notes.search(dataset, query, limit, namespace, **self._u._plain(kw))

    def list(self, dataset: str, namespace: str | None = None, *args, **kw):
        self._u._space(dataset, namespace or "user", False, "notes.list")
        return self._u._m.notes.list(dataset, namespace, *args, **self._u._plain(kw))

    def forget(self, dataset: str, note_id: str, superseded_by: str | None = None, **kw):
        self._u._own(dataset, "notes.forget")
        scope = self._u._m.services.scope(dataset, self._u.project, self._u.environment)
        for where in (scope, scope._replace(dataset=ORG_DATASET)):
            for found in self._u._m.store.get_notes(where, [note_id]):
                self._u._space(dataset, found.namespace, True, "notes.forget")
        return self._u._m.notes.forget(dataset, note_id, superseded_by, **self._u._plain(kw))


class _UserCore(_UserPart):
    _READS = ("view",)

    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", **kw) -> str:
        write = not (isinstance(command, dict) and command.get("command") in self._READS)
        self._u._space(dataset, namespace, write, f"memory_tool {command.get('command') if isinstance(command, dict) else ''}")
        return self._u._m.core.memory_tool(dataset, command, namespace, **self._u._plain(kw))

    def _guarded(self, name: str, write: bool):
        method = getattr(self._u._m.core, name)
        signature = inspect.signature(method)

        def call(dataset: str, *args, **kw):
            namespace = signature.bind(dataset, *args, **kw).arguments.get("namespace", "user")
            self._u._space(dataset, namespace, write, f"core.{name}")
            return method(dataset, *args, **self._u._plain(kw))
        call.__signature__ = signature
        return call

    def __getattr__(self, name: str):
        reads = ("view", "read", "list", "history")
        writes = ("write", "str_replace", "insert", "remove", "rename")
        if name in reads or name in writes:
            return self._guarded(name, name in writes)
        raise AttributeError(name)

    def render(self, dataset: str, namespaces: list[str] | None = None, *args, **kw) -> str:
        for ns in namespaces or ["user", ORGANIZATION]:
            self._u._space(dataset, ns, False, "core.render")
        return self._u._m.core.render(dataset, namespaces, *args, **self._u._plain(kw))


class _UserMessages(_UserPart):
    def index(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.index")
        return self._u._m.messages.index(dataset, *args, **self._u._plain(kw))

    def search(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.search")
        return self._u._m.messages.search(dataset, *args, **self._u._plain(kw))

    def get(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.get")
        return self._u._m.messages.get(dataset, *args, **self._u._plain(kw))

    def chats(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.chats")
        return self._u._m.messages.chats(dataset, *args, **self._u._plain(kw))

    def thread(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.thread")
        return self._u._m.messages.thread(dataset, *args, **self._u._plain(kw))

    def delete(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.delete")
        return self._u._m.messages.delete(dataset, *args, **self._u._plain(kw))

    def delete_chat(self, dataset: str, *args, **kw):
        self._u._own(dataset, "messages.delete_chat")
        return self._u._m.messages.delete_chat(dataset, *args, **self._u._plain(kw))


class _UserErase(_UserPart):
    """A person may erase what is kept about them: their own dataset's facts, messages, content, or all of
    it. The log names them as who asked; documents (the service's) and compaction are not theirs."""

    def _by(self, kw: dict) -> dict:
        kw = self._u._plain(kw)
        kw["by"] = f"user:{self._u.dataset}" + (f" via {kw['by']}" if kw.get("by") else "")
        return kw

    def fact(self, dataset: str, *args, **kw):
        self._u._own(dataset, "erase.fact")
        return self._u._m.erase.fact(dataset, *args, **self._by(kw))

    def message(self, dataset: str, *args, **kw):
        self._u._own(dataset, "erase.message")
        return self._u._m.erase.message(dataset, *args, **self._by(kw))

    def content(self, dataset: str, text: str, **kw):
        self._u._own(dataset, "erase.content")
        if kw.get("document_scopes"):
            raise PermissionDenied("erase.content: documents belong to the service principal only; leave out "
                                   "document_scopes", self._u.admin_permission)
        if kw.get("organization"):   # organization memory is changed only with the manage permission
            self._u._need(self._u.admin_permission, "erase.content in organization memory")
        return self._u._m.erase.content(dataset, text, **self._by(kw))

    def dataset(self, dataset: str, **kw):
        self._u._own(dataset, "erase.dataset")
        return self._u._m.erase.dataset(dataset, **self._by(kw))

    def log(self, dataset: str | None = None, *args, **kw):
        self._u._own(dataset if dataset is not None else self._u.dataset, "erase.log")
        return self._u._m.erase.log(self._u.dataset, *args, **self._u._plain(kw))

    def compact(self):
        raise PermissionDenied("erase.compact is maintenance of the whole store: the service principal's",
                               self._u.admin_permission)


class _NoDocuments(_UserPart):
    def __getattr__(self, name: str):
        def refuse(*args, **kwargs):
            raise PermissionDenied(f"documents.{name}: documents belong to the service principal only",
                                   self._u.admin_permission)
        return refuse

