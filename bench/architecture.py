"""The shape of the code, in numbers: backend sizes, contract sizes, the longest functions and
reaches into other modules' private names (the architecture issue's before/after table).

    python bench/architecture.py [--json OUT]
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kenning"


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def contracts() -> dict[str, int]:
    """Abstract methods per abstract class under kenning.store."""
    sys.path.insert(0, str(ROOT / "src"))
    import kenning.store.base as base

    out = {}
    for name, cls in inspect.getmembers(base, inspect.isclass):
        if cls.__module__ == base.__name__ and getattr(cls, "__abstractmethods__", None):
            out[name] = len(cls.__abstractmethods__)
    return out


def longest_functions(n: int = 10) -> list[tuple[int, str]]:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((node.end_lineno - node.lineno + 1, f"{path.relative_to(SRC.parent)}:{node.name}"))
    return sorted(found, reverse=True)[:n]


def private_accesses() -> list[str]:
    spec = importlib.util.spec_from_file_location("arch_rules", ROOT / "tests" / "test_architecture.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.private_accesses(SRC)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    store = SRC / "store"
    shared = [p for p in store.glob("*.py") if p.name not in ("sqlite.py", "postgres.py", "__init__.py")]
    out = {
        "lines": {"sqlite.py": _lines(store / "sqlite.py"), "postgres.py": _lines(store / "postgres.py"),
                  "shared store layer": sum(_lines(p) for p in shared)},
        "abstract methods per contract": contracts(),
        "longest functions": longest_functions(),
        "cross-module private accesses": len(private_accesses()),
    }
    for key, value in out.items():
        print(f"{key}:")
        rows = value.items() if isinstance(value, dict) else (value if isinstance(value, list) else [("", value)])
        for a, b in rows:
            print(f"  {a}  {b}" if a != "" else f"  {b}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
