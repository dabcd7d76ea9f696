"""Maintenance for service keys: fill missing vectors, export, import."""
from __future__ import annotations

import io
import tempfile

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from ...errors import InputError, TextTooLarge
from ...transfer import HEADER_KIND, KINDS
from ..access import Api
from ..auth import Principal
from ..bodies import Count
from ..errors import UnsupportedMediaType
from ..schema import name_query

IMPORT_TYPES = ("application/x-ndjson", "application/jsonl", "application/json")
SPOOL_BYTES = 8 << 20   # an import body stays in memory up to this size, then spills to a temporary file
LINE = {"type": "object", "required": ["kind"], "additionalProperties": True,
        "properties": {"kind": {"type": "string", "enum": [HEADER_KIND, *KINDS]}},
        "description": f"One JSON object per line: first the `{HEADER_KIND}` header (version, embedding model, "
                       "whether vectors travel), then one record per row, each with its `kind`."}
# OpenAPI 3.1 describes a body as one value: JSON lines are a string; each line's schema rides along
# as the extension OpenAPI 3.2 names ``itemSchema`` (sequential media types).
NDJSON = {"application/x-ndjson": {"schema": {"type": "string", "format": "binary", "description": LINE["description"]},
                                   "x-itemSchema": LINE}}


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["maintenance"])
    cap = api.memory.settings.max_import_bytes

    @router.post("/v1/embed_pending", response_model=Count, operation_id="embed_pending",
                 summary="Embed rows that have no vector yet")
    def embed_pending(p: Principal = Depends(api.service)):
        """Rows stored while no embedder was configured (or imported without vectors) get theirs; the
        answer counts them. Service keys only."""
        return Count(count=api.memory.embed_pending(project=p.project, environment=p.environment))

    @router.get("/v1/export", operation_id="data_export", summary="Export as JSON lines",
                response_class=StreamingResponse,
                responses={200: {"description": "the export, streamed", "content": NDJSON}})
    def export(dataset: str | None = name_query("one dataset (default: every dataset of the environment)"),
               include_vectors: bool = Query(False, description="carry each row's vector (base64 float32), so "
                                             "an import into a store with the same model needs no embedding"),
               p: Principal = Depends(api.service)):
        """Every fact (with its history), entity, message, note, core file and document of the key's
        project and environment, as JSON lines. Service keys only."""
        lines = api.memory.export(dataset, include_vectors=include_vectors, project=p.project, environment=p.environment)
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @router.post("/v1/import", response_model=dict[str, int], operation_id="data_import", summary="Import JSON lines",
                 openapi_extra={"requestBody": {"required": True, "content": {
                     **NDJSON}}})
    async def import_(request: Request, embed: bool | None = Query(None, description="compute the vectors "
                                                                 "rows arrive without (default: when the server "
                                                                 "has an embedder; false: embed_pending later)"),
                      p: Principal = Depends(api.service)):
        """All or nothing: an export (as `GET /v1/export` writes it) restored into the key's project and
        environment; rows that exist already are skipped; the answer counts rows per kind. Service keys only.
        \f
        Stream the body to a spooled file (bounded memory, at most ``max_import_bytes``), then import it
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

    def _import(spool, embed: bool | None, p: Principal) -> dict:
        lines = io.TextIOWrapper(spool, encoding="utf-8", errors="strict", newline=None)
        try:
            return api.memory.import_(lines, embed=embed, project=p.project, environment=p.environment)
        except UnicodeDecodeError as exc:
            raise InputError(f"the export is not UTF-8 (byte {exc.start} of a chunk); nothing was imported") from None
        finally:
            lines.detach()

    return router
