"""Earlier chat messages: index, search, read, delete."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import ChatPage, Episode, MessageHit, MessagePage
from ..access import Api
from ..auth import Principal
from ..bodies import MessageBody
from ..schema import id_path, dataset_path, ident_query, limit_query, offset_query, words_query


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

    @router.get("/v1/datasets/{dataset}/chats", response_model=ChatPage, operation_id="messages_chats",
                summary="List a dataset's conversations")
    def chats(dataset: str = dataset_path(), limit: int = limit_query(50), offset: int = offset_query(),
              p: Principal = Depends(api.principal)):
        """Chats and threads, latest activity first, with their message, user-turn and fact counts; the
        messages of no chat come as one conversation whose `chat` is null."""
        m, kw = api.memory_for(p)
        return m.messages.chats(dataset, limit=limit, offset=offset, **kw)

    @router.get("/v1/datasets/{dataset}/thread", response_model=MessagePage, operation_id="messages_thread",
                summary="Read one conversation")
    def thread(dataset: str = dataset_path(),
               chat: str | None = ident_query("the chat or thread; leave it out for the messages of no chat"),
               limit: int = limit_query(100), offset: int = offset_query(), p: Principal = Depends(api.principal)):
        """Its messages as they were said, oldest first, every role. The facts mined from a user turn
        cite it: `GET /v1/datasets/{dataset}/facts?message_id=…&include_invalidated=true`."""
        m, kw = api.memory_for(p)
        return m.messages.thread(dataset, chat, limit=limit, offset=offset, **kw)

    @router.get("/v1/datasets/{dataset}/messages/search", response_model=list[MessageHit],
                operation_id="messages_search", summary="Search earlier messages")
    def search_messages(dataset: str = dataset_path(), q: str = words_query("what to look for"),
                        exclude_chat: str | None = ident_query("leave this chat out (the current one)"),
                        limit: int = limit_query(10), p: Principal = Depends(api.principal)):
        """Hybrid search (vectors and keywords) over the dataset's messages."""
        m, kw = api.memory_for(p)
        return m.messages.search(dataset, q, exclude_chat=exclude_chat, limit=limit, **kw)

    @router.get("/v1/datasets/{dataset}/messages/{message_id:message_id}", response_model=Episode,
                operation_id="messages_get", summary="Read one message")
    def get_message(dataset: str = dataset_path(),
                    message_id: str = id_path("the message's id"),
                    p: Principal = Depends(api.principal)):
        """One message with its role, chat and time (a 404 when the dataset has no such message)."""
        m, kw = api.memory_for(p)
        return m.messages.get(dataset, message_id, **kw)

    @router.delete("/v1/datasets/{dataset}/messages/{message_id:message_id}", response_model=dict[str, int],
                   operation_id="messages_delete", summary="Delete a message and what was mined from it")
    def delete_message(dataset: str = dataset_path(), message_id: str = id_path("the message's id"),
                       p: Principal = Depends(api.principal)):
        """The message is removed for good, with the facts that cite it and the queued turn that carried it; a
        value one of those facts had superseded is live again. The answer counts the rows removed per kind
        (`messages`, `facts`, `entities` no fact names any more, `jobs`) and the facts made live again (`restored`). A 404 when there is no such
        message."""
        m, kw = api.memory_for(p, write=True)
        return m.messages.delete(dataset, message_id, **kw)

    @router.delete("/v1/datasets/{dataset}/chats/{chat}", response_model=dict[str, int],
                   operation_id="messages_delete_chat", summary="Delete a chat and what was mined from it")
    def delete_chat(dataset: str = dataset_path(), chat: str = id_path("the chat or thread"),
                    p: Principal = Depends(api.principal)):
        """Every message of the chat, as `DELETE …/messages/{message_id}` removes one (all zeros when the chat
        holds none)."""
        m, kw = api.memory_for(p, write=True)
        return m.messages.delete_chat(dataset, chat, **kw)

    return router
