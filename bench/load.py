"""A bounded load test of a real `kenning serve` on loopback: concurrent clients mixing writes and reads.

Starts `kenning serve` on a fresh SQLite file (or ``--db URL``), seeds ``--datasets`` datasets with LoCoMo
turns so recall has something to find, then runs ``--clients`` client threads for ``--seconds``: each picks
an operation by weight (add_turn 30 %, recall 50 %, list_facts 20 %) on a random dataset and records its
status and latency. The loop stops by itself; the queue is then drained (every add_turn job must end
``done``) and the server is stopped. Reports requests/s, p50/p95/p99 per operation and the error count
(any non-2xx answer or transport error). Goal: 0 errors and recall p99 < 100 ms at the load held.

    .venv/bin/python bench/load.py [--seconds 120] [--clients 4] [--datasets 10] [--db URL]

Writes bench/results/load.json (``--out PATH`` elsewhere).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LOCOMO, summary, write  # noqa: E402

WEIGHTS = {"add_turn": 0.3, "recall": 0.5, "list_facts": 0.2}
QUESTIONS = ["Where does the user live?", "What does the user do for work?", "Does the user have pets?",
             "What does the user like to do on weekends?", "Who is in the user's family?",
             "What is the user planning?", "What did the user paint?", "Where did the user travel?"]


def turns(path: Path, n: int) -> list[str]:
    """LoCoMo turns when the data is there; otherwise plain first-person sentences of the same kind."""
    if not path.is_file():
        rng = random.Random(7)
        places = ["Berlin", "Lisbon", "Porto", "Oslo", "Kyoto", "Austin", "Lyon", "Quito"]
        things = ["hiking", "the cello", "pottery", "chess", "sushi", "running", "jazz", "gardening"]
        forms = ["I live in {p}.", "I love {t}.", "I moved to {p} last month.", "I started {t} in {p}.",
                 "My sister works in {p}.", "We went to {p} for {t}."]
        return [rng.choice(forms).format(p=rng.choice(places), t=rng.choice(things)) for _ in range(n)]
    texts = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        k = 1
        while f"session_{k}" in conv and len(texts) < n:
            texts += [t["text"] for t in conv[f"session_{k}"]]
            k += 1
    return texts[:n]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, home: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    kenning = str(Path(sys.executable).with_name("kenning"))
    proc = subprocess.Popen([kenning, "--db", db, "serve", "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, env={**os.environ, "KENNING_HOME": home})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url + "/v1/health", timeout=2).raise_for_status()
            return proc, url
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("kenning serve did not start")
            time.sleep(0.1)


def client_loop(url: str, datasets: list[str], texts: list[str], until: float, seed: int, record) -> None:
    rng = random.Random(seed)
    ops, weights = list(WEIGHTS), list(WEIGHTS.values())
    with httpx.Client(base_url=url, timeout=30) as c:
        i = 0
        while time.monotonic() < until:
            op, dataset = rng.choices(ops, weights)[0], rng.choice(datasets)
            t = time.perf_counter()
            try:
                if op == "add_turn":
                    r = c.post("/v1/memory/add_turn", json={"dataset": dataset, "role": "user",
                                                            "content": f"{rng.choice(texts)} ({seed}-{i})"})
                elif op == "recall":
                    r = c.post("/v1/recall", json={"query": f"{rng.choice(QUESTIONS)} ({seed}-{i})",
                                                   "dataset": dataset})
                else:
                    r = c.get(f"/v1/datasets/{dataset}/facts", params={"limit": 50})
                ok, detail = r.status_code < 400, None if r.status_code < 400 else f"HTTP {r.status_code}"
                request_id = r.json().get("request_id") if op == "add_turn" and ok else None
            except httpx.HTTPError as exc:
                ok, detail, request_id = False, f"{type(exc).__name__}: {exc}", None
            record(op, (time.perf_counter() - t) * 1000, ok, detail, request_id)
            i += 1


def run(seconds: float, clients: int, n_datasets: int, db: str | None, locomo: Path) -> dict:
    from kenning import Memory, Settings

    texts = turns(locomo, 400)
    datasets = [f"load-{d}" for d in range(n_datasets)]
    tmp = tempfile.mkdtemp(prefix="kenning-load-")
    db = db or f"sqlite:///{tmp}/load.db"
    with Memory(db, settings=Settings(worker_threads=0)) as mem:   # seed: something to find from the start
        for d, dataset in enumerate(datasets):
            for text in texts[d * 20:(d + 1) * 20]:
                mem.add(text, dataset=dataset)
    proc, url = start_server(db, tmp)
    lock, latencies, errors, request_ids = threading.Lock(), defaultdict(list), [], []

    def record(op, ms, ok, detail, request_id):
        with lock:
            latencies[op].append(ms)
            if not ok:
                errors.append(f"{op}: {detail}")
            if request_id:
                request_ids.append(request_id)
    try:
        started = time.monotonic()
        until = started + seconds
        threads = [threading.Thread(target=client_loop, args=(url, datasets, texts, until, s, record))
                   for s in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        drain_start, open_jobs = time.monotonic(), None
        with httpx.Client(base_url=url, timeout=30) as c:
            while time.monotonic() - drain_start < 300:
                open_jobs = c.get("/v1/jobs/open").json()["count"]
                if open_jobs == 0:
                    break
                time.sleep(0.2)
            drain_s = time.monotonic() - drain_start
            statuses = defaultdict(int)
            for request_id in request_ids:
                statuses[c.get(f"/v1/memory/status/{request_id}").json()["processing_status"]] += 1
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    total = sum(len(v) for v in latencies.values())
    return {"seconds": round(elapsed, 1), "clients": clients, "datasets": n_datasets,
            "store": db.split(":", 1)[0], "requests": total, "requests_per_s": round(total / elapsed, 1),
            "errors": len(errors), "error_samples": errors[:10],
            "operations": {op: {"count": len(v), **summary(v)} for op, v in sorted(latencies.items())},
            "jobs": {"queued_by_add_turn": len(request_ids), "open_after_drain": open_jobs,
                     "drain_s": round(drain_s, 1), "statuses": dict(statuses)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--db", default=None, help="a store URL (default: a fresh SQLite file)")
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--out", default=None, help="write the result here instead of bench/results/load.json")
    args = ap.parse_args(argv)
    result = run(args.seconds, args.clients, args.datasets, args.db, args.locomo)
    print(f"\n{result['requests']:,} requests in {result['seconds']} s from {result['clients']} clients: "
          f"{result['requests_per_s']} requests/s, {result['errors']} errors")
    print(f"{'operation':<12}{'count':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    for op, s in result["operations"].items():
        print(f"{op:<12}{s['count']:>8}{s['p50_ms']:>9}{s['p95_ms']:>9}{s['p99_ms']:>9}")
    jobs = result["jobs"]
    print(f"add_turn jobs: {jobs['queued_by_add_turn']} queued, {jobs['statuses']} after draining "
          f"({jobs['drain_s']} s)")
    recall = result["operations"].get("recall")
    if recall:
        ok = result["errors"] == 0 and recall["p99_ms"] < 100
        print(f"goal: 0 errors and recall p99 < 100 ms: {'met' if ok else 'missed'}")
    result["command"] = "python bench/load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    else:
        write("load", result)
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
