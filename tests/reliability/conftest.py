"""Fixtures for the reliability tests that share one server across a module."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def hash_embedder(request):
    """The suite's fake embedder plugin class (tests/conftest.py), for a module-scoped server: the
    ``hash_embedder_cls`` fixture is per test, and ``import conftest`` may find another conftest."""
    root = Path(__file__).resolve().parents[1] / "conftest.py"
    return next(p for p in request.config.pluginmanager.get_plugins()
                if getattr(p, "__file__", None) and Path(p.__file__).resolve() == root).HashEmbedder
