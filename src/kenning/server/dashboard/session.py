"""Signing in with a key (kept in an HttpOnly cookie) and out."""
from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ..errors import Unauthorized
from .render import COOKIE, Dashboard, local_target


def routes(d: Dashboard, router: APIRouter) -> None:
    # -- signing in --------------------------------------------------------------------------------
    @router.get("/login", response_class=HTMLResponse)
    def login_page(request: Request):
        return d.render(request, "login.html", next=local_target(request.query_params.get("next")))

    @router.post("/login")
    async def login(request: Request):
        raw = (await request.body()).decode("utf-8", "replace")
        data = {key: values[-1] for key, values in parse_qs(raw).items()}
        key = data.get("key", "").strip()
        try:
            d.auth.principal(f"Bearer {key}" if key else None)
        except Unauthorized as exc:
            return d.render(request, "login.html", http_status=401, next=local_target(data.get("next")), message=str(exc))
        reply = RedirectResponse(local_target(data.get("next")), status_code=303)
        reply.set_cookie(COOKIE, key, httponly=True, samesite="strict", secure=request.url.scheme == "https",
                         path="/")
        return reply

    @router.post("/logout")
    async def logout(request: Request):
        await d.form(request)
        reply = RedirectResponse("/login", status_code=303)
        reply.delete_cookie(COOKIE, path="/")
        return reply
