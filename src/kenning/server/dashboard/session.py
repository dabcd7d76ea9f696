"""Signing in and out: a key or user token pasted once opens a server-side session.

The cookie holds a random session id, never the key; the store keeps the session by its hash, so
signing out (or revoking the key that signed in) ends it at once. The sign-in form carries a token
bound to a per-browser nonce cookie, so another site cannot sign a visitor into its own account
(login CSRF): it can make a browser post the form, but cannot read the nonce to make the token.
"""
from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ...errors import PermissionDenied
from ..errors import Unauthorized
from .render import COOKIE, Dashboard, local_target, same_origin

LOGIN_COOKIE = "kenning_login"


def routes(d: Dashboard, router: APIRouter) -> None:
    def login_form(request: Request, nonce: str, http_status: int = 200, **context) -> HTMLResponse:
        page = d.render(request, "login.html", http_status=http_status,
                        login_token=d.auth.form_token(f"login:{nonce}"), **context)
        page.set_cookie(LOGIN_COOKIE, nonce, max_age=3600, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/login")
        return page

    @router.get("/login", response_class=HTMLResponse)
    def login_page(request: Request):
        nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
        return login_form(request, nonce, next=local_target(request.query_params.get("next")))

    @router.post("/login")
    async def login(request: Request):
        same_origin(request, "sign in from this site's own sign-in page")
        raw = (await request.body()).decode("utf-8", "replace")
        data = {key: values[-1] for key, values in parse_qs(raw).items()}
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or not hmac.compare_digest(data.get("login_token", ""), d.auth.form_token(f"login:{nonce}")):
            raise PermissionDenied("the sign-in form is stale or came from elsewhere: reload the sign-in page",
                                   "form-token")
        key = data.get("key", "").strip()
        target = local_target(data.get("next"))
        try:
            if not key:
                raise Unauthorized("paste an API key or a user token")
            p = d.auth.credential(key)
            expires = d.auth.tokens.expires_at(key) if key.startswith("ut_") else None
        except Unauthorized as exc:
            return login_form(request, nonce, http_status=401, next=target, message=str(exc))
        reply = RedirectResponse(target, status_code=303)
        reply.set_cookie(COOKIE, d.auth.open_session(p, expires), httponly=True, samesite="strict",
                         secure=request.url.scheme == "https", path="/", max_age=int(d.auth.session_seconds))
        reply.delete_cookie(LOGIN_COOKIE, path="/login")
        return reply

    @router.post("/logout")
    async def logout(request: Request):
        await d.form(request)
        session = request.cookies.get(COOKIE)
        if session:
            d.auth.close_session(session)
        reply = RedirectResponse("/login", status_code=303)
        reply.delete_cookie(COOKIE, path="/")
        return reply
