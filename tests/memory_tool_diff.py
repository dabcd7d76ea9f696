"""Random memory tool command sequences, run step by step against kenning and against the Anthropic
SDK's own reference implementation (``BetaLocalFilesystemMemoryTool``, files on a real directory).

What may differ is listed here and nowhere else:

- ``WORDING``: where kenning answers with the string Anthropic's memory tool documentation gives and
  the SDK words it otherwise (the SDK also leaves out the documented ``Error:`` prefix). Comparisons
  rewrite kenning's documented string into the SDK's before comparing, and nothing else.
- ``DELIBERATE``: behaviour kenning keeps on purpose; the generator does not aim at these, and
  tests/test_memory_tool_sdk.py asserts each one still holds.
"""
from __future__ import annotations

import os
import random
import re
import tempfile
from dataclasses import dataclass, field

WORDING = [   # (kenning's documented text, the SDK's text), as regular expressions over one answer
    (r"^Error: ", ""),
    (r"excluding hidden items and node_modules:", "excluding hidden items:"),
    (r"^The memory file has been edited\. Here's the result of running `cat -n` on a snippet of [^\n]*:",
     "The memory file has been edited. Here is the snippet showing the change (with line numbers):"),
    (r"It should be within the range of lines of the file: \[0, (\d+)\]$", r"It should be within the range [0, \1]."),
]

DELIBERATE = {
    "dir_size": "a directory's size in a listing: on a filesystem it is the directory entry's block size "
                "(4.0K on ext4), in a database there is none; kenning shows the sum of its files",
    "node_modules": "node_modules is left out of listings, as the documentation says (the SDK lists it)",
    "prefix_only": "/memoriesX is refused: the SDK reads any path that merely starts with /memories as inside it",
    "no_host": "a file's parent being a file, or a directory moved into itself, is refused with a message; "
               "the SDK raises the operating system's exception",
    "empty_dirs": "a directory exists while it holds files: the SDK's filesystem keeps a folder after its last "
                  "file is deleted or moved (then create on it says 'already exists', view lists it)",
    "decoding": "percent-encoded, look-alike and control characters in paths are refused (files live in a "
                "database and names must round-trip)",
}

PATHS = ["/memories", "/memories/a.md", "/memories/b.md", "/memories/d", "/memories/d/c.md", "/memories/d/e/f.md",
         "/memories/d/../a.md", "/memories/./b.md", "/memories/", "/memories/d/", "/memories/../etc/passwd",
         "notes.md"]
LINES = ["Name: Sam", "likes tea", "", "  indented", "Sam likes tea", "tea", "x\ty", "emoji 🙂"]


def _text(rng: random.Random) -> str:
    body = "\n".join(rng.choice(LINES) for _ in range(rng.randint(0, 4)))
    return body + rng.choice(["", "\n", "\n\n"])


def command(rng: random.Random, known: dict[str, str]) -> dict:
    """One random command, aimed at the paths and texts the sequence has made so far."""
    name = rng.choice(["view", "view", "create", "create", "str_replace", "insert", "delete", "rename"])
    path = rng.choice(PATHS + list(known) * 2)
    if name == "view":
        c = {"command": "view", "path": path}
        if rng.random() < 0.4:
            c["view_range"] = [rng.randint(-1, 5), rng.choice([-1, rng.randint(0, 7)])]
        return c
    if name == "create":
        return {"command": "create", "path": path, "file_text": _text(rng)}
    if name == "str_replace":
        content = known.get(path, "")
        pieces = [w for w in re.split(r"(\s+)", content) if w] + ["tea", "Sam", "zzz", "\n", ""]
        return {"command": "str_replace", "path": path, "old_str": rng.choice(pieces),
                "new_str": rng.choice(["coffee", "", "two\nlines", "tea"])}
    if name == "insert":
        return {"command": "insert", "path": path, "insert_line": rng.randint(-1, 6),
                "insert_text": rng.choice(["new line", "new line\n", "a\nb", "", "end\n\n"])}
    if name == "delete":
        return {"command": "delete", "path": path}
    return {"command": "rename", "old_path": path, "new_path": rng.choice(PATHS + list(known))}


def normalise(text: str) -> str:
    """kenning's answer in the SDK's words (``WORDING``), directory sizes blanked (``DELIBERATE``)."""
    for pattern, repl in WORDING:
        text = re.sub(pattern, repl, text, flags=re.M)
    return dir_sizes(text)


def dir_sizes(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[0].startswith("Here're the files and directories"):
        # DELIBERATE dir_size: a directory line's size is the filesystem's, not the content's
        lines = [lines[0]] + [re.sub(r"^[^\t]*\t", "<dir>\t", line) if (i == 0 or line.endswith("/")) else line
                              for i, line in enumerate(lines[1:])]
    return "\n".join(lines)


@dataclass
class Step:
    command: dict
    kenning: tuple[bool, str]
    sdk: tuple[bool, str] | None   # None: the SDK raised something other than its ToolError
    empty_dirs: bool = False       # the SDK's tree held a folder without files before this step

    @property
    def same(self) -> bool:
        return (self.sdk is not None and self.kenning[0] == self.sdk[0]
                and normalise(self.kenning[1]) == dir_sizes(self.sdk[1]))


@dataclass
class Run:
    steps: list[Step] = field(default_factory=list)
    kenning_files: dict[str, str] = field(default_factory=dict)
    sdk_files: dict[str, str] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        return all(s.same for s in self.steps) and self.kenning_files == self.sdk_files

    @property
    def crashed(self) -> bool:
        return any(s.sdk is None for s in self.steps)


def _sdk_files(root: str) -> dict[str, str]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in files:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            with open(full, encoding="utf-8") as f:
                out["/memories/" + rel] = f.read()
    return out


def _has_empty_dir(root: str) -> bool:
    for folder, dirs, files in os.walk(root):
        if folder != root and not any(files for _, _, files in os.walk(folder)):
            return True
    return False


def run_sequence(mem, dataset: str, seed: int, steps: int = 8) -> Run:
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
    from anthropic.lib.tools._beta_functions import ToolError

    from kenning import MemoryToolError

    rng = random.Random(seed)
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        sdk = BetaLocalFilesystemMemoryTool(base_path=tmp)
        known: dict[str, str] = {}
        for _ in range(steps):
            c = command(rng, known)
            empty = _has_empty_dir(os.path.join(tmp, "memories"))
            try:
                k = (True, mem.memory_tool(dataset, c))
            except MemoryToolError as exc:
                k = (False, exc.text)
            try:
                s: tuple[bool, str] | None = (True, sdk.call(c))
            except ToolError as exc:
                s = (False, str(exc.content))
            except Exception:  # noqa: BLE001 - the SDK lets OS errors through (DELIBERATE no_host)
                s = None
            run.steps.append(Step(c, k, s, empty))
            known = {f.path: f.content for f in mem.core.list(dataset)}
        run.kenning_files = known
        run.sdk_files = _sdk_files(os.path.join(tmp, "memories"))
    return run


def compare(mem, n: int, seed: int = 0, steps: int = 8) -> dict:
    """Share of sequences identical step for step (and in their final files), sequences where the SDK
    crashed left out; the first differing step of each other sequence, for reading."""
    runs = [run_sequence(mem, f"diff-{seed}-{i}", seed * 100_000 + i, steps) for i in range(n)]
    judged = [r for r in runs if not r.crashed]
    same = [r for r in judged if r.same]
    firsts = []
    for r in judged:
        if not r.same:
            step = next((s for s in r.steps if not s.same), None)
            firsts.append(step)
    return {"sequences": n, "judged": len(judged), "identical": len(same),
            "share": len(same) / max(1, len(judged)), "first_differences": firsts}
