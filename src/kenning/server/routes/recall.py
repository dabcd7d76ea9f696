"""Reading: hybrid recall with its context block."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import RecallResult
from ..access import Api
from ..auth import Principal
from ..bodies import RecallBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/recall", response_model=RecallResult)
    def recall(b: RecallBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.recall(b.query, b.dataset, limit=b.limit, budget=b.budget, as_of=b.as_of, **kw)

    return router
