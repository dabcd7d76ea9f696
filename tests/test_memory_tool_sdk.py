"""kenning's memory tool against the Anthropic SDK's own reference implementation, command by command
(issue 18): random sequences, compared step for step after rewriting only the documented wording
differences (tests/memory_tool_diff.py lists them, with the deliberate differences)."""
from __future__ import annotations

import pytest

from kenning import Memory, MemoryToolError

from memory_tool_diff import DELIBERATE, compare, normalise

pytest.importorskip("anthropic")


@pytest.fixture(scope="module")
def plain():
    with Memory(":memory:", embedder=None) as mem:
        yield mem


def test_random_sequences_match_the_sdk_step_for_step(plain):
    """Measured on 1,000 sequences of 8 commands: 94.1% identical (0% before issue 18); every sequence
    that still differs first differs where the SDK's filesystem kept an empty folder (DELIBERATE
    empty_dirs). The issue's target was 95%."""
    result = compare(plain, 300, seed=1)
    assert result["judged"] >= 250
    assert result["share"] >= 0.92, result["share"]
    unexplained = [s for s in result["first_differences"] if s is None or not s.empty_dirs]
    assert unexplained == [], [(s.command, s.kenning, s.sdk) for s in unexplained[:3] if s]


def test_the_documented_wording_is_what_differs(plain):
    """kenning answers with the documentation's strings; rewritten by WORDING they are the SDK's."""
    plain.memory_tool("w", {"command": "create", "path": "/memories/a.md", "file_text": "x\ny\n"})
    edited = plain.memory_tool("w", {"command": "str_replace", "path": "/memories/a.md", "old_str": "y",
                                     "new_str": "z"})
    assert edited.startswith("The memory file has been edited. Here's the result of running `cat -n` on a snippet")
    assert normalise(edited).startswith("The memory file has been edited. Here is the snippet showing the change")
    with pytest.raises(MemoryToolError) as exc:
        plain.memory_tool("w", {"command": "create", "path": "/memories/a.md", "file_text": "again"})
    assert exc.value.text == "Error: File /memories/a.md already exists"
    assert normalise(exc.value.text) == "File /memories/a.md already exists"


def test_the_deliberate_differences_still_hold(plain):
    tool = lambda c: plain.memory_tool("dd", c)  # noqa: E731
    tool({"command": "create", "path": "/memories/node_modules/x.js", "file_text": "x"})
    assert "node_modules" not in tool({"command": "view", "path": "/memories"}).split("\n", 1)[1]  # node_modules
    for bad in ("/memoriesX/a.md", "/memories/%2e%2e/x", "/memories/a\x00b"):                    # prefix_only, decoding
        with pytest.raises(MemoryToolError):
            tool({"command": "create", "path": bad, "file_text": "x"})
    tool({"command": "create", "path": "/memories/f", "file_text": "x"})
    with pytest.raises(MemoryToolError, match="is a file"):                                      # no_host
        tool({"command": "create", "path": "/memories/f/inner.md", "file_text": "x"})
    tool({"command": "create", "path": "/memories/d/a.md", "file_text": "x"})
    with pytest.raises(MemoryToolError, match="into itself"):                                    # no_host
        tool({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/d/e"})
    tool({"command": "delete", "path": "/memories/d/a.md"})
    with pytest.raises(MemoryToolError, match="does not exist"):                                 # empty_dirs
        tool({"command": "view", "path": "/memories/d"})
    assert set(DELIBERATE) == {"dir_size", "node_modules", "prefix_only", "no_host", "empty_dirs", "decoding"}
