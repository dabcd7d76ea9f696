"""Maintenance for service keys: fill missing vectors, export, import."""
from __future__ import annotations

import io
import tempfile

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from ...errors import InputError, TextTooLarge
from ..access import Api
from ..auth import Principal
from ..bodies import Count
from ..errors import UnsupportedMediaType

IMPORT_TYPES = ("application/x-ndjson", "application/jsonl", "application/json")
SPOOL_BYTES = 8 << 20   # an import body stays in memory up to this size, then spills to a temporary file


def routes(api: Api) -> APIRouter:
    router = APIRouter()
    cap = api.memory.settings.max_import_bytes

    @router.post("/v1/embed_pending", response_model=Count)
    def embed_pending(p: Principal = Depends(api.service)):
        return Count(count=api.memory.embed_pending(project=p.project, environment=p.environment))

    @router.get("/v1/export")
    def export(dataset: str | None = None, include_vectors: bool = False, p: Principal = Depends(api.service)):
        lines = api.memory.export(dataset, include_vectors=include_vectors, project=p.project, environment=p.environment)
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @router.post("/v1/import")
    async def import_(request: Request, embed: bool = False, p: Principal = Depends(api.service)) -> dict:
        """Stream the body to a spooled file (bounded memory, at most ``max_import_bytes``), then import it
        off the event loop, into the key's own project and environment only."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in IMPORT_TYPES:   # a cross-site form or no-cors fetch can only send text/plain & co.
            raise UnsupportedMediaType(f"an import is JSON lines: send Content-Type: application/x-ndjson, "
                                       f"not {kind or 'none'!r}; nothing was imported")
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            seen = 0
            async for chunk in request.stream():
                seen += len(chunk)
                if seen > cap:
                    raise TextTooLarge(f"the import is over {cap:,} bytes (KENNING_MAX_IMPORT_BYTES); split the "
                                       "export by dataset; nothing was imported")
                spool.write(chunk)
            spool.seek(0)
            return await run_in_threadpool(_import, spool, embed, p)

    def _import(spool, embed: bool, p: Principal) -> dict:
        lines = io.TextIOWrapper(spool, encoding="utf-8", errors="strict", newline=None)
        try:
            return api.memory.import_(lines, embed=embed, project=p.project, environment=p.environment)
        except UnicodeDecodeError as exc:
            raise InputError(f"the export is not UTF-8 (byte {exc.start} of a chunk); nothing was imported") from None
        finally:
            lines.detach()

    return router
