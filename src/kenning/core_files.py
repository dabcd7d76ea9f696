"""Core memory files: small texts under /memories that the model edits with Anthropic's memory tool.

Files live in the database, never on the host, so no path can reach the host;
paths are still canonicalised and refused when they leave /memories (``..``,
backslashes, percent-encoded or double-encoded dots, NUL and control bytes).
``memory_tool`` speaks the tool's protocol (``memory_20250818``) and answers
with its texts byte for byte (all in :data:`TEXTS`); failures raise
:class:`~kenning.errors.MemoryToolError` carrying the exact text to return with
``is_error: true``. The library face (``view``, ``write``, ``str_replace`` …)
raises typed errors with stable codes instead.
"""
from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from typing import TYPE_CHECKING
from urllib.parse import unquote

from .errors import (Conflict, InputError, KenningError, MemoryAmbiguous, MemoryConflict, MemoryNoMatch, MemoryToolError,
                     NotFound, QuotaExceeded, TextTooLarge)
from .model import CoreFile, CoreFileVersion, Scope
from .notes import ORGANIZATION, check_namespace, home_scope
from .services import check_page
from .write import check_room

if TYPE_CHECKING:
    from .services import Services

ROOT = "/memories"
MAX_LINES = 999_999
SNIPPET_CONTEXT = 2   # lines shown before and after the first changed one (the SDK's snippet)
MAX_DECODES = 8   # percent-decoding rounds a path may need; one still encoded after them is refused
MAX_PATH_CHARS = 1024   # a path (as given, and decoded) is a name, never a payload: PATH_MAX's order
MAX_NAME_CHARS = 255    # one part of it, as NAME_MAX
MAX_LINES_NAMED = 100   # an ambiguous str_replace names the lines of at most this many occurrences

# Every text the memory tool answers with, in one place (Anthropic's memory tool documentation).
TEXTS = {
    "dir": "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items and node_modules:",
    "not_file": "The path {path} is not a file.",
    "file": "Here's the content of {path} with line numbers:",
    "too_long": "File {path} exceeds maximum line limit of 999,999 lines.",
    "missing": "The path {path} does not exist. Please provide a valid path.",
    "edit_missing": "Error: The path {path} does not exist. Please provide a valid path.",
    "created": "File created successfully at: {path}",
    "exists": "Error: File {path} already exists",
    "edited": "The memory file has been edited. Here's the result of running `cat -n` on a snippet of {path}:",
    "no_match": "No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.",
    "ambiguous": ("No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: "
                  "{line_numbers}. Please ensure it is unique"),
    "inserted": "The file {path} has been edited.",
    "bad_insert": ("Error: Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines "
                   "of the file: [0, {n_lines}]"),
    "deleted": "Successfully deleted {path}",
    "delete_missing": "Error: The path {path} does not exist",
    "renamed": "Successfully renamed {old_path} to {new_path}",
    "rename_missing": "Error: The path {old_path} does not exist",
    "rename_exists": "Error: The destination {new_path} already exists",
    # Not in the documentation: the SDK's reference implementation's words.
    "root_delete": "Cannot delete the /memories directory itself",
    "root_rename": "Cannot rename the /memories directory itself",
    "escape": "Path {path} would escape /memories directory",
    "not_memories": "Path must start with /memories, got: {path}",
    # Not in the tool's documentation: kenning's own refusals.
    "outside": "Error: The path {path} is not inside /memories. Use a path that starts with /memories/",
    "root": "Error: {path} is the memory directory itself; it cannot be {verb}",
    "bad_command": "Error: Unknown memory command {command!r}. Use view, create, str_replace, insert, delete or rename",
    "bad_params": "Error: Invalid parameters for {command}: {problem}",
    "too_large": "Error: File {path} would hold {size:,} characters; a memory file holds at most {limit:,}",
    "is_dir": "Error: {path} is a directory; give a file path inside it",
    "quota": ("{path} cannot be created: this memory holds {limit:,} files, as many as it may; delete "
              "or merge some first"),
    "deceptive": ("Error: The path {path} holds a character that imitates a dot or slash, or an invisible or "
                  "direction-changing one; use plain characters"),
    "in_file": "Error: {parent} is a file, so {path} cannot be created inside it",
    "into_itself": "Error: {old_path} cannot be moved into itself ({new_path})",
    "path_too_long": ("Error: The path {path} is {size:,} characters long, or has a part longer than {name_limit}; "
                      "a memory path holds at most {limit:,} characters"),
}


def _say(key: str, **values) -> str:
    return TEXTS[key].format(**values)


MAX_RENDER_LIMIT = 1_000_000      # characters one render returns at most, whatever max_render asks
MAX_RENDER_NAMESPACES = 16

# Characters that read as a dot or a slash, reverse the text around them or hide: a path holding one
# could show as another file's name (U+FF0E fullwidth full stop, U+2025 two dot leader, U+202E).
LOOKALIKES = frozenset("\u2024\u2025\u2026\ufe52\uff0e\u2215\u2044\u29f8\uff0f\u2216\ufe68\uff3c\u3002\uff61")


def _deceptive(c: str) -> bool:
    """A look-alike of '.', '/' or '\\', or an invisible format character (bidi controls, zero widths)."""
    if c in LOOKALIKES or unicodedata.category(c) in ("Cf", "Cs", "Co", "Zl", "Zp"):
        return True
    folded = unicodedata.normalize("NFKC", c)
    return folded != c and any(x in folded for x in "./\\")


def _shown(path: str) -> str:
    """A path as an error names it: cut, so an oversized one is not echoed whole."""
    return path if len(path) <= 80 else f"{path[:60]}…{path[-12:]}"


def _check_length(path: str) -> None:
    if len(path) > MAX_PATH_CHARS or any(len(part) > MAX_NAME_CHARS for part in path.split("/")):
        raise MemoryToolError(_say("path_too_long", path=_shown(path), size=len(path), limit=MAX_PATH_CHARS,
                                   name_limit=MAX_NAME_CHARS))


def canonical(path: object) -> str:
    """The canonical form of a /memories path; raises MemoryToolError for anything outside it. Every
    check is linear in the path's length, and the length is capped before any of them."""
    if not isinstance(path, str) or not path:
        raise MemoryToolError(_say("outside", path=path))
    _check_length(path)
    decoded = path
    for _ in range(MAX_DECODES):  # double-, triple-… encoded dots and slashes decode to what they mean
        if unquote(decoded) == decoded:
            break
        decoded = unquote(decoded)
    else:  # still encoded: a stored name must be one the tool can be handed back (and never decode to '..')
        raise MemoryToolError(_say("outside", path=path))
    if any(ord(c) < 32 or ord(c) == 127 for c in decoded) or "\\" in decoded:
        raise MemoryToolError(_say("outside", path=path))
    if any(ord(c) > 127 and _deceptive(c) for c in decoded):
        raise MemoryToolError(_say("deceptive", path=path))
    if not (decoded == ROOT or decoded.startswith(ROOT + "/")):
        raise MemoryToolError(_say("outside", path=path))
    parts = decoded.split("/")
    if ".." in parts:
        raise MemoryToolError(_say("outside", path=path))
    normal = posixpath.normpath(decoded)
    if not (normal == ROOT or normal.startswith(ROOT + "/")):
        raise MemoryToolError(_say("outside", path=path))
    return normal


def human_size(n: int) -> str:
    """A size as the SDK's memory tool lists it: 0B, 12B, 1.5K, 4K, 2.3M."""
    if n == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((n.bit_length() - 1) // 10, len(units) - 1)
    size = n / 1024 ** i
    return f"{int(size)}{units[i]}" if size == int(size) else f"{size:.1f}{units[i]}"


def tool_path(raw: object) -> str:
    """A path as the memory tool takes it: anything under /memories, ``..`` and ``.`` resolved as a
    filesystem would (``/memories/d/../a.md`` is ``/memories/a.md``), never above /memories; the
    characters :func:`canonical` refuses are refused here too."""
    if not isinstance(raw, str) or not raw.startswith(ROOT):
        raise MemoryToolError(_say("not_memories", path=_shown(raw) if isinstance(raw, str) else raw))
    _check_length(raw)
    if raw != ROOT and not raw.startswith(ROOT + "/"):   # /memoriesX is not inside /memories
        raise MemoryToolError(_say("escape", path=raw))
    normal = posixpath.normpath(raw)
    if not (normal == ROOT or normal.startswith(ROOT + "/")):
        raise MemoryToolError(_say("escape", path=raw))
    return canonical(normal)


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))


class Core:
    """``mem.core``: core memory files of a dataset's namespaces."""

    def __init__(self, services: "Services"):
        self._s = services

    def _where(self, dataset: str, namespace: str, project, environment) -> tuple[Scope, str]:
        scope = self._s.scope(dataset, project, environment)
        return home_scope(scope, check_namespace(namespace)), namespace

    # -- the memory tool --------------------------------------------------------------------
    def memory_tool(self, dataset: str, command: dict, namespace: str = "user", *, project: str | None = None,
                    environment: str | None = None) -> str:
        """Run one memory tool call as Claude sends it; the result text, or MemoryToolError with it."""
        scope, ns = self._where(dataset, namespace, project, environment)
        if not isinstance(command, dict) or not isinstance(command.get("command"), str):
            raise MemoryToolError(_say("bad_command", command=command.get("command") if isinstance(command, dict)
                                       else command))
        name = command["command"]
        handler = getattr(self, f"_tool_{name}", None)
        if handler is None:
            raise MemoryToolError(_say("bad_command", command=name))
        try:
            return handler(scope, ns, command)
        except MemoryToolError:
            raise
        except KeyError as exc:
            raise MemoryToolError(_say("bad_params", command=name, problem=f"missing {exc.args[0]!r}")) from None
        except (TypeError, ValueError) as exc:
            raise MemoryToolError(_say("bad_params", command=name, problem=str(exc))) from None
        except KenningError as exc:
            raise MemoryToolError(f"Error: {exc}") from None

    # Each command behaves as the Anthropic SDK's reference implementation does on a directory
    # (``BetaLocalFilesystemMemoryTool``) and answers with the documented strings, echoing the path as
    # it was given; the remaining differences are listed in tests/memory_tool_diff.py.
    def _tool_view(self, scope: Scope, ns: str, c: dict) -> str:
        raw = c["path"]
        path = tool_path(raw)
        files = self._s.store.core_list(scope, ns)
        found = next((f for f in files if f.path == path), None)
        if found is not None:
            lines = found.content.split("\n")
            if len(lines) > MAX_LINES:
                raise MemoryToolError(_say("too_long", path=raw))
            start, end = _view_range(c.get("view_range"), len(lines))
            return _say("file", path=raw) + "\n" + _numbered(lines[start:end], start + 1)
        inside = [f for f in files if f.path.startswith(path.rstrip("/") + "/")]
        if path != ROOT and not inside:
            raise MemoryToolError(_say("missing", path=raw))
        return self._listing(raw, path, inside)

    def _listing(self, raw: str, path: str, files: list[CoreFile]) -> str:
        """Two levels below ``path``, depth first, names sorted within each folder, folders with a
        trailing slash; hidden names and node_modules left out."""
        base = path.rstrip("/")
        tree: dict = {}
        for f in files:
            rel = f.path[len(base) + 1:].split("/")
            if any(part.startswith(".") or part == "node_modules" for part in rel):
                continue
            node = tree
            for part in rel[:-1]:
                node = node.setdefault(part, {})
                node.setdefault("", 0)
                node[""] += f.size
            node[rel[-1]] = f.size
        lines = [_say("dir", path=raw), f"{human_size(sum(f.size for f in files))}\t{raw}"]

        def walk(node: dict, prefix: str, depth: int) -> None:
            for name in sorted(k for k in node if k):
                child = node[name]
                if isinstance(child, dict):
                    lines.append(f"{human_size(child[''])}\t{raw}/{prefix}{name}/")
                    if depth < 2:
                        walk(child, f"{prefix}{name}/", depth + 1)
                else:
                    lines.append(f"{human_size(child)}\t{raw}/{prefix}{name}")
        walk(tree, "", 1)
        return "\n".join(lines)

    def _kind(self, scope: Scope, ns: str, path: str) -> str:
        """"file", "dir" (the root, or a path files sit under) or "none"."""
        if path == ROOT:
            return "dir"
        if self._s.store.core_get(scope, ns, path) is not None:
            return "file"
        prefix = path + "/"
        return "dir" if any(f.path.startswith(prefix) for f in self._s.store.core_list(scope, ns)) else "none"

    def _tool_create(self, scope: Scope, ns: str, c: dict) -> str:
        raw = c["path"]
        path = tool_path(raw)
        text = c["file_text"]
        if not isinstance(text, str):
            raise TypeError("file_text must be a string")
        expected = c.get("expected_version")
        with self._s.store.transaction(scope):
            current = self._s.store.core_get(scope, ns, path)
            # a file is never overwritten by create, unless the caller names the version it replaces
            if self._kind(scope, ns, path) != "none" and (expected is None or current is None
                                                          or current.version != expected):
                raise MemoryToolError(_say("exists", path=raw))
            if expected is not None and current is None and expected != 0:
                raise MemoryToolError(_say("exists", path=raw))
            self._put(scope, ns, path, text, "create")
        return _say("created", path=raw)

    def _editable(self, scope: Scope, ns: str, raw: str) -> tuple[str, CoreFile]:
        path = tool_path(raw)
        current = self._s.store.core_get(scope, ns, path)
        if current is None:
            kind = self._kind(scope, ns, path)
            raise MemoryToolError(_say("not_file" if kind == "dir" else "edit_missing", path=raw))
        return path, current

    def _tool_str_replace(self, scope: Scope, ns: str, c: dict) -> str:
        raw = c["path"]
        old, new = c["old_str"], c.get("new_str") or ""
        if not isinstance(old, str) or not isinstance(new, str):
            raise TypeError("old_str and new_str must be strings")
        with self._s.store.transaction(scope):   # read and write inside; the error texts are made after it
            path, current = self._editable(scope, ns, raw)
            content = current.content
            count = content.count(old)
            if count == 1:
                at = content.find(old)
                text = content.replace(old, new)
                self._put(scope, ns, path, text, "str_replace")
        if count == 0:
            raise MemoryToolError(_say("no_match", old_str=old, path=raw))
        if count > 1:
            raise MemoryToolError(_say("ambiguous", old_str=old, line_numbers=_line_numbers(content, old)))
        changed = content.count("\n", 0, at)   # 0-based: the line the replacement starts on
        lines = text.split("\n")
        lo, hi = max(0, changed - SNIPPET_CONTEXT), min(len(lines), changed + SNIPPET_CONTEXT + 1)
        return _say("edited", path=raw) + "\n" + _numbered(lines[lo:hi], lo + 1)

    def _tool_insert(self, scope: Scope, ns: str, c: dict) -> str:
        raw = c["path"]
        line, text = c["insert_line"], c["insert_text"]
        if not isinstance(text, str):
            raise TypeError("insert_text must be a string")
        with self._s.store.transaction(scope):
            path, current = self._editable(scope, ns, raw)
            lines = current.content.split("\n")
            if lines[-1] == "":   # the empty tail a trailing newline leaves is not a line
                lines.pop()
            if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line <= len(lines):
                raise MemoryToolError(_say("bad_insert", insert_line=line, n_lines=len(lines)))
            lines.insert(line, text.rstrip("\n"))
            body = "\n".join(lines)
            self._put(scope, ns, path, body if body.endswith("\n") else body + "\n", "insert")
        return _say("inserted", path=raw)

    def _tool_delete(self, scope: Scope, ns: str, c: dict) -> str:
        raw = c["path"]
        path = tool_path(raw)
        if path == ROOT:
            raise MemoryToolError(_say("root_delete"))
        with self._s.store.transaction(scope):
            files = self._s.store.core_list(scope, ns)
            doomed = [f for f in files if f.path == path or f.path.startswith(path + "/")]
            if not doomed:
                raise MemoryToolError(_say("delete_missing", path=raw))
            for f in doomed:
                self._s.store.core_delete(scope, ns, f.path, keep=self._keep)
        return _say("deleted", path=raw)

    def _tool_rename(self, scope: Scope, ns: str, c: dict) -> str:
        old_raw, new_raw = c["old_path"], c["new_path"]
        old, new = tool_path(old_raw), tool_path(new_raw)
        if old == ROOT:
            raise MemoryToolError(_say("root_rename"))
        with self._s.store.transaction(scope):
            if self._kind(scope, ns, new) != "none":
                raise MemoryToolError(_say("rename_exists", new_path=new_raw))
            files = self._s.store.core_list(scope, ns)
            moving = [f for f in files if f.path == old or f.path.startswith(old + "/")]
            if not moving:
                raise MemoryToolError(_say("rename_missing", old_path=old_raw))
            if new.startswith(old + "/"):
                raise MemoryToolError(_say("into_itself", old_path=old_raw, new_path=new_raw))
            for f in moving:
                target = new + f.path[len(old):]
                self._put(scope, ns, target, f.content, f"rename from {f.path}", moving=old)
                self._s.store.core_delete(scope, ns, f.path, op=f"rename to {target}", keep=self._keep)
        return _say("renamed", old_path=old_raw, new_path=new_raw)

    def _file_path(self, raw, verb: str) -> str:
        path = canonical(raw)
        if path == ROOT:
            raise MemoryToolError(_say("root", path=path, verb=verb))
        return path

    def _existing(self, scope: Scope, ns: str, path: str, missing: str) -> CoreFile:
        current = self._s.store.core_get(scope, ns, path)
        if current is None:
            raise MemoryToolError(_say(missing, path=path))
        return current

    def _put(self, scope: Scope, ns: str, path: str, text: str, op: str, moving: str | None = None) -> CoreFile:
        _check_length(path)   # a rename's targets are new paths too
        limit = self._s.settings.max_core_chars
        if len(text) > limit:
            raise MemoryToolError(_say("too_large", path=path, size=len(text), limit=limit))
        files = {f.path for f in self._s.store.core_list(scope, ns)}
        if moving is not None:   # a rename: the files it moves away make room for themselves
            files = {f for f in files if not (f == moving or f.startswith(moving + "/"))}
        if any(f.startswith(path + "/") for f in files):
            raise MemoryToolError(_say("is_dir", path=path))
        check_room(self._s.store, self._s.settings, scope, stored_chars(path, ns, text))
        if path not in files and len(files) >= self._s.settings.max_core_files:
            raise QuotaExceeded(TEXTS["quota"].format(path=path, limit=self._s.settings.max_core_files))
        parent = next((f for f in files if path.startswith(f + "/")), None)   # one pass, not one per level
        if parent is not None:
            raise MemoryToolError(_say("in_file", path=path, parent=parent))
        return self._s.store.core_put(scope, ns, path, text, op, keep=self._keep)

    @property
    def _keep(self) -> int:
        return self._s.settings.max_core_versions

    # -- the library face ------------------------------------------------------------------------
    def _call(self, dataset, namespace, project, environment, command: dict) -> str:
        return self.memory_tool(dataset, command, namespace, project=project, environment=environment)

    def view(self, dataset: str, path: str = ROOT, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> str:
        return self._library(dataset, namespace, project, environment, {"command": "view", "path": path})

    def read(self, dataset: str, path: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> CoreFile:
        scope, ns = self._where(dataset, namespace, project, environment)
        found = self._s.store.core_get(scope, ns, self._checked(path))
        if found is None:
            raise NotFound(f"no core file {path} in namespace {namespace!r} of {dataset!r}")
        return found

    def list(self, dataset: str, namespace: str = "user", *, project: str | None = None,
             environment: str | None = None) -> list[CoreFile]:
        scope, ns = self._where(dataset, namespace, project, environment)
        return self._s.store.core_list(scope, ns)

    def history(self, dataset: str, path: str, namespace: str = "user", limit: int | None = None, offset: int = 0,
                newest_first: bool = False, *, project: str | None = None,
                environment: str | None = None) -> list[CoreFileVersion]:
        """The kept versions of a file (the newest ``max_core_versions``), oldest first unless
        ``newest_first``; ``limit`` (1-100) and ``offset`` page through them."""
        scope, ns = self._where(dataset, namespace, project, environment)
        if limit is not None or offset:
            check_page(100 if limit is None else limit, offset)
        return self._s.store.core_history(scope, ns, self._checked(path), limit, offset, newest_first)

    def write(self, dataset: str, path: str, text: str, expected_version: int | None = None,
              namespace: str = "user", *, project: str | None = None, environment: str | None = None) -> CoreFile:
        """Create or overwrite; with ``expected_version``, only if the file is still at it (0: absent)."""
        scope, ns = self._where(dataset, namespace, project, environment)
        path = self._checked(path, "written")
        if not isinstance(text, str):
            raise InputError("text must be a string")
        if len(text) > self._s.settings.max_core_chars:
            raise TextTooLarge(f"{path} would hold {len(text):,} characters; the limit (max_content) is "
                               f"{self._s.settings.max_core_chars:,}")
        with self._s.store.transaction(scope):
            current = self._s.store.core_get(scope, ns, path)
            have = current.version if current else 0
            if expected_version is not None and have != expected_version:
                raise MemoryConflict(f"{path} is at version {have}, not {expected_version}; read it again and retry")
            try:
                return self._put(scope, ns, path, text, "write")
            except MemoryToolError as exc:
                raise InputError(exc.text) from None

    def str_replace(self, dataset: str, path: str, old: str, new: str = "", expected_version: int | None = None,
                    namespace: str = "user", *, project: str | None = None,
                    environment: str | None = None) -> CoreFile:
        scope, ns = self._where(dataset, namespace, project, environment)
        path = self._checked(path, "edited")
        with self._s.store.transaction(scope):
            current = self.read(dataset, path, namespace, project=project, environment=environment)
            if expected_version is not None and current.version != expected_version:
                raise MemoryConflict(f"{path} is at version {current.version}, not {expected_version}")
            count = current.content.count(old) if old else 0
            if count == 0:
                raise MemoryNoMatch(f"{old!r} does not appear in {path}; nothing was replaced")
            if count > 1:
                raise MemoryAmbiguous(f"{old!r} appears {count} times in {path}; pass a longer, unique text")
            text = current.content.replace(old, new, 1)
            if len(text) > self._s.settings.max_core_chars:
                raise TextTooLarge(f"{path} would hold {len(text):,} characters; the limit (max_content) is "
                                   f"{self._s.settings.max_core_chars:,}")
            check_room(self._s.store, self._s.settings, scope, stored_chars(path, ns, text))
            return self._s.store.core_put(scope, ns, path, text, "str_replace", keep=self._keep)

    def insert(self, dataset: str, path: str, line: int, text: str, namespace: str = "user", *,
               project: str | None = None, environment: str | None = None) -> CoreFile:
        self._library(dataset, namespace, project, environment,
                      {"command": "insert", "path": path, "insert_line": line, "insert_text": text})
        return self.read(dataset, path, namespace, project=project, environment=environment)

    def remove(self, dataset: str, path: str, namespace: str = "user", *, project: str | None = None,
               environment: str | None = None) -> None:
        self._library(dataset, namespace, project, environment, {"command": "delete", "path": path})

    def rename(self, dataset: str, old_path: str, new_path: str, namespace: str = "user", *,
               project: str | None = None, environment: str | None = None) -> None:
        self._library(dataset, namespace, project, environment,
                      {"command": "rename", "old_path": old_path, "new_path": new_path})

    def _library(self, dataset, namespace, project, environment, command: dict) -> str:
        """The tool's behaviour with the library's errors: missing → NotFound, a clash with what the
        files hold now (an existing file, a line past the end) → Conflict, bad input → InputError."""
        try:
            return self._call(dataset, namespace, project, environment, command)
        except MemoryToolError as exc:
            if "does not exist" in exc.text:
                raise NotFound(exc.text) from None
            if "already exists" in exc.text:
                raise MemoryConflict(exc.text) from None
            if "Invalid `insert_line`" in exc.text:
                raise Conflict(exc.text) from None
            raise InputError(exc.text) from None

    def _checked(self, path: str, verb: str | None = None) -> str:
        try:
            return self._file_path(path, verb) if verb else canonical(path)
        except MemoryToolError as exc:
            raise InputError(exc.text) from None

    # -- the system prompt -----------------------------------------------------------------------
    def render(self, dataset: str, namespaces: list[str] | None = None, max_render: int | None = None, *,
               project: str | None = None, environment: str | None = None) -> str:
        """The core files of the user's namespaces (and the organization's) as delimited text,
        cut at ``max_render`` characters with a visible marker."""
        if max_render is not None and (isinstance(max_render, bool) or not isinstance(max_render, int)
                                       or max_render < 1):
            raise InputError(f"max_render must be a positive number of characters, not {max_render!r}")
        limit = min(max_render or self._s.settings.max_render, MAX_RENDER_LIMIT)
        spaces = list(dict.fromkeys(namespaces or ["user", ORGANIZATION]))   # each namespace once
        if len(spaces) > MAX_RENDER_NAMESPACES:
            raise InputError(f"render takes at most {MAX_RENDER_NAMESPACES} namespaces, not {len(spaces)}")
        blocks = []
        for ns in spaces:
            scope, ns = self._where(dataset, ns, project, environment)
            for f in self._s.store.core_list(scope, ns):
                blocks.append(f'<memory_file namespace="{ns}" path="{html.escape(f.path)}" version="{f.version}">'
                              f"\n{_unforgeable(f.content)}\n</memory_file>")
        text = "\n".join(blocks)
        if len(text) <= limit:
            return text
        marker = "\n[… memory cut here: {:,} more characters not shown]"
        kept = max(0, limit - len(marker.format(len(text))))
        return text[:kept] + marker.format(len(text) - kept)


_TAG_START = re.compile("[<\uff1c\ufe64]")   # '<' and the characters NFKC folds into it
_TAG = "memory_file"


def _ignorable(c: str) -> bool:
    """What a reader skips inside a tag: spaces, invisible format characters, combining marks, controls."""
    return c.isspace() or unicodedata.category(c) in ("Cf", "Mn", "Me", "Cc")


def _unforgeable(content: str) -> str:
    """A file's content with every tag-start that reads as ``<memory_file`` / ``</memory_file`` escaped, so
    no file can end its own block or open one that claims another namespace (attributes are escaped in
    ``render``). The words after a ``<`` are read as a model would: case, width (NFKC), spaces and
    invisible characters ignored. Each character is looked at by the nearest ``<`` before it at most,
    so the cost is linear."""
    out, last = [], 0
    for m in _TAG_START.finditer(content):
        i, seen = m.end(), []
        while i < len(content) and len(seen) < len(_TAG) + 1:
            c = content[i]
            i += 1
            if _TAG_START.match(c):
                break
            if not _ignorable(c):
                seen.append(unicodedata.normalize("NFKC", c).casefold())
        word = "".join(seen)
        if word.startswith(_TAG) or word.startswith("/" + _TAG):
            out.append(content[last:m.start()] + "&lt;")
            last = m.end()
    return "".join(out) + content[last:]


def stored_chars(path: str, namespace: str, text: str) -> int:
    """What one version of a file adds to the dataset's quota: its path and namespace count as its text
    does (the stores' usage triggers count the same)."""
    return len(path) + len(namespace) + len(text)


def _line_numbers(text: str, old: str) -> str:
    """The lines where ``old`` starts, overlapping matches included, as the tool names them when it is not
    unique: one pass over the text (each newline counted once), at most MAX_LINES_NAMED occurrences named."""
    numbers, line, counted = [], 1, 0
    at = text.find(old)
    while at >= 0 and len(numbers) < MAX_LINES_NAMED:
        line += text.count("\n", counted, at)
        counted = at
        numbers.append(str(line))
        at = text.find(old, at + 1)
    return ", ".join(numbers) + (", …" if at >= 0 else "")


def _view_range(view_range, n_lines: int) -> tuple[int, int]:
    """The 0-based slice ``[start, end)`` a view shows: the whole file, or ``view_range`` clamped to it
    as the SDK does (start below 1 reads from 1, end -1 or past the end reads to the end)."""
    if view_range is None or (isinstance(view_range, (list, tuple)) and len(view_range) != 2):
        return 0, n_lines
    if (not isinstance(view_range, (list, tuple))
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)):
        raise ValueError("view_range must be [start, end]")
    start, end = view_range
    return max(1, start) - 1, n_lines if end == -1 else end
