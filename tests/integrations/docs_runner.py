"""Run a page of docs/integrations/ as written, the way tests/test_readme.py runs the README.

Every ```python block of the page runs in order in one namespace (as a reader pastes them into one
session), in an empty folder with an empty KENNING_HOME. The only change allowed is ``swap``: text that
names something the suite cannot reach (a hosted model such as ``"openai:gpt-4.1"``) replaced by the
framework's own scripted test model. Each swapped text must appear on the page, so a swap cannot go stale
and leave the page untested.
"""
from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text())


def run_page(page: str, folder: Path, monkeypatch, swap: dict[str, str] | None = None,
             namespace: dict | None = None) -> dict:
    """Run ``page``'s Python blocks in ``folder``; returns the namespace they ran in (to check what they did).

    ``namespace`` may hold names the swapped-in text uses (a test model built by the test)."""
    home = folder / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("KENNING_HOME", str(home))
    monkeypatch.chdir(folder)
    blocks = python_blocks(page)
    assert blocks, f"docs/integrations/{page} has no python block to run"
    text = "\n".join(blocks)
    for old, new in (swap or {}).items():
        assert old in text, f"the swap {old!r} no longer appears in docs/integrations/{page}"
    # The page runs as a module of its own (a dataclass on it finds its module), compiled without this
    # file's ``from __future__`` flags: what the reader's own session would have.
    module = types.ModuleType("__docs__")
    module.__dict__.update(namespace or {})
    monkeypatch.setitem(sys.modules, "__docs__", module)
    for i, code in enumerate(blocks):
        for old, new in (swap or {}).items():
            code = code.replace(old, new)
        exec(compile(code, f"docs/integrations/{page} block {i + 1}", "exec", dont_inherit=True), module.__dict__)
    return module.__dict__
