"""Request bodies over a size limit are refused before they are read into memory.

Every JSON operation fits in a few hundred kilobytes (a text is at most 100,000 characters), so a larger
body is refused with 413 as soon as its ``Content-Length`` says so, or, for a chunked body, as soon as the
bytes received pass the limit. ``/v1/import`` streams JSONL of any length and is left alone.
"""
from __future__ import annotations

import json

from .errors import body

UNLIMITED = ("/v1/import",)


class BodyLimit:
    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in UNLIMITED:
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await self._refuse(send)
        seen, refused = 0, False

        async def counted():
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:   # answer now; the app sees the client gone and gives up
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message):
            if not refused:                 # after the 413 nothing the app sends goes out
                await send(message)

        await self.app(scope, counted, guarded)

    async def _refuse(self, send) -> None:
        payload = json.dumps(body("TOO_LARGE", f"the request body is over {self.max_bytes:,} bytes; send less "
                                               "per request (imports go to /v1/import)")).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})
