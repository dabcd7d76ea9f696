"""bench/report.py on a small fake results folder: every goal row cites the one result file its figures come
from, the mem0 goal is judged like for like, the peers' conditions table is built from the result, an older
peers result without them is called out, and an extractor missing from a newest run is never filled in."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[1] / "bench" / "report.py"
pytestmark = pytest.mark.skipif(not REPORT.is_file(), reason="bench/ is not in this checkout")

MACHINE = {"system": "Linux x86_64", "cpu": "test cpu", "cores": 2, "memory_gib": 4.0, "python": "3.11.7"}
PEERS_DATE, LOCOMO_DATE = "2026-12-06T10:00:00+00:00", "2026-12-01T19:37:31+00:00"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("bench_report_under_test", REPORT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result(date: str, **body) -> dict:
    return {"date": date, "machine": MACHINE, "versions": {"kenning": "0.1.0"}, **body}


def medians(search_p50: float, recall: float) -> dict:
    return {"add_per_s": 50.0, "add_p95_ms": 30.0, "search_p50_ms": search_p50, "search_p95_ms": search_p50 + 2,
            "search_p99_ms": search_p50 + 3, "recall_at_10": recall}


def conditions(inputs: list[str], extraction: str) -> dict:
    return {"inputs": inputs, "extraction": extraction, "search": "dense only", "storage": "a test store",
            "embedding": "test model", "llm_calls": 0, "threshold": "none", "tuned_on_these_conversations": "no"}


def peers(plain: bool = True, mem0_p50: float = 30.0) -> dict:
    med = {"kenning": medians(15.0, 0.80), "mem0": medians(mem0_p50, 0.50)}
    body = {"command": "python bench/peers.py --full", "description": "a fake workload.",
            "workload": {"questions": 997}, "medians": med, "notes": ["a note of the run"],
            "recall_by_category": {n: {"overall": m["recall_at_10"]} for n, m in med.items()}}
    if plain:
        med["kenning-plain"] = medians(10.0, 0.70)
        body["conditions"] = {"kenning": conditions(["text", "dia_id", "time", "chat"], "rules (`fake-rules`)"),
                              "kenning-plain": conditions(["text", "dia_id"], "rules (`fake-rules`)"),
                              "mem0": conditions(["text", "dia_id"], "none (stored as is)")}
        body["query_embedding"] = {"n": 997, "p50_ms": 5.0, "p95_ms": 6.0}
    return result(PEERS_DATE, **body)


def latency(date: str, rows: int, p95: float) -> dict:
    return result(date, command="python bench/latency.py", steps=[rows], queries=10, adds=10,
                  points=[{"backend": "sqlite", "store_rows": rows, "load_rows_per_s": 1000,
                           "recall": [{"rows_in_dataset": 10_000, "p50_ms": 1.0, "p95_ms": p95, "p99_ms": p95}],
                           "add": {"turns_per_s": 50.0, "p95_ms": 30.0}}])


def locomo(recall: float) -> dict:
    cats = {"overall": {"5": recall - 0.1, "10": recall, "25": recall + 0.05, "n": 997}}
    return result(LOCOMO_DATE, command="python bench/locomo.py", report={"kenning": cats})


def write_results(folder: Path, **results: dict) -> Path:
    folder.mkdir(exist_ok=True)
    for name, body in results.items():
        (folder / f"{name}.json").write_text(json.dumps(body))
    return folder


def render(report, folder: Path) -> str:
    res = report.Results(folder, data=folder, weights=folder)
    return "\n".join(report.render(res, img=None))


def goal_rows(page: str) -> list[str]:
    goals = page.split("## Goals", 1)[1].split("\n## ", 1)[0]
    return [line for line in goals.splitlines() if line.startswith("| ") and not line.startswith("| goal")]


def test_each_goal_row_cites_the_one_file_its_figures_come_from(report, tmp_path):
    folder = write_results(tmp_path / "results", peers=peers(),
                           latency=latency("2026-12-02T03:12:13+00:00", 100_000, 8.0),
                           latency_full=latency("2026-12-02T03:09:20+00:00", 1_000_000, 12.0))
    rows = goal_rows(render(report, folder))
    sqlite = [r for r in rows if "SQLite" in r]
    assert len(sqlite) == 2
    assert "8.0 ms" in sqlite[0] and "`latency.json` of 2026-12-02 03:12 UTC" in sqlite[0] and "**met**" in sqlite[0]
    assert "12.0 ms" in sqlite[1] and "`latency_full.json` of 2026-12-02 03:09 UTC" in sqlite[1]
    assert "**missed**" in sqlite[1]
    (mem0,) = [r for r in rows if "mem0" in r]
    assert "`peers.json` of 2026-12-06 10:00 UTC" in mem0 and "latency" not in mem0
    # like for like: mem0 30 ms / kenning-plain 10 ms; with times and chats: 30 / 15
    assert "like for like (`kenning-plain`" in mem0 and "3.0× faster (p50), recall@10 0.700 vs 0.500" in mem0
    assert "2.0× faster, recall@10 0.800" in mem0
    assert "**missed** (3.0× of the 10× wanted)" in mem0


def test_the_mem0_goal_is_judged_on_the_plain_inputs_kenning(report, tmp_path):
    folder = write_results(tmp_path / "results", peers=peers(mem0_p50=120.0))
    (mem0,) = [r for r in goal_rows(render(report, folder)) if "mem0" in r]
    assert "12.0× faster (p50), recall@10 0.700 vs 0.500" in mem0 and mem0.endswith("| **met** |")


def test_the_conditions_table_comes_from_the_peers_result(report, tmp_path):
    page = render(report, write_results(tmp_path / "results", peers=peers()))
    table = [line for line in page.splitlines() if line.startswith("| ") and "test model" in line]
    assert [line.split(" | ")[0] for line in table] == ["| kenning", "| kenning-plain", "| mem0"]
    kenning, plain, mem0 = (line.split(" | ") for line in table)
    assert kenning[1:5] == ["yes", "yes", "yes", "yes"]                 # text, dia_id, time, chat
    assert plain[1:5] == ["yes", "yes", "**no**", "**no**"]
    assert "rules (`fake-rules`)" in plain and "none (stored as is)" in mem0
    assert "predates" not in page
    assert "In the same peers run, embedding a question alone with the model every system shares takes 5.0 ms" in page


def test_an_older_peers_result_is_called_out_not_passed_off(report, tmp_path):
    page = render(report, write_results(tmp_path / "results", peers=peers(plain=False)))
    assert "**This run predates `kenning-plain`" in page and "and the conditions of each system" in page
    (mem0,) = [r for r in goal_rows(page) if "mem0" in r]
    assert "no like-for-like figure" in mem0 and "not like for like" in mem0
    assert "gets time" not in page                                        # no conditions table made up


def test_one_measure_from_two_runs_says_so(report, tmp_path):
    page = render(report, write_results(tmp_path / "results", peers=peers(), locomo=locomo(0.817)))
    assert ("kenning's LoCoMo recall@10 is 0.817 here (`locomo.json` of 2026-12-01 19:37 UTC) and 0.800 in the"
            " peer comparison (`peers.json` of 2026-12-06 10:00 UTC)") in page


def test_an_extractor_missing_from_the_newest_run_is_not_filled_in(report, tmp_path):
    scores = {"recall": 0.5, "precision": 0.8, "expected": 10, "candidates": 6}
    old = result("2026-12-03T00:00:00+00:00", data="bench/data/x.jsonl", messages=5,
                 results={"parse": {**scores, "precision": 0.123}})
    new = result("2026-12-05T00:00:00+00:00", data="bench/data/x.jsonl", messages=5,
                 results={"learned": scores, "combined": scores})
    page = render(report, write_results(tmp_path / "results", extract_compare_parse=old, extract_compare=new))
    (row,) = [line for line in page.splitlines() if line.startswith("| `bench/data/x.jsonl`")]
    assert "*not in this run*" in row and "0.123" not in row and "`extract_compare.json` of 2026-12-05" in row
    assert ("parse not in the newest run; older runs that have it, not mixed in: `extract_compare_parse.json` of"
            " 2026-12-03 00:00 UTC (parse)") in page
    assert "--extractors learned,combined --name extract_compare` (rebuilt)" in page
