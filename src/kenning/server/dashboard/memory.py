"""Pages of a dataset's other memory: notes, core files with their versions, a message, the recall playground."""
from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from .render import Dashboard, PAGE, diff_lines, int_param


HISTORY_PAGE = 50   # versions of a core file the page lists and diffs between


def routes(d: Dashboard, router: APIRouter) -> None:
    # -- notes -------------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/notes", response_class=HTMLResponse)
    def notes(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        shown = m.notes.list(dataset, include_forgotten=True, limit=PAGE, offset=offset, **kw)
        more = len(m.notes.list(dataset, include_forgotten=True, limit=1, offset=offset + PAGE, **kw)) > 0
        return d.render(request, "notes.html", dataset=dataset, tab="notes", notes=shown, offset=offset,
                        prev=max(0, offset - PAGE) if offset else None, next=offset + PAGE if more else None)

    @router.post("/datasets/{dataset}/notes/{note_id}/forget")
    async def forget_note(request: Request, dataset: str, note_id: str):
        await d.form(request)
        _, m, kw = d.api(request, write=True)
        m.notes.forget(dataset, note_id, **kw)
        return RedirectResponse(f"/datasets/{quote(dataset)}/notes", status_code=303)

    # -- core files --------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/core", response_class=HTMLResponse)
    def core(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        namespace = params.get("namespace", "user") or "user"
        files = m.core.list(dataset, namespace, **kw)
        path = params.get("path")
        versions, diff, a, b = [], [], None, None
        if path:
            # the newest versions, oldest first: a page stays small however often the file changed
            versions = m.core.history(dataset, path, namespace, HISTORY_PAGE, newest_first=True, **kw)[::-1]
            numbers = [v.version for v in versions]
            if numbers:
                b = int_param(params.get("b"), numbers[-1], min(numbers), max(numbers), "b")
                a = int_param(params.get("a"), max(min(numbers), b - 1), min(numbers), max(numbers), "a")
                by = {v.version: v for v in versions}
                if a in by and b in by:
                    diff = diff_lines(by[a].content or "", by[b].content or "")
        return d.render(request, "core.html", dataset=dataset, tab="core", namespace=namespace, files=files,
                        path=path, versions=versions, diff=diff, a=a, b=b)

    # -- messages ----------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/messages/{message_id}", response_class=HTMLResponse)
    def message(request: Request, dataset: str, message_id: str):
        _, m, kw = d.api(request)
        episode = m.messages.get(dataset, message_id, **kw)
        return d.render(request, "message.html", dataset=dataset, tab=None, message=episode)

    # -- recall playground -------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/recall", response_class=HTMLResponse)
    def recall(request: Request, dataset: str):
        _, m, kw = d.api(request)
        q = request.query_params.get("q", "").strip()
        limit = int_param(request.query_params.get("limit"), 10, 1, 100, "limit")
        result = m.recall(q, dataset, limit=limit, **kw) if q else None
        return d.render(request, "recall.html", dataset=dataset, tab="recall", q=q, limit=limit, result=result)
