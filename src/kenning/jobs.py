"""Queue workers: run queued turns through the same write pipeline as ``add``.

A worker leases the oldest runnable job (the store keeps one dataset in arrival
order), runs the pipeline, and marks the job done inside the pipeline's own
transaction. While it works, a heartbeat renews its leases, however long the
turns take; if the worker dies, nothing of that job commits and the lease runs
out, so another worker runs it once. Embedded, ``Memory`` owns a few worker
threads; ``kenning worker`` runs the same loop as a process.
"""
from __future__ import annotations

import atexit
import functools
import logging
import os
import socket
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import timeutil
from .errors import KenningError, LeaseLost
from .model import AddResult, Job

if TYPE_CHECKING:
    from .services import Services

log = logging.getLogger("kenning.jobs")
MAX_ATTEMPTS = 5  # a job whose worker died this many times is failed, not retried forever


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    """Claims and runs jobs of one store until stopped."""

    def __init__(self, services: "Services", *, lease_seconds: float = 60.0, poll_seconds: float = 0.5,
                 name: str | None = None, batch: int | None = None):
        self.services = services
        self.name = name or worker_name()
        self.batch = batch or services.settings.worker_batch
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds

    def run_once(self) -> Job | None:
        """Run one job if one is runnable; returns it (None when the queue had nothing for us)."""
        jobs = self.run_batch(1)
        return jobs[0] if jobs else None

    def run_batch(self, size: int | None = None) -> list[Job]:
        """Claim up to ``size`` runnable jobs (the store hands out one per dataset at a time, so a
        batch spans datasets and each dataset stays in order) and run them through one parser
        batch and one embedding batch; each job still commits, or fails, on its own, and a heartbeat
        renews the leases of those still running, however long the batch takes.

        An extractor that mines one message at a time (the model extractors) gets one job per claim:
        a batch would buy it only an embedding batch, and would make every job in it wait for the
        slowest while other workers stand idle. A job whose last worker stopped before finishing runs
        alone, after the others, so a turn that kills its worker takes no other tenant's attempts."""
        store = self.services.store
        claimed = self._claim((size or self.batch) if self._mines_batches() else 1)
        if not claimed:
            return []
        beat = Heartbeat(store, self.name, self.lease_seconds, [job.request_id for job in claimed])
        beat.start()
        try:
            fresh, again = [], []
            for job in claimed:
                if job.attempts > MAX_ATTEMPTS:
                    self._fail(job, f"gave up after {job.attempts - 1} attempts whose workers stopped before finishing",
                               beat)
                else:
                    (fresh if job.attempts == 1 else again).append(job)
            for group in (fresh, *([job] for job in again)):
                self._run(group, beat)
        finally:
            beat.stop()
        return claimed

    def _mines_batches(self) -> bool:
        """Whether the writer mines a batch of messages in one call (as ``WritePipeline.add_many`` decides)."""
        extractor = self.services.writer.extractor
        return hasattr(extractor, "extract_many") and not extractor.wants_context

    def _claim(self, size: int) -> list[Job]:
        store, now = self.services.store, timeutil.now()
        claimed: list[Job] = []
        for _ in range(size):
            job = store.claim(self.name, self.lease_seconds, now)
            if job is None:
                break
            claimed.append(job)
        return claimed

    def _run(self, jobs: list[Job], beat: Heartbeat) -> None:
        from .write import Message

        store = self.services.store
        jobs = [job for job in jobs if job.request_id not in beat.lost]   # another worker runs those now
        finished = set()

        def finisher(job: Job):
            def finish(result: AddResult) -> None:
                # An extraction that failed kept the message: the job says so (failed, with the error and the
                # receipt), and retry_failed() or Memory.remine() mines it again.
                error = f"ExtractionError: {result.extraction_error}" if result.extraction_error else None
                store.finish(job.request_id, self.name, result.model_dump(mode="json", exclude={"memory"}), error=error)
                finished.add(job.request_id)
                beat.done(job.request_id)
            return finish

        # A turn without a caller's message_id gets one from its job, so running it again (a retried job)
        # finds the message it kept the first time instead of keeping it twice.
        messages = [Message(job.scope, job.content, job.at, job.role, job.client_ref, job.chat,
                            job.message_id or f"ep_{job.request_id.removeprefix('req_')}", job.temporary,
                            finisher(job), sent=job.created_at) for job in jobs]
        try:
            results = self.services.writer.add_many(messages) if messages else []
        except Exception as exc:  # a bug must fail the jobs visibly, not kill the worker
            log.exception("a batch of %d jobs failed", len(messages))
            results = [exc] * len(messages)
        for job, result in zip(jobs, results):
            try:
                if isinstance(result, Exception):
                    raise result
                if job.request_id not in finished:  # answered without a transaction (a repeat)
                    with store.transaction(job.scope):
                        store.finish(job.request_id, self.name, result.model_dump(mode="json", exclude={"memory"}))
                        beat.done(job.request_id)
            except LeaseLost:
                log.warning("job %s was deleted (its message taken back) or reclaimed by another worker; this run "
                            "is rolled back", job.request_id)
            except KenningError as exc:
                self._fail(job, f"{type(exc).__name__}: {exc}", beat)
            except Exception as exc:  # noqa: BLE001
                log.error("job %s failed: %s: %s", job.request_id, type(exc).__name__, exc)
                self._fail(job, f"internal error: {type(exc).__name__}: {exc}", beat)

    def _fail(self, job: Job, error: str, beat: Heartbeat) -> None:
        store = self.services.store
        try:
            with store.transaction(job.scope):
                store.finish(job.request_id, self.name, None, error=error)
                beat.done(job.request_id)
        except LeaseLost:
            pass

    def run(self, stop: threading.Event, wake: threading.Event | None = None, idle_exit: bool = False) -> int:
        """Loop until ``stop`` is set (or, with ``idle_exit``, until nothing is left to do)."""
        done = 0
        while not stop.is_set():
            try:
                jobs = self.run_batch()
            except KenningError:
                log.exception("worker %s could not claim a job", self.name)
                jobs = []
            if jobs:
                done += len(jobs)
                self.services.job_done.set()
                continue
            if idle_exit and self.services.store.count_jobs(("queued", "distilling")) == 0:
                return done
            if wake is not None:
                wake.wait(self.poll_seconds)
                wake.clear()
            else:
                stop.wait(self.poll_seconds)
        return done


class Heartbeat:
    """Renews a worker's leases every third of the lease while its batch runs, so a batch longer than the
    lease keeps its jobs (else another worker reclaims them, and the first one's work is rolled back at
    its finish, again and again). Only a worker that stops, or cannot reach the store for two thirds of
    a lease, loses them; ``lost`` then names the jobs another worker took, and this one stops counting
    on them."""

    def __init__(self, store, worker: str, lease_seconds: float, request_ids: list[str]):
        self.store, self.worker, self.lease_seconds = store, worker, lease_seconds
        self.open, self.lost = set(request_ids), set()
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"kenning-lease-{worker}")

    def start(self) -> None:
        self._thread.start()

    def done(self, request_id: str) -> None:
        with self._lock:
            self.open.discard(request_id)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.lease_seconds)

    def _beat(self) -> None:
        while not self._stop.wait(self.lease_seconds / 3):
            with self._lock:
                ids = sorted(self.open)
            if not ids:
                continue
            try:
                held = self.store.renew(self.worker, ids, self.lease_seconds, timeutil.now())
            except Exception as exc:  # noqa: BLE001 - tried again at the next beat, while the lease lasts
                log.warning("worker %s could not renew the leases of %d jobs: %s", self.worker, len(ids), exc)
                continue
            with self._lock:
                gone = (set(ids) - held) & self.open   # not finished here meanwhile: reclaimed elsewhere
                self.open -= gone
                self.lost |= gone
            for request_id in sorted(gone):
                log.warning("job %s was deleted or reclaimed by another worker; worker %s stops counting on it",
                            request_id, self.worker)


class WorkerThreads:
    """The embedded workers a ``Memory`` starts lazily and stops on close."""

    def __init__(self, services: "Services", count: int, lease_seconds: float):
        self.services, self.count, self.lease_seconds = services, count, lease_seconds
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._at_exit: Callable[[], None] | None = None

    def ensure_started(self) -> None:
        with self._lock:
            if self.threads or self.count < 1:
                return
            # A program that ends without close(): stop the workers before the interpreter tears down, or a
            # worker inside native code (the parser, the ONNX runtime) is killed mid-call and takes the
            # process down with it, leaving its job leased until the lease runs out.
            self._at_exit = functools.partial(_stop_at_exit, weakref.ref(self))
            atexit.register(self._at_exit)
            for i in range(self.count):
                worker = Worker(self.services, lease_seconds=self.lease_seconds, poll_seconds=0.2)
                thread = threading.Thread(target=worker.run, args=(self.stop, self.wake), daemon=True,
                                          name=f"kenning-worker-{i}")
                thread.start()
                self.threads.append(thread)

    @property
    def running(self) -> bool:
        return bool(self.threads) and not self.stop.is_set()

    def notify(self) -> None:
        self.wake.set()

    def close(self, timeout: float = 30.0) -> None:
        self.stop.set()
        self.wake.set()
        for thread in self.threads:
            thread.join(timeout)
        self.threads = []
        if self._at_exit is not None:
            atexit.unregister(self._at_exit)
            self._at_exit = None


EXIT_WAIT_SECONDS = 10.0   # at exit, how long a job in flight may take to finish before the process ends anyway


def _stop_at_exit(ref: "weakref.ref[WorkerThreads]") -> None:
    workers = ref()
    if workers is not None:
        workers.close(EXIT_WAIT_SECONDS)
