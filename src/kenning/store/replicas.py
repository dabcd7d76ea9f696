"""PostgreSQL read replicas for the PostgreSQL store: which replica may serve a read, and when none may.

A monitor thread samples the primary's WAL position (``pg_current_wal_lsn``) and each replica's replayed
position (``pg_last_wal_replay_lsn``) every ``interval`` seconds. A replica is usable while it answers,
is in recovery (a promoted one is no replica) and has replayed what the primary had written
``max_lag`` seconds ago; one that fails a read or a check is set aside until a check succeeds again.

Read-your-writes: the store tells :meth:`ReplicaSet.choose` the WAL position of the caller's last
write to the datasets a read touches; a replica serves the read only once it has replayed that far,
waiting at most ``wait`` seconds, else the read goes to the primary (counted as a fallback). Nothing
here raises to the caller: a replica's trouble only ever sends reads back to the primary.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from psycopg_pool import ConnectionPool

log = logging.getLogger("kenning.replicas")

LSN = "pg_wal_lsn_diff({}, '0/0')::bigint"   # a WAL position as a number of bytes


@dataclass(eq=False)
class Replica:
    url: str
    label: str
    pool: ConnectionPool
    up: bool = False            # answered the last check and is in recovery
    replayed: int = -1          # the WAL position it had replayed at the last check
    lagging: bool = True        # behind the primary by more than max_lag
    reads: int = 0              # statements it served
    failures: int = 0
    last_error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def usable(self) -> bool:
        return self.up and not self.lagging


class ReplicaSet:
    def __init__(self, urls, primary_lsn, *, configure, redact, max_lag: float = 5.0, wait: float = 0.1,
                 interval: float = 0.25, connect_timeout: float = 2.0):
        """``primary_lsn()``: the primary's current WAL position (bytes); ``configure``: the store's
        per-connection setup; ``redact``: a URL without its password, for messages."""
        self.max_lag, self.wait, self.interval = max_lag, wait, interval
        self.fallbacks = 0
        self.waits: list[float] = []   # seconds each read waited for a replica to replay its caller's write
        self._primary_lsn = primary_lsn
        self._history: deque[tuple[float, int]] = deque()
        self._turn = itertools.count()
        self._stop = threading.Event()
        self.replicas = [Replica(url, redact(url), ConnectionPool(
            url, min_size=0, max_size=10, timeout=connect_timeout, open=False, configure=configure,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
            name=f"kenning replica {redact(url)}")) for url in urls]
        for replica in self.replicas:
            replica.pool.open(wait=False)
        self.check()   # know the replicas' state before the first read
        self._thread = threading.Thread(target=self._monitor, name="kenning-replica-monitor", daemon=True)
        self._thread.start()

    # -- state -------------------------------------------------------------------------------
    def check(self) -> None:
        """Sample the primary and every replica once."""
        now = time.monotonic()
        try:
            self._history.append((now, self._primary_lsn()))
        except Exception as exc:   # the primary's own trouble reaches callers through their reads
            log.debug("replica monitor: primary unavailable: %s", exc)
        while len(self._history) > 1 and self._history[1][0] <= now - self.max_lag:
            self._history.popleft()
        # the primary's position max_lag seconds ago (the oldest sample kept, if it is that old)
        then = self._history[0][1] if self._history and self._history[0][0] <= now - self.max_lag else 0
        for replica in self.replicas:
            try:
                with replica.pool.connection() as conn:
                    row = conn.execute(f"SELECT pg_is_in_recovery() AS standby,"
                                       f" {LSN.format('pg_last_wal_replay_lsn()')} AS replayed").fetchone()
                replica.up = bool(row["standby"]) and row["replayed"] is not None
                replica.replayed = row["replayed"] if row["replayed"] is not None else -1
                replica.lagging = replica.replayed < then
                if not row["standby"]:
                    replica.last_error = "not in recovery: promoted, or not a replica"
            except Exception as exc:
                self.failed(replica, exc)

    def _monitor(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def failed(self, replica: Replica, exc: BaseException) -> None:
        """A read or a check failed there: reads leave it until a check finds it well again."""
        with replica.lock:
            if replica.up:
                log.warning("replica %s set aside: %s", replica.label, exc)
            replica.up, replica.failures, replica.last_error = False, replica.failures + 1, str(exc)

    # -- choosing ---------------------------------------------------------------------------
    def choose(self, need: int) -> Replica | None:
        """A usable replica that has replayed WAL position ``need`` (waiting up to ``wait`` for it), or
        None: read the primary."""
        usable = [r for r in self.replicas if r.usable()]
        if not usable:
            self.fallbacks += 1
            return None
        start = next(self._turn)
        ordered = usable[start % len(usable):] + usable[:start % len(usable)]
        for replica in ordered:
            if replica.replayed >= need:
                return replica
        started = time.monotonic()
        deadline = started + self.wait
        replica = ordered[0]
        while True:
            try:
                with replica.pool.connection() as conn:
                    replica.replayed = conn.execute(
                        f"SELECT {LSN.format('pg_last_wal_replay_lsn()')} AS replayed").fetchone()["replayed"] or -1
            except Exception as exc:
                self.failed(replica, exc)
                break
            if replica.replayed >= need:
                self.waits.append(time.monotonic() - started)
                return replica
            if time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        self.fallbacks += 1
        return None

    def stats(self) -> dict:
        return {"fallbacks": self.fallbacks, "waited": len(self.waits),
                "replicas": [{"url": r.label, "up": r.up, "lagging": r.lagging, "reads": r.reads,
                              "failures": r.failures, "last_error": r.last_error} for r in self.replicas]}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for replica in self.replicas:
            replica.pool.close()
