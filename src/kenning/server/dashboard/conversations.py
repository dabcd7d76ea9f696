"""Pages of a dataset's conversations: the chats and threads, one read as a transcript with the facts
each user turn gave, and one message (which leads back to its place in the transcript)."""
from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ... import timeutil
from .render import Dashboard, PAGE, int_param, pages

TRANSCRIPT_PAGE = 100   # messages per transcript page (the library's largest page)
NO_CHAT = "none"        # ?chat is absent for the messages of no chat; this names them in links


def transcript_url(dataset: str, chat: str | None, offset: int = 0, anchor: str | None = None) -> str:
    query = {"chat": chat} if chat is not None else {"none": "1"}
    if offset:
        query["offset"] = str(offset)
    return (f"/datasets/{quote(dataset, safe='')}/conversations/view?{urlencode(query)}"
            + (f"#msg-{quote(anchor, safe='')}" if anchor else ""))


def routes(d: Dashboard, router: APIRouter) -> None:
    @router.get("/datasets/{dataset}/conversations", response_class=HTMLResponse)
    def conversations(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        page = m.messages.chats(dataset, limit=PAGE, offset=offset, **kw)
        return d.render(request, "conversations.html", dataset=dataset, tab="conversations", page=page,
                        link=lambda chat: transcript_url(dataset, chat), keep={},
                        nav=pages(page.total, PAGE, offset))

    @router.get("/datasets/{dataset}/conversations/view", response_class=HTMLResponse)
    def transcript(request: Request, dataset: str):
        _, m, kw = d.api(request)
        params = request.query_params
        chat = params.get("chat")
        offset = int_param(params.get("offset"), 0, 0, 10**9, "offset")
        page = m.messages.thread(dataset, chat, limit=TRANSCRIPT_PAGE, offset=offset, **kw)
        now = timeutil.now()
        mined = {}
        for message in page.messages:
            if message.role == "user":   # only user turns are mined
                facts = m.list_facts(dataset, message_id=message.episode_id, include_invalidated=True, limit=PAGE,
                                     **kw).facts
                mined[message.episode_id] = [(f, f.state_at(now)) for f in facts]
        keep = {"chat": chat} if chat is not None else {"none": "1"}
        return d.render(request, "transcript.html", dataset=dataset, tab="conversations", chat=chat, page=page,
                        mined=mined, keep=keep, nav=pages(page.total, TRANSCRIPT_PAGE, offset))

    @router.get("/datasets/{dataset}/messages/{message_id}", response_class=HTMLResponse)
    def message(request: Request, dataset: str, message_id: str):
        _, m, kw = d.api(request)
        episode = m.messages.get(dataset, message_id, **kw)
        now = timeutil.now()
        facts = m.list_facts(dataset, message_id=message_id, include_invalidated=True, limit=PAGE, **kw).facts
        return d.render(request, "message.html", dataset=dataset, tab="conversations", message=episode,
                        facts=[(f, f.state_at(now)) for f in facts],
                        in_context=f"/datasets/{quote(dataset, safe='')}/messages/{quote(message_id, safe='')}/in-context")

    @router.get("/datasets/{dataset}/messages/{message_id}/in-context")
    def in_context(request: Request, dataset: str, message_id: str):
        """The transcript page that holds the message, scrolled to it."""
        _, m, kw = d.api(request)
        episode = m.messages.get(dataset, message_id, **kw)
        offset = 0
        while True:
            page = m.messages.thread(dataset, episode.chat, limit=TRANSCRIPT_PAGE, offset=offset, **kw)
            if any(e.episode_id == message_id for e in page.messages) or not page.messages:
                break
            offset += TRANSCRIPT_PAGE
        return RedirectResponse(transcript_url(dataset, episode.chat, offset if page.messages else 0, message_id),
                                status_code=303)
