"""The people, places and things in a person's life: the entity graph (server-drawn SVG) and the same
entities as a list, each with its facts, when they first became true and what it is also called."""
from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ... import timeutil
from .display import every_fact, original_case
from .graph import build_graph
from .render import Dashboard


def routes(d: Dashboard, router: APIRouter) -> None:
    @router.get("/datasets/{dataset}/entities", response_class=HTMLResponse)
    def entities(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        history = params.get("view") == "history"
        chosen = params.get("entity", "").strip() or None
        every = m.list_entities(dataset, **kw)
        facts, total = every_fact(m, dataset, kw, include_invalidated=True)
        now = timeutil.now()
        drawn = [f for f in facts if history or f.state_at(now) in ("live", "future")]
        named: dict[tuple[str, str | None], list] = {}
        for f in facts:
            if f.object_is_entity:
                named.setdefault((f.object, f.entity_type), []).append(f)
        selected = next((e for e in every if chosen in (e.entity_id, e.name)), None)
        base = f"/datasets/{quote(dataset, safe='')}/entities?"
        keep = {"view": "history"} if history else {}

        def spelled(name: str, type_: str | None) -> str:
            return next((original_case(name, f.source_quote) for f in named.get((name, type_), [])
                         if original_case(name, f.source_quote) != name), name)

        graph = build_graph(every, drawn, selected=selected.entity_id if selected else None, list_href="#entities",
                            at=now,
                            href=lambda n: base + urlencode({**keep, "entity": n.key}) + "#entity-facts"
                            if n.key != "user" else base + urlencode(keep),
                            label=lambda n: n.name if n.key == "user" else spelled(n.name, n.type))
        rows = []
        for e in every:
            its = named.get((e.name, e.type), [])
            rows.append({"entity": e, "name": spelled(e.name, e.type), "facts": len(its),
                         "live": sum(f.state_at(now) == "live" for f in its),
                         "since": min((f.valid_at for f in its), default=None)})
        rows.sort(key=lambda r: (r["entity"].type, -r["live"], r["entity"].name))
        chosen_facts = ([(f, f.state_at(now)) for f in named.get((selected.name, selected.type), [])]
                        if selected else None)
        return d.render(request, "entities.html", dataset=dataset, tab="entities", graph=graph, rows=rows,
                        selected=selected, selected_name=spelled(selected.name, selected.type) if selected else None,
                        chosen_facts=chosen_facts, history=history, keep=keep, total=total, read=len(facts))
