"""The queue of turns: jobs with their errors, and retrying the failed ones."""
from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from .render import Dashboard, PAGE, int_param


def routes(d: Dashboard, router: APIRouter) -> None:
    # -- jobs --------------------------------------------------------------------------------------
    @router.get("/jobs", response_class=HTMLResponse)
    def jobs(request: Request):
        _, m, kw = d.api(request)
        params = request.query_params
        dataset = params.get("dataset", "").strip() or None
        status = params.get("status", "").strip() or None
        offset = int_param(params.get("offset"), 0, 0, 10**9, "offset")
        shown = m.jobs(dataset, status, PAGE, offset, **kw)
        more = len(m.jobs(dataset, status, 1, offset + PAGE, **kw)) > 0
        return d.render(request, "jobs.html", tab="jobs", jobs=shown, dataset=dataset or "", status=status or "",
                        offset=offset, prev=max(0, offset - PAGE) if offset else None,
                        next=offset + PAGE if more else None)

    @router.post("/jobs/retry")
    async def retry(request: Request):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        dataset = data.get("dataset", "").strip() or None
        count = m.retry_failed(dataset, **kw)
        where = urlencode({k: v for k, v in (("dataset", dataset or ""), ("retried", str(count))) if v})
        return RedirectResponse(f"/jobs?{where}", status_code=303)
