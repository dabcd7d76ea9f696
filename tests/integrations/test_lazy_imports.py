"""The frameworks stay optional: ``import kenning`` (and building a Memory) loads none of them, and each
adapter loads only its own. Run in fresh interpreters, since this process has imported them all."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

FRAMEWORKS = ("langgraph", "langchain_core", "langmem", "agents", "openai", "llama_index", "pydantic_ai", "anthropic")


def loaded(code: str) -> list[str]:
    """The framework packages a fresh interpreter has imported after running ``code``."""
    probe = (f"{code}\nimport sys, json\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(FRAMEWORKS)!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kenning_and_a_working_memory_load_no_framework():
    assert loaded("import kenning, kenning.integrations\nfrom kenning import Memory\n"
                  "m = Memory(':memory:', embedder=None)\nm.add('I live in Porto.', 'sam')\nm.close()") == []


@pytest.mark.parametrize("module, own", [
    ("langgraph", {"langgraph", "langchain_core"}),
    ("openai_agents", {"agents", "openai"}),
    ("llamaindex", {"llama_index"}),
    ("pydantic_ai", {"pydantic_ai"}),
])
def test_each_adapter_loads_its_own_framework_only(module, own):
    got = set(loaded(f"import kenning.integrations.{module}"))
    assert own <= got, f"{module} did not load {own - got}"
    # no adapter brings in another's framework (what a framework itself imports, such as a model SDK, is its own)
    assert not (got & ({"langgraph", "langmem", "agents", "llama_index", "pydantic_ai"} - own)), got


@pytest.mark.parametrize("module, packages, extra", [
    ("anthropic", ("anthropic",), "anthropic"),
    ("langgraph", ("langgraph", "langchain"), "langgraph"),
    ("openai_agents", ("agents",), "openai-agents"),
    ("llamaindex", ("llama_index",), "llamaindex"),
    ("pydantic_ai", ("pydantic_ai",), "pydantic-ai"),
])
def test_without_its_framework_an_adapter_says_how_to_install_it(monkeypatch, module, packages, extra):
    for name in {*packages, *(n for n in sys.modules if n.split(".")[0] in packages)}:
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: importing the framework fails
    monkeypatch.delitem(sys.modules, f"kenning.integrations.{module}", raising=False)
    with pytest.raises(ImportError, match=rf"pip install 'kenning\[{extra}\]'"):
        importlib.import_module(f"kenning.integrations.{module}")
    import kenning.integrations  # the package itself never needs a framework

    assert kenning.integrations.__doc__
