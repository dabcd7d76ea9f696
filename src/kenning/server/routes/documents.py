"""Versioned documents of a project (``memory_for`` refuses user tokens)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query

from ...model import Document
from ..access import Api
from ..auth import Principal
from ..bodies import Count, DocumentBody
from ..schema import SCOPE_KEY


def scope_key_path() -> object:
    return Path(pattern=SCOPE_KEY, max_length=256, description="an opaque key your runtime chooses (an agent, a "
                "run, a workspace)")


def doc_path() -> object:
    return Path(pattern=SCOPE_KEY, max_length=256, description="the document's path under its scope key")


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["documents"])

    @router.get("/v1/documents/{scope_key}", response_model=list[Document], operation_id="documents_list",
                summary="List documents")
    def list_documents(scope_key: str = scope_key_path(),
                       prefix: str = Query("", max_length=256, description="only paths that start with this"),
                       p: Principal = Depends(api.principal)):
        """The live documents under a scope key, optionally only paths with a prefix."""
        m, kw = api.memory_for(p)
        return m.documents.list(scope_key, prefix, **kw)

    @router.get("/v1/documents/{scope_key}/{path:path}", response_model=Document, operation_id="documents_read",
                summary="Read a document")
    def read_document(scope_key: str = scope_key_path(), path: str = doc_path(), p: Principal = Depends(api.principal)):
        """The newest version of a document (a 404 when absent or expired)."""
        m, kw = api.memory_for(p)
        return m.documents.read(scope_key, path, **kw)

    @router.put("/v1/documents/{scope_key}/{path:path}", response_model=Document, operation_id="documents_write",
                summary="Write a document")
    def write_document(b: DocumentBody, scope_key: str = scope_key_path(), path: str = doc_path(),
                       p: Principal = Depends(api.principal)):
        """Create or replace it (a new version); `expected_version` refuses a write over a newer one (409);
        `expires_in` makes it expire."""
        m, kw = api.memory_for(p, write=True)
        return m.documents.write(scope_key, path, b.text, expected_version=b.expected_version,
                                 expires_in=b.expires_in, **kw)

    @router.delete("/v1/documents/{scope_key}/{path:path}", status_code=204, operation_id="documents_delete",
                   summary="Delete a document")
    def delete_document(scope_key: str = scope_key_path(), path: str = doc_path(),
                        p: Principal = Depends(api.principal)):
        """Delete a document and its versions."""
        m, kw = api.memory_for(p, write=True)
        m.documents.delete(scope_key, path, **kw)

    @router.post("/v1/documents_purge", response_model=Count, operation_id="documents_purge",
                 summary="Remove expired documents")
    def purge_documents(p: Principal = Depends(api.principal)):
        """Delete the documents whose time ran out; the answer counts them."""
        m, kw = api.memory_for(p, write=True)
        return Count(count=m.documents.purge(**kw))

    return router
