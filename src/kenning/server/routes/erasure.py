"""Erasure: a fact with its words, a message with what it taught, everything holding a text, a whole
dataset; the erasure log; compaction."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...model import ErasurePage, ErasureReceipt
from ..access import Api
from ..auth import Principal
from ..bodies import EraseBody, EraseContentBody
from ..schema import dataset_path, id_path, limit_query, offset_query


def by(p: Principal) -> str:
    """Who asked, as the erasure log names them (the key's id, never the key)."""
    who = f"key:{p.key_id}" if p.key_id else "development"
    return who if p.kind != "member" else f"member via {who}"


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["erasure"])

    @router.post("/v1/datasets/{dataset}/erase/facts/{fact_id}", response_model=ErasureReceipt,
                 operation_id="erase_fact", summary="Erase a fact and the words it came from")
    def erase_fact(b: EraseBody, dataset: str = dataset_path(), fact_id: str = id_path("the fact's id"),
                   p: Principal = Depends(api.principal)):
        """The fact and every version of its value in the history go for good, and the quoted words are cut
        out of the message they came from (which is embedded and indexed again; other facts from it stay).
        Unlike `DELETE …/facts/{fact_id}`, nothing stays in the history. With `dry_run`, nothing is removed or logged: the receipt says what would go."""
        m, kw = api.memory_for(p, write=True)
        return m.erase.fact(dataset, fact_id, dry_run=b.dry_run, by=by(p), **kw)

    @router.post("/v1/datasets/{dataset}/erase/messages/{message_id:message_id}", response_model=ErasureReceipt,
                 operation_id="erase_message", summary="Erase a message and what it taught")
    def erase_message(b: EraseBody, dataset: str = dataset_path(), message_id: str = id_path("the message's id"),
                      p: Principal = Depends(api.principal)):
        """The message (its vector and keyword entries too), every fact that cites it, and the turns that
        carried it. With `dry_run`, nothing is removed or logged: the receipt says what would go."""
        m, kw = api.memory_for(p, write=True)
        return m.erase.message(dataset, message_id, dry_run=b.dry_run, by=by(p), **kw)

    @router.post("/v1/datasets/{dataset}/erase/content", response_model=ErasureReceipt,
                 operation_id="erase_content", summary="Erase everything holding a text")
    def erase_content(b: EraseContentBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Every fact, message, note, entity, core-file line (current and earlier versions) and turn of the
        dataset holding `text` (case-insensitively), and documents under `document_scopes` (service keys
        only). Ask with `dry_run` first. With `dry_run`, nothing is removed or logged: the receipt says what would go."""
        m, kw = api.memory_for(p, write=True)
        return m.erase.content(dataset, b.text, dry_run=b.dry_run, document_scopes=b.document_scopes,
                                organization=b.organization, by=by(p), **kw)

    @router.post("/v1/datasets/{dataset}/erase", response_model=ErasureReceipt, operation_id="erase_dataset",
                 summary="Erase everything kept about one end user")
    def erase_dataset(b: EraseBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Every row of the dataset, as `DELETE /v1/datasets/{dataset}` does, with a receipt and a log entry;
        a user token may erase its own dataset. With `dry_run`, nothing is removed or logged: the receipt says what would go."""
        m, kw = api.memory_for(p, write=True)
        return m.erase.dataset(dataset, dry_run=b.dry_run, by=by(p), **kw)

    @router.get("/v1/datasets/{dataset}/erasures", response_model=ErasurePage, operation_id="erase_log",
                summary="Read a dataset's erasure log")
    def erasures(dataset: str = dataset_path(), limit: int = limit_query(50), offset: int = offset_query(),
                 p: Principal = Depends(api.principal)):
        """Newest first: ids, counts and SHA-256 hashes of what each erasure removed, who asked and when;
        never the erased text."""
        m, kw = api.memory_for(p)
        return m.erase.log(dataset, limit, offset, **kw)

    @router.get("/v1/erasures", response_model=ErasurePage, operation_id="erase_log_all",
                summary="Read the project's erasure log")
    def all_erasures(limit: int = limit_query(50), offset: int = offset_query(), p: Principal = Depends(api.service)):
        """Every dataset's erasures in the project and environment, newest first."""
        m, kw = api.memory_for(p)
        return m.erase.log(None, limit, offset, **kw)

    @router.post("/v1/erasures/compact", response_model=dict[str, bool], operation_id="erase_compact",
                 summary="Compact after deferred erasures")
    def compact(p: Principal = Depends(api.service)):
        """Rewrite what erasures left pending (`KENNING_ERASE_COMPACTION=deferred`) so their bytes leave the
        store's files; `compacted` is false when a table's lock was not granted in time (try again)."""
        m, _ = api.memory_for(p, write=True)
        return {"compacted": m.erase.compact()}

    return router
