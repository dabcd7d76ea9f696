"""Liveness: the version, without touching the store."""
from __future__ import annotations

from fastapi import APIRouter

from ... import __version__
from ..access import Api


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/health")
    def health() -> dict:
        return {"status": "ok", "version": __version__}

    return router
