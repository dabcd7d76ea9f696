"""The queue of turns: what is open, what failed, retrying it."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import Job
from ..access import Api
from ..auth import Principal
from ..bodies import Count, RetryBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/jobs/open", response_model=Count)
    def open_jobs(p: Principal = Depends(api.principal)):
        api.memory_for(p)
        # a user token counts its own dataset's turns only (p.dataset is None for a key)
        return Count(count=api.memory.store.count_jobs(("queued", "distilling"), p.project, p.environment, p.dataset))

    @router.post("/v1/jobs/retry_failed", response_model=Count)
    def retry_failed(b: RetryBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)   # a user token retries its own dataset's jobs only
        return Count(count=m.retry_failed(b.dataset, **kw))

    @router.get("/v1/jobs", response_model=list[Job])
    def jobs(dataset: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0,
             p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.jobs(dataset, status, limit, offset, **kw)

    return router
