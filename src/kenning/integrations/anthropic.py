"""Kenning's core memory files as the Anthropic SDK's memory tool (``memory_20250818``).

    from anthropic import Anthropic
    from kenning import Memory
    from kenning.integrations.anthropic import KenningMemoryTool

    memory_tool = KenningMemoryTool(Memory(), dataset="sam")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=2048, tools=[memory_tool],
        messages=[{"role": "user", "content": "Remember that I take my coffee black."}],
    )
    for message in runner:
        ...

The SDK's runner decodes each ``tool_use`` into a command object and calls
``view``/``create``/``str_replace``/``insert``/``delete``/``rename``; every one
of them is one call of :meth:`kenning.Memory.memory_tool`, so the files live in
kenning's store (versioned, per dataset and namespace) and the answers are
kenning's texts byte for byte. A failed command raises the SDK's ``ToolError``
with the exact text of :class:`~kenning.errors.MemoryToolError`, which the
runner sends back with ``is_error: true``. ``AsyncKenningMemoryTool`` is the
same for ``AsyncAnthropic``, running each call on a worker thread.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import (BetaMemoryTool20250818CreateCommand, BetaMemoryTool20250818DeleteCommand,
                                      BetaMemoryTool20250818InsertCommand, BetaMemoryTool20250818RenameCommand,
                                      BetaMemoryTool20250818StrReplaceCommand, BetaMemoryTool20250818ViewCommand)
    from anyio.to_thread import run_sync
except ImportError as exc:  # no SDK, or one older than the memory tool helpers and ToolError (0.84)
    raise ImportError("kenning.integrations.anthropic needs the Anthropic Python SDK, 0.84 or later: "
                      "pip install 'kenning[anthropic]'") from exc

from ..errors import MemoryToolError
from ..notes import check_namespace

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["KenningMemoryTool", "AsyncKenningMemoryTool"]

CLEARED = "All memory cleared"  # what the SDK's own file-system tool answers


class _Binding:
    """One dataset and namespace of a Memory, checked once; runs commands and maps their failures."""

    def __init__(self, memory: "Memory", dataset: str, namespace: str, project: str | None,
                 environment: str | None):
        memory.services.scope(dataset, project, environment)  # a bad name fails here, not inside the model's loop
        self.memory, self.dataset, self.namespace = memory, dataset, check_namespace(namespace)
        self.where = {"project": project, "environment": environment}

    def run(self, command: Any) -> str:
        call = command.to_dict(exclude_none=True) if hasattr(command, "to_dict") else dict(command)
        try:
            return self.memory.memory_tool(self.dataset, call, self.namespace, **self.where)
        except MemoryToolError as exc:
            raise ToolError(exc.text) from exc

    def clear(self) -> str:
        for f in self.memory.core.list(self.dataset, self.namespace, **self.where):
            self.memory.core.remove(self.dataset, f.path, self.namespace, **self.where)
        return CLEARED


class KenningMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool on one dataset's core files, for ``client.beta.messages.tool_runner``.

    ``namespace`` picks whose files they are (``user``, ``agent:<id>``, …); ``cache_control``
    is passed to the tool definition as the SDK does.
    """

    def __init__(self, memory: "Memory", dataset: str, namespace: str = "user", *, project: str | None = None,
                 environment: str | None = None, cache_control: Any = None):
        super().__init__(cache_control=cache_control)
        self._kenning = _Binding(memory, dataset, namespace, project, environment)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._kenning.run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._kenning.run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._kenning.run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._kenning.run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._kenning.run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._kenning.run(command)

    def clear_all_memory(self) -> str:
        """Delete every file of the namespace (their versions stay in the history)."""
        return self._kenning.clear()


class AsyncKenningMemoryTool(BetaAsyncAbstractMemoryTool):
    """:class:`KenningMemoryTool` for ``AsyncAnthropic``: each call runs on a worker thread."""

    def __init__(self, memory: "Memory", dataset: str, namespace: str = "user", *, project: str | None = None,
                 environment: str | None = None, cache_control: Any = None):
        super().__init__(cache_control=cache_control)
        self._kenning = _Binding(memory, dataset, namespace, project, environment)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await run_sync(self._kenning.run, command)

    async def clear_all_memory(self) -> str:
        return await run_sync(self._kenning.clear)
