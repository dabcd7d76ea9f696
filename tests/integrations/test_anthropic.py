"""KenningMemoryTool in the Anthropic SDK: its own command types, its ToolError, its tool runner. No network."""
from __future__ import annotations

import asyncio
import importlib
import json

import pytest

anthropic = pytest.importorskip("anthropic", reason="the optional Anthropic SDK (pip install 'kenning[anthropic]')")
from anthropic.lib.tools import ToolError  # noqa: E402  (after the skip)
from anthropic.types.beta import (  # noqa: E402
    BetaMemoryTool20250818CreateCommand, BetaMemoryTool20250818DeleteCommand, BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand, BetaMemoryTool20250818StrReplaceCommand, BetaMemoryTool20250818ViewCommand)

from kenning import InputError, Memory  # noqa: E402
from kenning.core_files import TEXTS  # noqa: E402
from kenning.integrations.anthropic import AsyncKenningMemoryTool, KenningMemoryTool  # noqa: E402


def view(path, view_range=None):
    return BetaMemoryTool20250818ViewCommand(command="view", path=path, view_range=view_range)


def create(path, file_text):
    return BetaMemoryTool20250818CreateCommand(command="create", path=path, file_text=file_text)


def str_replace(path, old_str, new_str):
    return BetaMemoryTool20250818StrReplaceCommand(command="str_replace", path=path, old_str=old_str, new_str=new_str)


def insert(path, insert_line, insert_text):
    return BetaMemoryTool20250818InsertCommand(command="insert", path=path, insert_line=insert_line,
                                               insert_text=insert_text)


def delete(path):
    return BetaMemoryTool20250818DeleteCommand(command="delete", path=path)


def rename(old_path, new_path):
    return BetaMemoryTool20250818RenameCommand(command="rename", old_path=old_path, new_path=new_path)


@pytest.fixture
def tool(mem):
    return KenningMemoryTool(mem, "sam")


def test_is_the_sdk_memory_tool(tool):
    assert isinstance(tool, anthropic.lib.tools.BetaAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.name == "memory"
    cached = KenningMemoryTool(Memory(":memory:", embedder=None), "sam", cache_control={"type": "ephemeral"})
    assert cached.to_dict()["cache_control"] == {"type": "ephemeral"}


def test_every_command_answers_with_kenning_texts(tool, mem):
    assert tool.create(create("/memories/notes.md", "line one\nline two")) == \
        "File created successfully at: /memories/notes.md"
    assert tool.view(view("/memories/notes.md")) == ("Here's the content of /memories/notes.md with line numbers:\n"
                                                     "     1\tline one\n     2\tline two")
    assert tool.view(view("/memories/notes.md", [2, 2])).endswith("\n     2\tline two")
    replaced = tool.str_replace(str_replace("/memories/notes.md", "line two", "line 2"))
    assert replaced == (TEXTS["edited"].format(path="/memories/notes.md") + "\n     1\tline one\n     2\tline 2")
    assert tool.insert(insert("/memories/notes.md", 0, "# Notes")) == "The file /memories/notes.md has been edited."
    assert tool.rename(rename("/memories/notes.md", "/memories/a/notes.md")) == \
        "Successfully renamed /memories/notes.md to /memories/a/notes.md"
    listing = tool.view(view("/memories"))
    assert listing.startswith(TEXTS["dir"].format(path="/memories")) and "/memories/a/notes.md" in listing
    assert mem.core.read("sam", "/memories/a/notes.md").content == "# Notes\nline one\nline 2\n"
    assert tool.delete(delete("/memories/a")) == "Successfully deleted /memories/a"
    assert mem.core.list("sam") == []


def test_the_same_text_as_memory_tool_itself(tool, mem):
    """The helper adds nothing: byte for byte what Memory.memory_tool answers for the same call."""
    twin = Memory(":memory:", embedder=None)
    for command in (create("/memories/x.md", "a\nb\nc"), view("/memories/x.md", [2, -1]), view("/memories"),
                    str_replace("/memories/x.md", "b", "B"), insert("/memories/x.md", 3, "d\n")):
        assert tool.execute(command) == twin.memory_tool("sam", command.to_dict(exclude_none=True))


@pytest.mark.parametrize("command, expected", [
    (view("/etc/passwd"), TEXTS["not_memories"].format(path="/etc/passwd")),
    (create("/memories/../escape.md", "x"), TEXTS["escape"].format(path="/memories/../escape.md")),
    (view("/memories/missing.md"), "The path /memories/missing.md does not exist. Please provide a valid path."),
    (str_replace("/memories/f.md", "nowhere", "x"),
     "No replacement was performed, old_str `nowhere` did not appear verbatim in /memories/f.md."),
    (str_replace("/memories/f.md", "same", "x"),
     "No replacement was performed. Multiple occurrences of old_str `same` in lines: 1, 2. Please ensure it is unique"),
    (insert("/memories/f.md", 9, "x"), TEXTS["bad_insert"].format(insert_line=9, n_lines=2)),
    (create("/memories", "x"), TEXTS["exists"].format(path="/memories")),
    (delete("/memories/gone"), "Error: The path /memories/gone does not exist"),
    (rename("/memories/gone", "/memories/new"), "Error: The path /memories/gone does not exist"),
    (rename("/memories/f.md", "/memories/f.md"), "Error: The destination /memories/f.md already exists"),
])
def test_failures_raise_tool_error_with_the_exact_text(tool, command, expected):
    tool.create(create("/memories/f.md", "same\nsame"))
    with pytest.raises(ToolError) as caught:
        tool.execute(command)
    assert caught.value.content == expected
    assert str(caught.value) == expected


def test_the_runner_path_dict_input(tool):
    """The runner hands ``call`` the raw tool_use input; errors come back as ToolError too."""
    assert tool.call({"command": "create", "path": "/memories/r.md", "file_text": "hi"}) == \
        "File created successfully at: /memories/r.md"
    assert tool.call({"command": "view", "path": "/memories/r.md"}).endswith("     1\thi")
    with pytest.raises(ToolError, match="does not exist"):
        tool.call({"command": "delete", "path": "/memories/nope"})


def test_tool_runner_sends_results_and_errors(tool, mem):
    """One turn of client.beta.messages.tool_runner against a fake API (an in-process HTTP transport)."""
    http = importlib.import_module(anthropic.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0])
    requests = []

    def api(request):
        requests.append(json.loads(request.content))
        if len(requests) == 1:
            content, stop = [
                {"type": "tool_use", "id": "tu_1", "name": "memory",
                 "input": {"command": "create", "path": "/memories/coffee.md", "file_text": "black"}},
                {"type": "tool_use", "id": "tu_2", "name": "memory", "input": {"command": "view", "path": "/etc"}},
            ], "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Noted."}], "end_turn"
        return http.Response(200, json={"id": f"msg_{len(requests)}", "type": "message", "role": "assistant",
                                        "model": "claude-test", "content": content, "stop_reason": stop,
                                        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    client = anthropic.Anthropic(api_key="test", base_url="http://api.invalid",
                                 http_client=http.Client(transport=http.MockTransport(api)))
    runner = client.beta.messages.tool_runner(model="claude-test", max_tokens=64, tools=[tool],
                                              messages=[{"role": "user", "content": "I take my coffee black."}])
    final = runner.until_done()

    assert final.content[0].text == "Noted."
    assert requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = requests[1]["messages"][-1]["content"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "tu_1",
                          "content": "File created successfully at: /memories/coffee.md"}
    assert results[1] == {"type": "tool_result", "tool_use_id": "tu_2", "is_error": True,
                          "content": TEXTS["not_memories"].format(path="/etc")}
    assert mem.core.read("sam", "/memories/coffee.md").content == "black"


def test_namespaces_and_datasets_stay_apart(mem):
    agent = KenningMemoryTool(mem, "sam", namespace="agent:planner")
    other = KenningMemoryTool(mem, "alex")
    agent.create(create("/memories/plan.md", "step 1"))
    assert [f.path for f in mem.core.list("sam", "agent:planner")] == ["/memories/plan.md"]
    assert mem.core.list("sam") == []
    with pytest.raises(ToolError, match="does not exist"):
        other.view(view("/memories/plan.md"))


def test_clear_all_memory(tool, mem):
    tool.create(create("/memories/a.md", "a"))
    tool.create(create("/memories/b/c.md", "c"))
    assert tool.clear_all_memory() == "All memory cleared"
    assert mem.core.list("sam") == []
    assert [v.op for v in mem.core.history("sam", "/memories/a.md")][0] == "create"  # kept in the history


def test_bad_names_fail_at_construction(mem):
    with pytest.raises(InputError, match="dataset"):
        KenningMemoryTool(mem, "not a dataset!")
    with pytest.raises(InputError, match="namespace"):
        KenningMemoryTool(mem, "sam", namespace="everyone")


def test_async_tool(mem):
    tool = AsyncKenningMemoryTool(mem, "sam")
    assert isinstance(tool, anthropic.lib.tools.BetaAsyncAbstractMemoryTool)

    async def main():
        created = await tool.create(create("/memories/a.md", "async"))
        viewed = await tool.view(view("/memories/a.md"))
        via_call = await tool.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "async",
                                    "new_str": "awaited"})
        with pytest.raises(ToolError) as caught:
            await tool.delete(delete("/memories/none"))
        renamed = await tool.rename(rename("/memories/a.md", "/memories/b.md"))
        inserted = await tool.insert(insert("/memories/b.md", 1, "two"))
        cleared = await tool.clear_all_memory()
        return created, viewed, via_call, caught.value, renamed, inserted, cleared

    created, viewed, via_call, error, renamed, inserted, cleared = asyncio.run(main())
    assert created == "File created successfully at: /memories/a.md"
    assert viewed.endswith("     1\tasync")
    assert "     1\tawaited" in via_call
    assert error.content == "Error: The path /memories/none does not exist"
    assert renamed == "Successfully renamed /memories/a.md to /memories/b.md"
    assert inserted == "The file /memories/b.md has been edited."
    assert cleared == "All memory cleared" and mem.core.list("sam") == []
