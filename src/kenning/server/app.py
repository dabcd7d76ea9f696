"""The HTTP API: the library's operations as routes, a thin layer over ``Memory``.

Each request resolves its principal (API key, user token, or development mode)
and calls the library through the same permission model as ``mem.as_user``;
errors map from the one exception tree to ``{"error": {"code", "message"}}``.
"""
from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from typing import Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..errors import InputError, KenningError, MemoryToolError, PermissionDenied
from ..memory import Memory
from ..model import (AddResult, CoreFile, CoreFileVersion, DatasetPage, Document, Entity, Episode, FactPage, Job,
                     MessageHit, Note, NoteHit)
from ..model import RecallResult
from .access import memory_for
from .dashboard import create_dashboard, is_page
from .limits import BodyLimit
from .auth import Auth, Principal
from .errors import body, status_of

log = logging.getLogger("kenning.server")
_ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def lone_surrogate(raw: bytes) -> bool:
    """Whether a JSON text escapes half a surrogate pair ("\\ud800" alone): valid JSON, yet no text
    (it cannot be encoded, so the first store or embedder to see it would fail)."""
    if b"\\u" not in raw:
        return False
    pending = None  # where the low half of the last high surrogate must start
    for m in _ESCAPE.finditer(raw):
        code = int(m.group(1), 16) if m.group(1) else None
        if pending is not None:
            if m.start() != pending or code is None or not 0xDC00 <= code <= 0xDFFF:
                return True
            pending = None
        elif code is not None and 0xD800 <= code <= 0xDBFF:
            pending = m.end()
        elif code is not None and 0xDC00 <= code <= 0xDFFF:
            return True
    return pending is not None


async def unicode_body(request: Request) -> None:
    if request.method in ("POST", "PUT", "PATCH") and not is_page(request.url.path) \
            and lone_surrogate(await request.body()):
        raise InputError("the body escapes half of a UTF-16 surrogate pair (like \\ud800 alone), which is no "
                         "text; send valid Unicode")


HTTP_CODES = {400: "INVALID_INPUT", 401: "UNAUTHORIZED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
              405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE"}


# -- request bodies ---------------------------------------------------------------------------
class AddBody(BaseModel):
    text: str
    dataset: str
    at: datetime | None = None
    client_ref: str | None = None
    role: str = "user"
    chat: str | None = None
    message_id: str | None = None
    temporary: bool = False


class AddTurnBody(BaseModel):
    dataset: str
    role: str = "user"
    content: str
    thread: str | None = None
    client_ref: str | None = None
    at: datetime | None = None
    chat: str | None = None
    temporary: bool = False
    message_id: str | None = None


class RecallBody(BaseModel):
    query: str
    dataset: str
    limit: int = 10
    budget: int | None = None


class MessageBody(BaseModel):
    content: str
    role: str = "user"
    chat: str | None = None
    message_id: str | None = None
    at: datetime | None = None
    temporary: bool = False


class NoteBody(BaseModel):
    text: str
    namespace: str = "user"


class NotesBody(BaseModel):
    texts: list[str]
    namespace: str = "user"
    dedupe_threshold: float | None = None


class ForgetBody(BaseModel):
    superseded_by: str | None = None


class ToolBody(BaseModel):
    command: dict[str, Any]
    namespace: str = "user"


class ToolResult(BaseModel):
    content: str
    is_error: bool = False


class CoreWriteBody(BaseModel):
    path: str
    text: str
    expected_version: int | None = None
    namespace: str = "user"


class DocumentBody(BaseModel):
    text: str
    expected_version: int | None = None
    expires_in: float | None = Field(None, gt=0)


class TokenBody(BaseModel):
    dataset: str
    role: str = "member"
    expires_in: float = Field(3600, gt=0, le=30 * 86400)


class TokenResult(BaseModel):
    token: str
    expires_at: int


class Count(BaseModel):
    count: int


class ReplaceBody(BaseModel):
    path: str
    old: str
    new: str = ""
    expected_version: int | None = None
    namespace: str = "user"


class InsertBody(BaseModel):
    path: str
    line: int
    text: str
    namespace: str = "user"


class PathBody(BaseModel):
    path: str
    namespace: str = "user"


class RenameBody(BaseModel):
    old_path: str
    new_path: str
    namespace: str = "user"


class RetryBody(BaseModel):
    dataset: str | None = None


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """What every 4xx and 5xx answer carries (server/errors.py), declared so clients and checks see it."""
    error: ErrorDetail


def create_app(memory: Memory, auth: Auth) -> FastAPI:
    app = FastAPI(title="kenning", version=__version__,
                  description="Long-term memory for AI assistants: facts with time, recall, notes, core files.",
                  responses={"4XX": {"model": ErrorBody, "description": "The request cannot be served; "
                                     "`error.code` says why"}},
                  dependencies=[Depends(unicode_body)])

    router, static, dashboard = create_dashboard(memory, auth)

    @app.exception_handler(KenningError)
    async def kenning_error(request: Request, exc: KenningError):
        if is_page(request.url.path):
            return dashboard.error(request, exc)
        return JSONResponse(body(exc.code, str(exc)), status_code=status_of(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return JSONResponse(body("INVALID_INPUT", f"{where}: {first.get('msg', 'invalid request')}"), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        """Starlette's own refusals (unparseable body, unknown route, wrong method) in the one error shape."""
        if is_page(request.url.path):
            return await http_exception_handler(request, exc)
        code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        return JSONResponse(body(code, str(exc.detail)), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(body("INTERNAL", "internal error; the server log has the details"), status_code=500)

    def principal(authorization: str | None = Header(None),
                  x_kenning_environment: str | None = Header(None)) -> Principal:
        return auth.principal(authorization, x_kenning_environment)

    def api(p: Principal, write: bool = False):
        return memory_for(memory, p, write)

    # -- facts -------------------------------------------------------------------------------
    @app.get("/v1/health")
    def health() -> dict:
        return {"status": "ok", "version": __version__}

    @app.post("/memory/add", response_model=AddResult, response_model_exclude_none=True)
    @app.post("/v1/memory/add", response_model=AddResult, response_model_exclude_none=True)
    def add(b: AddBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.add(b.text, b.dataset, at=b.at, client_ref=b.client_ref, role=b.role, chat=b.chat,
                     message_id=b.message_id, temporary=b.temporary, **kw)

    @app.post("/v1/memory/add_turn")
    def add_turn(b: AddTurnBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.add_turn(b.dataset, b.role, b.content, thread=b.thread, client_ref=b.client_ref, at=b.at,
                          chat=b.chat, temporary=b.temporary, message_id=b.message_id, **kw)

    @app.get("/v1/memory/status/{id}")
    def status(id: str, p: Principal = Depends(principal)):
        m, kw = api(p)
        if id.startswith("f_"):
            return m.status(memory_id=id, **kw)
        return m.status(id, **kw)

    @app.post("/v1/recall", response_model=RecallResult)
    def recall(b: RecallBody, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.recall(b.query, b.dataset, limit=b.limit, budget=b.budget, **kw)

    @app.get("/v1/datasets/{dataset}/facts", response_model=FactPage)
    def facts(dataset: str, q: str | None = None, limit: int = 50, offset: int = 0,
              include_invalidated: bool = False, as_of: datetime | None = None, entity: str | None = None,
              p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.list_facts(dataset, q=q, limit=limit, offset=offset, include_invalidated=include_invalidated,
                            as_of=as_of, entity=entity, **kw)

    @app.delete("/v1/datasets/{dataset}/facts/{fact_id}", status_code=204)
    def delete_fact(dataset: str, fact_id: str, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        m.delete_fact(dataset, fact_id, **kw)

    @app.get("/v1/datasets/{dataset}/entities", response_model=list[Entity])
    def entities(dataset: str, type: str | None = None, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.list_entities(dataset, type=type, **kw)

    @app.get("/v1/jobs/open", response_model=Count)
    def open_jobs(p: Principal = Depends(principal)):
        api(p)
        # a user token counts its own dataset's turns only (p.dataset is None for a key)
        return Count(count=memory.store.count_jobs(("queued", "distilling"), p.project, p.environment, p.dataset))

    @app.post("/v1/jobs/retry_failed", response_model=Count)
    def retry_failed(b: RetryBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)   # a user token retries its own dataset's jobs only
        return Count(count=m.retry_failed(b.dataset, **kw))

    @app.get("/v1/jobs", response_model=list[Job])
    def jobs(dataset: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0,
             p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.jobs(dataset, status, limit, offset, **kw)

    @app.delete("/v1/datasets/{dataset}", response_model=dict[str, int])
    def delete_dataset(dataset: str, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.delete_dataset(dataset, **kw)

    @app.get("/v1/datasets", response_model=DatasetPage)
    def datasets(q: str | None = None, limit: int = 50, offset: int = 0, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.datasets(q, limit, offset, **kw)

    # -- messages ----------------------------------------------------------------------------
    @app.post("/v1/datasets/{dataset}/messages", response_model=Episode | None)
    def index_message(dataset: str, b: MessageBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.messages.index(dataset, b.content, role=b.role, chat=b.chat, message_id=b.message_id, at=b.at,
                                temporary=b.temporary, **kw)

    @app.get("/v1/datasets/{dataset}/messages/search", response_model=list[MessageHit])
    def search_messages(dataset: str, q: str, exclude_chat: str | None = None, limit: int = 10,
                        p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.messages.search(dataset, q, exclude_chat=exclude_chat, limit=limit, **kw)

    @app.get("/v1/datasets/{dataset}/messages/{message_id}", response_model=Episode)
    def get_message(dataset: str, message_id: str, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.messages.get(dataset, message_id, **kw)

    # -- notes -------------------------------------------------------------------------------
    @app.post("/v1/datasets/{dataset}/notes", response_model=Note)
    def save_note(dataset: str, b: NoteBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.notes.save(dataset, b.text, b.namespace, **kw)

    @app.post("/v1/datasets/{dataset}/notes/extracted", response_model=list[Note])
    def save_extracted(dataset: str, b: NotesBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.notes.save_extracted(dataset, b.texts, b.namespace, b.dedupe_threshold, **kw)

    @app.get("/v1/datasets/{dataset}/notes", response_model=list[Note])
    def list_notes(dataset: str, namespace: str | None = None, include_forgotten: bool = False, limit: int = 50,
                   offset: int = 0, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.notes.list(dataset, namespace, include_forgotten, limit, offset, **kw)

    @app.get("/v1/datasets/{dataset}/notes/search", response_model=list[NoteHit])
    def search_notes(dataset: str, q: str, limit: int = 10, namespace: str | None = None,
                     p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.notes.search(dataset, q, limit, namespace, **kw)

    @app.post("/v1/datasets/{dataset}/notes/{note_id}/forget", status_code=204)
    def forget_note(dataset: str, note_id: str, b: ForgetBody | None = None, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        m.notes.forget(dataset, note_id, b.superseded_by if b else None, **kw)

    # -- core files ----------------------------------------------------------------------------
    @app.post("/v1/datasets/{dataset}/memory_tool", response_model=ToolResult)
    def memory_tool(dataset: str, b: ToolBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=b.command.get("command") != "view")
        try:
            return ToolResult(content=m.memory_tool(dataset, b.command, b.namespace, **kw))
        except MemoryToolError as exc:
            return ToolResult(content=exc.text, is_error=True)

    @app.get("/v1/datasets/{dataset}/core", response_model=list[CoreFile])
    def list_core(dataset: str, namespace: str = "user", p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.core.list(dataset, namespace=namespace, **kw)

    @app.get("/v1/datasets/{dataset}/core/render")
    def render_core(dataset: str, namespaces: str | None = None, max_render: int | None = None,
                    p: Principal = Depends(principal)) -> dict:
        m, kw = api(p)
        spaces = namespaces.split(",") if namespaces else None
        return {"text": m.core.render(dataset, spaces, max_render, **kw)}

    @app.get("/v1/datasets/{dataset}/core/file", response_model=CoreFile)
    def read_core(dataset: str, path: str, namespace: str = "user", p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.core.read(dataset, path, namespace=namespace, **kw)

    @app.put("/v1/datasets/{dataset}/core/file", response_model=CoreFile)
    def write_core(dataset: str, b: CoreWriteBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.core.write(dataset, b.path, b.text, expected_version=b.expected_version, namespace=b.namespace,
                            **kw)

    @app.get("/v1/datasets/{dataset}/core/view")
    def view_core(dataset: str, path: str = "/memories", namespace: str = "user",
                  p: Principal = Depends(principal)) -> dict:
        m, kw = api(p)
        return {"text": m.core.view(dataset, path, namespace=namespace, **kw)}

    @app.post("/v1/datasets/{dataset}/core/str_replace", response_model=CoreFile)
    def replace_core(dataset: str, b: ReplaceBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.core.str_replace(dataset, b.path, b.old, b.new, expected_version=b.expected_version,
                                  namespace=b.namespace, **kw)

    @app.post("/v1/datasets/{dataset}/core/insert", response_model=CoreFile)
    def insert_core(dataset: str, b: InsertBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.core.insert(dataset, b.path, b.line, b.text, namespace=b.namespace, **kw)

    @app.post("/v1/datasets/{dataset}/core/remove", status_code=204)
    def remove_core(dataset: str, b: PathBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        m.core.remove(dataset, b.path, namespace=b.namespace, **kw)

    @app.post("/v1/datasets/{dataset}/core/rename", status_code=204)
    def rename_core(dataset: str, b: RenameBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        m.core.rename(dataset, b.old_path, b.new_path, namespace=b.namespace, **kw)

    @app.get("/v1/datasets/{dataset}/core/history", response_model=list[CoreFileVersion])
    def core_history(dataset: str, path: str, namespace: str = "user", p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.core.history(dataset, path, namespace=namespace, **kw)

    # -- documents (service principal only) ------------------------------------------------------
    @app.get("/v1/documents/{scope_key}", response_model=list[Document])
    def list_documents(scope_key: str, prefix: str = "", p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.documents.list(scope_key, prefix, **kw)

    @app.get("/v1/documents/{scope_key}/{path:path}", response_model=Document)
    def read_document(scope_key: str, path: str, p: Principal = Depends(principal)):
        m, kw = api(p)
        return m.documents.read(scope_key, path, **kw)

    @app.put("/v1/documents/{scope_key}/{path:path}", response_model=Document)
    def write_document(scope_key: str, path: str, b: DocumentBody, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return m.documents.write(scope_key, path, b.text, expected_version=b.expected_version,
                                 expires_in=b.expires_in, **kw)

    @app.delete("/v1/documents/{scope_key}/{path:path}", status_code=204)
    def delete_document(scope_key: str, path: str, p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        m.documents.delete(scope_key, path, **kw)

    @app.post("/v1/documents_purge", response_model=Count)
    def purge_documents(p: Principal = Depends(principal)):
        m, kw = api(p, write=True)
        return Count(count=m.documents.purge(**kw))

    # -- maintenance and tokens ---------------------------------------------------------------------
    @app.post("/v1/embed_pending", response_model=Count)
    def embed_pending(p: Principal = Depends(principal)):
        if p.kind != "service":
            raise PermissionDenied("embed_pending is for the service principal", "ai.admin")
        return Count(count=memory.embed_pending(project=p.project, environment=p.environment))

    @app.get("/v1/export")
    def export(dataset: str | None = None, include_vectors: bool = False, p: Principal = Depends(principal)):
        if p.kind != "service":
            raise PermissionDenied("export is for the service principal", "ai.admin")
        lines = memory.export(dataset, include_vectors=include_vectors, project=p.project, environment=p.environment)
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @app.post("/v1/import")
    async def import_(request: Request, embed: bool = False, p: Principal = Depends(principal)) -> dict:
        if p.kind != "service":
            raise PermissionDenied("import is for the service principal", "ai.admin")
        try:
            lines = (await request.body()).decode("utf-8", errors="strict").splitlines()
        except UnicodeDecodeError as exc:
            raise InputError(f"the export is not UTF-8 (byte {exc.start}); nothing was imported") from None
        for number, line in enumerate(lines, 1):  # a key imports into its own project and environment only
            try:
                record = json.loads(line) if line.strip() else {}
            except ValueError:
                raise InputError(f"line {number} is not JSON; nothing was imported") from None
            if not isinstance(record, dict):
                continue
            if record.get("project", p.project) != p.project or record.get("environment", p.environment) != p.environment:
                raise PermissionDenied(f"line {number} belongs to another project or environment; nothing was "
                                       "imported", "ai.admin")
        return memory.import_(lines, embed=embed)

    @app.post("/v1/tokens", response_model=TokenResult)
    def mint_token(b: TokenBody, p: Principal = Depends(principal)):
        if p.kind != "service":
            raise PermissionDenied("only a service key mints user tokens", "ai.admin")
        if auth.tokens is None:
            raise PermissionDenied("this server has no secret (KENNING_SECRET), so it cannot mint tokens", "ai.admin")
        from ..permissions import role_permissions

        role_permissions(b.role, "r", "a")  # a known role, or InputError
        memory.services.scope(b.dataset, p.project, p.environment)
        token, exp = auth.tokens.mint(p.project, p.environment, b.dataset, b.role, b.expires_in)
        return TokenResult(token=token, expires_at=exp)

    app.add_middleware(BodyLimit, max_bytes=memory.settings.max_body_bytes)
    app.mount("/static", static, name="static")
    app.include_router(router)
    return app
