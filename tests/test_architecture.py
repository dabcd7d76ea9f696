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


# -- layers: what a module may import ------------------------------------------------------------------
# The foundation every layer uses, and what the layers above may not be reached from below.
FOUNDATION = {"kenning.model", "kenning.errors", "kenning.timeutil", "kenning.records", "kenning.config"}
LAYERS = {
    # the stores: the foundation, the embedder's vector checks and each other
    "kenning.store": FOUNDATION | {"kenning.embed.base", "kenning.store"},
    # the HTTP SDK: the result types and errors only (no ranking engine, store or server)
    "kenning.client": FOUNDATION,
    # extractors read text and the fact vocabulary (the learned one with the bundled encoder's token
    # states); they know nothing of storage or serving
    "kenning.extract": FOUNDATION | {"kenning.extract", "kenning.predicates", "kenning.vocabulary",
                                     "kenning.embed.local", "kenning.embed.base"},
    # the fact vocabulary is data: it reads its table and nothing of kenning
    "kenning.vocabulary": set(),
}


def _imports(path: Path, package: str) -> set[str]:
    """The kenning modules a file imports (relative imports resolved against ``package``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("kenning")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("kenning"):
                out.add(name)
                out |= {f"{name}.{a.name}" for a in node.names}   # "from . import timeutil"
    return out


def _module(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    return ".".join(rel.parts if rel.name != "__init__" else rel.parts[:-1])


def layer_breaches(root: Path = SRC) -> list[str]:
    found = []
    modules = {_module(path, root) for path in root.rglob("*.py")}
    for path in sorted(root.rglob("*.py")):
        module = _module(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for layer, allowed in LAYERS.items():
            if module != layer and not module.startswith(layer + "."):
                continue
            for name in sorted(_imports(path, package)):
                known = any(name == a or name.startswith(a + ".") for a in allowed)
                inside = name in modules
                if inside and not known and name != "kenning":   # "from .. import x" names x as well
                    found.append(f"{module} imports {name}")
    return found


def test_each_layer_imports_only_what_it_may():
    found = layer_breaches()
    assert not found, "imports across layers:\n" + "\n".join(found)


def test_the_layer_check_sees_a_store_importing_the_read_path(tmp_path):
    pkg = tmp_path / "kenning"
    (pkg / "store").mkdir(parents=True)
    for name in ("__init__.py", "model.py", "recall.py", "store/__init__.py"):
        (pkg / name).write_text("")
    (pkg / "store" / "sqlite.py").write_text("from .. import model\nfrom ..recall import Recaller\n")
    assert layer_breaches(pkg) == ["kenning.store.sqlite imports kenning.recall"]
