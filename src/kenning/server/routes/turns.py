"""Writing: ``add`` (now), ``add_turn`` (queued) and the status of either."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Path

from ...model import AddResult, MemoryStatus, Receipt
from ..access import Api
from ..auth import Principal
from ..bodies import AddBody, AddTurnBody


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["memory"])

    def add(b: AddBody, p: Principal = Depends(api.principal)):
        """Extract facts from one message now and store them, superseding one-value facts that changed
        and never storing a duplicate. The answer says what became of every candidate, and why."""
        m, kw = api.memory_for(p, write=True)
        return m.add(b.text, b.dataset, at=b.at, client_ref=b.client_ref, role=b.role, chat=b.chat,
                     message_id=b.message_id, temporary=b.temporary, **kw)

    router.add_api_route("/v1/memory/add", add, methods=["POST"], response_model=AddResult,
                         operation_id="memory_add", summary="Add a message and extract its facts now")
    router.add_api_route("/memory/add", add, methods=["POST"], response_model=AddResult,
                         operation_id="memory_add_unversioned", summary="Add a message (unversioned path)",
                         description="The same operation as `POST /v1/memory/add`, at the path mem0-style "
                                     "clients call.")

    @router.post("/v1/memory/add_turn", response_model=Receipt, operation_id="memory_add_turn",
                 summary="Queue one conversation turn")
    def add_turn(b: AddTurnBody, p: Principal = Depends(api.principal)):
        """Store the turn durably and answer at once; a worker runs it through `add`. Poll
        `GET /v1/memory/status/{id}` with the receipt's `request_id`. An assistant turn is kept as a
        message and never mined (`status: done`, `reason: skipped_non_user_turn`)."""
        m, kw = api.memory_for(p, write=True)
        return m.add_turn(b.dataset, b.role, b.content, thread=b.thread, client_ref=b.client_ref, at=b.at,
                          chat=b.chat, temporary=b.temporary, message_id=b.message_id, **kw)

    @router.get("/v1/memory/status/{id}", response_model=Receipt | MemoryStatus, operation_id="memory_status",
                summary="The status of a queued turn or of a memory")
    def status(id: str = Path(min_length=1, max_length=256, pattern=r"\S",
                              description="a receipt's `request_id`, or a fact id (`f_…`)"),
               p: Principal = Depends(api.principal)):
        """A `request_id` answers with the turn's receipt (queued, distilling, done or failed, with the
        `add` result once done); a fact id (`f_…`) with whether it is stored, live and searchable."""
        m, kw = api.memory_for(p)
        if id.startswith("f_"):
            return m.status(memory_id=id, **kw)
        return m.status(id, **kw)

    return router
