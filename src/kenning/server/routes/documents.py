"""Versioned documents of a project (``memory_for`` refuses user tokens)."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...model import Document
from ..access import Api
from ..auth import Principal
from ..bodies import Count, DocumentBody


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/documents/{scope_key}", response_model=list[Document])
    def list_documents(scope_key: str, prefix: str = "", p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.documents.list(scope_key, prefix, **kw)

    @router.get("/v1/documents/{scope_key}/{path:path}", response_model=Document)
    def read_document(scope_key: str, path: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.documents.read(scope_key, path, **kw)

    @router.put("/v1/documents/{scope_key}/{path:path}", response_model=Document)
    def write_document(scope_key: str, path: str, b: DocumentBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.documents.write(scope_key, path, b.text, expected_version=b.expected_version,
                                 expires_in=b.expires_in, **kw)

    @router.delete("/v1/documents/{scope_key}/{path:path}", status_code=204)
    def delete_document(scope_key: str, path: str, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        m.documents.delete(scope_key, path, **kw)

    @router.post("/v1/documents_purge", response_model=Count)
    def purge_documents(p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return Count(count=m.documents.purge(**kw))

    return router
