"""What every response and every state-changing request goes through, before any route.

- **Framing and sniffing.** Every answer carries ``X-Frame-Options: DENY``,
  ``Content-Security-Policy: frame-ancestors 'none'`` and ``X-Content-Type-Options: nosniff``, so no
  other site can frame a page and click its buttons.
- **Cross-site writes.** A POST, PUT, PATCH or DELETE whose ``Origin`` names another site (or
  ``null``) is refused. Browsers always send Origin on such requests; API clients send none.
- **Development mode.** With no keys, the server answers only requests addressed to loopback
  (``Host`` 127.0.0.1, localhost or [::1], any port). A page on another name cannot then reach it
  through a DNS name that resolves to 127.0.0.1 (DNS rebinding).
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from .errors import body

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
HEADERS = [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"),
           (b"x-content-type-options", b"nosniff")]


def host_name(host: str) -> str:
    """The name part of a Host header ("[::1]:8420" → "::1", "localhost:80" → "localhost")."""
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    def __init__(self, app, auth):
        self.app, self.auth = app, auth

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

        async def guarded(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        return await self.app(scope, receive, guarded)


async def _refuse(send, status: int, code: str, message: str) -> None:
    payload = json.dumps(body(code, message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *HEADERS]})
    await send({"type": "http.response.body", "body": payload})
