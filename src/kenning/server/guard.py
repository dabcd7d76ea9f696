"""What every response and every state-changing request goes through, before any route.

- **Framing and sniffing.** Every answer carries ``X-Frame-Options: DENY``,
  ``Content-Security-Policy: frame-ancestors 'none'`` and ``X-Content-Type-Options: nosniff``, so no
  other site can frame a page and click its buttons.
- **Cross-site writes.** A POST, PUT, PATCH or DELETE whose ``Origin`` names another site (or
  ``null``) is refused. Browsers always send Origin on such requests; API clients send none.
- **Development mode.** With no keys, the server answers only requests addressed to loopback
  (``Host`` 127.0.0.1, localhost or [::1], any port). A page on another name cannot then reach it
  through a DNS name that resolves to 127.0.0.1 (DNS rebinding).
- **Authentication first.** Every API route (``/v1`` and the unversioned ``/memory/add``) but the health check, and (unless
  ``KENNING_PUBLIC_DOCS``) ``/docs`` and ``/openapi.json``, resolve the caller here, before any
  body is read or validated: an unauthenticated request gets 401, never a 422 that tells it about the
  route. Routes reuse the principal found here.
- **Rates.** Each resolved caller is counted (kenning.server.rates); past its rate it gets 429 with
  ``Retry-After``, before any work is done.
- **Path segments.** A ``/v1`` path with a ``.`` or ``..`` segment (encoded or not) is refused (400): an
  id of ``..`` never reaches a route as a guess.
- **HEAD.** Any GET route answers HEAD: the same status and headers, no body.
- **Content policy.** Dashboard pages (and any HTML answer, an error page included) may load scripts, styles and images from this origin only, post
  forms only here, and embed nothing; the API documentation pages load from this origin only (and
  their own inline start-up code); API answers may load nothing at all.
"""
from __future__ import annotations

import json
from http.cookies import SimpleCookie
from urllib.parse import unquote, urlsplit

from .dashboard.render import COOKIE, is_page
from .errors import Unauthorized, body

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
HEADERS = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"same-origin")]
PAGE_POLICY = (b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
               b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
API_POLICY = b"default-src 'none'; frame-ancestors 'none'"
# Swagger UI and ReDoc: their inline start-up script and styles, everything else from this server only
# (ReDoc's footer logo points at its CDN: refused here, so nothing is fetched; the logo hides itself).
DOCS_POLICY = (b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               b"img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; font-src 'self' data:; "
               b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
PUBLIC = frozenset({"/v1/health"})
API = ("/v1/", "/memory/")   # the API's routes, versioned and the unversioned alias: each one authenticated and counted
DOCS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
ASSETS = frozenset({"/favicon.ico"})    # redirects to a static file: no data behind them, no key asked


def host_name(host: str) -> str:
    """The name part of a Host header ("[::1]:8420" → "::1", "localhost:80" → "localhost")."""
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def plain_segments(raw_path: bytes) -> bool:
    """Whether no segment of a request's path is "." or ".." (also when percent-encoded). Clients that
    resolve dot segments would have sent another route; one that sends them as they are gets a refusal,
    never a guess."""
    return not any(unquote(segment.decode("latin-1")) in (".", "..")
                   for segment in raw_path.split(b"?", 1)[0].split(b"/"))


def policy(path: str, content_type: bytes = b"") -> bytes:
    """The content policy of an answer: by its path, and a page's for any HTML answer (a 404 page for an
    unknown path loads the dashboard's stylesheet too)."""
    if path in DOCS:
        return DOCS_POLICY
    html = content_type.split(b";")[0].strip().lower() == b"text/html"
    return PAGE_POLICY if html or is_page(path) or path.startswith("/static/") else API_POLICY


class Guard:
    def __init__(self, app, auth, rates=None, public_docs: bool = False):
        self.app, self.auth, self.rates, self.public_docs = app, auth, rates, public_docs

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
        host = headers.get(b"host", "")
        if self.auth.dev_mode and host_name(host).lower() not in LOOPBACK:
            return await _refuse(send, 421, "HOST_NOT_ALLOWED",
                                 f"development mode (no API keys) answers only 127.0.0.1, localhost and [::1], "
                                 f"not Host {host!r}; create a key to serve other names")
        origin = headers.get(b"origin")
        if scope["method"] in WRITES and origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            return await _refuse(send, 403, "CROSS_ORIGIN",
                                 f"a {scope['method']} from another site ({origin!r}) is refused; call the API "
                                 "from a server, or from a page this server serves")

        path = scope["path"]
        if path.startswith(API) and not plain_segments(scope.get("raw_path") or path.encode()):
            return await _refuse(send, 400, "INVALID_INPUT",
                                 "a path segment is '.' or '..': no id or name is, and it would name another route")
        if (path.startswith(API) and path not in PUBLIC) or (path in DOCS and not self.public_docs):
            try:
                principal = self._principal(headers, scope)
            except Unauthorized as exc:
                return await _refuse(send, 401, exc.code, str(exc))
            wait = await self.rates.wait(principal) if self.rates is not None and path not in DOCS else 0
            if wait:
                return await _refuse(send, 429, "RATE_LIMITED", f"too many requests for this tenant; retry in "
                                     f"{wait:g} s (KENNING_RATE_LIMIT_USER / KENNING_RATE_LIMIT_KEY)", wait)
            scope.setdefault("state", {})["principal"] = principal
        head = scope["method"] == "HEAD"     # answered as the GET would be, without its body
        if head:
            scope = {**scope, "method": "GET"}

        async def guarded(message):
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                message["headers"] = [*headers, *HEADERS, (b"content-security-policy", policy(path, kind))]
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        return await self.app(scope, receive, guarded)

    def _principal(self, headers: dict, scope):
        """The caller: the Authorization header, else (for the docs, which a browser opens) the dashboard
        session, else development mode."""
        authorization, environment = headers.get(b"authorization"), headers.get(b"x-kenning-environment")
        if authorization is None and scope["path"] in DOCS:
            jar = SimpleCookie(headers.get(b"cookie", ""))
            if COOKIE in jar:
                return self.auth.session(jar[COOKIE].value, environment)
        return self.auth.principal(authorization, environment)


async def _refuse(send, status: int, code: str, message: str, retry_after: float | None = None) -> None:
    payload = json.dumps(body(code, message)).encode()
    extra = [(b"www-authenticate", b'Bearer realm="kenning"')] if status == 401 else []
    if retry_after is not None:
        extra.append((b"retry-after", str(int(retry_after)).encode()))
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *extra, *HEADERS, (b"content-security-policy", API_POLICY)]})
    await send({"type": "http.response.body", "body": payload})
