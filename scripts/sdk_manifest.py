"""Write clients/typescript/sdk-manifest.json: the Python SDK's public methods and their parameters.

The TypeScript client's parity test reads it (every Python method has its camelCase counterpart);
tests/test_sdk_manifest.py fails when the file no longer matches the Python SDK. Run it after adding a method:
    .venv/bin/python scripts/sdk_manifest.py
"""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "clients" / "typescript" / "sdk-manifest.json"
PARTS = ("messages", "notes", "core", "documents", "erase")


def manifest() -> dict:
    from kenning.client import RemoteMemory

    client = RemoteMemory("http://127.0.0.1:9")

    def methods(obj, prefix: str) -> dict[str, list[str]]:
        return {prefix + name: [p for p in inspect.signature(getattr(obj, name)).parameters
                                if p not in ("project",)]
                for name in sorted(dir(obj)) if not name.startswith("_") and callable(getattr(obj, name))}

    found = methods(client, "")
    for part in PARTS:
        found.update(methods(getattr(client, part), f"{part}."))
    client.close()
    return {"source": "kenning.client.RemoteMemory (scripts/sdk_manifest.py)", "methods": found}


def render() -> str:
    return json.dumps(manifest(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
    print(f"wrote {OUT} ({len(manifest()['methods'])} methods)", file=sys.stderr)
