"""Archival notes: save, search, list, forget."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...model import Note, NoteHit
from ..access import Api
from ..auth import Principal
from ..bodies import ForgetBody, NoteBody, NotesBody
from ..schema import dataset_path, id_path, limit_query, namespace_query, namespaces_query, offset_query, words_query


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["notes"])

    @router.post("/v1/datasets/{dataset}/notes", response_model=Note, operation_id="notes_save",
                 summary="Save a note")
    def save_note(b: NoteBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Free text saved on purpose (archival memory), searchable by meaning and by words."""
        m, kw = api.memory_for(p, write=True)
        return m.notes.save(dataset, b.text, b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/notes/extracted", response_model=list[Note],
                 operation_id="notes_save_extracted", summary="Save notes, skipping ones already kept")
    def save_extracted(b: NotesBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Notes an extractor wrote: a text as close as `dedupe_threshold` to a kept note is skipped;
        the answer lists the notes saved."""
        m, kw = api.memory_for(p, write=True)
        return m.notes.save_extracted(dataset, b.texts, b.namespace, b.dedupe_threshold, **kw)

    @router.get("/v1/datasets/{dataset}/notes", response_model=list[Note], operation_id="notes_list",
                summary="List notes")
    def list_notes(dataset: str = dataset_path(), namespace: str | None = namespace_query(None),
                   include_forgotten: bool = Query(False, description="forgotten notes too"),
                   limit: int = limit_query(50), offset: int = offset_query(), p: Principal = Depends(api.principal)):
        """Notes newest first; forgotten ones only with `include_forgotten`."""
        m, kw = api.memory_for(p)
        return m.notes.list(dataset, namespace, include_forgotten, limit, offset, **kw)

    @router.get("/v1/datasets/{dataset}/notes/search", response_model=list[NoteHit],
                operation_id="notes_search", summary="Search notes")
    def search_notes(dataset: str = dataset_path(), q: str = words_query("what to look for"),
                     limit: int = limit_query(10), namespace: str | None = namespaces_query(),
                     p: Principal = Depends(api.principal)):
        """Hybrid search (vectors and keywords) over the dataset's notes."""
        m, kw = api.memory_for(p)
        spaces = namespace.split(",") if namespace and "," in namespace else namespace
        return m.notes.search(dataset, q, limit, spaces, **kw)

    @router.post("/v1/datasets/{dataset}/notes/{note_id}/forget", status_code=204, operation_id="notes_forget",
                 summary="Forget a note")
    def forget_note(b: ForgetBody | None = None, dataset: str = dataset_path(),
                    note_id: str = id_path("the note's id"), p: Principal = Depends(api.principal)):
        """The note leaves search and listings; it is kept (`include_forgotten`), optionally pointing at the
        note that replaces it."""
        m, kw = api.memory_for(p, write=True)
        m.notes.forget(dataset, note_id, b.superseded_by if b else None, **kw)

    return router
