"""Queue workers against turns slower than their lease (issue 31, finding 8).

Two embedded workers with a 4 s lease; 15 turns in one project whose extraction takes ~6 s each (a
scripted OpenAI-compatible server on loopback answers them after that delay, through the real
``OpenAIExtractor``), spread over three datasets; one second later a one-line turn of another project,
answered at once. Reports how many turns ended done or failed, their attempts (a claim beyond the
first is a lease that ran out and a run thrown away), the extraction requests the server answered
(the work done, thrown away included), and how long the other project's turn took from ``add_turn`` to
done.

Before the fix (no lease renewal; a worker claimed up to 16 jobs and mined them one after the other)
turns were reclaimed again and again, most failed after 5 attempts, and the other project's turn waited
for, and was reclaimed with, a batch of slow ones.

    .venv/bin/python bench/worker_leases.py [--turns 15] [--seconds 6] [--lease 4] [--workers 2]
                                            [--datasets 3] [--db sqlite:///path | postgresql://…]
"""
from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from common import write  # noqa: E402
from llm_server import Reply, ScriptedServer, fact, message_of, openai_reply  # noqa: E402

QUICK = "I live in Oslo."


def slow_text(i: int) -> str:
    return f"Long story about my weekend, part {i}: in the end I took up hobby number {i}."


def responder(seconds: float, seed: int = 7):
    """Answers a slow turn after ``seconds`` (±10 %), the one-line turn at once."""
    rng, lock = random.Random(seed), threading.Lock()

    def respond(request) -> Reply:
        text = message_of(request) or ""
        if text == QUICK:
            return openai_reply({"facts": [fact("lives in", "Oslo", entity_type="LOCATION")]})
        number = text.rsplit("hobby number ", 1)[-1].rstrip(".")
        with lock:
            delay = seconds * rng.uniform(0.9, 1.1)
        reply = openai_reply({"facts": [fact("likes", f"hobby {number}", object_is_entity=False)]})
        reply.delay = delay
        return reply
    return respond


def run(args) -> dict:
    from kenning import Memory, Settings
    from kenning.extract.openai import OpenAIExtractor

    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(responder(args.seconds)) as server:
        url = args.db or f"sqlite:///{tmp}/leases.db"
        extractor = OpenAIExtractor(base_url=server.url + "/v1", model="stand-in", response_format="json_schema")
        settings = Settings(worker_threads=args.workers, job_lease_seconds=args.lease)
        # No embedder: the bench is about leases and turns, not vectors.
        mem = Memory(url, embedder=None, extractor=extractor, settings=settings)
        start = time.perf_counter()
        slow = [mem.add_turn(f"user-{i % args.datasets}", "user", slow_text(i), project="busy").request_id
                for i in range(args.turns)]
        time.sleep(args.quick_after)
        quick = mem.add_turn("ann", "user", QUICK, project="calm").request_id
        deadline = time.monotonic() + args.timeout
        while mem.store.count_jobs(("queued", "distilling")) and time.monotonic() < deadline:
            time.sleep(0.2)
        wall = time.perf_counter() - start
        env = settings.environment
        jobs = [mem.store.get_job(r, "busy", env) for r in slow]
        other = mem.store.get_job(quick, "calm", env)
        requests = len(server.requests)
        mem.close()
    statuses = collections.Counter(j.status for j in jobs)
    errors = collections.Counter(j.error for j in jobs if j.error)
    return {
        "setup": {"workers": args.workers, "lease_seconds": args.lease, "turns": args.turns,
                  "turn_seconds": args.seconds, "datasets": args.datasets, "other_turn_after_s": args.quick_after,
                  "store": "sqlite file" if not args.db else args.db.split(":", 1)[0]},
        "slow_turns": {"done": statuses.get("done", 0), "failed": statuses.get("failed", 0),
                       "unfinished": statuses.get("queued", 0) + statuses.get("distilling", 0),
                       "attempts": dict(sorted(collections.Counter(j.attempts for j in jobs).items())),
                       "errors": dict(errors)},
        "other_project_turn": {"status": other.status, "attempts": other.attempts, "error": other.error,
                               "seconds_to_done": round((other.updated_at - other.created_at).total_seconds(), 2)},
        "extraction_requests": requests, "extraction_requests_needed": args.turns + 1,
        "wall_seconds": round(wall, 1),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=6.0, help="extraction time of a slow turn")
    ap.add_argument("--lease", type=float, default=4.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--datasets", type=int, default=3, help="datasets of the busy project the turns go to")
    ap.add_argument("--quick-after", type=float, default=1.0, help="seconds before the other project's turn")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--db", default=None, help="a store URL (default: a fresh SQLite file)")
    ap.add_argument("--name", default="worker_leases", help="bench/results/<name>.json")
    args = ap.parse_args(argv)
    result = run(args)
    s, o = result["slow_turns"], result["other_project_turn"]
    print(f"slow turns: {s['done']} done, {s['failed']} failed, {s['unfinished']} unfinished; attempts {s['attempts']}")
    for error, n in s["errors"].items():
        print(f"  {n} × {error}")
    print(f"other project's one-line turn: {o['status']} after {o['seconds_to_done']} s, attempts {o['attempts']}")
    print(f"extraction requests: {result['extraction_requests']} for {result['extraction_requests_needed']} turns; "
          f"wall {result['wall_seconds']} s")
    write(args.name, result)


if __name__ == "__main__":
    main()
