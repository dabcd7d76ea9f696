"""A short run of the load test (bench/load.py; the published figures come from its 2-minute run):
a real `kenning serve` on loopback, concurrent clients mixing add_turn, recall and listing for a few
seconds. Every request must succeed and every queued turn must end done; latency is reported, not asserted."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_a_short_mixed_load_has_no_errors_and_loses_no_turn():
    if not (BENCH / "load.py").is_file():
        pytest.skip("bench/ is not in this checkout")
    sys.path.insert(0, str(BENCH))
    try:
        import load
    finally:
        sys.path.remove(str(BENCH))
    result = load.run(seconds=6, clients=3, n_datasets=3, db=None, locomo=load.LOCOMO)
    assert result["errors"] == 0, result["error_samples"]
    assert result["requests"] > 30 and set(result["operations"]) == {"add_turn", "recall", "list_facts"}
    jobs = result["jobs"]
    assert jobs["open_after_drain"] == 0 and jobs["statuses"] == {"done": jobs["queued_by_add_turn"]}
    print(f"\n{result['requests_per_s']} requests/s; recall p99 {result['operations']['recall']['p99_ms']} ms")
