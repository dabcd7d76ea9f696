"""The queue of turns: what is open, what failed, retrying it."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...model import Job
from ..access import Api
from ..auth import Principal
from ..bodies import Count, RetryBody
from ..schema import JobStatus, limit_query, name_query, offset_query


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["jobs"])

    @router.get("/v1/jobs/open", response_model=Count, operation_id="jobs_count_open",
                summary="Count queued and running turns")
    def open_jobs(p: Principal = Depends(api.principal)):
        """Turns waiting for a worker or being distilled (a user token counts its own dataset's)."""
        api.memory_for(p)
        # a user token counts its own dataset's turns only (p.dataset is None for a key)
        return Count(count=api.memory.store.count_jobs(("queued", "distilling"), p.project, p.environment, p.dataset))

    @router.post("/v1/jobs/retry_failed", response_model=Count, operation_id="jobs_retry_failed",
                 summary="Queue failed turns again")
    def retry_failed(b: RetryBody, p: Principal = Depends(api.principal)):
        """Failed turns go back to the queue; the answer counts them."""
        m, kw = api.memory_for(p, write=True)   # a user token retries its own dataset's jobs only
        return Count(count=m.retry_failed(b.dataset, **kw))

    @router.get("/v1/jobs", response_model=list[Job], operation_id="jobs_list", summary="List queued turns")
    def jobs(dataset: str | None = name_query("one dataset's jobs"),
             status: JobStatus | None = Query(None, description="only jobs in this state"),
             limit: int = limit_query(50), offset: int = offset_query(), p: Principal = Depends(api.principal)):
        """Jobs newest first, with their attempts, error and result."""
        m, kw = api.memory_for(p)
        return m.jobs(dataset, status, limit, offset, **kw)

    return router
