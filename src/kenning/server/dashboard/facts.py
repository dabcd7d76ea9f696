"""Pages of a dataset's facts: the datasets list, the facts table (live, history or as of a time), one
fact with its slot's history, the history list, deleting with a confirmation, the time line."""
from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ... import timeutil
from ...errors import InputError, NotFound
from ...model import ENTITY_TYPES, FACT_KINDS
from .display import every_fact, shown
from .render import DATASETS_PAGE, Dashboard, PAGE, as_of_instant, int_param, iso_day, local_target, pages
from .timeline import build_timeline

VIEWS = ("live", "history")
SORTS = {"time": "Time", "anchor": "About", "slot": "Slot"}
LISTED_KINDS = FACT_KINDS[:8]          # the current kinds; the older names still filter when asked by URL


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

    # -- the facts table ---------------------------------------------------------------------------
    @router.get("/datasets/{dataset}", response_class=HTMLResponse)
    def facts(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        as_of = params.get("as_of", "").strip() or None
        as_of_at = as_of_instant(as_of) if as_of else None   # a date: the end of that day
        view = "as_of" if as_of_at else choice(params.get("view"), VIEWS, "view")
        sort = choice(params.get("sort"), tuple(SORTS), "sort")
        q = params.get("q", "").strip() or None
        kind = params.get("kind", "").strip() or None
        entity_type = params.get("type", "").strip().upper() or None
        offset = int_param(params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, q=q, limit=PAGE, offset=offset, as_of=as_of_at,
                            include_invalidated=view == "history", kind=kind, entity_type=entity_type,
                            order=sort, **kw)
        first = m.list_facts(dataset, limit=1, include_invalidated=True, **kw).facts
        now = timeutil.now()
        keep = {k: v for k, v in (("view", view if view == "history" else None), ("as_of", as_of), ("q", q),
                                  ("kind", kind), ("type", entity_type), ("sort", sort if sort != "time" else None))
                if v}
        return d.render(request, "facts.html", dataset=dataset, tab="facts", page=page,
                        rows=[(f, f.state_at(now)) for f in page.facts], view=view, sort=sort, sorts=SORTS,
                        q=q or "", kind=kind or "", entity_type=entity_type or "", kinds=LISTED_KINDS,
                        types=ENTITY_TYPES, as_of=as_of, as_of_at=as_of_at, keep=keep,
                        confidences=len({round(f.confidence, 2) for f in page.facts}) > 1,
                        first_day=iso_day(min((f.valid_at for f in first if f.start_known), default=now)) if first else None, today=iso_day(now),
                        nav=pages(page.total, PAGE, offset))

    @router.get("/datasets/{dataset}/facts/{fact_id}", response_class=HTMLResponse)
    def fact(request: Request, dataset: str, fact_id: str):
        p, m, kw = d.api(request)
        found = d.facts_by_id(p, m, kw, dataset, [fact_id])   # the gate first: 403 for a dataset not this caller's
        if not found:        # not in this dataset, whether it exists elsewhere or nowhere: the same answer
            raise NotFound(f"no fact {fact_id!r} in dataset {dataset!r}")
        f = found[0]
        # the slot's story: every fact with this predicate, in time order (Berlin, then Lisbon)
        story = [g for g in every_fact(m, dataset, kw)[0] if g.predicate == f.predicate]
        message = None
        if f.episode_id:
            try:
                message = m.messages.get(dataset, f.episode_id, **kw)
            except NotFound:
                pass      # a fact whose message was kept nowhere (a temporary chat)
        now = timeutil.now()
        successor = next((g for g in story if g.fact_id == f.superseded_by), None)
        return d.render(request, "fact.html", dataset=dataset, tab="facts", fact=f, state=f.state_at(now),
                        story=[(g, g.state_at(now)) for g in story], message=message, successor=successor)

    # -- deleting, one or many, always confirmed ---------------------------------------------------
    @router.post("/datasets/{dataset}/facts/delete", response_class=HTMLResponse)
    async def delete_facts(request: Request, dataset: str):
        data = await d.form_lists(request)
        p, m, kw = d.api(request, write=True)
        ids = list(dict.fromkeys(i for i in data.get("fact_id", []) if i))
        back = local_target(_last(data, "back") or f"/datasets/{quote(dataset, safe='')}")
        if not ids:
            raise InputError("choose at least one fact to delete")
        if len(ids) > PAGE:
            raise InputError(f"at most {PAGE} facts at once, not {len(ids)}")
        if _last(data, "confirmed") != "yes":
            chosen = d.facts_by_id(p, m, kw, dataset, ids)     # read through the gate, like the API
            return d.render(request, "confirm_delete.html", dataset=dataset, tab="facts", facts=chosen, back=back)
        for fact_id in ids:
            m.delete_fact(dataset, fact_id, **kw)
        sep = "&" if "?" in back else "?"
        return RedirectResponse(f"{back}{sep}{urlencode({'deleted': len(ids)})}", status_code=303)

    @router.post("/datasets/{dataset}/facts/{fact_id}/delete")
    async def delete_fact(request: Request, dataset: str, fact_id: str):
        """The first dashboard's one-button delete, kept for links and scripts: confirmed like the rest."""
        data = await d.form_lists(request)
        p, m, kw = d.api(request, write=True)
        back = local_target(_last(data, "back") or f"/datasets/{quote(dataset, safe='')}")
        if _last(data, "confirmed") != "yes":
            chosen = d.facts_by_id(p, m, kw, dataset, [fact_id])
            return d.render(request, "confirm_delete.html", dataset=dataset, tab="facts", facts=chosen, back=back)
        m.delete_fact(dataset, fact_id, **kw)
        return RedirectResponse(back, status_code=303)

    # -- the history list --------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/history", response_class=HTMLResponse)
    def history(request: Request, dataset: str):
        p, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.list_facts(dataset, limit=PAGE, offset=offset, include_invalidated=True, **kw)
        shown_here = {f.fact_id: f for f in page.facts}
        # What replaced a fact may sit on another page: read those by id, through the gate like every read.
        wanted = [f.superseded_by for f in page.facts if f.superseded_by and f.superseded_by not in shown_here]
        known = shown_here | {f.fact_id: f for f in d.facts_by_id(p, m, kw, dataset, wanted)}
        now = timeutil.now()
        entries = [(f, f.state_at(now), known.get(f.superseded_by) if f.superseded_by else None)
                   for f in page.facts]
        return d.render(request, "history.html", dataset=dataset, tab="history", entries=entries,
                        on_page=set(shown_here), nav=pages(page.total, PAGE, offset))

    # -- the time line -----------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/timeline", response_class=HTMLResponse)
    def timeline(request: Request, dataset: str):
        _, m, kw = d.api(request)
        as_of = request.query_params.get("as_of", "").strip() or None
        cursor = as_of_instant(as_of) if as_of else None
        facts, total = every_fact(m, dataset, kw)
        now = timeutil.now()
        base = f"/datasets/{quote(dataset, safe='')}/facts/"
        drawn = build_timeline(facts, now=now, cursor=cursor, href=lambda f: base + quote(f.fact_id, safe=""),
                               label=shown)
        return d.render(request, "timeline.html", dataset=dataset, tab="timeline", timeline=drawn, total=total,
                        shown_count=len(facts), as_of=as_of, cursor=cursor or now,
                        first_day=iso_day(min((f.valid_at for f in facts if f.start_known), default=now)) if facts else None, today=iso_day(now))


def choice(value: str | None, allowed: tuple[str, ...], name: str) -> str:
    """A query parameter that names one of a few options (the first is the default)."""
    if value in (None, ""):
        return allowed[0]
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _last(data: dict[str, list[str]], key: str) -> str | None:
    values = data.get(key)
    return values[-1] if values else None

