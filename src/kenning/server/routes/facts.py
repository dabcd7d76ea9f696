"""A dataset's facts (live, as of a time, or the history) and its entities."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query

from ...model import ENTITY_TYPES, FACT_KINDS, Entity, FactPage
from ..access import Api
from ..auth import Principal
from ..schema import id_path, Instant, dataset_path, ident_query, limit_query, offset_query


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/datasets/{dataset}/facts", response_model=FactPage, operation_id="facts_list", tags=["facts"],
                summary="List a dataset's facts")
    def facts(dataset: str = dataset_path(),
              q: str | None = Query(None, max_length=1000, description="words the fact's text must contain"),
              limit: int = limit_query(50), offset: int = offset_query(),
              include_invalidated: bool = Query(False, description="the history too: superseded and deleted "
                                                "facts"),
              as_of: Instant | None = Query(None, description="the facts live at this time"),
              entity: str | None = Query(None, min_length=1, max_length=500, description="facts naming this "
                                         "entity (its name or an alias)"),
              kind: Literal[FACT_KINDS] | None = Query(None, description="only facts of this kind"),
              entity_type: Literal[ENTITY_TYPES] | None = Query(None, description="only facts whose object is "
                                                                "an entity of this type"),
              message_id: str | None = ident_query("only the facts mined from this message"),
              order: Literal["time", "anchor", "slot"] = Query("time", description="`time` (when each became "
                                                               "true), `anchor` (the user's own facts, then "
                                                               "each entity's) or `slot` (by predicate)"),
              p: Principal = Depends(api.principal)):
        """Live facts, newest first; `as_of` gives the ones live at that time (superseded since
        included); `include_invalidated` the whole history."""
        m, kw = api.memory_for(p)
        return m.list_facts(dataset, q=q, limit=limit, offset=offset, include_invalidated=include_invalidated,
                            as_of=as_of, entity=entity, kind=kind, entity_type=entity_type,
                            message_id=message_id, order=order, **kw)

    @router.delete("/v1/datasets/{dataset}/facts/{fact_id}", status_code=204, operation_id="facts_delete", tags=["facts"],
                   summary="Delete a fact (soft)")
    def delete_fact(dataset: str = dataset_path(),
                    fact_id: str = id_path("the fact's id (`f_…`)"),
                    p: Principal = Depends(api.principal)):
        """The fact stops being live now; it stays in the history (`include_invalidated`)."""
        m, kw = api.memory_for(p, write=True)
        m.delete_fact(dataset, fact_id, **kw)

    @router.get("/v1/datasets/{dataset}/entities", response_model=list[Entity], operation_id="entities_list",
                summary="List a dataset's entities", tags=["entities"])
    def entities(dataset: str = dataset_path(),
                 type: str | None = Query(None, max_length=32, description="only entities of this type: "
                                          + ", ".join(ENTITY_TYPES) + " (any case)"),
                 p: Principal = Depends(api.principal)):
        """The people, places, organisations and things the dataset's facts name, with their aliases."""
        m, kw = api.memory_for(p)
        return m.list_entities(dataset, type=type, **kw)

    return router
