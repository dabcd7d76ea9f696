"""Earlier chat messages: index, search, read."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import Episode, MessageHit
from ..access import Api
from ..auth import Principal
from ..bodies import MessageBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/datasets/{dataset}/messages", response_model=Episode | None)
    def index_message(dataset: str, b: MessageBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.messages.index(dataset, b.content, role=b.role, chat=b.chat, message_id=b.message_id, at=b.at,
                                temporary=b.temporary, **kw)

    @router.get("/v1/datasets/{dataset}/messages/search", response_model=list[MessageHit])
    def search_messages(dataset: str, q: str, exclude_chat: str | None = None, limit: int = 10,
                        p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.messages.search(dataset, q, exclude_chat=exclude_chat, limit=limit, **kw)

    @router.get("/v1/datasets/{dataset}/messages/{message_id}", response_model=Episode)
    def get_message(dataset: str, message_id: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.messages.get(dataset, message_id, **kw)

    return router
