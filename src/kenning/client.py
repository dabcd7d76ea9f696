"""The Python SDK over HTTP: ``Memory("http://host:port", api_key=…)`` and ``AsyncMemory``.

One I/O-free layer (:class:`Requests`) turns each library call into a
:class:`Call` (method, path, query, body, how to read the answer); the sync and
async clients only send calls with httpx. Each method has the library's exact
signature (a parity test checks it), and errors come back as the library's own
exception types, chosen by the stable ``code`` of the error body.
"""
from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Callable
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter

from . import errors as _errors
from .errors import ConfigError, InputError, KenningError
from .model import (AddResult, ChatPage, CoreFile, CoreFileVersion, DatasetPage, Document, Entity, Episode, ErasurePage,
                    ErasureReceipt, FactPage, Job,
                    MemoryStatus, MessageHit, MessagePage, Note, NoteHit, Receipt, RecallResult)

ERRORS: dict[str, type[KenningError]] = {}
for _cls in [c for c in vars(_errors).values() if isinstance(c, type) and issubclass(c, KenningError)]:
    ERRORS.setdefault(_cls.code, _cls)


@dataclass
class Call:
    method: str
    path: str
    params: dict = field(default_factory=dict)
    json: Any = None
    parse: Callable[[Any], Any] = lambda data: data
    environment: str | None = None
    content: str | None = None   # a raw body (JSON lines) instead of ``json``, sent as application/x-ndjson



def _call_headers(call: Call) -> dict[str, str]:
    headers = {"X-Kenning-Environment": call.environment} if call.environment else {}
    if call.content is not None:
        headers["Content-Type"] = "application/x-ndjson"
    return headers


def _q(value: str) -> str:
    """One path segment: a dataset, an id, a scope key. "", "." and ".." and anything with "/" are refused
    before a URL is built: URL handling would turn ``/facts/..`` into the dataset itself (and DELETE it)."""
    if not isinstance(value, str) or value in ("", ".", "..") or "/" in value:
        raise InputError(f"{value!r} cannot name anything in a URL: an id or name is not empty, '.' or '..' "
                         "and holds no '/'")
    return quote(value, safe="")


def _doc_path(path: str) -> str:
    """A document's path: not empty, and no part of it "." or ".." (URL handling would resolve those)."""
    if not isinstance(path, str) or not path or any(part in (".", "..") for part in path.split("/")):
        raise InputError(f"document path {path!r} must be a non-empty path with no '.' or '..' part")
    return quote(path)


def _time(value):
    return value.isoformat() if isinstance(value, datetime) else value


def _as(model):
    adapter = TypeAdapter(model)
    return adapter.validate_python


def _none(_data) -> None:
    return None


def _scope(project: str | None) -> None:
    if project is not None:
        raise ConfigError("over HTTP the project comes from the API key; create a key for that project")


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


class Requests:
    """The I/O-free layer: every public method of ``Memory`` as a Call."""

    def add(self, text: str, dataset: str, at: datetime | str | None = None, client_ref: str | None = None,
            role: str = "user", chat: str | None = None, message_id: str | None = None, *,
            temporary: bool = False, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        body = _clean({"text": text, "dataset": dataset, "at": _time(at), "client_ref": client_ref, "role": role,
                       "chat": chat, "message_id": message_id, "temporary": temporary})
        return Call("POST", "/v1/memory/add", json=body, parse=_as(AddResult), environment=environment)

    def add_turn(self, dataset: str, role: str, content: str, thread: str | None = None,
                 client_ref: str | None = None, at: datetime | str | None = None, chat: str | None = None,
                 temporary: bool = False, message_id: str | None = None, *, project: str | None = None,
                 environment: str | None = None) -> Call:
        _scope(project)
        body = _clean({"dataset": dataset, "role": role, "content": content, "thread": thread,
                       "client_ref": client_ref, "at": _time(at), "chat": chat, "temporary": temporary,
                       "message_id": message_id})
        return Call("POST", "/v1/memory/add_turn", json=body, parse=_as(Receipt), environment=environment)

    def status(self, request_id: str | None = None, *, memory_id: str | None = None, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        if (request_id is None) == (memory_id is None):
            raise _errors.InputError("pass a request_id or memory_id=…")
        ident = memory_id if memory_id is not None else request_id
        parse = _as(MemoryStatus) if memory_id is not None else _as(Receipt)
        return Call("GET", f"/v1/memory/status/{_q(ident)}", parse=parse, environment=environment)

    def recall(self, query: str, dataset: str, limit: int = 10, budget: int | None = None, *,
               as_of: datetime | str | None = None, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", "/v1/recall", json=_clean({"query": query, "dataset": dataset, "limit": limit,
                                                       "budget": budget, "as_of": _time(as_of)}),
                    parse=_as(RecallResult), environment=environment)

    def list_facts(self, dataset: str, q: str | None = None, limit: int = 50, offset: int = 0,
                   include_invalidated: bool = False, as_of: datetime | str | None = None,
                   entity: str | None = None, *, kind: str | None = None, entity_type: str | None = None,
                   message_id: str | None = None, order: str = "time", project: str | None = None,
                   environment: str | None = None) -> Call:
        _scope(project)
        params = _clean({"q": q, "limit": limit, "offset": offset, "include_invalidated": include_invalidated,
                         "as_of": _time(as_of), "entity": entity, "kind": kind, "entity_type": entity_type,
                         "message_id": message_id, "order": order})
        return Call("GET", f"/v1/datasets/{_q(dataset)}/facts", params=params, parse=_as(FactPage),
                    environment=environment)

    def list_entities(self, dataset: str, *, type: str | None = None, project: str | None = None,
                      environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/entities", params=_clean({"type": type}),
                    parse=_as(list[Entity]), environment=environment)

    def delete_fact(self, dataset: str, fact_id: str, *, project: str | None = None,
                    environment: str | None = None) -> Call:
        _scope(project)
        return Call("DELETE", f"/v1/datasets/{_q(dataset)}/facts/{_q(fact_id)}", parse=_none,
                    environment=environment)

    def embed_pending(self, batch: int = 256, *, project: str | None = None, environment: str | None = None,
                      progress: Callable[[str, int], None] | None = None) -> Call:
        """The server embeds in its own batches; ``progress`` hears the facts' count once, at the end."""
        _scope(project)
        return Call("POST", "/v1/embed_pending", parse=_reporting(progress, lambda d: {"fact": d["count"]}, lambda d: d["count"]),
                    environment=environment)

    def retry_failed(self, dataset: str | None = None, *, project: str | None = None,
                     environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", "/v1/jobs/retry_failed", json={"dataset": dataset}, parse=lambda d: d["count"],
                    environment=environment)

    def jobs(self, dataset: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0, *,
             project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", "/v1/jobs", params=_clean({"dataset": dataset, "status": status, "limit": limit,
                                                      "offset": offset}),
                    parse=_as(list[Job]), environment=environment)

    def remine(self, dataset: str, message_ids: Sequence[str] | None = None, *, all_messages: bool = False,
               limit: int | None = None, offset: int = 0, project: str | None = None,
               environment: str | None = None) -> Call:
        """Over HTTP a call mines at most 100 messages (``limit`` None: the server's 100)."""
        _scope(project)
        body = _clean({"message_ids": list(message_ids) if message_ids is not None else None,
                       "all_messages": all_messages, "limit": limit, "offset": offset})
        return Call("POST", f"/v1/datasets/{_q(dataset)}/remine", json=body, parse=_as(list[AddResult]),
                    environment=environment)

    def delete_dataset(self, dataset: str, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("DELETE", f"/v1/datasets/{_q(dataset)}", parse=lambda d: d, environment=environment)

    def datasets(self, q: str | None = None, limit: int = 50, offset: int = 0, *, project: str | None = None,
                 environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", "/v1/datasets", params=_clean({"q": q, "limit": limit, "offset": offset}),
                    parse=_as(DatasetPage), environment=environment)

    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", *, project: str | None = None,
                    environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/memory_tool", json={"command": command,
                                                                            "namespace": namespace},
                    parse=_tool_text, environment=environment)

    def export(self, dataset: str | None = None, *, include_vectors: bool = False, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", "/v1/export", params=_clean({"dataset": dataset, "include_vectors": include_vectors}),
                    parse=_lines, environment=environment)

    def import_(self, lines: Iterable[str], *, embed: bool | None = None, project: str | None = None,
                environment: str | None = None, progress: Callable[[str, int], None] | None = None) -> Call:
        """The server imports into the key's own project and environment only, refusing other records;
        rows without vectors get them there unless ``embed=False`` (as ``Memory.import_``). The server
        embeds on its side: ``progress`` hears, once at the end, the rows imported of each kind."""
        _scope(project)
        return Call("POST", "/v1/import", params=_clean({"embed": embed}), content="".join(
            line if line.endswith("\n") else line + "\n" for line in lines),
            parse=_reporting(progress, lambda d: {k: v for k, v in d.items() if k != "skipped"}, lambda d: d),
            environment=environment)

    def open_jobs(self) -> Call:
        return Call("GET", "/v1/jobs/open", parse=lambda d: d["count"])


def _reporting(progress, counts, answer):
    """A parse that tells ``progress(kind, n)`` the answer's ``counts`` (if asked to), then returns ``answer``."""
    def parse(data):
        for kind, n in counts(data).items():
            if progress is not None and n:
                progress(kind, n)
        return answer(data)
    return parse


def _lines(text: str) -> Iterator[str]:
    return iter(line + "\n" for line in str(text).splitlines())


_lines.raw = True  # read the body as text


def _tool_text(data: dict) -> str:
    if data.get("is_error"):
        raise _errors.MemoryToolError(data["content"])
    return data["content"]


class MessageRequests:
    def index(self, dataset: str, content: str, role: str = "user", chat: str | None = None,
              message_id: str | None = None, at: datetime | str | None = None, temporary: bool = False, *,
              project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        body = _clean({"content": content, "role": role, "chat": chat, "message_id": message_id, "at": _time(at),
                       "temporary": temporary})
        return Call("POST", f"/v1/datasets/{_q(dataset)}/messages", json=body, parse=_as(Episode | None),
                    environment=environment)

    def get(self, dataset: str, message_id: str, *, project: str | None = None,
            environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/messages/{_q(message_id)}", parse=_as(Episode),
                    environment=environment)

    def chats(self, dataset: str, limit: int = 50, offset: int = 0, *, project: str | None = None,
              environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/chats", params={"limit": limit, "offset": offset},
                    parse=_as(ChatPage), environment=environment)

    def thread(self, dataset: str, chat: str | None, limit: int = 100, offset: int = 0, *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/thread",
                    params=_clean({"chat": chat, "limit": limit, "offset": offset}),
                    parse=_as(MessagePage), environment=environment)

    def search(self, dataset: str, query: str, exclude_chat: str | None = None, limit: int = 10, *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/messages/search",
                    params=_clean({"q": query, "exclude_chat": exclude_chat, "limit": limit}),
                    parse=_as(list[MessageHit]), environment=environment)

    def delete(self, dataset: str, message_id: str, *, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        return Call("DELETE", f"/v1/datasets/{_q(dataset)}/messages/{_q(message_id)}", environment=environment)

    def delete_chat(self, dataset: str, chat: str, *, project: str | None = None,
                    environment: str | None = None) -> Call:
        _scope(project)
        return Call("DELETE", f"/v1/datasets/{_q(dataset)}/chats/{_q(chat)}", environment=environment)


class EraseRequests:
    def fact(self, dataset: str, fact_id: str, *, dry_run: bool = False, by: str | None = None,
             project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)   # ``by``: the server names who asked, from the credential
        return Call("POST", f"/v1/datasets/{_q(dataset)}/erase/facts/{_q(fact_id)}", json={"dry_run": dry_run},
                    parse=_as(ErasureReceipt), environment=environment)

    def message(self, dataset: str, message_id: str, *, dry_run: bool = False, by: str | None = None,
                project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/erase/messages/{_q(message_id)}",
                    json={"dry_run": dry_run}, parse=_as(ErasureReceipt), environment=environment)

    def content(self, dataset: str, text: str, *, dry_run: bool = False, document_scopes: Sequence[str] = (),
                organization: bool = False, by: str | None = None, project: str | None = None,
                environment: str | None = None) -> Call:
        _scope(project)
        scopes = [document_scopes] if isinstance(document_scopes, str) else list(document_scopes)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/erase/content",
                    json={"text": text, "dry_run": dry_run, "document_scopes": scopes, "organization": organization},
                    parse=_as(ErasureReceipt), environment=environment)

    def dataset(self, dataset: str, *, dry_run: bool = False, by: str | None = None, project: str | None = None,
                environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/erase", json={"dry_run": dry_run},
                    parse=_as(ErasureReceipt), environment=environment)

    def log(self, dataset: str | None = None, limit: int = 50, offset: int = 0, *, project: str | None = None,
            environment: str | None = None) -> Call:
        _scope(project)
        path = "/v1/erasures" if dataset is None else f"/v1/datasets/{_q(dataset)}/erasures"
        return Call("GET", path, params={"limit": limit, "offset": offset}, parse=_as(ErasurePage),
                    environment=environment)

    def compact(self) -> Call:
        return Call("POST", "/v1/erasures/compact", parse=lambda d: d["compacted"])


class NoteRequests:
    def save(self, dataset: str, text: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/notes", json={"text": text, "namespace": namespace},
                    parse=_as(Note), environment=environment)

    def save_extracted(self, dataset: str, texts: list[str], namespace: str = "user",
                       dedupe_threshold: float | None = None, *, project: str | None = None,
                       environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/notes/extracted",
                    json=_clean({"texts": texts, "namespace": namespace, "dedupe_threshold": dedupe_threshold}),
                    parse=_as(list[Note]), environment=environment)

    def search(self, dataset: str, query: str, limit: int = 10, namespace: str | list[str] | None = None, *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        if isinstance(namespace, (list, tuple)):
            namespace = ",".join(namespace)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/notes/search",
                    params=_clean({"q": query, "limit": limit, "namespace": namespace}),
                    parse=_as(list[NoteHit]), environment=environment)

    def list(self, dataset: str, namespace: str | None = None, include_forgotten: bool = False, limit: int = 50,
             offset: int = 0, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/notes",
                    params=_clean({"namespace": namespace, "include_forgotten": include_forgotten, "limit": limit,
                                   "offset": offset}), parse=_as(list[Note]), environment=environment)

    def forget(self, dataset: str, note_id: str, superseded_by: str | None = None, *, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/notes/{_q(note_id)}/forget",
                    json={"superseded_by": superseded_by}, parse=_none, environment=environment)


class CoreRequests:
    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", *, project: str | None = None,
                    environment: str | None = None) -> Call:
        return Requests().memory_tool(dataset, command, namespace, project=project, environment=environment)

    def view(self, dataset: str, path: str = "/memories", namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/core/view", params={"path": path, "namespace": namespace},
                    parse=lambda d: d["text"], environment=environment)

    def read(self, dataset: str, path: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/core/file", params={"path": path, "namespace": namespace},
                    parse=_as(CoreFile), environment=environment)

    def list(self, dataset: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/core", params={"namespace": namespace},
                    parse=_as(list[CoreFile]), environment=environment)

    def history(self, dataset: str, path: str, namespace: str = "user", limit: int | None = None, offset: int = 0,
                newest_first: bool = False, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/datasets/{_q(dataset)}/core/history",
                    params=_clean({"path": path, "namespace": namespace, "limit": limit, "offset": offset or None,
                                   "newest_first": newest_first or None}),
                    parse=_as(list[CoreFileVersion]), environment=environment)

    def write(self, dataset: str, path: str, text: str, expected_version: int | None = None,
              namespace: str = "user", *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("PUT", f"/v1/datasets/{_q(dataset)}/core/file",
                    json={"path": path, "text": text, "expected_version": expected_version, "namespace": namespace},
                    parse=_as(CoreFile), environment=environment)

    def str_replace(self, dataset: str, path: str, old: str, new: str = "", expected_version: int | None = None,
                    namespace: str = "user", *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/core/str_replace",
                    json={"path": path, "old": old, "new": new, "expected_version": expected_version,
                          "namespace": namespace}, parse=_as(CoreFile), environment=environment)

    def insert(self, dataset: str, path: str, line: int, text: str, namespace: str = "user", *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/core/insert",
                    json={"path": path, "line": line, "text": text, "namespace": namespace}, parse=_as(CoreFile),
                    environment=environment)

    def remove(self, dataset: str, path: str, namespace: str = "user", *, project: str | None = None,
               environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/core/remove", json={"path": path, "namespace": namespace},
                    parse=_none, environment=environment)

    def rename(self, dataset: str, old_path: str, new_path: str, namespace: str = "user", *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", f"/v1/datasets/{_q(dataset)}/core/rename",
                    json={"old_path": old_path, "new_path": new_path, "namespace": namespace}, parse=_none,
                    environment=environment)

    def render(self, dataset: str, namespaces: list[str] | None = None, max_render: int | None = None, *,
               project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        params = _clean({"namespaces": ",".join(namespaces) if namespaces else None, "max_render": max_render})
        return Call("GET", f"/v1/datasets/{_q(dataset)}/core/render", params=params, parse=lambda d: d["text"],
                    environment=environment)


class DocumentRequests:
    def read(self, scope_key: str, path: str, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/documents/{_q(scope_key)}/{_doc_path(path)}", parse=_as(Document),
                    environment=environment)

    def write(self, scope_key: str, path: str, text: str, expected_version: int | None = None,
              expires_in: float | timedelta | None = None, *, project: str | None = None,
              environment: str | None = None) -> Call:
        _scope(project)
        if isinstance(expires_in, timedelta):
            expires_in = expires_in.total_seconds()
        return Call("PUT", f"/v1/documents/{_q(scope_key)}/{_doc_path(path)}",
                    json={"text": text, "expected_version": expected_version, "expires_in": expires_in},
                    parse=_as(Document), environment=environment)

    def list(self, scope_key: str, prefix: str = "", *, project: str | None = None,
             environment: str | None = None) -> Call:
        _scope(project)
        return Call("GET", f"/v1/documents/{_q(scope_key)}", params={"prefix": prefix}, parse=_as(list[Document]),
                    environment=environment)

    def delete(self, scope_key: str, path: str, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("DELETE", f"/v1/documents/{_q(scope_key)}/{_doc_path(path)}", parse=_none, environment=environment)

    def purge(self, *, project: str | None = None, environment: str | None = None) -> Call:
        _scope(project)
        return Call("POST", "/v1/documents_purge", parse=lambda d: d["count"], environment=environment)


RATE_RETRIES = 3        # a 429 is retried this many times, after the server's Retry-After
MAX_RETRY_WAIT = 10.0   # seconds; a longer Retry-After is raised to the caller at once


def _retry_after(response: httpx.Response) -> float | None:
    """How long to wait before sending a rate-limited call again; None: do not retry it here."""
    if response.status_code != 429:
        return None
    try:
        wait = float(response.headers.get("retry-after", "1"))
    except ValueError:
        return None
    return wait if 0 <= wait <= MAX_RETRY_WAIT else None


def _error(response: httpx.Response) -> KenningError:
    try:
        err = response.json()["error"]
        if err["code"] == "RATE_LIMITED":
            return _errors.RateLimited(err["message"], float(response.headers.get("retry-after", "1") or 1))
        return ERRORS.get(err["code"], KenningError)(err["message"]) if err["code"] != "PERMISSION_DENIED" \
            else _errors.PermissionDenied(err["message"], "")
    except (ValueError, KeyError, TypeError):
        return KenningError(f"HTTP {response.status_code} from the kenning server: {response.text[:200]}")


def _headers(api_key: str | None) -> dict:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _read(call: Call, response: httpx.Response):
    if response.status_code >= 400:
        raise _error(response)
    if getattr(call.parse, "raw", False):
        return call.parse(response.text)
    return call.parse(response.json() if response.content else None)


def _bind(requests: object, send: Callable, is_async: bool):
    """Methods with the library's signatures that build a Call and send it."""
    def method(name: str):
        build = getattr(requests, name)
        if is_async:
            async def call(*args, **kwargs):
                return await send(build(*args, **kwargs))
        else:
            def call(*args, **kwargs):
                return send(build(*args, **kwargs))
        call.__name__ = name
        call.__signature__ = inspect.signature(build)
        call.__doc__ = build.__doc__
        return call
    return method


class _Part:
    """A group of methods (notes, messages, core, documents) bound to a client."""

    def __init__(self, requests: object, send: Callable, is_async: bool):
        bind = _bind(requests, send, is_async)
        for name in dir(requests):
            if not name.startswith("_") and callable(getattr(requests, name)):
                setattr(self, name, bind(name))


PUBLIC = ("add", "add_turn", "status", "recall", "list_facts", "list_entities", "delete_fact", "embed_pending",
          "retry_failed", "jobs", "datasets", "delete_dataset", "remine", "memory_tool", "export", "import_")


class RemoteMemory:
    """``Memory`` over HTTP. Same methods, same results, same exception types."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None):
        self.url = url.rstrip("/")
        self._transport = transport   # a user token's client speaks through the same one
        self._http = httpx.Client(base_url=self.url, headers=_headers(api_key), timeout=timeout,
                                  transport=transport)
        bind = _bind(Requests(), self._send, False)
        for name in PUBLIC:
            setattr(self, name, bind(name))
        self.messages = _Part(MessageRequests(), self._send, False)
        self.notes = _Part(NoteRequests(), self._send, False)
        self.core = _Part(CoreRequests(), self._send, False)
        self.documents = _Part(DocumentRequests(), self._send, False)
        self.erase = _Part(EraseRequests(), self._send, False)

    def _send(self, call: Call):
        headers = _call_headers(call)
        for attempt in range(RATE_RETRIES + 1):
            try:
                response = self._http.request(call.method, call.path, params=call.params or None, json=call.json,
                                              content=call.content, headers=headers)
            except httpx.HTTPError as exc:
                raise ConfigError(f"cannot reach the kenning server at {self.url}: {exc}") from exc
            wait = _retry_after(response)
            if wait is None or attempt == RATE_RETRIES:
                break
            time.sleep(wait)
        return _read(call, response)

    def flush(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._send(Requests().open_jobs()):
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"jobs still open after {timeout}s")
            time.sleep(0.05)

    def as_user(self, dataset: str, role: str = "member", *, project: str | None = None,
                environment: str | None = None) -> "RemoteMemory":
        """A client acting as one end user: mints a user token with this client's service key."""
        _scope(project)
        token = self._send(Call("POST", "/v1/tokens", json={"dataset": dataset, "role": role},
                                parse=lambda d: d["token"], environment=environment))
        return RemoteMemory(self.url, token, transport=self._transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "RemoteMemory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncMemory:
    """The same API, awaitable, for asyncio applications (``await mem.recall(…)``)."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.url = url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.url, headers=_headers(api_key), timeout=timeout,
                                       transport=transport)
        bind = _bind(Requests(), self._send, True)
        for name in PUBLIC:
            setattr(self, name, bind(name))
        self.messages = _Part(MessageRequests(), self._send, True)
        self.notes = _Part(NoteRequests(), self._send, True)
        self.core = _Part(CoreRequests(), self._send, True)
        self.documents = _Part(DocumentRequests(), self._send, True)
        self.erase = _Part(EraseRequests(), self._send, True)

    async def _send(self, call: Call):
        headers = _call_headers(call)
        for attempt in range(RATE_RETRIES + 1):
            try:
                response = await self._http.request(call.method, call.path, params=call.params or None,
                                                    json=call.json, content=call.content, headers=headers)
            except httpx.HTTPError as exc:
                raise ConfigError(f"cannot reach the kenning server at {self.url}: {exc}") from exc
            wait = _retry_after(response)
            if wait is None or attempt == RATE_RETRIES:
                break
            await asyncio.sleep(wait)
        return _read(call, response)

    async def flush(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while await self._send(Requests().open_jobs()):
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"jobs still open after {timeout}s")
            await asyncio.sleep(0.05)

    async def as_user(self, dataset: str, role: str = "member", *, project: str | None = None,
                      environment: str | None = None) -> "AsyncMemory":
        _scope(project)
        token = await self._send(Call("POST", "/v1/tokens", json={"dataset": dataset, "role": role},
                                      parse=lambda d: d["token"], environment=environment))
        return AsyncMemory(self.url, token)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
