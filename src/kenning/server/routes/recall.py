"""Reading: hybrid recall with its context block."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import RecallResult
from ..access import Api
from ..auth import Principal
from ..bodies import RecallBody


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["recall"])

    @router.post("/v1/recall", response_model=RecallResult, operation_id="recall",
                 summary="Recall what is relevant to a query")
    def recall(b: RecallBody, p: Principal = Depends(api.principal)):
        """Hybrid search over the dataset's live facts, notes and earlier messages (vectors, keywords and
        the entities the query names), ranked, with `context`: a short block to put in the prompt.
        With `as_of`, the facts live then and only what had been said by then."""
        m, kw = api.memory_for(p)
        return m.recall(b.query, b.dataset, limit=b.limit, budget=b.budget, as_of=b.as_of, **kw)

    return router
