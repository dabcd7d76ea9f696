"""The OpenAPI document as a contract a generator can trust, and the pages that show it offline.

FastAPI builds the document from the routes; this adds what it cannot know: the bearer scheme (an
API key or a user token; optional while the server is in development mode), the limits an operator
configured (``x-kenning-limit`` markers become ``maxLength``), and a description per tag.

``/docs`` (Swagger UI) and ``/redoc`` load their scripts and styles from this server: the assets
come inside the ``fastapi-offline`` package, so nothing is fetched from a CDN at run time.
"""
from __future__ import annotations

import copy
from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles

from ..config import Settings
from .auth import Auth

ASSETS = "/docs-assets"
TAGS = [
    {"name": "memory", "description": "Hand kenning what a person says: `add` extracts facts now, `add_turn` "
                                      "queues the turn for a worker."},
    {"name": "recall", "description": "Ranked, hybrid recall with a context block for the prompt."},
    {"name": "facts", "description": "The facts kept about a person: live, as of a time, or the whole history."},
    {"name": "entities", "description": "The people, places and things a person's facts name."},
    {"name": "messages", "description": "Earlier chat messages, kept searchable."},
    {"name": "notes", "description": "Archival notes: free text saved on purpose."},
    {"name": "core files", "description": "The assistant's core memory files, edited with the commands of "
                                          "Anthropic's memory tool; every version kept."},
    {"name": "documents", "description": "Versioned documents for agent runtimes, under an opaque scope key."},
    {"name": "datasets", "description": "The end users (datasets) of a project and environment."},
    {"name": "erasure", "description": "Erase for good, with a receipt and a log entry: a fact with the words it "
                                       "came from, a message with what it taught, everything holding a text, "
                                       "or a whole dataset (docs/erasure.md)."},
    {"name": "jobs", "description": "The queue of turns sent with `add_turn`."},
    {"name": "maintenance", "description": "Export, import and embedding (service keys only)."},
    {"name": "access", "description": "User tokens and API keys (service keys only)."},
    {"name": "health", "description": "Liveness."},
]
BEARER = {"type": "http", "scheme": "bearer",
          "description": "An API key (`kn_…`, from `kenning keys create`) or a user token (`ut_…`, from "
                         "`POST /v1/tokens`). A server without keys on loopback (development mode) needs none."}


def _fill_limits(node, settings: Settings) -> None:
    """``x-kenning-limit: max_text_chars`` → ``maxLength: <the server's value>`` (and ``maxItems``)."""
    if isinstance(node, dict):
        for marker, key in (("x-kenning-limit", "maxLength"), ("x-kenning-items", "maxItems")):
            if marker in node:
                node[key] = getattr(settings, node.pop(marker))
        for value in node.values():
            _fill_limits(value, settings)
    elif isinstance(node, list):
        for value in node:
            _fill_limits(value, settings)


def install(app: FastAPI, settings: Settings, auth: Auth) -> None:
    """Replace ``app.openapi`` and serve the documentation pages from local assets."""
    built: dict = {}

    def document() -> dict:
        if not built:
            doc = get_openapi(title=app.title, version=app.version, description=app.description,
                              routes=app.routes, tags=TAGS)
            _fill_limits(doc, settings)
            doc.setdefault("components", {})["securitySchemes"] = {"bearer": BEARER}
            built.update(doc)
        doc = copy.copy(built)
        # development mode: a credential is accepted, none required ({} is "no security")
        doc["security"] = [{"bearer": []}, {}] if auth.dev_mode else [{"bearer": []}]
        return doc

    app.openapi = document  # type: ignore[method-assign]
    app.mount(ASSETS, StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def swagger():
        return get_swagger_ui_html(openapi_url="/openapi.json", title="kenning API",
                                   swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS}/favicon.png",
                                   oauth2_redirect_url="/docs/oauth2-redirect",
                                   swagger_ui_parameters={"persistAuthorization": False})

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_redirect():
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc():
        return get_redoc_html(openapi_url="/openapi.json", title="kenning API", with_google_fonts=False,
                              redoc_js_url=f"{ASSETS}/redoc.standalone.js", redoc_favicon_url=f"{ASSETS}/favicon.png")
