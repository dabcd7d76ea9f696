"""Queue workers: run queued turns through the same write pipeline as ``add``.

A worker leases the oldest runnable job (the store keeps one dataset in arrival
order), runs the pipeline, and marks the job done inside the pipeline's own
transaction; if the worker dies, nothing of that job commits and the lease runs
out, so another worker runs it once. Embedded, ``Memory`` owns a few worker
threads; ``kenning worker`` runs the same loop as a process.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
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
        batch and one embedding batch; each job still commits, or fails, on its own."""
        from .write import Message

        store = self.services.store
        now = timeutil.now()
        claimed: list[Job] = []
        for _ in range(size or self.batch):
            job = store.claim(self.name, self.lease_seconds, now)
            if job is None:
                break
            claimed.append(job)
        runnable, finished = [], set()
        for job in claimed:
            if job.attempts > MAX_ATTEMPTS:
                self._fail(job, f"gave up after {job.attempts - 1} attempts whose workers stopped before finishing")
            else:
                runnable.append(job)

        def finisher(job: Job):
            def finish(result: AddResult) -> None:
                # An extraction that failed kept the message: the job says so (failed, with the error and the
                # receipt), and retry_failed() or Memory.remine() mines it again.
                error = f"ExtractionError: {result.extraction_error}" if result.extraction_error else None
                store.finish(job.request_id, self.name, result.model_dump(mode="json", exclude={"memory"}), error=error)
                finished.add(job.request_id)
            return finish

        # A turn without a caller's message_id gets one from its job, so running it again (a retried job)
        # finds the message it kept the first time instead of keeping it twice.
        messages = [Message(job.scope, job.content, job.at, job.role, job.client_ref, job.chat,
                            job.message_id or f"ep_{job.request_id.removeprefix('req_')}", job.temporary,
                            finisher(job)) for job in runnable]
        try:
            results = self.services.writer.add_many(messages) if messages else []
        except Exception as exc:  # a bug must fail the jobs visibly, not kill the worker
            log.exception("a batch of %d jobs failed", len(messages))
            results = [exc] * len(messages)
        for job, result in zip(runnable, results):
            try:
                if isinstance(result, Exception):
                    raise result
                if job.request_id not in finished:  # answered without a transaction (a repeat)
                    with store.transaction(job.scope):
                        store.finish(job.request_id, self.name, result.model_dump(mode="json", exclude={"memory"}))
            except LeaseLost:
                log.warning("job %s was reclaimed by another worker; this run is rolled back", job.request_id)
            except KenningError as exc:
                self._fail(job, f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # noqa: BLE001
                log.error("job %s failed: %s: %s", job.request_id, type(exc).__name__, exc)
                self._fail(job, f"internal error: {type(exc).__name__}: {exc}")
        return claimed

    def _fail(self, job: Job, error: str) -> None:
        store = self.services.store
        try:
            with store.transaction(job.scope):
                store.finish(job.request_id, self.name, None, error=error)
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


class WorkerThreads:
    """The embedded workers a ``Memory`` starts lazily and stops on close."""

    def __init__(self, services: "Services", count: int, lease_seconds: float):
        self.services, self.count, self.lease_seconds = services, count, lease_seconds
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def ensure_started(self) -> None:
        with self._lock:
            if self.threads or self.count < 1:
                return
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
