"""The README works as written: every code block runs, unchanged but for the server's address and
key (the README's ``kn_acme_…`` is a placeholder).

Python blocks run in order in one namespace (as a reader pastes them into one session), in an empty
folder with an empty KENNING_HOME; the service block talks to a real server on loopback. Shell
blocks run line by line with this environment's ``kenning`` on PATH, each line must exit 0. What is
not run is listed in SKIP with why.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from live_server import LiveServer

from kenning import Memory
from kenning.server.auth import hash_key

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
PLACEHOLDER, KEY = "kn_acme_…", "kn_acme_readme"   # the README's placeholder key, and the real one it stands for
SKIP = {   # shell lines not run, by their start: what they are is tested elsewhere
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/kenning demo":
        "installs into a new virtual environment (CI's fresh clone does it; `kenning demo` runs below)",
    "scripts/test.sh": "the test suite itself",
    "kenning serve": "a server until stopped (tests/server, tests/test_cli.py start it)",
    "kenning mcp": "a server until stopped (tests/test_mcp_server.py)",
    "kenning worker --threads 2  ": "runs until stopped; `--exit-when-idle` below runs",
    "kenning keys revoke 3f1c…": "a placeholder id (tests/test_cli.py revokes real ones)",
    "python3 -m venv .venv-bench": "benchmarks, run from a checkout, not tests",
    ".venv-bench/bin/kenning bench": "benchmarks, run from a checkout, not tests",
}


def blocks() -> list[tuple[str, str, str]]:
    """(language, code, the section it sits in), in README order."""
    text = README.read_text()
    out = []
    for m in BLOCK.finditer(text):
        heading = [h for h in re.findall(r"^## (.+)$", text[:m.start()], re.MULTILINE)][-1]
        out.append((m.group(1), m.group(2), heading))
    return out


def test_the_readme_has_the_blocks_this_test_runs():
    kinds = [(lang, section) for lang, _, section in blocks()]
    assert sum(lang == "python" for lang, _ in kinds) >= 6 and sum(lang == "sh" for lang, _ in kinds) >= 4


def _shell_lines(code: str) -> list[str]:
    lines = []
    for line in code.splitlines():
        line = line.split("  #")[0].rstrip() if not line.lstrip().startswith("#") else ""
        if line and not any((line + "  ").startswith(prefix) for prefix in SKIP):
            lines.append(line)
    return lines


@pytest.fixture
def folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("KENNING_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()   # the folder of the README's sqlite:///data/k.db
    return tmp_path


def test_every_python_block_runs_as_written(folder, monkeypatch, capsys):
    monkeypatch.setenv("KENNING_LLM_BASE_URL", "http://127.0.0.1:9/v1")   # the extractor block only builds one
    monkeypatch.setenv("KENNING_LLM_MODEL", "any")
    server_memory = Memory(str(folder / "server.db"))
    server_memory.store.put_api_key(hash_key(KEY), "acme", "service")
    server_memory.add("I live in Porto.", "sam", project="acme")   # the key's project
    namespace: dict = {"__name__": "__readme__"}
    opened: list = []   # what the reader's session leaves open (an HTTP client, a Memory) ends with it
    with LiveServer(server_memory) as live, contextlib.ExitStack() as ends:
        ends.callback(_close_all, opened)
        ran = 0
        for lang, code, section in blocks():
            if lang != "python":
                continue
            if "/var/lib/kenning" in code:   # the absolute-path example: the same kind of path, in this folder
                code = code.replace("sqlite:////var/lib/kenning/k.db", f"sqlite:///{folder}/abs.db")
            code = code.replace("http://127.0.0.1:8420", live.url).replace(PLACEHOLDER, KEY)
            try:
                exec(compile(code, f"README.md ({section})", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"the README block in {section!r} fails: {exc!r}\n{code}") from exc
            finally:   # a later block may bind the same name to another one: keep each to close at the end
                opened += [v for v in namespace.values() if _closable(v) and not any(v is o for o in opened)]
            ran += 1
        assert ran >= 6
    out = capsys.readouterr().out
    assert "porto" in out.lower(), "the service block recalled from the server"
    assert "may use dataset 'alex' only" in out, "the permission block prints what the README says it prints"
    assert namespace["system_prompt"].startswith("You are a helpful assistant.")
    assert namespace["r"].status in ("processing", "done")   # the last `r`: add_turn's receipt


def _closable(value) -> bool:
    from kenning.client import AsyncMemory, RemoteMemory

    return isinstance(value, (RemoteMemory, Memory)) and not isinstance(value, AsyncMemory)


def _close_all(opened: list) -> None:
    for value in opened:
        value.close()


def test_every_shell_line_runs_as_written(folder):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = []
    for lang, code, section in blocks():
        if lang != "sh":
            continue
        for line in _shell_lines(code):
            done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=folder, env=env, capture_output=True,
                                  text=True, timeout=300)
            assert done.returncode == 0, f"{section}: {line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            ran.append(line)
    assert any(line.startswith("kenning demo") for line in ran) and any("import" in line for line in ran)
    assert len(ran) >= 20, ran
    restored = subprocess.run(["kenning", "--db", "restored.db", "--json", "recall", "Where does the user work?",
                               "--dataset", "sam"], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert "stripe" in restored.stdout.lower(), "the restored store recalls what the original did"
