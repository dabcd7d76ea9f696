"""The durable queue: add_turn, workers, status, order, leases, crashes, retries."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from kenning import ExtractionError, Extractor, InputError, Memory, NotFound, Settings
from kenning.jobs import Worker
from kenning.model import Scope

T0 = datetime(2026, 7, 1, 10, 0, tzinfo=timezone.utc)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def objects(mem, dataset, **query):
    return sorted(f.object for f in mem.list_facts(dataset, limit=100, **query).facts)


def test_add_turn_returns_at_once_and_flush_applies_it(new_memory):
    with new_memory() as mem:
        r = mem.add_turn("sam", "user", "I live in Berlin.", at=at(0))
        assert (r.status, r.processing_status, r.memory_id, r.already_exists) == ("processing", "queued", None, False)
        assert r.request_id
        mem.flush(timeout=30)
        s = mem.status(r.request_id)
        assert (s.status, s.processing_status, s.processing_error) == ("done", "done", None)
        assert s.result.candidates_stored == 1 and s.memory_id == s.result.memory_ids[0]
        assert objects(mem, "sam") == ["berlin"]
        assert mem.status(memory_id=s.memory_id).searchable is True


def test_assistant_turn_and_repeated_client_ref_are_answered_at_once(new_memory):
    with new_memory(settings=Settings(worker_threads=0)) as mem:
        skipped = mem.add_turn("sam", "assistant", "You should visit Porto.")
        assert (skipped.status, skipped.reason) == ("skipped", "skipped_non_user_turn")
        first = mem.add_turn("sam", "user", "I play the cello.", client_ref="msg-1")
        again = mem.add_turn("sam", "user", "I play the cello.", client_ref="msg-1")
        assert (again.status, again.reason, again.already_exists) == ("skipped", "already_ingested", True)
        assert again.request_id == first.request_id
        assert mem.store.count_jobs(("queued",)) == 1


def test_bad_turns_are_refused_before_queueing(new_memory):
    with new_memory(settings=Settings(worker_threads=0)) as mem:
        with pytest.raises(InputError):
            mem.add_turn("sam", "user", "x" * 100_001)
        with pytest.raises(InputError):
            mem.add_turn("sam", "robot", "hi")
        assert mem.store.count_jobs(("queued", "distilling", "done", "failed")) == 0


def test_status_of_unknown_or_foreign_ids(new_memory):
    with new_memory(settings=Settings(worker_threads=0)) as mem:
        r = mem.add_turn("sam", "user", "I live in Oslo.", project="p1")
        with pytest.raises(NotFound):
            mem.status("req_nope")
        with pytest.raises(NotFound):
            mem.status(r.request_id)                      # another project's request
        assert mem.status(r.request_id, project="p1").processing_status == "queued"
        assert mem.status(memory_id="f_nope").stored is False
        with pytest.raises(InputError):
            mem.status()


def test_one_dataset_runs_in_arrival_order_even_with_two_workers(new_memory):
    with new_memory(settings=Settings(worker_threads=2)) as mem:
        cities = ["berlin", "lisbon", "madrid", "oslo", "rome", "paris", "vienna", "prague"]
        for i, city in enumerate(cities * 3):
            mem.add_turn("sam", "user", f"I live in {city.title()}.", at=at(i))
            mem.add_turn(f"other-{i % 3}", "user", f"I like topic{i}.", at=at(i))
        mem.flush(timeout=60)
        assert objects(mem, "sam") == ["prague"]          # the last word, not whichever ran last
        history = mem.list_facts("sam", include_invalidated=True, limit=100).facts
        assert [f.object for f in history if f.invalid_at is None] == ["prague"]


def test_worker_that_loses_its_lease_commits_nothing(store_url):
    url = store_url
    with Memory(url, settings=Settings(worker_threads=0)) as mem:
        r = mem.add_turn("sam", "user", "I live in Berlin.", at=at(0))
        slow = Worker(mem, lease_seconds=0.01, name="slow")
        job = mem.store.claim("slow", 0.01, datetime.now(timezone.utc))
        time.sleep(0.05)                                   # its lease runs out
        fast = Worker(mem, lease_seconds=30, name="fast")
        assert fast.run_once().request_id == r.request_id  # reclaimed and done
        with pytest.raises(Exception):
            with mem.store.transaction(job.scope):
                mem.store.finish(job.request_id, slow.name, {"status": "stored"})
        assert objects(mem, "sam") == ["berlin"]
        assert mem.status(r.request_id).processing_status == "done"


class Exploding(Extractor):
    name = "exploding"

    def __init__(self):
        self.fail = True

    def extract(self, text, *, at, context=None, known_entities=None):
        if self.fail:
            raise ExtractionError("the model answered with malformed JSON twice")
        from kenning.extract.rules import RuleExtractor
        return RuleExtractor().extract(text, at=at)


def test_failed_jobs_keep_turn_and_error_and_can_be_retried(new_memory):
    extractor = Exploding()
    with new_memory(extractor=extractor) as mem:
        r = mem.add_turn("sam", "user", "I live in Berlin.", at=at(0))
        mem.flush(timeout=30)
        s = mem.status(r.request_id)
        assert (s.status, s.processing_status) == ("failed", "failed")
        assert "malformed JSON" in s.processing_error
        assert mem.store.get_job(r.request_id).content == "I live in Berlin."
        extractor.fail = False
        assert mem.retry_failed() == 1
        mem.flush(timeout=30)
        assert mem.status(r.request_id).processing_status == "done"
        assert objects(mem, "sam") == ["berlin"]


def test_close_stops_the_workers(new_memory):
    mem = new_memory()
    mem.add_turn("sam", "user", "I live in Berlin.")
    mem.flush(timeout=30)
    threads = list(mem._workers.threads)
    assert threads and all(t.is_alive() for t in threads)
    mem.close()
    assert not any(t.is_alive() for t in threads)


def test_flush_without_workers_says_how_to_drain(new_memory):
    with new_memory(settings=Settings(worker_threads=0)) as mem:
        mem.add_turn("sam", "user", "I live in Berlin.")
        with pytest.raises(Exception, match="kenning worker"):
            mem.flush(timeout=1)


# -- a real worker process killed with SIGKILL mid-batch ----------------------------------------------

# Distinct hobbies (pairwise cosine < 0.77 with the bundled model), so no two turns' facts can merge.
HOBBIES = """piano tennis chess sushi origami kayaking pottery astronomy gardening knitting surfing baking
painting cycling fencing archery bowling climbing dancing drawing fishing hiking juggling karate rowing
sailing skating skiing snowboarding swimming yoga boxing golf hockey rugby cricket volleyball badminton
squash lacrosse poker sudoku crosswords calligraphy photography woodworking beekeeping birdwatching
camping canoeing diving embroidery genealogy geocaching jigsaws kitesurfing meditation mountaineering
paragliding parkour quilting robotics scrabble sculpting sewing skateboarding stargazing taxidermy
trampolining ventriloquism weaving wrestling zumba accordion banjo cello clarinet drums flute guitar harp
harmonica mandolin oboe saxophone trombone trumpet ukulele violin xylophone bagpipes tango salsa ballet
opera jazz blues reggae techno flamenco kimchi tacos ramen paella lasagna falafel dumplings croissants
pretzels hummus burritos curry risotto gelato espresso matcha kombucha sourdough""".split()

def _worker(db: str, home, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "KENNING_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", db, "worker", "--lease", "2",
                             "--poll", "0.1", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.slow
def test_sigkill_mid_batch_every_job_runs_exactly_once(tmp_path, store_url):
    db = store_url
    datasets = [f"user-{d}" for d in range(3)]
    n = len(HOBBIES)
    with Memory(db, settings=Settings(worker_threads=0)) as mem:
        requests = [mem.add_turn(d, "user", f"I love {hobby}.", at=at(i), message_id=f"{d}-m{i}").request_id
                    for i, hobby in enumerate(HOBBIES) for d in datasets]
        total = mem.store.count_jobs(("queued",))
    assert total == n * len(datasets)

    proc = _worker(db, tmp_path)
    with Memory(db, settings=Settings(worker_threads=0)) as probe:
        deadline = time.monotonic() + 120
        # Kill while a job is claimed and its transaction is open: the worst moment.
        while time.monotonic() < deadline and not (probe.store.count_jobs(("done",)) >= total // 3
                                                   and probe.store.count_jobs(("distilling",)) >= 1):
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        done_at_kill = probe.store.count_jobs(("done",))
        in_flight = probe.store.count_jobs(("distilling",))
    assert 0 < done_at_kill < total

    restart = _worker(db, tmp_path, "--exit-when-idle")
    assert restart.wait(timeout=300) == 0, restart.stdout.read().decode()

    with Memory(db, settings=Settings(worker_threads=0)) as mem:
        assert mem.store.count_jobs(("done",)) == total
        assert mem.store.count_jobs(("queued", "distilling", "failed")) == 0
        duplicates = 0
        for d in datasets:
            every, offset = [], 0
            while True:
                page = mem.list_facts(d, include_invalidated=True, limit=100, offset=offset)
                every.extend(page.facts)
                offset += 100
                if offset >= page.total:
                    break
            hobbies = [f.object for f in every]
            duplicates += len(hobbies) - len(set(hobbies))
            assert sorted(set(hobbies)) == sorted(HOBBIES), "a turn was lost"
            for i in range(n):
                assert mem.store.get_episode(Scope("default", "default", d), f"{d}-m{i}") is not None
        assert duplicates == 0
        # Each job's receipt shows one stored fact and no dedup: no job's effects were applied twice.
        receipts = [mem.status(request_id).result for request_id in requests]
        assert all(r.candidates_stored == 1 and r.candidates_deduped == 0 for r in receipts)
    print(f"\ncrash test: {total} jobs queued, SIGKILL after {done_at_kill} done ({in_flight} in flight), "
          f"{total} done after restart, duplicates: {duplicates}")
