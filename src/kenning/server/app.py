"""The HTTP API: the library's operations as routes, a thin layer over ``Memory``.

``create_app`` assembles the app: error handlers, the body limit, one router per resource
(``server/routes``), the dashboard. Routes declare their caller with ``Api.principal`` or
``Api.service`` (kenning.server.access).

Each request resolves its principal (API key, user token, or development mode)
and calls the library through the same permission model as ``mem.as_user``;
errors map from the one exception tree to ``{"error": {"code", "message"}}``.
"""
from __future__ import annotations

import logging
import re

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from .. import __version__
from ..errors import InputError, KenningError, RateLimited
from ..memory import Memory
from .access import Api
from .auth import Auth
from .bodies import ErrorBody
from .dashboard import create_dashboard, is_page, wants_html
from .errors import body, status_of
from .guard import Guard
from .connections import InFlightLimit
from .limits import BodyLimit
from .openapi import install as install_openapi
from .rates import Rates
from .routes import routers
from .schema import PATTERN_WORDS

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


HTTP_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(app: FastAPI, scope) -> list[str]:
    """The methods some route serves at this path (a 405's ``Allow``): each method asked of every route,
    so routes inside included routers count too (FastAPI keeps those unflattened)."""
    return [method for method in HTTP_METHODS
            if any(route.matches({**scope, "method": method})[0] is Match.FULL for route in app.routes)]


SCOPE_FIELDS = frozenset({"dataset", "x-kenning-environment"})
TEXT_FIELDS = frozenset({"text", "content", "query", "q", "texts"})


def validation_code(error: dict) -> str:
    """The library's code for what the schema refused first, so a client sees the same code whether the
    schema or the library caught it (a bad dataset name: INVALID_SCOPE; a blank text: EMPTY_TEXT)."""
    loc = [str(p) for p in error.get("loc", ()) if not isinstance(p, int)]
    field = loc[-1].lower() if loc else ""
    if field in SCOPE_FIELDS:
        return "INVALID_SCOPE"
    if field in TEXT_FIELDS and error.get("type") in ("string_pattern_mismatch", "string_too_short"):
        return "EMPTY_TEXT"
    if field in ("at", "as_of") and error.get("type") in ("value_error", "datetime_parsing", "datetime_type"):
        return "INVALID_TIME"
    return "INVALID_INPUT"


BOUNDS = {"less_than_equal": "at most {le}", "greater_than_equal": "at least {ge}", "less_than": "below {lt}",
          "greater_than": "above {gt}", "string_too_long": "at most {max_length} characters"}


def validation_message(error: dict) -> str:
    """What the schema refused, in words a caller can act on: a bound names itself and what was sent
    (``query.limit: at most 100, got 200``); other refusals keep pydantic's wording."""
    where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    if kind == "missing" and tuple(error.get("loc", ())) == ("body",):
        return "body: this operation takes a JSON object (see its schema in /openapi.json)"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in PATTERN_WORDS:
        sent = error.get("input")
        shown = repr(sent if len(str(sent)) <= 60 else f"{str(sent)[:60]}…")
        return f"{where}: must be {PATTERN_WORDS[ctx['pattern']]}, got {shown}"
    bound = BOUNDS.get(kind)
    if bound is None:
        return f"{where}: {error.get('msg', 'invalid request')}"
    sent = error.get("input")
    got = f"{len(sent):,} characters" if isinstance(sent, str) and error["type"] == "string_too_long" else str(sent)
    hint = "; page through with offset" if where.endswith("limit") and error["type"] == "less_than_equal" else ""
    return f"{where}: {bound.format(**ctx)}, got {got}{hint}"


HTTP_CODES = {400: "INVALID_INPUT", 401: "UNAUTHORIZED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
              405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE"}


def create_app(memory: Memory, auth: Auth) -> FastAPI:
    app = FastAPI(title="kenning", version=__version__,
                  description="Long-term memory for AI assistants: facts with time, recall, notes, core files.",
                  responses={"4XX": {"model": ErrorBody, "description": "The request cannot be served; "
                                     "`error.code` says why"}},
                  dependencies=[Depends(unicode_body)], docs_url=None, redoc_url=None)

    router, static, dashboard = create_dashboard(memory, auth)

    @app.exception_handler(KenningError)
    async def kenning_error(request: Request, exc: KenningError):
        if is_page(request.url.path):
            return dashboard.error(request, exc)
        headers = {"Retry-After": str(int(exc.retry_after))} if isinstance(exc, RateLimited) else None
        status = status_of(exc)
        if status == 500:   # the server's own trouble (a store error names the database's file or address): logged
            log.error("%s on %s %s: %s", exc.code, request.method, request.url.path, exc)
            return JSONResponse(body(exc.code, "internal error; the server log has the details"), status_code=500)
        return JSONResponse(body(exc.code, str(exc)), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        return JSONResponse(body(validation_code(first), validation_message(first)), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        """Starlette's own refusals (unparseable body, unknown route, wrong method) in the one error shape."""
        code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        headers = exc.headers
        if exc.status_code == 405:   # Starlette names the first matching route's methods; list every route's
            headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(app, request.scope))}
        if is_page(request.url.path) or wants_html(request):   # a browser gets a page, never raw JSON
            message = (f"there is no page at {request.url.path}" if exc.status_code == 404
                       else f"{request.method} is not how {request.url.path} is used" if exc.status_code == 405
                       else str(exc.detail))
            return dashboard.page_error(request, exc.status_code, code, message, headers)
        return JSONResponse(body(code, str(exc.detail)), status_code=exc.status_code, headers=headers)

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        if is_page(request.url.path) or wants_html(request):
            return dashboard.page_error(request, 500, "INTERNAL", "internal error; the server log has the details")
        return JSONResponse(body("INTERNAL", "internal error; the server log has the details"), status_code=500)

    api = Api(memory, auth)
    for resource in routers(api):
        app.include_router(resource)
    install_openapi(app, memory.settings, auth)
    app.add_middleware(BodyLimit, max_bytes=memory.settings.max_body_bytes)
    app.add_middleware(InFlightLimit, max_requests=memory.settings.max_requests)
    app.add_middleware(Guard, auth=auth, rates=Rates(memory.settings), public_docs=memory.settings.public_docs)   # outermost: refusals and security headers before anything
    app.mount("/static", static, name="static")

    @app.get("/favicon.ico", include_in_schema=False)      # guard.ASSETS
    async def favicon():      # what browsers ask for on every page load, whatever the page names
        return RedirectResponse("/static/favicon.svg", status_code=301)

    app.include_router(router)
    return app
