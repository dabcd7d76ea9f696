"""Core memory files: Anthropic's memory tool, and the same operations as plain routes."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...errors import MemoryToolError
from ...model import CoreFile, CoreFileVersion
from ..access import Api
from ..auth import Principal
from ..bodies import CoreWriteBody, InsertBody, PathBody, RenameBody, ReplaceBody, ToolBody, ToolResult


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/datasets/{dataset}/memory_tool", response_model=ToolResult)
    def memory_tool(dataset: str, b: ToolBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=b.command.get("command") != "view")
        try:
            return ToolResult(content=m.memory_tool(dataset, b.command, b.namespace, **kw))
        except MemoryToolError as exc:
            return ToolResult(content=exc.text, is_error=True)

    @router.get("/v1/datasets/{dataset}/core", response_model=list[CoreFile])
    def list_core(dataset: str, namespace: str = "user", p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.core.list(dataset, namespace=namespace, **kw)

    @router.get("/v1/datasets/{dataset}/core/render")
    def render_core(dataset: str, namespaces: str | None = None, max_render: int | None = None,
                    p: Principal = Depends(api.principal)) -> dict:
        m, kw = api.memory_for(p)
        spaces = namespaces.split(",") if namespaces else None
        return {"text": m.core.render(dataset, spaces, max_render, **kw)}

    @router.get("/v1/datasets/{dataset}/core/file", response_model=CoreFile)
    def read_core(dataset: str, path: str, namespace: str = "user", p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p)
        return m.core.read(dataset, path, namespace=namespace, **kw)

    @router.put("/v1/datasets/{dataset}/core/file", response_model=CoreFile)
    def write_core(dataset: str, b: CoreWriteBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.core.write(dataset, b.path, b.text, expected_version=b.expected_version, namespace=b.namespace,
                            **kw)

    @router.get("/v1/datasets/{dataset}/core/view")
    def view_core(dataset: str, path: str = "/memories", namespace: str = "user",
                  p: Principal = Depends(api.principal)) -> dict:
        m, kw = api.memory_for(p)
        return {"text": m.core.view(dataset, path, namespace=namespace, **kw)}

    @router.post("/v1/datasets/{dataset}/core/str_replace", response_model=CoreFile)
    def replace_core(dataset: str, b: ReplaceBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.core.str_replace(dataset, b.path, b.old, b.new, expected_version=b.expected_version,
                                  namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/insert", response_model=CoreFile)
    def insert_core(dataset: str, b: InsertBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        return m.core.insert(dataset, b.path, b.line, b.text, namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/remove", status_code=204)
    def remove_core(dataset: str, b: PathBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        m.core.remove(dataset, b.path, namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/rename", status_code=204)
    def rename_core(dataset: str, b: RenameBody, p: Principal = Depends(api.principal)):
        m, kw = api.memory_for(p, write=True)
        m.core.rename(dataset, b.old_path, b.new_path, namespace=b.namespace, **kw)

    @router.get("/v1/datasets/{dataset}/core/history", response_model=list[CoreFileVersion])
    def core_history(dataset: str, path: str, namespace: str = "user", limit: int = Query(100, ge=1, le=100),
                     offset: int = Query(0, ge=0), newest_first: bool = False, p: Principal = Depends(api.principal)):
        """A page of a file's kept versions (at most 100 a page; the newest max_core_versions are kept)."""
        m, kw = api.memory_for(p)
        return m.core.history(dataset, path, namespace, limit, offset, newest_first, **kw)

    return router
