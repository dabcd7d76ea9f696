"""Earlier chat messages: index, search, read."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import Episode, MessageHit
from ..access import Api
from ..auth import Principal
from ..bodies import MessageBody
from ..schema import id_path, dataset_path, ident_query, limit_query, words_query


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["messages"])

    @router.post("/v1/datasets/{dataset}/messages", response_model=Episode | None, operation_id="messages_index",
                 summary="Keep a message searchable (no extraction)")
    def index_message(b: MessageBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """The message is stored and embedded for search; no fact is extracted. A temporary one is not
        kept (the answer is null)."""
        m, kw = api.memory_for(p, write=True)
        return m.messages.index(dataset, b.content, role=b.role, chat=b.chat, message_id=b.message_id, at=b.at,
                                temporary=b.temporary, **kw)

    @router.get("/v1/datasets/{dataset}/messages/search", response_model=list[MessageHit],
                operation_id="messages_search", summary="Search earlier messages")
    def search_messages(dataset: str = dataset_path(), q: str = words_query("what to look for"),
                        exclude_chat: str | None = ident_query("leave this chat out (the current one)"),
                        limit: int = limit_query(10), p: Principal = Depends(api.principal)):
        """Hybrid search (vectors and keywords) over the dataset's messages."""
        m, kw = api.memory_for(p)
        return m.messages.search(dataset, q, exclude_chat=exclude_chat, limit=limit, **kw)

    @router.get("/v1/datasets/{dataset}/messages/{message_id}", response_model=Episode,
                operation_id="messages_get", summary="Read one message")
    def get_message(dataset: str = dataset_path(),
                    message_id: str = id_path("the message's id"),
                    p: Principal = Depends(api.principal)):
        """One message with its role, chat and time (a 404 when the dataset has no such message)."""
        m, kw = api.memory_for(p)
        return m.messages.get(dataset, message_id, **kw)

    return router
