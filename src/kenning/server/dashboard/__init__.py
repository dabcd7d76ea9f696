"""The dashboard: see and curate what kenning knows about each user, in a browser.

Server-rendered pages (Jinja2) over the same library calls and the same permission gate
(:func:`~kenning.server.access.memory_for`) as the HTTP API: a user token sees its own
dataset only, a member key may read but not change. Every page reads without JavaScript;
the bundled htmx (no CDN, nothing fetched at run time) only makes the ``as of`` control and
the recall playground update in place. The browser authenticates like any client: an
``Authorization`` header, or a key pasted once on ``/login`` and kept in an HttpOnly,
SameSite=Strict cookie; in local development mode no key is needed. Forms that change
something carry a token bound to the caller's credential and must come from this origin. Erasing for
good (a fact, a message, everything holding a text, a whole dataset) is apart from deleting: it shows
the library's dry run first and goes only once confirmed on that page (``dashboard/erasure.py``).

Every read asks the gate first (a fact read by id too: ``Dashboard.facts_by_id``), so a page refuses
exactly what the API refuses and an id from elsewhere reads as one that exists nowhere. Every query
parameter is capped at the API's limit for search words in a URL (``bounded_query``), and an error page
never names a file, an address or a traceback: a server-side failure says only that it happened.
"""
from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.staticfiles import StaticFiles

from ...memory import Memory
from ..auth import Auth
from . import conversations, entities, erasure, facts, jobs, memory, session
from .render import HERE, Dashboard, bounded_query, is_page, wants_html

__all__ = ["create_dashboard", "is_page", "wants_html"]


def create_dashboard(memory_: Memory, auth: Auth) -> tuple[APIRouter, StaticFiles, Dashboard]:
    """The dashboard's routes (one module per page group), its static files (mount at ``/static``)
    and its renderer."""
    d = Dashboard(memory_, auth)
    router = APIRouter(include_in_schema=False, dependencies=[Depends(bounded_query)])   # every page's query capped
    for pages in (facts, conversations, entities, memory, erasure, jobs, session):
        pages.routes(d, router)
    return router, StaticFiles(directory=str(HERE / "static")), d
