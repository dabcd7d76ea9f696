"""A dataset's facts (live, as of a time, or the history) and its entities."""
from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends

from ...model import Entity, FactPage
from ..access import Api
from ..auth import Principal


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/datasets/{dataset}/facts", response_model=FactPage)
    def facts(dataset: str, q: str | None = None, limit: int = 50, offset: int = 0,
              include_invalidated: bool = False, as_of: datetime | None = None, entity: str | None = None,
              p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.list_facts(dataset, q=q, limit=limit, offset=offset, include_invalidated=include_invalidated,
                            as_of=as_of, entity=entity, **kw)

    @router.delete("/v1/datasets/{dataset}/facts/{fact_id}", status_code=204)
    def delete_fact(dataset: str, fact_id: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        m.delete_fact(dataset, fact_id, **kw)

    @router.get("/v1/datasets/{dataset}/entities", response_model=list[Entity])
    def entities(dataset: str, type: str | None = None, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.list_entities(dataset, type=type, **kw)

    return router
