"""Races on both stores: 8 real OS processes, each with its own ``Memory`` on one store, hit it at the same moment.

Each racer is a ``python -c`` subprocess (its own interpreter, its own connection): it opens
``Memory(store_url, embedder=None, settings=Settings(worker_threads=0))``, then for every step drops a
``ready`` file and spins on a shared ``go`` file, so all 8 calls start within a few milliseconds of each
other. Errors are reported back as data (exception class and code), never as a crashed racer, so a test
can say exactly what each process saw. No embedder: exact repeats dedup by their object key and the
live-fact unique index, supersession needs no vectors, and the processes start in well under a second.

The contracts checked:
1. the same fact asserted 8 times at once → one live fact, 7 receipts ``duplicate`` pointing at it, no errors;
2. 8 writers of one core file with the same ``expected_version`` → one winner, 7 ``MemoryConflict``,
   the winner's text in the file, one new version in its history;
3. 8 values of a one-value slot at once → one live value, all 8 in the history, every superseded fact
   pointing at a stored fact, and at most one value ``as_of`` any time. Two variants:
   - the same message time for all: the arrival (commit) order decides, each later value supersedes
     the one live before it, so the history is one chain ending at the live value;
   - distinct message times, arriving in whatever order the race gives: the arrival order must not
     matter — the latest message's value is live, and ``as_of`` each message's time returns that
     message's value (every value holds from its own time until the next one's).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest

from kenning import Memory, Settings

pytestmark = pytest.mark.slow  # 8 interpreters per test: 2-7 s each on a busy 2-core machine

N = 8
DATASET = "sam"
AT = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
CITIES = ["berlin", "lisbon", "madrid", "paris", "rome", "vienna", "prague", "oslo"]

RACER = r"""
import json, os, sys, time
from kenning import Memory, Settings

url, workdir, me, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
mem = Memory(url, embedder=None, settings=Settings(worker_threads=0))
out = []
for k, step in enumerate(steps):
    open(os.path.join(workdir, f"ready-{k}-{me}"), "w").close()
    go = os.path.join(workdir, f"go-{k}")
    while not os.path.exists(go):
        time.sleep(0.001)
    try:
        if step["op"] == "add":
            r = mem.add(step["text"], step["dataset"], at=step["at"])
            out.append(r.model_dump(mode="json", exclude={"memory"}))
        elif step["op"] == "core_write":
            f = mem.core.write(step["dataset"], step["path"], step["text"], expected_version=step["expected"])
            out.append({"version": f.version, "content": f.content})
        else:
            raise ValueError(step["op"])
    except Exception as exc:
        out.append({"error": type(exc).__name__, "code": getattr(exc, "code", None), "message": str(exc)})
mem.close()
print(json.dumps(out), flush=True)
"""


def race(store_url: str, tmp_path, steps: list[list[dict]], timeout: float = 90.0) -> list[list[dict]]:
    """Run ``steps[i]`` in racer ``i`` (all lists equally long); step k starts in all of them at once.
    Returns, per racer, one result (or error) dict per step."""
    workdir = tmp_path / "race"
    workdir.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", RACER, store_url, str(workdir), str(i), json.dumps(s)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, s in enumerate(steps)]
    deadline = time.monotonic() + timeout
    try:
        for k in range(len(steps[0])):
            while not all((workdir / f"ready-{k}-{i}").exists() for i in range(len(procs))):
                dead = [p for p in procs if p.poll() is not None]
                assert not dead, f"a racer died before step {k}: {dead[0].stderr.read()}"
                assert time.monotonic() < deadline, f"racers not ready for step {k} in {timeout}s"
                time.sleep(0.01)
            (workdir / f"go-{k}").touch()
        outs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [p.returncode for p in procs] == [0] * len(procs), [err for _, err in outs]
    return [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]


def opened(store_url: str) -> Memory:
    return Memory(store_url, embedder=None, settings=Settings(worker_threads=0))


def test_eight_processes_adding_one_fact_store_it_once(store_url, tmp_path):
    results = race(store_url, tmp_path, [[{"op": "add", "text": "I live in Berlin.", "dataset": DATASET,
                                           "at": AT.isoformat()}]] * N)
    receipts = [r for (r,) in results]
    assert [r.get("error") for r in receipts] == [None] * N, "a racing twin must dedup, not fail"
    stored = [r for r in receipts if r["status"] == "stored"]
    deduped = [r for r in receipts if r["status"] == "skipped" and r["reason"] == "duplicate"]
    assert len(stored) == 1 and len(deduped) == N - 1, receipts
    (fid,) = stored[0]["memory_ids"]
    assert stored[0]["candidates_stored"] == 1 and stored[0]["supersedes"] == []
    for r in deduped:
        assert r["candidates_deduped"] == 1 and r["candidates_stored"] == r["candidates_updated"] == 0
        assert r["deduplicated_against"] == [fid] and r["memory_ids"] == [fid]
    with opened(store_url) as mem:
        (live,) = mem.list_facts(DATASET).facts
        assert (live.fact_id, live.predicate, live.object) == (fid, "lives in", "berlin")
        assert mem.list_facts(DATASET, include_invalidated=True).total == 1, "no twin, not even a dead one"
        assert [f.fact_id for f in mem.list_facts(DATASET, as_of=AT).facts] == [fid]


def test_eight_writers_of_one_core_file_one_wins(store_url, tmp_path):
    path = "/memories/notes.md"
    with opened(store_url) as mem:
        first = mem.core.write(DATASET, path, "version one\n", expected_version=0)
    assert first.version == 1
    texts = [f"written by racer {i}\n" for i in range(N)]
    results = race(store_url, tmp_path, [[{"op": "core_write", "dataset": DATASET, "path": path, "text": t,
                                           "expected": 1}] for t in texts])
    outcomes = [r for (r,) in results]
    winners = [i for i, r in enumerate(outcomes) if "error" not in r]
    losers = [r for r in outcomes if "error" in r]
    assert len(winners) == 1, outcomes
    (w,) = winners
    assert outcomes[w] == {"version": 2, "content": texts[w]}
    assert [(r["error"], r["code"]) for r in losers] == [("MemoryConflict", "MEMORY_CONFLICT")] * (N - 1), losers
    assert all("at version 2, not 1" in r["message"] for r in losers)
    with opened(store_url) as mem:
        now = mem.core.read(DATASET, path)
        assert (now.version, now.content) == (2, texts[w])
        history = mem.core.history(DATASET, path)
        assert [(v.version, v.content) for v in history] == [(1, "version one\n"), (2, texts[w])]


def _check_slot_history(mem: Memory, receipts: list[dict]) -> dict[str, object]:
    """The invariants both variants share; returns the facts by id."""
    assert [r.get("error") for r in receipts] == [None] * N, receipts
    assert all(r["status"] == "stored" for r in receipts), "every value is new: none may dedup or vanish"
    history = mem.list_facts(DATASET, include_invalidated=True, limit=100).facts
    by_id = {f.fact_id: f for f in history}
    assert sorted(f.object for f in history) == sorted(CITIES), "every city once in the history, no twins"
    assert {r["memory_ids"][0] for r in receipts} == set(by_id), "each receipt names its own stored fact"
    assert all(f.predicate == "lives in" for f in history)
    live = mem.list_facts(DATASET).facts
    assert len(live) == 1, [f.object for f in live]
    for f in history:
        if f.superseded_by is not None:
            assert f.superseded_by in by_id and f.superseded_by != f.fact_id
            assert f.invalid_at is not None or f.valid_until is not None
    # At most one value at any moment: at every stored boundary and just before it.
    moments = {t for f in history for t in (f.valid_at, f.valid_until, f.invalid_at) if t is not None}
    for t in sorted(moments | {t - timedelta(seconds=1) for t in moments}):
        seen = mem.list_facts(DATASET, as_of=t).facts
        assert len(seen) <= 1, (t, [(f.object, f.valid_at, f.valid_until, f.invalid_at) for f in seen])
        expected = [f.fact_id for f in history if f.valid_at <= t and (f.valid_until is None or f.valid_until > t)
                    and (f.invalid_at is None or f.invalid_at > t)]
        assert [f.fact_id for f in seen] == expected, "as_of reads the stored windows"
    return by_id


def test_eight_values_of_a_one_value_slot_at_the_same_moment(store_url, tmp_path):
    results = race(store_url, tmp_path, [[{"op": "add", "text": f"I live in {c.title()}.", "dataset": DATASET,
                                           "at": AT.isoformat()}] for c in CITIES])
    receipts = [r for (r,) in results]
    with opened(store_url) as mem:
        by_id = _check_slot_history(mem, receipts)
        (live,) = mem.list_facts(DATASET).facts
        # One chain in commit order: the first value superseded nothing, each later one the one before it.
        assert sorted(len(r["supersedes"]) for r in receipts) == [0] + [1] * (N - 1)
        successor = {f.fact_id: f.superseded_by for f in by_id.values()}
        (head,) = [r["memory_ids"][0] for r in receipts if not r["supersedes"]]
        chain = [head]
        while successor[chain[-1]] is not None:
            chain.append(successor[chain[-1]])
        assert len(chain) == N and chain[-1] == live.fact_id, "a single chain through all 8 values"
        for r in receipts:
            if r["supersedes"]:
                assert successor[r["supersedes"][0]] == r["memory_ids"][0]
        assert all(by_id[i].invalid_at == AT for i in chain[:-1]), "superseded at the message time"
        assert [f.fact_id for f in mem.list_facts(DATASET, as_of=AT).facts] == [live.fact_id]


def test_eight_values_of_a_one_value_slot_with_their_own_times(store_url, tmp_path):
    times = [AT + timedelta(hours=i) for i in range(N)]
    results = race(store_url, tmp_path, [[{"op": "add", "text": f"I live in {c.title()}.", "dataset": DATASET,
                                           "at": t.isoformat()}] for c, t in zip(CITIES, times)])
    receipts = [r for (r,) in results]
    with opened(store_url) as mem:
        _check_slot_history(mem, receipts)
        assert [f.object for f in mem.list_facts(DATASET).facts] == [CITIES[-1]], "the latest message wins"
        for city, t in zip(CITIES, times):
            for when in (t, t + timedelta(minutes=30)):
                assert [f.object for f in mem.list_facts(DATASET, as_of=when).facts] == [city], when
