"""The shared write-path scenarios, each through the public contract on a fresh store of each backend.

The checks themselves live in ``shared/tools/check_scenarios.py`` (``run_scenario``),
so this file and the command-line checker can never disagree about a scenario. On a clean
clone without ``shared/`` (CI), the copies vendored under ``tests/data/`` are used instead.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SHARED = Path(__file__).parents[2] / "shared"
VENDORED = Path(__file__).parent / "data"


def _first(*paths: Path) -> Path:
    return next((p for p in paths if p.is_file()), paths[0])


SCENARIOS = _first(SHARED / "data/scenarios-dev.jsonl", VENDORED / "scenarios-dev.jsonl")
CHECKER = _first(SHARED / "tools/check_scenarios.py", VENDORED / "check_scenarios.py")


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_scenarios", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scenarios():
    if not SCENARIOS.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"scenario file missing: {SCENARIOS}"),
                             id="scenarios-missing")]
    rows = [json.loads(line) for line in SCENARIOS.read_text().splitlines() if line.strip()]
    return [pytest.param(row, id=row["id"]) for row in rows]


@pytest.fixture(scope="module")
def checker():
    if not CHECKER.is_file():
        pytest.skip(f"scenario checker missing: {CHECKER}")
    return _load_checker()


@pytest.mark.parametrize("scenario", _scenarios())
def test_scenario(scenario, checker, local_embedder, new_memory):
    with new_memory() as mem:
        try:
            checker.run_scenario(mem, scenario, dataset=f"{scenario['id']}-1")
        except checker.Failure as exc:
            pytest.fail(f"scenario {scenario['id']}: {exc}", pytrace=False)


def test_scenario_ids_are_unique():
    if not SCENARIOS.is_file():
        pytest.skip(f"scenario file missing: {SCENARIOS}")
    ids = [json.loads(line)["id"] for line in SCENARIOS.read_text().splitlines() if line.strip()]
    assert len(ids) == len(set(ids))
