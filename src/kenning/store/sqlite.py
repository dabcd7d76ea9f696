"""The embedded store: one SQLite file, WAL, FTS5, vectors as float32 BLOBs.

One connection per store, guarded by a re-entrant lock: SQLite serialises
writers anyway, and a single connection keeps ``:memory:`` databases whole.
Other processes on the same file coordinate through SQLite's own locks
(``BEGIN IMMEDIATE`` plus a busy timeout). Per-dataset vector matrices are
cached and invalidated by a local write counter and ``PRAGMA data_version``
(which moves when another connection commits).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from .. import timeutil
from ..errors import ConfigError, DuplicateFact, InputError, MigrationError, StoreError
from ..model import DatasetSummary, Entity, Episode, Fact, Job, Scope
from ..records import RECORDS
from .base import FactQuery
from .rows import ENTITY_COLUMNS, EXPORT_TABLES, FACT_COLUMNS, VECTOR_TABLES, entity_of, fact_of
from .matrices import MatrixSearch, matrix_of
from .sql import COMMON_MIN_ROWS, COMMON_SHARE, DATASET_TABLES, Dialect, SQLStore, fact_filters, fact_order
from .erasing import ERASE_WAIT_SECONDS

log = logging.getLogger(__name__)

LIVE_NOW = ("f.invalid_at IS NULL AND f.valid_at <= :t "
            "AND (f.valid_until IS NULL OR f.valid_until > :t)")
LIVE_AS_OF = ("(f.invalid_at IS NULL OR f.invalid_at > :t) AND f.valid_at <= :t "
              "AND (f.valid_until IS NULL OR f.valid_until > :t)")
SCOPE = "f.project = :p AND f.environment = :e AND f.dataset = :d"
CONTEXT_WEIGHT = 0.5  # a word in the message before counts half of one in the message (measured on LoCoMo)
# The rows each cached matrix is built from (kenning.store.matrices), in a stable order.
MATRIX_ROWS = {
    "fact": "SELECT fact_id, embedding, valid_at, valid_until FROM facts WHERE project=? AND environment=?"
            " AND dataset=? AND invalid_at IS NULL AND embedding IS NOT NULL",
    "episode": "SELECT episode_id, embedding, chat FROM episodes WHERE project=? AND environment=? AND dataset=?"
               " AND embedding IS NOT NULL ORDER BY at, created_at, rowid",
    "note": "SELECT note_id, embedding, namespace FROM notes WHERE project=? AND environment=? AND dataset=?"
            " AND forgotten_at IS NULL AND embedding IS NOT NULL ORDER BY rowid",
    "order": "SELECT episode_id, chat FROM episodes WHERE project=? AND environment=? AND dataset=? ORDER BY at, created_at, rowid",
}
# Rows are read without their vectors (1.5 KB each): only the matrices need those.


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Execute statement by statement: ``executescript`` would commit our transaction."""
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            db.execute(buf)
            buf = ""


def m001_initial(db: sqlite3.Connection) -> None:
    _script(db, """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE episodes (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        episode_id TEXT NOT NULL, role TEXT NOT NULL, chat TEXT, content TEXT NOT NULL,
        at TEXT NOT NULL, created_at TEXT NOT NULL, embedding BLOB,
        PRIMARY KEY (project, environment, dataset, episode_id));
    CREATE TABLE ingests (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        client_ref TEXT NOT NULL, receipt TEXT NOT NULL, created_at TEXT NOT NULL,
        PRIMARY KEY (project, environment, dataset, client_ref));
    CREATE TABLE entities (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        entity_id TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
        aliases TEXT NOT NULL DEFAULT '[]', embedding BLOB, created_at TEXT NOT NULL,
        PRIMARY KEY (project, environment, dataset, entity_id),
        UNIQUE (project, environment, dataset, name, type));
    CREATE TABLE facts (
        rowid INTEGER PRIMARY KEY,
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        fact_id TEXT NOT NULL UNIQUE, subject TEXT NOT NULL CHECK (subject = 'user'),
        predicate TEXT NOT NULL, object TEXT NOT NULL CHECK (length(object) <= 500),
        object_is_entity INTEGER NOT NULL, entity_id TEXT, entity_type TEXT,
        text TEXT NOT NULL, kind TEXT NOT NULL,
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        source_quote TEXT NOT NULL, valid_at TEXT NOT NULL, valid_until TEXT,
        invalid_at TEXT, superseded_by TEXT, episode_id TEXT, created_at TEXT NOT NULL,
        embed_text TEXT NOT NULL, embedding BLOB);
    CREATE INDEX facts_slot ON facts (project, environment, dataset, predicate, valid_at);
    CREATE INDEX facts_time ON facts (project, environment, dataset, valid_at);
    CREATE INDEX facts_entity ON facts (project, environment, dataset, entity_id);
    CREATE UNIQUE INDEX facts_live_unique ON facts (
        project, environment, dataset, subject, predicate, object, coalesce(valid_until, 'infinity'))
        WHERE invalid_at IS NULL;
    CREATE VIRTUAL TABLE facts_fts USING fts5 (
        text, object, predicate, scope, tokenize='porter unicode61');
    CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, text, object, predicate, scope)
        VALUES (new.rowid, scoped_words(new.project, new.environment, new.dataset, new.text),
                scoped_words(new.project, new.environment, new.dataset, new.object),
                scoped_words(new.project, new.environment, new.dataset, new.predicate),
                scope_token(new.project, new.environment, new.dataset));
    END;
    CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
        DELETE FROM facts_fts WHERE rowid = old.rowid;
    END;
    CREATE TRIGGER facts_au AFTER UPDATE OF text, object, predicate ON facts BEGIN
        DELETE FROM facts_fts WHERE rowid = old.rowid;
        INSERT INTO facts_fts (rowid, text, object, predicate, scope)
        VALUES (new.rowid, scoped_words(new.project, new.environment, new.dataset, new.text),
                scoped_words(new.project, new.environment, new.dataset, new.object),
                scoped_words(new.project, new.environment, new.dataset, new.predicate),
                scope_token(new.project, new.environment, new.dataset));
    END;
    """)


def m002_messages_and_notes(db: sqlite3.Connection) -> None:
    """Keyword search over messages and notes. Their FTS rows carry a scope token, so a
    search intersects posting lists instead of filtering every dataset's matches."""
    _script(db, """
    ALTER TABLE episodes ADD COLUMN context TEXT NOT NULL DEFAULT '';
    ALTER TABLE episodes ADD COLUMN embed_text TEXT;
    UPDATE episodes SET embed_text = substr(content, 1, 2000);
    CREATE INDEX episodes_time ON episodes (project, environment, dataset, chat, at);
    CREATE VIRTUAL TABLE episodes_fts USING fts5 (
        content, context, scope, episode_id UNINDEXED, chat UNINDEXED, tokenize='porter unicode61');
    CREATE TRIGGER episodes_ai AFTER INSERT ON episodes BEGIN
        INSERT INTO episodes_fts (content, context, scope, episode_id, chat)
        VALUES (scoped_words(new.project, new.environment, new.dataset, new.content),
                scoped_words(new.project, new.environment, new.dataset, new.context),
                scope_token(new.project, new.environment, new.dataset),
                new.episode_id, new.chat);
    END;
    CREATE TRIGGER episodes_ad AFTER DELETE ON episodes BEGIN
        DELETE FROM episodes_fts WHERE episode_id = old.episode_id
            AND scope = scope_token(old.project, old.environment, old.dataset);
    END;
    INSERT INTO episodes_fts (content, context, scope, episode_id, chat)
        SELECT scoped_words(project, environment, dataset, content), scoped_words(project, environment, dataset, context),
               scope_token(project, environment, dataset), episode_id, chat FROM episodes;
    CREATE TABLE notes (
        rowid INTEGER PRIMARY KEY,
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        namespace TEXT NOT NULL, note_id TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
        created_at TEXT NOT NULL, forgotten_at TEXT, superseded_by TEXT, embedding BLOB);
    CREATE INDEX notes_scope ON notes (project, environment, dataset, namespace, created_at);
    CREATE VIRTUAL TABLE notes_fts USING fts5 (
        text, scope, note_id UNINDEXED, tokenize='porter unicode61');
    CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
        INSERT INTO notes_fts (text, scope, note_id)
        VALUES (scoped_words(new.project, new.environment, new.dataset, new.text),
                scope_token(new.project, new.environment, new.dataset), new.note_id);
    END;
    CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
        DELETE FROM notes_fts WHERE note_id = old.note_id;
    END;
    """)


def m003_jobs(db: sqlite3.Connection) -> None:
    """The durable queue behind add_turn: arrival order is ``seq``; a claim is a lease."""
    _script(db, """
    CREATE TABLE jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL UNIQUE,
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        client_ref TEXT, payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'distilling', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_until TEXT,
        error TEXT, result TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
    CREATE UNIQUE INDEX jobs_client_ref ON jobs (project, environment, dataset, client_ref)
        WHERE client_ref IS NOT NULL;
    CREATE INDEX jobs_open ON jobs (status, seq);
    CREATE INDEX jobs_dataset_open ON jobs (project, environment, dataset, status, seq);
    """)


def m004_core_files_and_documents(db: sqlite3.Connection) -> None:
    _script(db, """
    CREATE TABLE core_files (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL, namespace TEXT NOT NULL,
        path TEXT NOT NULL, content TEXT NOT NULL, version INTEGER NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project, environment, dataset, namespace, path));
    CREATE TABLE core_file_versions (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL, namespace TEXT NOT NULL,
        path TEXT NOT NULL, version INTEGER NOT NULL, content TEXT, op TEXT NOT NULL, at TEXT NOT NULL,
        PRIMARY KEY (project, environment, dataset, namespace, path, version));
    CREATE TABLE documents (
        project TEXT NOT NULL, environment TEXT NOT NULL, scope_key TEXT NOT NULL, path TEXT NOT NULL,
        text TEXT NOT NULL, version INTEGER NOT NULL, expires_at TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (project, environment, scope_key, path));
    CREATE INDEX documents_expiry ON documents (expires_at) WHERE expires_at IS NOT NULL;
    """)


def m005_api_keys(db: sqlite3.Connection) -> None:
    _script(db, """
    CREATE TABLE api_keys (
        key_hash TEXT PRIMARY KEY, project TEXT NOT NULL, role TEXT NOT NULL, name TEXT,
        created_at TEXT NOT NULL, revoked_at TEXT);
    """)


def m006_scoped_fts_deletes(db: sqlite3.Connection) -> None:
    """A deleted message or note leaves the keyword index through its scope's posting list (a MATCH),
    not through a scan of every tenant's rows, so erasing a dataset stays linear in its size."""
    _script(db, """
    DROP TRIGGER episodes_ad;
    CREATE TRIGGER episodes_ad AFTER DELETE ON episodes BEGIN
        DELETE FROM episodes_fts WHERE rowid IN (SELECT rowid FROM episodes_fts
            WHERE episodes_fts MATCH 'scope:' || scope_token(old.project, old.environment, old.dataset)
            AND episode_id = old.episode_id);
    END;
    DROP TRIGGER notes_ad;
    CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
        DELETE FROM notes_fts WHERE rowid IN (SELECT rowid FROM notes_fts
            WHERE notes_fts MATCH 'scope:' || scope_token(old.project, old.environment, old.dataset)
            AND note_id = old.note_id);
    END;
    """)


def m007_sessions(db: sqlite3.Connection) -> None:
    """The dashboard's sign-ins, kept server-side so signing out (or revoking the key) ends them."""
    _script(db, """
    CREATE TABLE sessions (
        session_hash TEXT PRIMARY KEY, principal TEXT NOT NULL, key_id TEXT,
        created_at TEXT NOT NULL, expires_at TEXT NOT NULL);
    CREATE INDEX sessions_expiry ON sessions (expires_at);
    """)


def m008_fair_turns(db: sqlite3.Connection) -> None:
    """Each job's turn: datasets take turns at the workers (round robin), instead of strict arrival order,
    so one dataset's backlog never holds another's turn back."""
    _script(db, """
    ALTER TABLE jobs ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX jobs_turn ON jobs (status, turn, seq);
    """)


def _usage_triggers(columns: dict[str, str]) -> str:
    return "".join(f"""
    CREATE TRIGGER usage_{table}_ai AFTER INSERT ON {table} BEGIN
        INSERT INTO usage VALUES (new.project, new.environment, new.dataset, {size.replace('#', 'new')})
        ON CONFLICT (project, environment, dataset) DO UPDATE SET chars = chars + excluded.chars;
    END;
    CREATE TRIGGER usage_{table}_ad AFTER DELETE ON {table} BEGIN
        UPDATE usage SET chars = chars - ({size.replace('#', 'old')})
        WHERE project = old.project AND environment = old.environment AND dataset = old.dataset;
    END;""" for table, size in columns.items())


def _usage_of_every_row(columns: dict[str, str]) -> str:
    everything = " UNION ALL ".join(f"SELECT project, environment, dataset, {size.replace('#', t)} AS n FROM {t}"
                                    for t, size in columns.items())
    return f"SELECT project, environment, dataset, sum(n) FROM ({everything}) GROUP BY 1, 2, 3"


def m009_usage(db: sqlite3.Connection) -> None:
    """Characters stored per dataset, for storage quotas (one row read per check, not a scan)."""
    columns = {"episodes": "length(#.content)", "notes": "length(#.text)",
               "facts": "length(#.text) + length(#.source_quote)",
               "core_file_versions": "coalesce(length(#.content), 0)", "jobs": "length(#.payload)"}
    _script(db, f"""
    CREATE TABLE usage (project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL,
        chars INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (project, environment, dataset));
    INSERT INTO usage {_usage_of_every_row(columns)};
    {_usage_triggers(columns)}
    """)


def m010_dated_messages(db: sqlite3.Connection) -> None:
    """Messages kept before this release get the day they were said in their keyword text, as new
    ones do (see ``write.message_context``); the index is rebuilt from the rows."""
    rows = db.execute("SELECT rowid, at, context FROM episodes").fetchall()
    db.executemany("UPDATE episodes SET context = ? WHERE rowid = ?",
                   [(f"{timeutil.date_words(timeutil.load(at))} {context}".rstrip(), rowid) for rowid, at, context in rows])
    _script(db, """
    DELETE FROM episodes_fts;
    INSERT INTO episodes_fts (content, context, scope, episode_id, chat)
        SELECT scoped_words(project, environment, dataset, content), scoped_words(project, environment, dataset, context),
               scope_token(project, environment, dataset), episode_id, chat FROM episodes;
    """)


def m011_fact_episodes(db: sqlite3.Connection) -> None:
    """Facts by the message they came from: the step from one entity to the next in the graph walk."""
    _script(db, "CREATE INDEX facts_episode ON facts (project, environment, dataset, episode_id);")


# What a dataset stores, in characters, per table: kept current by triggers, so a quota check reads one row.
USAGE_COLUMNS = {"episodes": "length(#.content) + length(#.episode_id) + coalesce(length(#.chat), 0)",
                 "notes": "length(#.text) + length(#.namespace)",
                 "facts": "length(#.text) + length(#.source_quote) + length(#.predicate) + length(#.object)",
                 "core_file_versions": "coalesce(length(#.content), 0) + length(#.path) + length(#.namespace)",
                 "jobs": "length(#.payload)", "entities": "length(#.name)"}


def m012_usage_counts_names(db: sqlite3.Connection) -> None:
    """The quota counts everything a tenant can make the store hold: paths, namespaces, names and ids
    beside the texts (a core file's 1 MB path counted nothing before), and entities; every dataset's
    count is taken again from its rows."""
    drops = "".join(f"DROP TRIGGER IF EXISTS usage_{t}_{w};\n" for t in USAGE_COLUMNS for w in ("ai", "ad"))
    _script(db, f"""
    {drops}
    DELETE FROM usage;
    INSERT INTO usage {_usage_of_every_row(USAGE_COLUMNS)};
    {_usage_triggers(USAGE_COLUMNS)}
    """)


def m013_unforgeable_words(db: sqlite3.Connection) -> None:
    """The keyword indexes taken again from the rows with ``scoped_words``' letters-and-digits words, so no
    token a row forged into another dataset's vocabulary (``x_<prefix>word``) stays behind."""
    _script(db, """
    DELETE FROM facts_fts;
    INSERT INTO facts_fts (rowid, text, object, predicate, scope)
        SELECT rowid, scoped_words(project, environment, dataset, text), scoped_words(project, environment, dataset, object),
               scoped_words(project, environment, dataset, predicate), scope_token(project, environment, dataset)
        FROM facts;
    DELETE FROM episodes_fts;
    INSERT INTO episodes_fts (content, context, scope, episode_id, chat)
        SELECT scoped_words(project, environment, dataset, content), scoped_words(project, environment, dataset, context),
               scope_token(project, environment, dataset), episode_id, chat FROM episodes;
    DELETE FROM notes_fts;
    INSERT INTO notes_fts (text, scope, note_id)
        SELECT scoped_words(project, environment, dataset, text), scope_token(project, environment, dataset), note_id
        FROM notes;
    """)


def m014_erasures(db: sqlite3.Connection) -> None:
    """The erasure log: ids, counts and hashes of what each erasure removed, never the text."""
    _script(db, """
    CREATE TABLE erasures (
        project TEXT NOT NULL, environment TEXT NOT NULL, dataset TEXT NOT NULL, erasure_id TEXT NOT NULL,
        kind TEXT NOT NULL, at TEXT NOT NULL, record TEXT NOT NULL, compacted_at TEXT,
        PRIMARY KEY (project, environment, dataset, erasure_id));
    CREATE INDEX erasures_time ON erasures (project, environment, at);
    """)


def m015_usage_on_update(db: sqlite3.Connection) -> None:
    """A row rewritten in place (a finished turn's words dropped, a message redacted by an erasure) moves
    its dataset's count by the difference; before, only inserts and deletes counted, so the count drifted
    up by what each rewrite removed. Every dataset's count is taken again from its rows."""
    updates = "".join(f"""
    CREATE TRIGGER usage_{table}_au AFTER UPDATE ON {table}
        WHEN ({size.replace('#', 'old')}) IS NOT ({size.replace('#', 'new')}) BEGIN
        UPDATE usage SET chars = chars - ({size.replace('#', 'old')}) + ({size.replace('#', 'new')})
        WHERE project = new.project AND environment = new.environment AND dataset = new.dataset;
    END;""" for table, size in USAGE_COLUMNS.items())
    _script(db, f"""
    {updates}
    UPDATE usage SET chars = 0;
    INSERT INTO usage {_usage_of_every_row(USAGE_COLUMNS)} ON CONFLICT (project, environment, dataset)
        DO UPDATE SET chars = excluded.chars;
    """)


MIGRATIONS = [m001_initial, m002_messages_and_notes, m003_jobs, m004_core_files_and_documents, m005_api_keys,
              m006_scoped_fts_deletes, m007_sessions, m008_fair_turns, m009_usage, m010_dated_messages,
              m011_fact_episodes, m012_usage_counts_names, m013_unforgeable_words, m014_erasures,
              m015_usage_on_update]
EMBED_PREFIX_CHARS = 2000  # the model reads 256 tokens; never tokenise a 100k-character text whole


WORD = re.compile(r"[^\W_]+")   # letters and digits: what unicode61 keeps together as one token


def scope_token(project: str, environment: str, dataset: str) -> str:
    """One FTS token per scope: 'k' + 20 hex digits of a hash of the tenant key."""
    return "k" + hashlib.sha1(f"{project}\0{environment}\0{dataset}".encode()).hexdigest()[:20]


def _contains(text: str | None, needle: str | None) -> int:
    """SQL ``kenning_contains(text, needle)``: a case-insensitive substring test that folds every script
    (SQLite's own lower() folds ASCII only)."""
    if text is None or needle is None:
        return 0
    return int(needle.casefold() in text.casefold())


def _blob(vec: np.ndarray | None) -> bytes | None:
    return None if vec is None else np.asarray(vec, dtype=np.float32).tobytes()


def word_prefix(project: str, environment: str, dataset: str) -> str:
    return scope_token(project, environment, dataset)[:9]


def scoped_words(project: str, environment: str, dataset: str, text: str | None) -> str:
    """The text as the keyword index holds it: every word prefixed by its scope's token.

    One shared FTS table then has a vocabulary per dataset: a word's posting list holds only that
    dataset's rows (a common word costs microseconds, not a scan of every tenant's rows), and BM25
    statistics are the dataset's own, so no tenant's data shifts another's scores.
    A word is a run of letters and digits, as FTS5's unicode61 tokenizer reads one: with regex word characters an
    underscore stayed inside the word here, the tokenizer then split on it, and the part after it (say
    ``x_<another dataset's prefix>zanzibar``) landed in another dataset's vocabulary.
    """
    if not text:
        return ""
    prefix = word_prefix(project, environment, dataset)
    return " ".join(prefix + w for w in WORD.findall(text.lower()))


def _scoped(scope: Scope, words: list[str], columns: str) -> str:
    """An FTS5 query for any of ``words`` in ``columns`` of one scope's rows only."""
    prefix = word_prefix(*scope)
    terms = " OR ".join(f'"{prefix}{w}"' for w in words)
    return f"scope:{scope_token(*scope)} AND ({{{columns}}}: ({terms}))"


def _like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _fts_query(text: str) -> list[str] | None:
    words = [w for w in WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()]
    return list(dict.fromkeys(words)) or None


FTS_TABLES = ("facts_fts", "episodes_fts", "notes_fts")
SQLITE = Dialect("sqlite", "?", timeutil.dump, json.dumps, "", "rowid", "+")


class SQLiteStore(MatrixSearch, SQLStore):
    def __init__(self, path: str | Path = ":memory:"):
        self.path = str(path)
        if self.path != ":memory:":
            file = Path(self.path).expanduser().resolve()
            try:   # a folder made here, and a new database, are the owner's alone (0700, 0600)
                file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                if not file.exists():
                    os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o600))
            except OSError as exc:
                raise ConfigError(f"cannot create the folder for {self.path}: {exc}; "
                                  "pass a writable path or set KENNING_HOME") from exc
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                       timeout=30.0)
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._db.row_factory = sqlite3.Row
        self._db.create_function("scope_token", 3, scope_token, deterministic=True)
        self._db.create_function("scoped_words", 4, scoped_words, deterministic=True)
        self._db.create_function("kenning_contains", 2, _contains, deterministic=True)
        self._lock = threading.RLock()
        self._depth = 0
        self._scrub_pending = False
        self._tx_thread: int | None = None
        self._writes: dict[Scope, int] = {}
        self._matrix_cache_init()
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            # Deleted content is overwritten with zeros, not left in free pages: what is deleted is gone
            # from the file, not only from the tables.
            self._db.execute("PRAGMA secure_delete=ON")
            self._migrate()
        # Every request reads a key, a session or the key count; a second connection serves those reads
        # beside a writer's transaction (WAL) instead of queueing behind it. An in-memory store has one.
        self._side, self._side_lock = None, threading.Lock()
        if self.path != ":memory:":
            self._side = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
            self._side.row_factory = sqlite3.Row

    def _scrub(self) -> bool:
        """FTS5 keeps a deleted row's words in its older index segments until they merge: merge them all
        ('optimize'). Then checkpoint the WAL and truncate it, so no earlier page image holds them either.
        False when a reader (another process) holds an older snapshot and the WAL could not be truncated."""
        with self._lock:
            if self._depth:   # inside a transaction: done once it commits (a checkpoint cannot run inside one)
                self._scrub_pending = True
                return False
            self._scrub_pending = False
            for table in FTS_TABLES:
                self._db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            if self.path == ":memory:":
                return True
            busy = self._truncate_wal()
            if busy:   # the next erasure or compaction tries again
                log.warning("the WAL of %s could not be truncated (a reader held it over %s s); erased rows' "
                            "old page images stay in it until the next `kenning compact`", self.path,
                            ERASE_WAIT_SECONDS)
            return not busy

    def _truncate_wal(self) -> bool:
        """Checkpoint and truncate the WAL; True if a reader's snapshot kept it. The checkpoint holds the write
        lock while it waits for readers, so it waits ERASE_WAIT_SECONDS, not the usual 30 s every writer of the
        file would spend queued behind it. Called holding ``self._lock``."""
        self._db.execute(f"PRAGMA busy_timeout={ERASE_WAIT_SECONDS * 1000}")
        try:
            return bool(self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
        finally:
            self._db.execute("PRAGMA busy_timeout=30000")

    def compact(self, tables=None) -> bool:
        """Secure delete already zeroed the freed space; merge the keyword indexes and truncate the WAL, then
        mark the log's waiting entries compacted (that write is checkpointed too: the WAL ends empty)."""
        if not self._scrub():
            return False
        self._compacted()
        if self.path != ":memory:":
            with self._lock:
                self._truncate_wal()
        return True

    def in_transaction(self) -> bool:
        return self._depth > 0 and self._tx_thread == threading.get_ident()

    def _message_rewritten(self, scope: Scope, episode_id: str) -> None:
        self._reindex_episode(scope, episode_id)

    # -- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._db.close()
        if self._side is not None:
            with self._side_lock:
                self._side.close()

    def _migrate(self) -> None:
        self._migrated_now: list[str] = []
        self._db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {r[0] for r in self._db.execute("SELECT name FROM migrations")}
        for migration in MIGRATIONS:
            if migration.__name__ in done:
                continue
            try:
                self._db.execute("BEGIN IMMEDIATE")
                if self._db.execute("SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)).fetchone():
                    self._db.execute("ROLLBACK")
                    continue
                migration(self._db)
                self._db.execute("INSERT INTO migrations VALUES (?, ?)",
                                 (migration.__name__, timeutil.dump(timeutil.now())))
                self._db.execute("COMMIT")
                self._migrated_now.append(migration.__name__)
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK")
                raise MigrationError(f"migration {migration.__name__} failed on {self.path}: {exc}") from exc

    @contextmanager
    def transaction(self, scope: Scope | None = None):
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._db.execute("BEGIN IMMEDIATE")
                self._tx_thread = threading.get_ident()
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._db.execute("ROLLBACK")
                raise
            else:
                self._depth -= 1
                if outer:
                    self._db.execute("COMMIT")
                    if self._scrub_pending:   # an erasure inside this transaction: its words leave the files now
                        self._scrub()
            finally:
                if scope is not None:
                    self._writes[scope] = self._writes.get(scope, 0) + 1

    def _q(self, sql: str, params=()) -> list[sqlite3.Row]:
        return self._execute(sql, params, True)

    def _execute(self, sql: str, params, fetch: bool):
        with self._lock:
            try:
                cur = self._db.execute(sql, params)
                return cur.fetchall() if fetch else cur.rowcount
            except sqlite3.IntegrityError:
                raise
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite error on {self.path}: {exc}") from exc
            except UnicodeEncodeError as exc:  # the caller's text, not the database
                raise InputError(f"text holds an unpaired surrogate (U+{ord(exc.object[exc.start]):04X}); "
                                 "pass valid Unicode") from None

    # -- the shared SQL layer's primitives (kenning.store.sql) -------------------------------------
    dialect = SQLITE

    def _read(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self._execute(sql, params, True)

    def _credential_read(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        if self._side is None:
            return self._read(sql, params)
        with self._side_lock:
            try:
                return self._side.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite error on {self.path}: {exc}") from exc

    def _write(self, sql: str, params: tuple = ()) -> int:
        return self._execute(sql, params, False)

    def _document_lock(self, key: tuple[str, str, str, str]):
        return self.transaction()   # one writer per file: the store-wide transaction serialises them

    def _vector_value(self, vector):
        return _blob(vector)

    def _changed(self, scope: Scope) -> None:
        self._bump(scope)

    @property
    def migrated_now(self) -> list[str]:
        return self._migrated_now

    # -- metadata ----------------------------------------------------------------
    # -- episodes -------------------------------------------------------------------
    def insert_episode(self, scope: Scope, episode: Episode, vector: np.ndarray | None = None, *,
                       context: str = "", embed_text: str | None = None) -> None:
        self._check(vector)
        self._q("INSERT OR IGNORE INTO episodes (project, environment, dataset, episode_id, role, chat, content, at,"
                " created_at, embedding, context, embed_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*scope, episode.episode_id, episode.role, episode.chat, episode.content,
                 timeutil.dump(episode.at), timeutil.dump(episode.created_at), _blob(vector), context,
                 embed_text if embed_text is not None else episode.content[:2000]))
        self._bump(scope)

    def set_episode_context(self, scope: Scope, episode_id: str, context: str) -> None:
        """The column, and the message's keyword index row rebuilt with it (FTS5 rows are replaced, not edited)."""
        with self.transaction(scope):
            super().set_episode_context(scope, episode_id, context)
            self._reindex_episode(scope, episode_id)

    def _reindex_episode(self, scope: Scope, episode_id: str) -> None:
        """Rebuild one message's FTS5 row from its columns (FTS5 rows are replaced, not edited)."""
        with self.transaction(scope):
            self._q("DELETE FROM episodes_fts WHERE rowid IN (SELECT rowid FROM episodes_fts WHERE episodes_fts"
                    " MATCH 'scope:' || scope_token(?, ?, ?) AND episode_id = ?)", (*scope, episode_id))
            self._q("INSERT INTO episodes_fts (content, context, scope, episode_id, chat)"
                    " SELECT scoped_words(project, environment, dataset, content),"
                    " scoped_words(project, environment, dataset, context), scope_token(project, environment, dataset),"
                    f" episode_id, chat FROM episodes WHERE project = ? AND environment = ? AND dataset = ?"
                    " AND episode_id = ?", (*scope, episode_id))

    def episode_keyword_search(self, scope: Scope, query: str, limit: int,
                               exclude_chat: str | None = None) -> list[tuple[str, float]]:
        fts = self._selective("episodes_fts", "content context", scope, _fts_query(query))
        if not fts:
            return []
        rows = self._q(f"SELECT episode_id, bm25(episodes_fts, 1.0, {CONTEXT_WEIGHT}, 0.0) AS score FROM episodes_fts"
                       " WHERE episodes_fts MATCH ? AND chat IS NOT ? ORDER BY score LIMIT ?",
                       (_scoped(scope, fts, "content context"), exclude_chat if exclude_chat is not None else "\0",
                        limit))
        return [(r[0], -float(r[1])) for r in rows]

    # -- notes ------------------------------------------------------------------------
    def note_keyword_search(self, scope: Scope, query: str, limit: int,
                            namespaces: list[str] | None = None) -> list[tuple[str, float]]:
        fts = self._selective("notes_fts", "text", scope, _fts_query(query))
        if not fts:
            return []
        spaces = "" if namespaces is None else f" AND n.namespace IN ({','.join('?' * len(namespaces))})"
        rows = self._q("SELECT f.note_id, bm25(notes_fts, 1.0, 0.0) AS score FROM notes_fts f JOIN notes n ON"
                       f" n.note_id = f.note_id WHERE notes_fts MATCH ? AND n.forgotten_at IS NULL{spaces}"
                       " ORDER BY score LIMIT ?", (_scoped(scope, fts, "text"), *(namespaces or []), limit))
        return [(r[0], -float(r[1])) for r in rows]

    # -- the cached matrices (kenning.store.matrices) -------------------------------------
    def _version(self, scope: Scope):
        """Local writes to the dataset, and any connection's commits (data_version) since."""
        with self._lock:
            return self._writes.get(scope, 0), self._db.execute("PRAGMA data_version").fetchone()[0]

    def _time_key(self, at: datetime):
        return timeutil.dump(at)

    def _matrix_rows(self, kind: str, scope: Scope) -> list:
        return self._q(MATRIX_ROWS[kind], tuple(scope))

    def _selective(self, table: str, columns: str, scope: Scope, words: list[str] | None) -> list[str]:
        """``words`` without those in at least COMMON_SHARE of the dataset's rows of ``table``, counted within
        the dataset (its scope token and its words), so no other tenant's rows move the count."""
        if not words:
            return []
        count = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
        rows = self._cached((table, "rows", scope), scope,
                            lambda: self._q(count, (f"scope:{scope_token(*scope)}",))[0][0])
        if rows < COMMON_MIN_ROWS:
            return words
        prefix, token = word_prefix(*scope), scope_token(*scope)
        return [w for w in words
                if self._q(count, (f'scope:{token} AND {{{columns}}}: "{prefix}{w}"',))[0][0] < COMMON_SHARE * rows]

    # -- entities -------------------------------------------------------------------
    def entity_vectors(self, scope: Scope, type: str) -> tuple[list[str], np.ndarray]:
        rows = self._q("SELECT entity_id, embedding FROM entities WHERE project=? AND environment=? AND dataset=?"
                       " AND type=? AND embedding IS NOT NULL", (*scope, type))
        return matrix_of(rows, "entity_id", self.embedding_dim())

    def insert_entity(self, scope: Scope, entity: Entity, vector: np.ndarray | None) -> None:
        self._check(vector)
        self._q("INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*scope, entity.entity_id, entity.name, entity.type, json.dumps(entity.aliases, ensure_ascii=False),
                 _blob(vector), timeutil.dump(entity.created_at)))

    def add_alias(self, scope: Scope, entity_id: str, alias: str) -> None:
        rows = self._q("SELECT aliases FROM entities WHERE project=? AND environment=? AND dataset=? AND entity_id=?",
                       (*scope, entity_id))
        if rows:
            aliases = json.loads(rows[0][0])
            if alias not in aliases:
                aliases.append(alias)
                self._q("UPDATE entities SET aliases=? WHERE project=? AND environment=? AND dataset=? AND entity_id=?",
                        (json.dumps(aliases, ensure_ascii=False), *scope, entity_id))

    # -- facts ---------------------------------------------------------------------------
    def insert_fact(self, scope: Scope, fact: Fact, embed_text: str, vector: np.ndarray | None,
                    entity_id: str | None = None) -> None:
        self._check(vector)
        try:
            self._q(
                "INSERT INTO facts (project, environment, dataset, fact_id, subject, predicate, object,"
                " object_is_entity, entity_id, entity_type, text, kind, confidence, source_quote, valid_at,"
                " valid_until, invalid_at, superseded_by, episode_id, created_at, embed_text, embedding)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*scope, fact.fact_id, fact.subject, fact.predicate, fact.object, int(fact.object_is_entity),
                 entity_id, fact.entity_type, fact.text, fact.kind, fact.confidence,
                 fact.source_quote, timeutil.dump(fact.valid_at), timeutil.dump(fact.valid_until),
                 timeutil.dump(fact.invalid_at), fact.superseded_by, fact.episode_id,
                 timeutil.dump(fact.created_at), embed_text, _blob(vector)))
        except sqlite3.IntegrityError as exc:
            if "facts_live_unique" in str(exc) or "UNIQUE" in str(exc):
                raise DuplicateFact(f"a live fact '{fact.predicate} {fact.object}' already exists") from exc
            raise StoreError(f"fact rejected by the database: {exc}") from exc
        self._bump(scope)

    def live_fact_ids(self, scope: Scope, at: datetime, limit: int, predicates: list[str] | None = None,
                      entity_ids: list[str] | None = None) -> list[tuple[str, str]]:
        if (predicates is not None and not predicates) or (entity_ids is not None and not entity_ids):
            return []
        where, params = [SCOPE, LIVE_NOW], {"p": scope.project, "e": scope.environment, "d": scope.dataset,
                                            "t": timeutil.dump(at), "n": limit}
        if predicates is not None and entity_ids is not None:
            where.append(f"f.entity_id IN ({', '.join(f':ent{i}' for i in range(len(entity_ids)))})")
            params.update({f"ent{i}": v for i, v in enumerate(entity_ids)})
        column, values = ("predicate", predicates) if predicates is not None else ("entity_id", entity_ids)
        if values is None:
            rows = self._q(f"SELECT f.fact_id, f.predicate FROM facts f WHERE {' AND '.join(where)}"
                           " ORDER BY f.valid_at DESC LIMIT :n", params)
            return [(r[0], r[1]) for r in rows]
        # One index range per wanted value, each cut at the limit, merged newest first: a single IN
        # list makes SQLite walk every live fact of the dataset by time when the wanted slot is rare.
        clause, parts = " AND ".join(where), []
        for i, value in enumerate(dict.fromkeys(values)):
            params[f"v{i}"] = value
            parts.append(f"SELECT * FROM (SELECT f.fact_id, f.predicate, f.valid_at FROM facts f WHERE {clause}"
                         f" AND f.{column} = :v{i} ORDER BY f.valid_at DESC LIMIT :n)")
        rows = self._q(" UNION ALL ".join(parts) + " ORDER BY valid_at DESC LIMIT :n", params)
        return [(r[0], r[1]) for r in rows]

    def find_entities(self, scope: Scope, names: list[str]) -> list[Entity]:
        if not names:
            return []
        marks = ",".join("?" * len(names))
        rows = self._q(f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE project=? AND environment=? AND dataset=? AND (name IN ({marks})"
                       f" OR EXISTS (SELECT 1 FROM json_each(e.aliases) j WHERE j.value IN ({marks})))",
                       (*scope, *names, *names))
        return [entity_of(r) for r in rows]

    def fact_vectors(self, scope: Scope, fact_ids: list[str]) -> dict[str, np.ndarray]:
        if not fact_ids:
            return {}
        marks = ",".join("?" * len(fact_ids))
        rows = self._q(f"SELECT fact_id, embedding FROM facts WHERE project=? AND environment=? AND dataset=?"
                       f" AND fact_id IN ({marks}) AND embedding IS NOT NULL", (*scope, *fact_ids))
        return {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows}

    def list_facts(self, scope: Scope, query: FactQuery) -> tuple[list[Fact], int]:
        where = [SCOPE]
        params: dict = {"p": scope.project, "e": scope.environment, "d": scope.dataset}
        if query.as_of is not None:
            where.append(LIVE_AS_OF)
            params["t"] = timeutil.dump(query.as_of)
        elif not query.include_invalidated:
            where.append(LIVE_NOW)
            params["t"] = timeutil.dump(timeutil.now())
        if query.entity:
            key = query.entity.strip().lower()
            ids = [e.entity_id for e in self.find_entities(scope, [key])]
            ids += [r[0] for r in self._q("SELECT entity_id FROM entities WHERE project=? AND environment=?"
                                          " AND dataset=? AND entity_id=?", (*scope, query.entity.strip()))]
            if not ids:
                return [], 0
            marks = ", ".join(f":ent{i}" for i in range(len(ids)))
            where.append(f"f.entity_id IN ({marks})")
            params.update({f"ent{i}": v for i, v in enumerate(ids)})
        narrower, values = fact_filters(query, lambda name: f":{name}")
        where += narrower
        params.update(values)
        if query.q:
            fts = _fts_query(query.q)
            if fts is None:
                return [], 0
            where.append("f.rowid IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH :fts)")
            params["fts"] = _scoped(scope, fts, "text object predicate")
        clause = " AND ".join(where)
        total = self._q(f"SELECT count(*) FROM facts f WHERE {clause}", params)[0][0]
        params.update(limit=query.limit, offset=query.offset)
        rows = self._q(f"SELECT {FACT_COLUMNS} FROM facts f WHERE {clause} ORDER BY {fact_order(query.order, self.dialect)}"
                       " LIMIT :limit OFFSET :offset", params)
        return [fact_of(r) for r in rows], total

    # -- search ------------------------------------------------------------------------------
    def keyword_search(self, scope: Scope, query: str, at: datetime, limit: int) -> list[tuple[str, float]]:
        fts = self._selective("facts_fts", "text object predicate", scope, _fts_query(query))
        if not fts:
            return []
        # Rank inside FTS5 first (it stops at the limit), then keep the live ones: joining every
        # match to the facts table before sorting costs milliseconds when a word is in most facts.
        rows = self._q(
            f"SELECT f.fact_id, m.rank FROM (SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH :fts"
            f" AND rank MATCH 'bm25(1.0, 2.0, 0.5, 0.0)' ORDER BY rank LIMIT :depth) m"
            f" JOIN facts f ON f.rowid = m.rowid WHERE {LIVE_NOW} ORDER BY m.rank LIMIT :limit",
            {"fts": _scoped(scope, fts, "text object predicate"), "t": timeutil.dump(at), "limit": limit,
             "depth": limit * 4})
        return [(r[0], -float(r[1])) for r in rows]

    def _bump(self, scope: Scope) -> None:
        self._writes[scope] = self._writes.get(scope, 0) + 1

    # -- the job queue ----------------------------------------------------------------------
    def claim(self, worker: str, lease_seconds: float, now: datetime) -> Job | None:
        """The runnable job of the earliest turn (then the oldest), leased to ``worker``: queued (or leased
        to a worker whose lease ran out), with no earlier unfinished job of its dataset, so one dataset
        runs in order and datasets take turns."""
        stamp = timeutil.dump(now)
        blocked = (" AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.project = j.project AND k.environment = j.environment"
                   " AND k.dataset = j.dataset AND k.status IN ('queued', 'distilling') AND k.seq < j.seq)")
        with self.transaction():
            # Two index walks (expired leases, then the queue in arrival order), not one OR that scans.
            rows = [r for sql in (
                f"SELECT j.* FROM jobs j WHERE j.status = 'distilling' AND j.lease_until < :now{blocked}"
                " ORDER BY j.seq LIMIT 1",
                f"SELECT j.* FROM jobs j WHERE j.status = 'queued'{blocked} ORDER BY j.turn, j.seq LIMIT 1")
                for r in self._q(sql, {"now": stamp})]
            if not rows:
                return None
            rows.sort(key=lambda r: (r["status"] != "distilling", r["turn"], r["seq"]))   # crashed work first
            until = timeutil.dump(now + timedelta(seconds=lease_seconds))
            self._q("UPDATE jobs SET status='distilling', lease_owner=?, lease_until=?, attempts=attempts+1,"
                    " updated_at=? WHERE job_id=?", (worker, until, stamp, rows[0]["job_id"]))
            return self._job(self._q("SELECT * FROM jobs WHERE job_id=?", (rows[0]["job_id"],))[0])

    def datasets(self, project: str, environment: str, q: str | None, limit: int,
                 offset: int) -> tuple[list[DatasetSummary], int]:
        names = " UNION ".join(f"SELECT dataset FROM {t} WHERE project=:p AND environment=:e" for t in DATASET_TABLES)
        # Internal datasets (a leading underscore, which no user dataset may have) are left out.
        where = "substr(dataset, 1, 1) <> '_'" + (" AND dataset LIKE :q ESCAPE '\\'" if q else "")
        params = {"p": project, "e": environment, "n": limit, "o": offset,
                  "q": f"%{_like(q)}%" if q else None, "t": timeutil.dump(timeutil.now())}
        total = self._q(f"SELECT count(*) FROM ({names}) WHERE {where}", params)[0][0]
        page = [r[0] for r in self._q(f"SELECT dataset FROM ({names}) WHERE {where} ORDER BY dataset"
                                      " LIMIT :n OFFSET :o", params)]
        out = []
        for name in page:
            one = {**params, "d": name}
            count = lambda sql: self._q(sql, one)[0][0]  # noqa: E731
            last = [count(f"SELECT max({column}) FROM {table} WHERE project=:p AND environment=:e AND dataset=:d")
                    for table, column in (("facts", "created_at"), ("episodes", "created_at"),
                                          ("notes", "created_at"), ("jobs", "updated_at"),
                                          ("core_files", "updated_at"))]
            out.append(DatasetSummary(
                dataset=name,
                facts=count(f"SELECT count(*) FROM facts f WHERE {SCOPE} AND {LIVE_NOW}"),
                entities=count("SELECT count(*) FROM entities WHERE project=:p AND environment=:e AND dataset=:d"),
                notes=count("SELECT count(*) FROM notes WHERE project=:p AND environment=:e AND dataset=:d"
                            " AND forgotten_at IS NULL"),
                messages=count("SELECT count(*) FROM episodes WHERE project=:p AND environment=:e AND dataset=:d"),
                last_activity=timeutil.load(max((x for x in last if x), default=None))))
        return out, total

    # -- export and import ---------------------------------------------------------------------
    def export_rows(self, kinds: Sequence[str], project: str, environment: str, dataset: str | None,
                    vectors: bool) -> Iterator[tuple[str, dict]]:
        with self._snapshot() as read:
            for kind in kinds:
                for r in read(*_export_query(kind, project, environment, dataset, vectors)):
                    yield kind, _exported(kind, r)

    @contextmanager
    def _snapshot(self):
        """A reader of one consistent state: a file gets its own read transaction (WAL lets writers go on
        meanwhile, and rows stream); an in-memory database, which no second connection sees, is read whole."""
        if self.path == ":memory:":
            yield lambda sql, params: iter(self._q(sql, params))
            return
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        db.row_factory = sqlite3.Row
        try:
            db.execute("BEGIN")
            yield db.execute
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error exporting {self.path}: {exc}") from exc
        finally:
            db.close()

    def import_row(self, kind: str, project: str, environment: str, row: dict, vector: np.ndarray | None) -> bool:
        self._check(vector)
        place, fields = RECORDS[kind]
        values = {"project": project, "environment": environment, place: row[place]}
        values.update((f, _stored(t, row[f])) for f, t in fields.items())
        if vector is not None:
            values["embedding"] = _blob(vector)
        # DO NOTHING on any uniqueness conflict: the key (or a live twin) is already there.
        sql = (f"INSERT INTO {EXPORT_TABLES[kind]} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})"
               " ON CONFLICT DO NOTHING")
        with self._lock:
            try:
                written = self._db.execute(sql, tuple(values.values())).rowcount == 1
            except sqlite3.Error as exc:
                raise StoreError(f"the database refused the {kind}: {exc}") from exc
        if place == "dataset":
            self._bump(Scope(project, environment, row["dataset"]))
        return written

    # -- pending embeddings --------------------------------------------------------------
def _export_query(kind: str, project: str, environment: str, dataset: str | None, vectors: bool) -> tuple[str, tuple]:
    place, fields = RECORDS[kind]
    columns = [place, *fields] + (["embedding"] if vectors and kind in VECTOR_TABLES else [])
    where, params = "project = ? AND environment = ?", (project, environment)
    if dataset is not None and place == "dataset":
        where, params = where + " AND dataset = ?", params + (dataset,)
    return (f"SELECT {', '.join(columns)} FROM {EXPORT_TABLES[kind]} WHERE {where} ORDER BY {place}, rowid",
            params)


def _exported(kind: str, r: sqlite3.Row) -> dict:
    """A stored row as JSON values: booleans and JSON columns decoded, the vector as an array."""
    place, fields = RECORDS[kind]
    row = {place: r[place]} | {f: _decoded(t, r[f]) for f, t in fields.items()}
    if "embedding" in r.keys():
        row["vector"] = None if r["embedding"] is None else np.frombuffer(r["embedding"], dtype=np.float32)
    return row


def _decoded(type_: str, value):
    if value is None:
        return None
    if type_ == "bool":
        return bool(value)
    return json.loads(value) if type_ in ("list", "object") else value


def _stored(type_: str, value):
    if value is None:
        return None
    if type_ == "bool":
        return int(value)
    return json.dumps(value, ensure_ascii=False) if type_ in ("list", "object") else value
