"""Liveness: the version, without touching the store."""
from __future__ import annotations

from fastapi import APIRouter

from ... import __version__
from ..access import Api
from ..bodies import Health


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get("/v1/health", response_model=Health, operation_id="health", summary="Liveness",
                openapi_extra={"security": []})
    def health():
        """Answers without credentials and without touching the store."""
        return Health(status="ok", version=__version__)

    return router
