"""The datasets (end users) of a project and environment; erasing one."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...erasure import by_table
from ...model import AddResult, DatasetPage
from ..access import Api
from ..auth import Principal
from ..bodies import RemineBody
from ..schema import dataset_path, limit_query, offset_query
from .erasure import by


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["datasets"])

    @router.delete("/v1/datasets/{dataset}", response_model=dict[str, int], operation_id="datasets_delete",
                   summary="Erase a dataset")
    def delete_dataset(dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Erase everything kept for one end user (facts, history, entities, messages, notes, core files,
        jobs) for good; the answer counts the rows removed per kind."""
        m, kw = api.memory_for(p, write=True)
        if p.kind == "user":   # refused there: erasing a whole dataset this way is the service's call
            return m.delete_dataset(dataset, **kw)
        return by_table(m.erase.dataset(dataset, by=by(p), **kw).removed)   # logged with who asked

    @router.post("/v1/datasets/{dataset}/remine", response_model=list[AddResult], operation_id="datasets_remine",
                 summary="Mine kept messages again")
    def remine(b: RemineBody, dataset: str = dataset_path(), p: Principal = Depends(api.service)):
        """Run the dataset's kept user messages through the write path again, in the order said (after an
        extraction failed, or with another extractor): by default those no fact cites; at most `limit` (100)
        per call, from `offset`. One receipt per message; what is already stored is deduplicated. The
        service's call: it spends the model."""
        m, kw = api.memory_for(p, write=True)
        return m.remine(dataset, b.message_ids, all_messages=b.all_messages, limit=b.limit, offset=b.offset, **kw)

    @router.get("/v1/datasets", response_model=DatasetPage, operation_id="datasets_list",
                summary="List datasets")
    def datasets(q: str | None = Query(None, max_length=128, description="datasets whose name contains this"),
                 limit: int = limit_query(50), offset: int = offset_query(), p: Principal = Depends(api.principal)):
        """The end users of the caller's project and environment, with counts and their last activity."""
        m, kw = api.memory_for(p)
        return m.datasets(q, limit, offset, **kw)

    return router
