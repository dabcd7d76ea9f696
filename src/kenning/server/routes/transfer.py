"""Maintenance for service keys: fill missing vectors, export, import."""
from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from ...errors import InputError, PermissionDenied
from ..access import Api
from ..auth import Principal
from ..bodies import Count
from ..errors import UnsupportedMediaType

IMPORT_TYPES = ("application/x-ndjson", "application/jsonl", "application/json")


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/embed_pending", response_model=Count)
    def embed_pending(p: Principal = Depends(api.service)):
        return Count(count=api.memory.embed_pending(project=p.project, environment=p.environment))

    @router.get("/v1/export")
    def export(dataset: str | None = None, include_vectors: bool = False, p: Principal = Depends(api.service)):
        lines = api.memory.export(dataset, include_vectors=include_vectors, project=p.project, environment=p.environment)
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @router.post("/v1/import")
    async def import_(request: Request, embed: bool = False, p: Principal = Depends(api.service)) -> dict:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in IMPORT_TYPES:   # a cross-site form or no-cors fetch can only send text/plain & co.
            raise UnsupportedMediaType(f"an import is JSON lines: send Content-Type: application/x-ndjson, "
                                       f"not {kind or 'none'!r}; nothing was imported")
        try:
            lines = (await request.body()).decode("utf-8", errors="strict").splitlines()
        except UnicodeDecodeError as exc:
            raise InputError(f"the export is not UTF-8 (byte {exc.start}); nothing was imported") from None
        for number, line in enumerate(lines, 1):  # a key imports into its own project and environment only
            try:
                record = json.loads(line) if line.strip() else {}
            except ValueError:
                raise InputError(f"line {number} is not JSON; nothing was imported") from None
            if not isinstance(record, dict):
                continue
            if record.get("project", p.project) != p.project or record.get("environment", p.environment) != p.environment:
                raise PermissionDenied(f"line {number} belongs to another project or environment; nothing was "
                                       "imported", "ai.admin")
        return api.memory.import_(lines, embed=embed)

    return router
