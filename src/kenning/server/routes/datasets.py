"""The datasets (end users) of a project and environment; erasing one."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import DatasetPage
from ..access import Api
from ..auth import Principal


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.delete("/v1/datasets/{dataset}", response_model=dict[str, int])
    def delete_dataset(dataset: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.delete_dataset(dataset, **kw)

    @router.get("/v1/datasets", response_model=DatasetPage)
    def datasets(q: str | None = None, limit: int = 50, offset: int = 0, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.datasets(q, limit, offset, **kw)

    return router
