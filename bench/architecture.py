"""The shape of the code, in numbers: backend sizes, contract sizes, the longest functions and
reaches into other modules' private names (the architecture issue's before/after table).

    python bench/architecture.py [--json OUT]
"""
from __future__ import annotations

import argparse
import ast
import difflib
import re
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kenning"


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def contracts() -> dict[str, int]:
    """Abstract methods per abstract class of store/base.py (a class counts those it inherits there)."""
    tree = ast.parse((SRC / "store" / "base.py").read_text())
    own, bases = {}, {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            own[node.name] = sum(1 for f in node.body if isinstance(f, ast.FunctionDef) and any(
                getattr(d, "id", getattr(d, "attr", None)) == "abstractmethod" for d in f.decorator_list))
            bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]

    def total(name: str) -> int:
        return own.get(name, 0) + sum(total(b) for b in bases.get(name, []) if b in own)
    return {name: total(name) for name in own if total(name)}


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


SQL_START = re.compile(r"^\s*(?:WITH|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER)\b", re.I)
PLACEHOLDER = re.compile(r"%\(\w+\)s|%s|\?|:\w+")


def sql_strings(path: Path) -> list[str]:
    """The SQL statements a file spells out: string constants (f-strings joined) that start like SQL,
    placeholders normalised to ``?`` and whitespace collapsed, so two backends' texts compare."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if SQL_START.match(text):
            out.append(" ".join(PLACEHOLDER.sub("?", text).split()))
    return out


def sql_overlap(a: Path, b: Path) -> dict:
    """How many of ``a``'s statements ``b`` repeats: identical, or at least 80% alike."""
    left, right = sql_strings(a), sql_strings(b)
    same = sum(1 for x in left if x in right)
    alike = sum(1 for x in left if any(difflib.SequenceMatcher(None, x, y).ratio() >= 0.8 for y in right))
    return {"sql strings": [len(left), len(right)], "identical": same, "at least 80% alike": alike}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="")
    ap.add_argument("--src", type=Path, default=None, help="another checkout's src/kenning (a before figure)")
    args = ap.parse_args(argv)
    global SRC
    SRC = args.src.resolve() if args.src else SRC
    store = SRC / "store"
    shared = [p for p in store.glob("*.py") if p.name not in ("sqlite.py", "postgres.py", "__init__.py")]
    out = {
        "lines": {"sqlite.py": _lines(store / "sqlite.py"), "postgres.py": _lines(store / "postgres.py"),
                  "shared store layer": sum(_lines(p) for p in shared)},
        "abstract methods per contract": contracts(),
        "longest functions": longest_functions(),
        "cross-module private accesses": len(private_accesses()),
        "sqlite.py vs postgres.py": sql_overlap(store / "sqlite.py", store / "postgres.py"),
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
