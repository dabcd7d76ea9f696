"""The dashboard: see and curate what kenning knows about each user, in a browser.

Server-rendered pages (Jinja2) over the same library calls and the same permission gate
(:func:`~kenning.server.access.memory_for`) as the HTTP API: a user token sees its own
dataset only, a member key may read but not change. Every page reads without JavaScript;
the bundled htmx (no CDN, nothing fetched at run time) only makes the ``as of`` control and
the recall playground update in place. The browser authenticates like any client: an
``Authorization`` header, or a key pasted once on ``/login`` and kept in an HttpOnly,
SameSite=Strict cookie; in local development mode no key is needed. Forms that change
something carry a token bound to the caller's credential and must come from this origin.
"""
from __future__ import annotations

import difflib
import hmac
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from .. import __version__, timeutil
from ..errors import InputError, KenningError, PermissionDenied
from ..memory import Memory
from ..model import Fact
from .access import memory_for
from .auth import Auth, Principal
from .errors import Unauthorized, status_of

HERE = Path(__file__).resolve().parent
COOKIE = "kenning_session"
PAGE = 100            # facts, notes, jobs per page (the library's largest page)
DATASETS_PAGE = 50
PREFIXES = ("/datasets", "/jobs", "/login", "/logout")


def is_page(path: str) -> bool:
    """Whether a request path belongs to the dashboard (its errors are pages, not JSON)."""
    return path == "/" or path.startswith(PREFIXES)


def _int(value: str | None, default: int, lo: int, hi: int, name: str) -> int:
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"{name} must be a whole number, not {value!r}") from None
    if not lo <= number <= hi:
        raise InputError(f"{name} must be from {lo} to {hi}, not {number}")
    return number


def _day(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d")


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def fact_state(f: Fact, now: datetime) -> str:
    """live | future | expired | superseded | deleted: what the history line shows."""
    if f.invalid_at is not None:
        return "superseded" if f.superseded_by else "deleted"
    if f.valid_at > now:
        return "future"
    if f.valid_until is not None and f.valid_until <= now:
        return "expired"
    return "live"


def group_by_anchor(facts: list[Fact]) -> list[tuple[str, list[Fact]]]:
    groups: dict[str, list[Fact]] = {}
    for f in facts:
        groups.setdefault(f.anchor, []).append(f)
    return sorted(groups.items(), key=lambda kv: (kv[0] != "user", kv[0]))


def diff_lines(old: str, new: str) -> list[tuple[str, str]]:
    """A unified diff as (kind, line) pairs: kind is add, del, hunk or same."""
    out = []
    for line in list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))[2:]:
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        out.append((kind, line))
    return out


def pages(total: int, limit: int, offset: int) -> dict:
    return {"total": total, "limit": limit, "offset": offset, "first": offset + 1 if total else 0,
            "last": min(total, offset + limit), "prev": max(0, offset - limit) if offset else None,
            "next": offset + limit if offset + limit < total else None}


class Dashboard:
    def __init__(self, memory: Memory, auth: Auth):
        self.memory, self.auth = memory, auth
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        env = self.templates.env
        env.filters.update(day=_day, when=_when)
        env.globals.update(version=__version__, quote=quote, urlencode=urlencode)

    # -- who is asking ------------------------------------------------------------------------
    def credential(self, request: Request) -> str | None:
        header = request.headers.get("authorization")
        if header:
            return header.partition(" ")[2] or None
        return request.cookies.get(COOKIE)

    def principal(self, request: Request) -> Principal:
        header = request.headers.get("authorization")
        cookie = request.cookies.get(COOKIE)
        given = header or (f"Bearer {cookie}" if cookie else None)
        return self.auth.principal(given, request.headers.get("x-kenning-environment"))

    def api(self, request: Request, write: bool = False):
        p = self.principal(request)
        m, kw = memory_for(self.memory, p, write)
        return p, m, kw

    async def form(self, request: Request) -> dict[str, str]:
        """A posted form, after the same-origin and form-token checks every change must pass."""
        origin = request.headers.get("origin") or request.headers.get("referer")
        if origin:
            there, here = urlsplit(origin).netloc, request.headers.get("host", "")
            if there != here:
                raise PermissionDenied(f"a dashboard form must be sent from this site, not from {there!r}",
                                       "same-origin")
        raw = (await request.body()).decode("utf-8", "replace")
        data = {key: values[-1] for key, values in parse_qs(raw, keep_blank_values=True).items()}
        expected = self.auth.form_token(self.credential(request))
        if not hmac.compare_digest(data.get("form_token", ""), expected):
            raise PermissionDenied("the form is stale or came from elsewhere: reload the page and try again",
                                   "form-token")
        return data

    # -- rendering ---------------------------------------------------------------------------
    def render(self, request: Request, template: str, http_status: int = 200, **context) -> HTMLResponse:
        try:
            p = self.principal(request)
        except Unauthorized:
            p = None
        context.update(request=request, principal=p, dev_mode=self.auth.dev_mode,
                       form_token=self.auth.form_token(self.credential(request)),
                       signed_in=bool(self.credential(request)))
        return self.templates.TemplateResponse(request, template, context, status_code=http_status)

    def error(self, request: Request, exc: KenningError) -> Response:
        if isinstance(exc, Unauthorized) and request.method == "GET":
            return RedirectResponse(f"/login?{urlencode({'next': str(request.url.path)})}", status_code=303)
        return self.render(request, "error.html", http_status=status_of(exc), code=exc.code, message=str(exc))


def create_dashboard(memory: Memory, auth: Auth) -> tuple[APIRouter, StaticFiles, Dashboard]:
    """The dashboard's routes, its static files (mount at ``/static``) and its renderer."""
    d = Dashboard(memory, auth)
    router = APIRouter(include_in_schema=False)

    # -- datasets --------------------------------------------------------------------------
    @router.get("/", response_class=HTMLResponse)
    def datasets(request: Request):
        _, m, kw = d.api(request)
        q = request.query_params.get("q", "").strip() or None
        offset = _int(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.datasets(q, DATASETS_PAGE, offset, **kw)
        return d.render(request, "datasets.html", page=page, q=q or "",
                        nav=pages(page.total, DATASETS_PAGE, offset))

    @router.get("/datasets/{dataset}", response_class=HTMLResponse)
    def facts(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        as_of = params.get("as_of", "").strip() or None
        offset = _int(params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, limit=PAGE, offset=offset, as_of=as_of, **kw)
        history = m.list_facts(dataset, limit=1, include_invalidated=True, **kw)
        first = history.facts[0].valid_at if history.facts else None
        return d.render(request, "facts.html", dataset=dataset, tab="facts", page=page,
                        groups=group_by_anchor(page.facts), as_of=as_of,
                        as_of_at=timeutil.to_utc(as_of, field="as_of") if as_of else None,
                        first_day=_day(first), today=_day(timeutil.now()),
                        nav=pages(page.total, PAGE, offset))

    @router.get("/datasets/{dataset}/history", response_class=HTMLResponse)
    def history(request: Request, dataset: str):
        p, m, kw = d.api(request)
        offset = _int(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, limit=PAGE, offset=offset, include_invalidated=True, **kw)
        shown = {f.fact_id: f for f in page.facts}
        # What replaced a fact may sit on another page: read those by id (the dataset is already allowed).
        wanted = [f.superseded_by for f in page.facts if f.superseded_by and f.superseded_by not in shown]
        scope = memory.services.scope(dataset, p.project, p.environment)
        known = shown | {f.fact_id: f for f in memory.store.get_facts(scope, wanted)}
        now = timeutil.now()
        entries = [(f, fact_state(f, now), known.get(f.superseded_by) if f.superseded_by else None)
                   for f in page.facts]
        return d.render(request, "history.html", dataset=dataset, tab="history", entries=entries,
                        on_page=set(shown), nav=pages(page.total, PAGE, offset))

    @router.post("/datasets/{dataset}/facts/{fact_id}/delete")
    async def delete_fact(request: Request, dataset: str, fact_id: str):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        m.delete_fact(dataset, fact_id, **kw)
        back = data.get("back") or f"/datasets/{quote(dataset)}"
        return RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/",
                                status_code=303)

    # -- entities --------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/entities", response_class=HTMLResponse)
    def entities(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = _int(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        every = m.list_entities(dataset, **kw)
        chosen = request.query_params.get("entity")
        facts = m.list_facts(dataset, entity=chosen, limit=PAGE, include_invalidated=True, **kw) if chosen else None
        return d.render(request, "entities.html", dataset=dataset, tab="entities",
                        entities=every[offset:offset + PAGE], chosen=chosen, facts=facts,
                        now=timeutil.now(), fact_state=fact_state, nav=pages(len(every), PAGE, offset))

    # -- notes -----------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/notes", response_class=HTMLResponse)
    def notes(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = _int(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        shown = m.notes.list(dataset, include_forgotten=True, limit=PAGE, offset=offset, **kw)
        more = len(m.notes.list(dataset, include_forgotten=True, limit=1, offset=offset + PAGE, **kw)) > 0
        return d.render(request, "notes.html", dataset=dataset, tab="notes", notes=shown, offset=offset,
                        prev=max(0, offset - PAGE) if offset else None, next=offset + PAGE if more else None)

    @router.post("/datasets/{dataset}/notes/{note_id}/forget")
    async def forget_note(request: Request, dataset: str, note_id: str):
        await d.form(request)
        _, m, kw = d.api(request, write=True)
        m.notes.forget(dataset, note_id, **kw)
        return RedirectResponse(f"/datasets/{quote(dataset)}/notes", status_code=303)

    # -- core files ------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/core", response_class=HTMLResponse)
    def core(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        namespace = params.get("namespace", "user") or "user"
        files = m.core.list(dataset, namespace, **kw)
        path = params.get("path")
        versions, diff, a, b = [], [], None, None
        if path:
            versions = m.core.history(dataset, path, namespace, **kw)
            numbers = [v.version for v in versions]
            if numbers:
                b = _int(params.get("b"), numbers[-1], min(numbers), max(numbers), "b")
                a = _int(params.get("a"), max(min(numbers), b - 1), min(numbers), max(numbers), "a")
                by = {v.version: v for v in versions}
                if a in by and b in by:
                    diff = diff_lines(by[a].content or "", by[b].content or "")
        return d.render(request, "core.html", dataset=dataset, tab="core", namespace=namespace, files=files,
                        path=path, versions=versions, diff=diff, a=a, b=b)

    # -- messages --------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/messages/{message_id}", response_class=HTMLResponse)
    def message(request: Request, dataset: str, message_id: str):
        _, m, kw = d.api(request)
        episode = m.messages.get(dataset, message_id, **kw)
        return d.render(request, "message.html", dataset=dataset, tab=None, message=episode)

    # -- recall playground -----------------------------------------------------------------
    @router.get("/datasets/{dataset}/recall", response_class=HTMLResponse)
    def recall(request: Request, dataset: str):
        _, m, kw = d.api(request)
        q = request.query_params.get("q", "").strip()
        limit = _int(request.query_params.get("limit"), 10, 1, 100, "limit")
        result = m.recall(q, dataset, limit=limit, **kw) if q else None
        return d.render(request, "recall.html", dataset=dataset, tab="recall", q=q, limit=limit, result=result)

    # -- jobs ------------------------------------------------------------------------------
    @router.get("/jobs", response_class=HTMLResponse)
    def jobs(request: Request):
        _, m, kw = d.api(request)
        params = request.query_params
        dataset = params.get("dataset", "").strip() or None
        status = params.get("status", "").strip() or None
        offset = _int(params.get("offset"), 0, 0, 10**9, "offset")
        shown = m.jobs(dataset, status, PAGE, offset, **kw)
        more = len(m.jobs(dataset, status, 1, offset + PAGE, **kw)) > 0
        return d.render(request, "jobs.html", tab="jobs", jobs=shown, dataset=dataset or "", status=status or "",
                        offset=offset, prev=max(0, offset - PAGE) if offset else None,
                        next=offset + PAGE if more else None)

    @router.post("/jobs/retry")
    async def retry(request: Request):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        dataset = data.get("dataset", "").strip() or None
        count = m.retry_failed(dataset, **kw)
        where = urlencode({k: v for k, v in (("dataset", dataset or ""), ("retried", str(count))) if v})
        return RedirectResponse(f"/jobs?{where}", status_code=303)

    # -- signing in ------------------------------------------------------------------------
    @router.get("/login", response_class=HTMLResponse)
    def login_page(request: Request):
        return d.render(request, "login.html", next=_local(request.query_params.get("next")))

    @router.post("/login")
    async def login(request: Request):
        raw = (await request.body()).decode("utf-8", "replace")
        data = {key: values[-1] for key, values in parse_qs(raw).items()}
        key = data.get("key", "").strip()
        try:
            auth.principal(f"Bearer {key}" if key else None)
        except Unauthorized as exc:
            return d.render(request, "login.html", http_status=401, next=_local(data.get("next")), message=str(exc))
        reply = RedirectResponse(_local(data.get("next")), status_code=303)
        reply.set_cookie(COOKIE, key, httponly=True, samesite="strict", secure=request.url.scheme == "https",
                         path="/")
        return reply

    @router.post("/logout")
    async def logout(request: Request):
        await d.form(request)
        reply = RedirectResponse("/login", status_code=303)
        reply.delete_cookie(COOKIE, path="/")
        return reply

    return router, StaticFiles(directory=str(HERE / "static")), d


def _local(target: str | None) -> str:
    """A redirect target on this site only (never ``//elsewhere`` or ``https://elsewhere``)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
