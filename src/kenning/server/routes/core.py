"""Core memory files: Anthropic's memory tool, and the same operations as plain routes."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...core_files import MAX_RENDER_NAMESPACES
from ...errors import MemoryToolError
from ...model import CoreFile, CoreFileVersion
from ..access import Api
from ..auth import Principal
from ..bodies import CoreWriteBody, InsertBody, PathBody, RenameBody, ReplaceBody, Text, ToolBody, ToolResult
from ..schema import NAMESPACE, core_path_query, dataset_path, limit_query, namespace_query, offset_query

_ONE = NAMESPACE[1:-1]   # the namespace pattern without its anchors
NAMESPACES = f"^{_ONE}(?:,{_ONE}){{0,{MAX_RENDER_NAMESPACES - 1}}}$"


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["core files"])

    @router.post("/v1/datasets/{dataset}/memory_tool", response_model=ToolResult, operation_id="core_memory_tool",
                 summary="Run one memory tool command")
    def memory_tool(b: ToolBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Execute one call of Anthropic's memory tool (`memory_20250818`) on the dataset's core files and
        answer with the tool result's text, worded as the SDK's own memory tool words it. A refused
        command is a 200 with `is_error: true` (the model reads the text and tries again)."""
        m, kw = api.memory_for(p, write=b.command.get("command") != "view")
        try:
            return ToolResult(content=m.memory_tool(dataset, b.command, b.namespace, **kw))
        except MemoryToolError as exc:
            return ToolResult(content=exc.text, is_error=True)

    @router.get("/v1/datasets/{dataset}/core", response_model=list[CoreFile], operation_id="core_list",
                summary="List core files")
    def list_core(dataset: str = dataset_path(), namespace: str = namespace_query(),
                  p: Principal = Depends(api.principal)):
        """The files of one namespace with their content and version."""
        m, kw = api.memory_for(p)
        return m.core.list(dataset, namespace=namespace, **kw)

    @router.get("/v1/datasets/{dataset}/core/render", response_model=Text, operation_id="core_render",
                summary="Render core files for a system prompt")
    def render_core(dataset: str = dataset_path(),
                    namespaces: str | None = Query(None, pattern=NAMESPACES, description="comma-separated "
                                                   f"namespaces, at most {MAX_RENDER_NAMESPACES} (default: the "
                                                   "user's and the organization's)"),
                    max_render: int | None = Query(None, ge=1, description="cut here, with a "
                                                   "visible marker (default: the server's)"),
                    p: Principal = Depends(api.principal)):
        """The files as delimited text to put in the model's instructions."""
        m, kw = api.memory_for(p)
        spaces = namespaces.split(",") if namespaces else None
        return Text(text=m.core.render(dataset, spaces, max_render, **kw))

    @router.get("/v1/datasets/{dataset}/core/file", response_model=CoreFile, operation_id="core_read",
                summary="Read a core file")
    def read_core(dataset: str = dataset_path(), path: str = core_path_query(), namespace: str = namespace_query(),
                  p: Principal = Depends(api.principal)):
        """One file with its content and version (a 404 when it does not exist)."""
        m, kw = api.memory_for(p)
        return m.core.read(dataset, path, namespace=namespace, **kw)

    @router.put("/v1/datasets/{dataset}/core/file", response_model=CoreFile, operation_id="core_write",
                summary="Write a core file")
    def write_core(b: CoreWriteBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Create or replace the file, keeping the version before; with `expected_version`, a write over
        a file that has moved on is refused (409)."""
        m, kw = api.memory_for(p, write=True)
        return m.core.write(dataset, b.path, b.text, expected_version=b.expected_version, namespace=b.namespace,
                            **kw)

    @router.get("/v1/datasets/{dataset}/core/view", response_model=Text, operation_id="core_view",
                summary="View a core file or folder (memory tool text)")
    def view_core(dataset: str = dataset_path(), path: str = core_path_query("/memories", root=True),
                  namespace: str = namespace_query(), p: Principal = Depends(api.principal)):
        """A folder's listing, or a file with line numbers, as the memory tool's `view` answers."""
        m, kw = api.memory_for(p)
        return Text(text=m.core.view(dataset, path, namespace=namespace, **kw))

    @router.post("/v1/datasets/{dataset}/core/str_replace", response_model=CoreFile,
                 operation_id="core_str_replace", summary="Replace text in a core file")
    def replace_core(b: ReplaceBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """`old` must appear exactly once."""
        m, kw = api.memory_for(p, write=True)
        return m.core.str_replace(dataset, b.path, b.old, b.new, expected_version=b.expected_version,
                                  namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/insert", response_model=CoreFile, operation_id="core_insert",
                 summary="Insert lines into a core file")
    def insert_core(b: InsertBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Insert `text` after line `line` (0: at the top), as the memory tool's `insert` does; a line past the end is a 409."""
        m, kw = api.memory_for(p, write=True)
        return m.core.insert(dataset, b.path, b.line, b.text, namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/remove", status_code=204, operation_id="core_remove",
                 summary="Delete a core file or folder")
    def remove_core(b: PathBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Delete a file, or a folder with everything in it; the versions are kept in the history."""
        m, kw = api.memory_for(p, write=True)
        m.core.remove(dataset, b.path, namespace=b.namespace, **kw)

    @router.post("/v1/datasets/{dataset}/core/rename", status_code=204, operation_id="core_rename",
                 summary="Rename a core file or folder")
    def rename_core(b: RenameBody, dataset: str = dataset_path(), p: Principal = Depends(api.principal)):
        """Move a file or folder; the destination must not exist (409)."""
        m, kw = api.memory_for(p, write=True)
        m.core.rename(dataset, b.old_path, b.new_path, namespace=b.namespace, **kw)

    @router.get("/v1/datasets/{dataset}/core/history", response_model=list[CoreFileVersion],
                operation_id="core_history", summary="A core file's versions")
    def core_history(dataset: str = dataset_path(), path: str = core_path_query(),
                     namespace: str = namespace_query(), limit: int = limit_query(100), offset: int = offset_query(),
                     newest_first: bool = Query(False, description="newest version first"),
                     p: Principal = Depends(api.principal)):
        """A page of a file's kept versions (at most 100 a page; the newest max_core_versions are kept)."""
        m, kw = api.memory_for(p)
        return m.core.history(dataset, path, namespace, limit, offset, newest_first, **kw)

    return router
