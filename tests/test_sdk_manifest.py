"""The manifest of the Python SDK's methods that the TypeScript client's parity test reads is current."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_manifest_matches_the_python_sdk():
    spec = importlib.util.spec_from_file_location("sdk_manifest", ROOT / "scripts" / "sdk_manifest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "clients" / "typescript" / "sdk-manifest.json").read_text()
    assert committed == module.render(), "run .venv/bin/python scripts/sdk_manifest.py and commit the result"
    methods = module.manifest()["methods"]
    assert {"add", "recall", "list_facts", "import_", "messages.thread", "core.str_replace"} <= set(methods)
