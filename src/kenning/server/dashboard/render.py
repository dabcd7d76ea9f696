"""What every dashboard page shares: who is asking, the form checks, rendering and the small formatters."""
from __future__ import annotations

import difflib
import hmac
import logging
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from ... import __version__, timeutil
from ...errors import InputError, KenningError, PermissionDenied
from ...memory import Memory
from ...model import Fact
from ..access import memory_for
from ..auth import Auth, Principal
from ..errors import Unauthorized, status_of
from ..schema import GET_QUERY_CHARS
from . import display

log = logging.getLogger("kenning.server")

HERE = Path(__file__).resolve().parents[1]   # kenning/server: templates/ and static/
COOKIE = "kenning_session"
PAGE = 100            # facts, notes, jobs per page (the library's largest page)
DATASETS_PAGE = 50
PREFIXES = ("/datasets", "/jobs", "/erasures", "/login", "/logout")
MAX_PARAM_CHARS = GET_QUERY_CHARS   # a query parameter's length at most: the API's limit on search words in a URL
INTERNAL = "internal error; the server log has the details"


def is_page(path: str) -> bool:
    """Whether a request path belongs to the dashboard (its errors are pages, not JSON)."""
    return path == "/" or path.startswith(PREFIXES)


API_PATHS = ("/v1/", "/memory/", "/openapi.json", "/docs", "/redoc", "/static/")


def wants_html(request: Request) -> bool:
    """A browser asking for a page outside the API (its Accept names HTML): its errors are pages too."""
    return (not request.url.path.startswith(API_PATHS)
            and "text/html" in request.headers.get("accept", "").lower())


def bounded_query(request: Request) -> None:
    """Every dashboard page's query parameters (and the parts of its path), checked before the page reads
    anything: none longer than the API takes for search words in a URL (GET_QUERY_CHARS). The value is
    never echoed back."""
    for name, value in request.query_params.multi_items():
        for what, text in (("the name of a query parameter", name), (f"query parameter {name[:40]!r}", value)):
            if len(text) > MAX_PARAM_CHARS:
                raise InputError(f"{what} is {len(text):,} characters; the dashboard takes at most "
                                 f"{MAX_PARAM_CHARS:,}: search with fewer words")
    for name, value in request.path_params.items():
        if isinstance(value, str) and len(value) > MAX_PARAM_CHARS:
            raise InputError(f"the {name} in the address is {len(value):,} characters; the dashboard takes at "
                             f"most {MAX_PARAM_CHARS:,}")


def int_param(value: str | None, default: int, lo: int, hi: int, name: str) -> int:
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"{name} must be a whole number, not {value!r}") from None
    if not lo <= number <= hi:
        raise InputError(f"{name} must be from {lo} to {hi}, not {number}")
    return number


def iso_day(value: datetime | None) -> str:
    """The day as a date field holds it (YYYY-MM-DD, UTC)."""
    return "" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d")


def as_of_instant(text: str) -> datetime:
    """The instant an as-of field means: a bare date (what the date picker sends) is the end of that day
    in UTC, so the facts stated during the day are live as of it; anything else is the time it names."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        start = timeutil.to_utc(text, field="as_of")
        return start + timedelta(days=1) - timedelta(microseconds=1)
    return timeutil.to_utc(text, field="as_of")


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
        env.filters.update(day=display.day, when=display.moment, iso=lambda t: t.isoformat() if t else "",
                           shown=display.shown, anchor=display.anchor_shown)
        env.globals.update(version=__version__, quote=quote, urlencode=urlencode)

    # -- who is asking ------------------------------------------------------------------------
    def credential(self, request: Request) -> str | None:
        header = request.headers.get("authorization")
        if header:
            return header.partition(" ")[2] or None
        return request.cookies.get(COOKIE)

    def principal(self, request: Request) -> Principal:
        """From an Authorization header, else the sign-in session, else development mode."""
        header = request.headers.get("authorization")
        cookie = request.cookies.get(COOKIE)
        environment = request.headers.get("x-kenning-environment")
        if header or not cookie:
            return self.auth.principal(header, environment)
        return self.auth.session(cookie, environment)

    def api(self, request: Request, write: bool = False):
        p = self.principal(request)
        m, kw = memory_for(self.memory, p, write)
        return p, m, kw

    def allowed(self, m, kw: dict, dataset: str) -> None:
        """Refuse (PermissionDenied, 403) unless this caller may read ``dataset``: asked of the permission
        gate through a read it guards, ``list_facts`` (the check GET /v1/datasets/{dataset}/facts makes), so
        the dashboard refuses exactly what the API refuses, before it has looked at anything."""
        m.list_facts(dataset, limit=1, **kw)

    def facts_by_id(self, p: Principal, m, kw: dict, dataset: str, ids: list[str]) -> list[Fact]:
        """Facts of ``dataset`` by id, once the gate allowed reading that dataset; read in the caller's own
        project and environment, so an id of another dataset is simply not found there (answered as an id
        that exists nowhere: no way to learn that it exists elsewhere)."""
        self.allowed(m, kw, dataset)
        if not ids:
            return []
        scope = self.memory.services.scope(dataset, p.project, p.environment)
        with self.memory.store.reading(scope):
            return self.memory.store.get_facts(scope, ids)

    async def form(self, request: Request) -> dict[str, str]:
        """A posted form, after the same-origin and form-token checks every change must pass."""
        return {key: values[-1] for key, values in (await self.form_lists(request)).items()}

    async def form_lists(self, request: Request) -> dict[str, list[str]]:
        """The same, every value of each field (ticked boxes send one each)."""
        same_origin(request, "a dashboard form must be sent from this site")
        raw = (await request.body()).decode("utf-8", "replace")
        data = parse_qs(raw, keep_blank_values=True)
        expected = self.auth.form_token(self.credential(request))
        if not hmac.compare_digest((data.get("form_token") or [""])[-1], expected):
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

    def page_error(self, request: Request, status: int, code: str, message: str, headers=None) -> Response:
        """An HTTP-level refusal (no such page, wrong method) as a page."""
        response = self.render(request, "error.html", http_status=status, code=code, message=message)
        for name, value in (headers or {}).items():
            response.headers[name] = value
        return response

    def error(self, request: Request, exc: KenningError) -> Response:
        """A refusal as a page. A server-side failure (5xx: the store, a setting, a model) says only that it
        happened, with its code: its message names files, addresses and causes, which go to the log."""
        if isinstance(exc, Unauthorized) and request.method == "GET":
            return RedirectResponse(f"/login?{urlencode({'next': str(request.url.path)})}", status_code=303)
        status = status_of(exc)
        if status >= 500:
            log.error("dashboard %s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
            return self.render(request, "error.html", http_status=status, code=exc.code, message=INTERNAL)
        return self.render(request, "error.html", http_status=status, code=exc.code,
                           message=self.redact(str(exc)))

    def redact(self, message: str) -> str:
        """A message without where the data lives (the store's file path or server address)."""
        where = getattr(self.memory.store, "location", None)
        return message.replace(where, "the database") if where and where != ":memory:" else message


def same_origin(request: Request, refusal: str) -> None:
    """Refuse a form posted from another site (its Origin, or failing that its Referer, names another host)."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin and urlsplit(origin).netloc != request.headers.get("host", ""):
        raise PermissionDenied(f"{refusal}, not from {urlsplit(origin).netloc!r}", "same-origin")


def local_target(target: str | None) -> str:
    """A redirect target on this site only (never ``//elsewhere`` or ``https://elsewhere``)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
