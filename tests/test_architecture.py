"""Module boundaries: no module reaches into another module's private names.

A name that starts with one underscore is private to the module that defines it. Attribute access
``obj._name`` counts as reaching in when the module doing it defines no ``_name`` of its own (as a
function, class member or ``self._name``), and ``from x import _name`` always does. Dunders and the
namedtuple protocol (``_replace``, ``_asdict``, ``_fields``, ``_make``) are public by convention.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kenning"
PUBLIC_BY_CONVENTION = frozenset({"_replace", "_asdict", "_fields", "_make", "_exit", "_getframe"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_BY_CONVENTION


def _own_names(tree: ast.AST) -> set[str]:
    """Private names a module defines: its functions, classes, class members and ``self._x`` slots."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    return {n for n in own if _private(n)}


def private_accesses(root: Path = SRC) -> list[str]:
    """``path:line name`` for each reach into another module's private name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        own = _own_names(tree)
        rel = path.relative_to(root.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{rel}:{node.lineno} import {alias.name}")
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                found.append(f"{rel}:{node.lineno} .{node.attr}")
    return found


def test_no_module_reaches_into_another_modules_private_names():
    found = private_accesses()
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_the_checker_sees_a_reach_in(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("class A:\n    def __init__(self):\n        self._x = 1\n")
    (pkg / "b.py").write_text("from .a import A, _hidden\n\ndef f(a):\n    return a._x + a._replace\n")
    assert private_accesses(pkg) == ["pkg/b.py:1 import _hidden", "pkg/b.py:4 ._x"]
