"""Writing: ``add`` (now), ``add_turn`` (queued) and the status of either."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import AddResult
from ..access import Api
from ..auth import Principal
from ..bodies import AddBody, AddTurnBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/memory/add", response_model=AddResult, response_model_exclude_none=True)
    @router.post("/v1/memory/add", response_model=AddResult, response_model_exclude_none=True)
    def add(b: AddBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.add(b.text, b.dataset, at=b.at, client_ref=b.client_ref, role=b.role, chat=b.chat,
                     message_id=b.message_id, temporary=b.temporary, **kw)

    @router.post("/v1/memory/add_turn")
    def add_turn(b: AddTurnBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.add_turn(b.dataset, b.role, b.content, thread=b.thread, client_ref=b.client_ref, at=b.at,
                          chat=b.chat, temporary=b.temporary, message_id=b.message_id, **kw)

    @router.get("/v1/memory/status/{id}")
    def status(id: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        if id.startswith("f_"):
            return m.status(memory_id=id, **kw)
        return m.status(id, **kw)

    return router
