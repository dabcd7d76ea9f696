"""Archival notes: save, search, list, forget."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import Note, NoteHit
from ..access import Api
from ..auth import Principal
from ..bodies import ForgetBody, NoteBody, NotesBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/datasets/{dataset}/notes", response_model=Note)
    def save_note(dataset: str, b: NoteBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.notes.save(dataset, b.text, b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/notes/extracted", response_model=list[Note])
    def save_extracted(dataset: str, b: NotesBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.notes.save_extracted(dataset, b.texts, b.namespace, b.dedupe_threshold, **kw)

    @router.get("/v1/datasets/{dataset}/notes", response_model=list[Note])
    def list_notes(dataset: str, namespace: str | None = None, include_forgotten: bool = False, limit: int = 50,
                   offset: int = 0, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.notes.list(dataset, namespace, include_forgotten, limit, offset, **kw)

    @router.get("/v1/datasets/{dataset}/notes/search", response_model=list[NoteHit])
    def search_notes(dataset: str, q: str, limit: int = 10, namespace: str | None = None,
                     p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.notes.search(dataset, q, limit, namespace, **kw)

    @router.post("/v1/datasets/{dataset}/notes/{note_id}/forget", status_code=204)
    def forget_note(dataset: str, note_id: str, b: ForgetBody | None = None, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        m.notes.forget(dataset, note_id, b.superseded_by if b else None, **kw)

    return router
