"""Crash safety: real kenning processes killed with SIGKILL at the worst moments, on real stores.

Nothing is mocked: each test starts ``python -m kenning.cli`` (``serve``, ``worker``,
``import``) or a small script on the public API, kills it with SIGKILL while it is
writing, then opens the store again and checks that nothing was half-done, lost or
done twice.

- The queue (``serve`` on SQLite, ``worker`` on both stores): 1,000 queued turns, the
  process killed twice while a job is claimed and its transaction open, then restarted
  until the queue is empty. Every job is done once (its receipt: one fact stored,
  none deduplicated; its attempts: one, plus one for each claim a kill ended),
  no fact is duplicated, no turn lost.
- Core files: a writer editing two files in a loop through the memory tool, killed
  at random moments three times; each file's content is its latest version's, versions
  are contiguous and every version holds exactly the edits before it.
- Import (one transaction, see kenning.transfer): killed with half the export read and
  written but not committed; the store holds none of it, and importing again gives
  exactly the exported rows, once.
"""
from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import psycopg
import pytest

from kenning import Memory, Settings

T0 = datetime(2026, 7, 1, 10, 0, tzinfo=timezone.utc)

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

KILLED_LEASE = 2.0   # seconds: a job left by a killed process is claimed again this soon


@pytest.fixture
def spawn(tmp_path):
    """``spawn(*args, log=name)``: ``kenning *args`` as a process (output in tmp_path/name.log);
    whatever is still running at the end of the test is killed."""
    procs: list[subprocess.Popen] = []

    def run(*args: str, log: str, env: dict | None = None, stdin=None, script: str | None = None):
        command = [sys.executable, "-c", script, *args] if script else [sys.executable, "-m", "kenning.cli", *args]
        path = tmp_path / f"{log}.log"
        with open(path, "ab") as out:
            proc = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdin=stdin, stdout=out,
                                    stderr=subprocess.STDOUT)
        proc.log = path
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _sigkill(proc: subprocess.Popen) -> None:
    assert proc.poll() is None, f"it ended before the kill:\n{proc.log.read_text()}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def _wait(condition, proc: subprocess.Popen, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"it ended while waiting for {what}:\n{proc.log.read_text()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout}s:\n{proc.log.read_text()}"
        time.sleep(0.003)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sqlite_is_sound(path: Path) -> None:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        for fts in ("facts_fts", "episodes_fts", "notes_fts"):   # the keyword indexes agree with their tables
            db.execute(f"INSERT INTO {fts}({fts}) VALUES ('integrity-check')")
    finally:
        db.close()


def _sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else None


def _quiet(url: str) -> Memory:
    """The store as the test reads it: no embedder to load, no workers."""
    return Memory(url, embedder=None, settings=Settings(worker_threads=0))


# -- the queue: a worker process killed mid-batch, twice -------------------------------------------------

def _all_facts(mem: Memory, dataset: str) -> list:
    facts, offset = [], 0
    while True:
        page = mem.list_facts(dataset, include_invalidated=True, limit=100, offset=offset)
        facts.extend(page.facts)
        offset += 100
        if offset >= page.total:
            return facts


def _crash_the_queue(db: str, start, stop, *, datasets: int, hobbies: list[str],
                     kills: tuple[float, ...] = (1 / 3, 2 / 3)) -> str:
    """Queue one turn per (dataset, hobby), run ``start(final)`` and SIGKILL it at each fraction of the
    jobs done (while a job is claimed), then let the last run finish and ``stop`` it; check every job
    ran exactly once. Returns a summary line."""
    names = [f"user-{d}" for d in range(datasets)]
    turns: dict[str, tuple[str, str, str, str]] = {}   # request_id -> dataset, message_id, text, hobby
    with _quiet(db) as mem:
        for i, hobby in enumerate(hobbies):
            for d in names:
                text = f"I love {hobby}."
                r = mem.add_turn(d, "user", text, at=T0 + timedelta(minutes=i), message_id=f"{d}-m{i}")
                turns[r.request_id] = (d, f"{d}-m{i}", text, hobby)
    total = len(turns)

    killed: dict[str, set[int]] = {r: set() for r in turns}   # a job's claims (by attempt) that a kill ended
    kill_points = []
    with _quiet(db) as probe:
        count = probe.store.count_jobs
        assert count(("queued",)) == total
        for fraction in kills:
            proc = start(False)
            # Kill while a job is claimed and its transaction open: the worst moment.
            _wait(lambda: count(("done",)) >= total * fraction and count(("distilling",)) >= 1, proc,
                  f"{fraction:.0%} of the jobs done")
            _sigkill(proc)
            claimed = probe.store.list_jobs("default", "default", status="distilling", limit=100)
            for job in claimed:   # one claimed before and not yet taken again is the same claim
                killed[job.request_id].add(job.attempts)
            kill_points.append((count(("done",)), len(claimed)))
        proc = start(True)
        _wait(lambda: count(("queued", "distilling")) == 0, proc, "empty queue", timeout=300)
        assert stop(proc) == 0, proc.log.read_text()
    done = [d for d, _ in kill_points]
    assert 0 < done[0] and done == sorted(done) and done[-1] < total

    with _quiet(db) as mem:
        assert mem.store.count_jobs(("done",)) == total
        assert mem.store.count_jobs(("queued", "distilling", "failed")) == 0
        facts, duplicates = {}, 0
        for d in names:
            every = _all_facts(mem, d)
            objects = [f.object for f in every]
            duplicates += len(objects) - len(set(objects))
            assert sorted(objects) == sorted(hobbies), f"{d}: a turn was lost or applied twice"
            facts.update((f.fact_id, f) for f in every)
        assert duplicates == 0
        receipts = set()
        for request_id, (d, message_id, text, hobby) in turns.items():
            job, r = mem.store.get_job(request_id, *mem.services.tenant()), mem.status(request_id).result
            # Applied once: one fact stored, none deduplicated against an earlier run's, cited to its turn.
            assert (r.candidates_stored, r.candidates_deduped, len(r.memory_ids)) == (1, 0, 1), (request_id, r)
            fact = facts[r.memory_ids[0]]
            assert (fact.object, fact.episode_id) == (hobby, message_id)
            assert mem.messages.get(d, message_id).content == text            # the turn is kept
            assert job.attempts == 1 + len(killed[request_id]), (request_id, job.attempts, killed[request_id])
            receipts.add(fact.fact_id)
        assert receipts == set(facts)                                          # no fact without its receipt
    return (f"{total} jobs, SIGKILL at {', '.join(f'{d} done ({n} claimed)' for d, n in kill_points)}; "
            f"{total} done after restart, duplicates {duplicates}, "
            f"re-run {sum(map(len, killed.values()))} killed claim(s) once each")


@pytest.mark.slow
def test_sigkill_kenning_serve_mid_queue_every_job_runs_exactly_once(tmp_path, spawn):
    db = f"sqlite:///{tmp_path / 'k.db'}"
    urls = []

    def start(final: bool):
        port = _free_port()
        urls.append(f"http://127.0.0.1:{port}")
        lease = 60.0 if final else KILLED_LEASE    # the last run's own jobs are never taken back mid-run
        return spawn("--db", db, "serve", "--port", str(port), log="serve",
                     env={"KENNING_WORKER_THREADS": "2", "KENNING_JOB_LEASE_SECONDS": str(lease)})

    def stop(proc) -> int:
        with httpx.Client(base_url=urls[-1], timeout=10) as api:   # the server agrees: nothing open
            assert api.get("/v1/health").json()["status"] == "ok"
            assert api.get("/v1/jobs/open").json() == {"count": 0}
        proc.send_signal(signal.SIGTERM)
        return proc.wait(30)

    summary = _crash_the_queue(db, start, stop, datasets=10, hobbies=HOBBIES[:100])
    _sqlite_is_sound(tmp_path / "k.db")
    print(f"\nkenning serve crash: {summary}")


def test_sigterm_stops_kenning_serve_cleanly_mid_queue(tmp_path, spawn):
    """SIGTERM (docker stop, systemd) is a clean stop: the job in flight finishes, the exit status is 0."""
    db = f"sqlite:///{tmp_path / 'k.db'}"
    with _quiet(db) as mem:
        for i, hobby in enumerate(HOBBIES):
            mem.add_turn("sam", "user", f"I love {hobby}.", at=T0 + timedelta(minutes=i))
        count = mem.store.count_jobs
        proc = spawn("--db", db, "serve", "--port", str(_free_port()), log="serve")
        _wait(lambda: count(("done",)) >= 10 and count(("distilling",)) >= 1, proc, "a job in flight")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, proc.log.read_text()
        assert count(("distilling",)) == 0, "the job in flight was abandoned"
        assert 10 <= count(("done",)) < len(HOBBIES) and "Traceback" not in proc.log.read_text()


@pytest.mark.slow
def test_sigkill_kenning_worker_mid_batch_every_job_runs_exactly_once(store_url, spawn):
    def start(final: bool):
        lease = "60" if final else str(KILLED_LEASE)
        return spawn("--db", store_url, "worker", "--lease", lease, "--poll", "0.1",
                     *(["--exit-when-idle"] if final else []), log="worker")

    summary = _crash_the_queue(store_url, start, lambda proc: proc.wait(60), datasets=10, hobbies=HOBBIES[:100])
    if path := _sqlite_path(store_url):
        _sqlite_is_sound(path)
    print(f"\nkenning worker crash: {summary}")


# -- core files: a memory tool writer killed at random moments -----------------------------------------

LOG, STATE = "/memories/log.md", "/memories/state.md"
CORE_WRITER = f"""
import sys
from kenning import Memory, NotFound, Settings

# every version kept (the default keeps the newest 100), so the test can check them all
mem = Memory(sys.argv[1], embedder=None, settings=Settings(worker_threads=0, max_core_versions=10**9))
tool = lambda **command: mem.memory_tool("sam", command)
try:   # the log's lines each end with a newline (as insert leaves them): entries, then "<end>"
    n = mem.core.read("sam", "{LOG}").content.count("\\n") - 1
except NotFound:
    tool(command="create", path="{LOG}", file_text="<end>\\n")
    n = 0
first = n
while True:   # one entry a step, by str_replace or insert in turn, then the count in a second file
    entry = f"entry {{n:05d}} " + "x" * (n % 7)   # as _entry(n)
    if n % 2:
        tool(command="str_replace", path="{LOG}", old_str="<end>", new_str=entry + "\\n<end>")
    else:
        tool(command="insert", path="{LOG}", insert_line=n, insert_text=entry)
    mem.core.write("sam", "{STATE}", f"{{n + 1}} entries")   # create never overwrites: the library does
    if n == first:
        print("writing", flush=True)
    n += 1
"""


def _entry(n: int) -> str:
    return f"entry {n:05d} " + "x" * (n % 7)


def _core_is_whole(db: str) -> tuple[int, int]:
    """Each file's content is its latest version's, versions run 1..n, and every version of the log
    holds exactly the entries before it; returns (log versions, state versions)."""
    with _quiet(db) as mem:
        log, state = mem.core.read("sam", LOG), mem.core.read("sam", STATE)
        log_history, state_history = mem.core.history("sam", LOG), mem.core.history("sam", STATE)
    for current, history in ((log, log_history), (state, state_history)):
        assert [v.version for v in history] == list(range(1, len(history) + 1))
        assert (current.version, current.content) == (history[-1].version, history[-1].content)
    before = ""
    for n, version in enumerate(log_history):   # version n + 1 holds entries 0 .. n - 1, no more, no less
        assert version.content == before + "<end>\n", version.version
        before += _entry(n) + "\n"
    counts = [int(v.content.split()[0]) for v in state_history]
    assert counts == sorted(set(counts)) and counts[-1] in (len(log_history) - 1, len(log_history) - 2)
    return len(log_history), len(state_history)


@pytest.mark.slow
def test_sigkill_mid_memory_tool_writes_never_leaves_a_half_written_file(store_url, spawn):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    sizes, delays = [(0, 0)], []
    for round_ in range(3):
        proc = spawn(store_url, log=f"core-{round_}", script=CORE_WRITER, stdin=subprocess.DEVNULL)
        _wait(lambda: "writing" in proc.log.read_text(), proc, "the first write")
        delays.append(rng.uniform(0.05, 0.3))
        time.sleep(delays[-1])
        _sigkill(proc)
        if path := _sqlite_path(store_url):
            _sqlite_is_sound(path)
        sizes.append(_core_is_whole(store_url))
        assert sizes[-1] > sizes[-2], f"no write landed in round {round_} (seed {seed})"
    print(f"\nmemory tool crash (seed {seed}): killed after {', '.join(f'{d:.2f}s' for d in delays)}; "
          f"log/state versions after each kill: {sizes[1:]}")


# -- import: killed with half of the export written, not committed ----------------------------------------

def _export_source(tmp_path: Path, spawn) -> tuple[list[str], dict[str, int]]:
    """A store with facts, entities, messages, ingests, notes, core files and documents, exported by the CLI."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    with _quiet(source) as mem:
        for i, hobby in enumerate(HOBBIES[:60]):
            mem.add(f"I love {hobby}.", dataset="ann", at=T0 + timedelta(minutes=i), client_ref=f"ann-{i}")
        for i in range(30):
            mem.notes.save("ann", f"note {i}: ask about {HOBBIES[i]}")
            mem.documents.write("agent-1", f"/docs/{i}.md", f"document {i}")
        mem.memory_tool("ann", {"command": "create", "path": LOG, "file_text": "<end>"})
        for i in range(30):
            mem.memory_tool("ann", {"command": "str_replace", "path": LOG, "old_str": "<end>",
                                    "new_str": f"entry {i}\n<end>"})
    out = tmp_path / "export.jsonl"
    proc = spawn("--db", source, "export", "--out", str(out), log="export")
    assert proc.wait(60) == 0, proc.log.read_text()
    lines = out.read_text().splitlines(keepends=True)
    kinds: dict[str, int] = {}
    for line in lines[1:]:
        kind = json.loads(line)["kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
    return lines, kinds


def _import_transaction_open(url: str) -> bool:
    """Whether another connection holds a write transaction open on the store."""
    if path := _sqlite_path(url):
        db = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
            return False
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc)
            return True
        finally:
            db.close()
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                            " AND state = 'idle in transaction' AND pid <> pg_backend_pid()").fetchone()[0] > 0


def _exported(url: str) -> list[str]:
    with _quiet(url) as mem:
        return list(mem.export())[1:]


@pytest.mark.slow
def test_sigkill_mid_import_leaves_nothing_and_a_rerun_restores_every_row_once(tmp_path, store_url, spawn):
    lines, kinds = _export_source(tmp_path, spawn)
    rows = len(lines) - 1
    assert rows > 300 and len(kinds) == 8
    _quiet(store_url).close()   # the target exists and is migrated before the import starts

    # The import checks every line before it writes one (issue 31, finding 11: it no longer holds the
    # store's write lock while it reads): feed part of the export through stdin and kill it while it
    # waits for the rest. No transaction is open meanwhile, and nothing was written.
    cut = random.randint(rows // 4, 3 * rows // 4)
    proc = spawn("--db", store_url, "--json", "import", "-", log="import", stdin=subprocess.PIPE)
    proc.stdin.write("".join(lines[:1 + cut]).encode())
    proc.stdin.flush()
    time.sleep(2)
    assert proc.poll() is None, proc.log.read_text()
    # Starting up (opening the store) may hold a transaction a moment on a busy machine; once the import
    # is waiting for its input none may be open, for as long as it waits.
    deadline = time.monotonic() + 30
    while _import_transaction_open(store_url):
        assert time.monotonic() < deadline, "an import holds a transaction while it reads its input"
        time.sleep(0.2)
    for _ in range(5):
        time.sleep(0.2)
        assert not _import_transaction_open(store_url), "an import holds a transaction while it reads its input"
    assert proc.poll() is None, proc.log.read_text()
    _sigkill(proc)
    proc.stdin.close()
    if path := _sqlite_path(store_url):
        _sqlite_is_sound(path)
    assert _exported(store_url) == [], "a killed import left rows behind"

    proc = spawn("--db", store_url, "--json", "import", str(tmp_path / "export.jsonl"), log="rerun")
    assert proc.wait(60) == 0, proc.log.read_text()
    counts = json.loads(proc.log.read_text().splitlines()[-1])
    assert counts == {**dict.fromkeys(kinds, 0), **kinds, "skipped": 0}
    after = _exported(store_url)
    assert sorted(after) == sorted(lines[1:]) and len(set(after)) == rows

    proc = spawn("--db", store_url, "--json", "import", str(tmp_path / "export.jsonl"), log="again")
    assert proc.wait(60) == 0, proc.log.read_text()
    assert json.loads(proc.log.read_text().splitlines()[-1])["skipped"] == rows
    assert sorted(_exported(store_url)) == sorted(after)
    if path := _sqlite_path(store_url):
        _sqlite_is_sound(path)
    print(f"\nimport crash: killed with {cut} of {rows} rows read, before writing: 0 rows kept; "
          f"the re-run imported {rows}, a third run skipped {rows}")
