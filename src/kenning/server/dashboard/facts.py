"""Pages of a dataset's facts: the datasets list, live facts (as of a time), the history, entities."""
from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ... import timeutil
from .render import DATASETS_PAGE, Dashboard, PAGE, as_of_instant, day, fact_state, group_by_anchor, int_param, pages


def routes(d: Dashboard, router: APIRouter) -> None:
    # -- datasets ----------------------------------------------------------------------------------
    @router.get("/", response_class=HTMLResponse)
    def datasets(request: Request):
        _, m, kw = d.api(request)
        q = request.query_params.get("q", "").strip() or None
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.datasets(q, DATASETS_PAGE, offset, **kw)
        return d.render(request, "datasets.html", page=page, q=q or "",
                        nav=pages(page.total, DATASETS_PAGE, offset))

    @router.get("/datasets/{dataset}", response_class=HTMLResponse)
    def facts(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        as_of = params.get("as_of", "").strip() or None
        as_of_at = as_of_instant(as_of) if as_of else None   # a date: the end of that day
        offset = int_param(params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, limit=PAGE, offset=offset, as_of=as_of_at, **kw)
        history = m.list_facts(dataset, limit=1, include_invalidated=True, **kw)
        first = history.facts[0].valid_at if history.facts else None
        return d.render(request, "facts.html", dataset=dataset, tab="facts", page=page,
                        groups=group_by_anchor(page.facts), as_of=as_of, as_of_at=as_of_at,
                        first_day=day(first), today=day(timeutil.now()),
                        nav=pages(page.total, PAGE, offset))

    @router.get("/datasets/{dataset}/history", response_class=HTMLResponse)
    def history(request: Request, dataset: str):
        p, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, limit=PAGE, offset=offset, include_invalidated=True, **kw)
        shown = {f.fact_id: f for f in page.facts}
        # What replaced a fact may sit on another page: read those by id (the dataset is already allowed).
        wanted = [f.superseded_by for f in page.facts if f.superseded_by and f.superseded_by not in shown]
        scope = d.memory.services.scope(dataset, p.project, p.environment)
        known = shown | {f.fact_id: f for f in d.memory.store.get_facts(scope, wanted)}
        now = timeutil.now()
        entries = [(f, fact_state(f, now), known.get(f.superseded_by) if f.superseded_by else None)
                   for f in page.facts]
        return d.render(request, "history.html", dataset=dataset, tab="history", entries=entries,
                        on_page=set(shown), nav=pages(page.total, PAGE, offset))

    @router.post("/datasets/{dataset}/facts/{fact_id}/delete")
    async def delete_fact(request: Request, dataset: str, fact_id: str):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        m.delete_fact(dataset, fact_id, **kw)
        back = data.get("back") or f"/datasets/{quote(dataset)}"
        return RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/",
                                status_code=303)

    # -- entities ----------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/entities", response_class=HTMLResponse)
    def entities(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        every = m.list_entities(dataset, **kw)
        chosen = request.query_params.get("entity")
        facts = m.list_facts(dataset, entity=chosen, limit=PAGE, include_invalidated=True, **kw) if chosen else None
        return d.render(request, "entities.html", dataset=dataset, tab="entities",
                        entities=every[offset:offset + PAGE], chosen=chosen, facts=facts,
                        now=timeutil.now(), fact_state=fact_state, nav=pages(len(every), PAGE, offset))
