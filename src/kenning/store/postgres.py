"""The scale store: PostgreSQL with pgvector, for many API servers and workers on one database.

Connections: a psycopg_pool ``ConnectionPool``. Outside a transaction each call
borrows a pooled connection in autocommit. ``with store.transaction(scope):``
pins one connection to the calling thread for the block (nested blocks reuse
it), opens a transaction and takes ``pg_advisory_xact_lock`` on the dataset, so
the write path's read-decide-write is serialised across threads, processes and
machines; the partial unique index on live facts stays the backstop.

Schema: every table starts with its tenant columns (project, environment,
dataset, or scope_key for documents) and so do its primary keys and unique
indexes, so it can be distributed by dataset (``DISTRIBUTION``; the store's
bookkeeping and the credentials are reference tables); the lookups of ids
without a dataset (fact_id, note_id, job_id: ``status`` and ``get_job``), the
queue-wide job index and the HNSW index are plain indexes. Times are
``timestamptz``. Keyword search is a ``tsvector`` generated column ('english'
configuration, so stems match) whose lexemes carry the dataset's token (m012:
a vocabulary per dataset) under a GIN index, ranked by ts_rank times each
word's BM25 idf with FTS5's statistics, so a word in most of a dataset's rows
is as weak as in SQLite.

Recall's vector reads are exact, over per-dataset matrices cached in the
process (kenning.store.matrices) and stamped with the dataset's change version
(m011), so a recall reads one number instead of every vector.

Vectors: ``embedding`` columns are untyped ``vector`` until the first
``check_embedding_model`` records the dimension in ``meta``; that step adds a
CHECK of the dimension to each vector column and builds the HNSW (cosine)
expression index over ``embedding::vector(dim)`` of live facts. Per-dataset
search is exact distance over the dataset's rows (ordered by the score, which
no ANN index serves); the HNSW index serves :meth:`PostgresStore.cross_dataset_search`,
with ``hnsw.iterative_scan`` set for that query's transaction only.

Jobs: ``claim`` is one ``WITH c AS MATERIALIZED (SELECT … LIMIT 1 FOR UPDATE SKIP
LOCKED) UPDATE … FROM c`` (materialized: run once, so it leases one job);
a job is runnable when queued (or leased to a worker whose lease ran out) and
no earlier job of its dataset is queued or running.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from .. import timeutil
from ..errors import ConfigError, DuplicateFact, InputError, KenningError, MigrationError, StoreError
from ..model import DatasetSummary, Entity, Episode, Fact, Job, Scope
from ..records import RECORDS
from .base import FactQuery
from .rows import (ENTITY_COLUMNS, EXPORT_TABLES, FACT_COLUMNS, JOB_COLUMNS, VECTOR_TABLES, entity_of, fact_of,
                   load_time)
from .erasing import ERASABLE_TABLES, ERASE_WAIT_SECONDS
from .matrices import MatrixSearch
from .replicas import ReplicaSet
from .sql import COMMON_MIN_ROWS, COMMON_SHARE, DATASET_TABLES, Dialect, SQLStore, fact_filters, fact_order

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.rows import dict_row
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - the dependencies are required by the package
    raise ConfigError(f"PostgreSQL stores need psycopg, psycopg-pool and pgvector ({exc}); "
                      "pip install 'psycopg[binary]' psycopg-pool pgvector") from exc


def _error(path: str, exc: Exception) -> Exception:
    """A failed statement as kenning's error: the caller's text PostgreSQL cannot hold is an InputError."""
    if isinstance(exc, UnicodeEncodeError):
        return InputError(f"text holds an unpaired surrogate (U+{ord(exc.object[exc.start]):04X}); pass valid Unicode")
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
        return InputError("text holds a NUL character (\\x00), which PostgreSQL text cannot hold; remove it")
    return StoreError(f"PostgreSQL error on {path}: {exc}")


log = logging.getLogger("kenning.store.postgres")
ERASE_LOCK_TIMEOUT = f"{ERASE_WAIT_SECONDS}s"   # how long compaction waits for a table's lock
CONFIG = "english"           # one text search configuration for every tsvector and tsquery
RANK_WEIGHTS = "{0.1, 0.25, 0.5, 1.0}"   # D, C, B, A: predicate C, text B, object A (SQLite's 0.5 : 1 : 2)
EXACT_ROWS = 10_000          # below this many rows a table is counted, above it the planner's estimate will do
HNSW_MAX_DIM = 2000          # pgvector's limit for an HNSW index on vector
ANN_INDEX = "facts_embedding_hnsw"
# Advisory lock classes (first key of the two-int form), so kenning's locks never meet another app's.
LOCK_SCOPE, LOCK_STORE, LOCK_MIGRATE, LOCK_DOC = 0x6B6E01, 0x6B6E02, 0x6B6E03, 0x6B6E04
_UNROUTED = object()
_ROUTE: ContextVar = ContextVar("kenning_read_route", default=_UNROUTED)   # the replica reading() chose

LIVE = ("f.invalid_at IS NULL AND f.valid_at <= %(t)s "
        "AND (f.valid_until IS NULL OR f.valid_until > %(t)s)")
LIVE_AS_OF = ("(f.invalid_at IS NULL OR f.invalid_at > %(t)s) AND f.valid_at <= %(t)s "
              "AND (f.valid_until IS NULL OR f.valid_until > %(t)s)")
SCOPE = "f.project = %(p)s AND f.environment = %(e)s AND f.dataset = %(d)s"
TENANT = "project = %(p)s AND environment = %(e)s AND dataset = %(d)s"
TIME_TYPES = ("time", "time?")
# The rows each cached matrix is built from (kenning.store.matrices), in a stable order.
MATRIX_ROWS = {
    "fact": f"SELECT fact_id, embedding::vector AS embedding, valid_at, valid_until FROM facts WHERE {TENANT}"
            " AND invalid_at IS NULL AND embedding IS NOT NULL ORDER BY seq",
    "episode": f"SELECT episode_id, embedding::vector AS embedding, chat FROM episodes WHERE {TENANT}"
               " AND embedding IS NOT NULL ORDER BY at, created_at, seq",
    "note": f"SELECT note_id, embedding::vector AS embedding, namespace FROM notes WHERE {TENANT}"
            " AND forgotten_at IS NULL AND embedding IS NOT NULL ORDER BY seq",
    "order": f"SELECT episode_id, chat FROM episodes WHERE {TENANT} ORDER BY at, created_at, seq",
}


# -- migrations: named, ordered, each in its own transaction ----------------------------------------

def m001_initial(conn) -> None:
    conn.execute(f"""
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE EXTENSION IF NOT EXISTS btree_gin;
    CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE episodes (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, episode_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, role text NOT NULL, chat text, content text NOT NULL,
        context text NOT NULL DEFAULT '', embed_text text, at timestamptz NOT NULL,
        created_at timestamptz NOT NULL, embedding vector,
        tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('{CONFIG}', content), 'A')
                                          || setweight(to_tsvector('{CONFIG}', context), 'B')) STORED,
        PRIMARY KEY (project, environment, dataset, episode_id));
    CREATE INDEX episodes_time ON episodes (project, environment, dataset, chat, at, seq);
    CREATE INDEX episodes_order ON episodes (project, environment, dataset, seq);
    CREATE INDEX episodes_tsv ON episodes USING gin (project, environment, dataset, tsv);
    CREATE TABLE ingests (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, client_ref text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, receipt text NOT NULL, created_at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, dataset, client_ref));
    CREATE TABLE entities (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, entity_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, name text NOT NULL, type text NOT NULL,
        aliases jsonb NOT NULL DEFAULT '[]', embedding vector, created_at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, dataset, entity_id),
        UNIQUE (project, environment, dataset, name, type));
    CREATE TABLE facts (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, fact_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        subject text NOT NULL CHECK (subject = 'user'), predicate text NOT NULL,
        object text NOT NULL CHECK (length(object) <= 500), object_is_entity boolean NOT NULL,
        entity_id text, entity_type text, text text NOT NULL, kind text NOT NULL,
        confidence double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1), source_quote text NOT NULL,
        valid_at timestamptz NOT NULL, valid_until timestamptz, invalid_at timestamptz, superseded_by text,
        episode_id text, created_at timestamptz NOT NULL, embed_text text NOT NULL, embedding vector,
        tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('{CONFIG}', text), 'B')
                                          || setweight(to_tsvector('{CONFIG}', object), 'A')
                                          || setweight(to_tsvector('{CONFIG}', predicate), 'C')) STORED,
        PRIMARY KEY (project, environment, dataset, fact_id));
    CREATE UNIQUE INDEX facts_fact_id ON facts (fact_id);
    CREATE INDEX facts_slot ON facts (project, environment, dataset, predicate, valid_at);
    CREATE INDEX facts_time ON facts (project, environment, dataset, valid_at);
    CREATE INDEX facts_entity ON facts (project, environment, dataset, entity_id);
    CREATE UNIQUE INDEX facts_live_unique ON facts (
        project, environment, dataset, subject, predicate, object, coalesce(valid_until, 'infinity'::timestamptz))
        WHERE invalid_at IS NULL;
    CREATE INDEX facts_tsv ON facts USING gin (project, environment, dataset, tsv);
    """)


def m002_notes(conn) -> None:
    conn.execute(f"""
    CREATE TABLE notes (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, note_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, namespace text NOT NULL, text text NOT NULL,
        created_at timestamptz NOT NULL, forgotten_at timestamptz, superseded_by text, embedding vector,
        tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('{CONFIG}', text), 'A')) STORED,
        PRIMARY KEY (project, environment, dataset, note_id));
    CREATE UNIQUE INDEX notes_note_id ON notes (note_id);
    CREATE INDEX notes_scope ON notes (project, environment, dataset, namespace, created_at);
    CREATE INDEX notes_order ON notes (project, environment, dataset, seq);
    CREATE INDEX notes_tsv ON notes USING gin (project, environment, dataset, tsv);
    """)


def m003_jobs(conn) -> None:
    """The durable queue behind add_turn: arrival order is ``seq``; a claim is a lease."""
    conn.execute("""
    CREATE TABLE jobs (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, job_id text NOT NULL, client_ref text, payload jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'distilling', 'done', 'failed')),
        attempts integer NOT NULL DEFAULT 0, lease_owner text, lease_until timestamptz,
        error text, result jsonb, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, dataset, seq));
    CREATE UNIQUE INDEX jobs_job_id ON jobs (job_id);
    CREATE UNIQUE INDEX jobs_client_ref ON jobs (project, environment, dataset, client_ref)
        WHERE client_ref IS NOT NULL;
    CREATE INDEX jobs_open ON jobs (seq) WHERE status IN ('queued', 'distilling');
    CREATE INDEX jobs_dataset_open ON jobs (project, environment, dataset, seq)
        WHERE status IN ('queued', 'distilling');
    """)


def m004_core_files_and_documents(conn) -> None:
    conn.execute("""
    CREATE TABLE core_files (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, namespace text NOT NULL,
        path text NOT NULL, seq bigint GENERATED ALWAYS AS IDENTITY, content text NOT NULL,
        version integer NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, dataset, namespace, path));
    CREATE TABLE core_file_versions (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, namespace text NOT NULL,
        path text NOT NULL, version integer NOT NULL, seq bigint GENERATED ALWAYS AS IDENTITY, content text,
        op text NOT NULL, at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, dataset, namespace, path, version));
    CREATE TABLE documents (
        project text NOT NULL, environment text NOT NULL, scope_key text NOT NULL, path text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY, text text NOT NULL, version integer NOT NULL,
        expires_at timestamptz, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (project, environment, scope_key, path));
    CREATE INDEX documents_expiry ON documents (project, environment, expires_at) WHERE expires_at IS NOT NULL;
    """)


def m005_api_keys(conn) -> None:
    conn.execute("""
    CREATE TABLE api_keys (
        key_hash text PRIMARY KEY, project text NOT NULL, role text NOT NULL, name text,
        created_at timestamptz NOT NULL, revoked_at timestamptz);
    """)


def m006_sessions(conn) -> None:
    """The dashboard's sign-ins, kept server-side so signing out (or revoking the key) ends them."""
    conn.execute("""
    CREATE TABLE sessions (
        session_hash text PRIMARY KEY, principal jsonb NOT NULL, key_id text,
        created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL);
    CREATE INDEX sessions_expiry ON sessions (expires_at);
    """)


def m007_fair_turns(conn) -> None:
    """Each job's turn: datasets take turns at the workers (round robin), instead of strict arrival order,
    so one dataset's backlog never holds another's turn back."""
    conn.execute("""
    ALTER TABLE jobs ADD COLUMN turn bigint NOT NULL DEFAULT 0;
    CREATE INDEX jobs_open_turn ON jobs (turn, seq) WHERE status IN ('queued', 'distilling');
    """)


# What a dataset stores, in characters, per table: kept current by triggers, so a quota check reads one row.
# m008 counted the texts alone; m014 counts what a tenant can make the store hold beside them (USAGE_COLUMNS).
TEXT_USAGE_COLUMNS = {"episodes": "length(#.content)", "notes": "length(#.text)",
                      "facts": "length(#.text) + length(#.source_quote)",
                      "core_file_versions": "coalesce(length(#.content), 0)", "jobs": "length(#.payload::text)"}
USAGE_COLUMNS = {"episodes": "length(#.content) + length(#.episode_id) + coalesce(length(#.chat), 0)",
                 "notes": "length(#.text) + length(#.namespace)",
                 "facts": "length(#.text) + length(#.source_quote) + length(#.predicate) + length(#.object)",
                 "core_file_versions": "coalesce(length(#.content), 0) + length(#.path) + length(#.namespace)",
                 "jobs": "length(#.payload::text)", "entities": "length(#.name)"}


def m008_usage(conn) -> None:
    """Characters stored per dataset, for storage quotas (one row read per check, not a scan)."""
    everything = " UNION ALL ".join(f"SELECT project, environment, dataset, {size.replace('#', t)} AS n FROM {t}"
                                    for t, size in TEXT_USAGE_COLUMNS.items())
    conn.execute(f"""
    CREATE TABLE usage (project text NOT NULL, environment text NOT NULL, dataset text NOT NULL,
        chars bigint NOT NULL DEFAULT 0, PRIMARY KEY (project, environment, dataset));
    INSERT INTO usage SELECT project, environment, dataset, sum(n) FROM ({everything}) u GROUP BY 1, 2, 3;
    """)
    for table, size in TEXT_USAGE_COLUMNS.items():
        conn.execute(f"""
        CREATE FUNCTION usage_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO usage AS u VALUES (NEW.project, NEW.environment, NEW.dataset, {size.replace('#', 'NEW')})
                ON CONFLICT (project, environment, dataset) DO UPDATE SET chars = u.chars + excluded.chars;
            ELSE
                UPDATE usage SET chars = chars - ({size.replace('#', 'OLD')})
                WHERE project = OLD.project AND environment = OLD.environment AND dataset = OLD.dataset;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER usage_{table} AFTER INSERT OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION usage_{table}();
        """)


def m009_dated_messages(conn) -> None:
    """Messages kept before this release get the day they were said in their keyword text, as new
    ones do (``write.message_context``: ``sunday 7 may 2023``); the generated tsvector follows."""
    conn.execute("UPDATE episodes SET context = rtrim(lower(to_char(at AT TIME ZONE 'UTC', 'FMDay FMDD FMMonth YYYY'))"
                 " || ' ' || context)")


def m010_fact_episodes(conn) -> None:
    """Facts by the message they came from: the step from one entity to the next in the graph walk."""
    conn.execute("CREATE INDEX facts_episode ON facts (project, environment, dataset, episode_id)")


SEARCHED_TABLES = ("facts", "episodes", "notes")   # the tables recall's cached matrices are built from


def _usage_statement_triggers(conn, table: str, size: str) -> None:
    """Statement-level triggers keeping ``usage`` of ``table`` (see m011)."""
    bump = "count(*)" if table in SEARCHED_TABLES else "0"
    conn.execute(f"""
        CREATE FUNCTION usage_{table}_added() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO usage AS u
            SELECT project, environment, dataset, sum({size.replace('#.', '')}), {bump} FROM added
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            ON CONFLICT (project, environment, dataset)
            DO UPDATE SET chars = u.chars + excluded.chars, changes = u.changes + excluded.changes;
            RETURN NULL;
        END $$;
        CREATE FUNCTION usage_{table}_removed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE usage u SET chars = u.chars - r.chars, changes = u.changes + r.n
            FROM (SELECT project, environment, dataset, sum({size.replace('#.', '')}) AS chars, {bump} AS n
                  FROM removed GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) r
            WHERE u.project = r.project AND u.environment = r.environment AND u.dataset = r.dataset;
            RETURN NULL;
        END $$;
        CREATE TRIGGER usage_{table}_added AFTER INSERT ON {table} REFERENCING NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION usage_{table}_added();
        CREATE TRIGGER usage_{table}_removed AFTER DELETE ON {table} REFERENCING OLD TABLE AS removed
            FOR EACH STATEMENT EXECUTE FUNCTION usage_{table}_removed();
        """)


def m011_change_versions(conn) -> None:
    """Per dataset, a change version (``usage.changes``) beside the characters stored, both kept by
    statement-level triggers over the statement's transition tables: one upsert per dataset a statement
    touches, not one per row (a 5,000-row COPY batch updates its datasets' usage rows once each, in key
    order, so concurrent loads lock them in one order). ``changes`` moves with every insert, update and
    delete of a dataset's facts, messages and notes: processes keep the dataset's vector matrices in memory
    and read them again only when it moved (one primary-key read per recall instead of every vector)."""
    conn.execute("ALTER TABLE usage ADD COLUMN changes bigint NOT NULL DEFAULT 0")
    for table, size in TEXT_USAGE_COLUMNS.items():
        conn.execute(f"DROP TRIGGER usage_{table} ON {table}; DROP FUNCTION usage_{table}();")
        _usage_statement_triggers(conn, table, size)
        if table in SEARCHED_TABLES:
            conn.execute(f"""
            CREATE FUNCTION usage_{table}_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE usage u SET changes = u.changes + c.n
                FROM (SELECT project, environment, dataset, count(*) AS n FROM changed
                      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) c
                WHERE u.project = c.project AND u.environment = c.environment AND u.dataset = c.dataset;
                RETURN NULL;
            END $$;
            CREATE TRIGGER usage_{table}_changed AFTER UPDATE ON {table} REFERENCING NEW TABLE AS changed
                FOR EACH STATEMENT EXECUTE FUNCTION usage_{table}_changed();
            """)


# Each searched table's words, as m001/m002 index them: (table, the weighted tsvector of a row).
WORDS = {
    "facts": (f"setweight(to_tsvector('{CONFIG}', text), 'B') || setweight(to_tsvector('{CONFIG}', object), 'A')"
              f" || setweight(to_tsvector('{CONFIG}', predicate), 'C')"),
    "episodes": (f"setweight(to_tsvector('{CONFIG}', content), 'A')"
                 f" || setweight(to_tsvector('{CONFIG}', context), 'B')"),
    "notes": f"setweight(to_tsvector('{CONFIG}', text), 'A')",
}
# A lexeme's opening quote in a tsvector's text ('a':1 'b':2) or a tsquery's ('a' & !'b' <-> 'c'):
# the token goes right after it.
SCOPE_FUNCTIONS = r"""
CREATE FUNCTION kenning_scope_token(p text, e text, d text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT left(md5(p || chr(31) || e || chr(31) || d), 10) $$;
CREATE FUNCTION kenning_scoped(token text, v tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT regexp_replace(v::text, '(^| )''', '\1''' || token, 'g')::tsvector $$;
CREATE FUNCTION kenning_scoped_query(token text, q tsquery) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT regexp_replace(q::text, '(^|[ (!&|])''', '\1''' || token, 'g')::tsquery $$;
"""


def m012_scoped_words(conn) -> None:
    """A vocabulary per dataset, as the SQLite store keeps: every lexeme of a row's tsvector carries its
    dataset's token (``kenning_scope_token``: 10 hex digits of an md5), and each GIN index is over the
    tsvector alone. A word's posting list then holds one dataset's rows, so a keyword read and its BM25
    statistics touch only that dataset's matches, however many tenants share the table (before, the
    index found the dataset's rows by its tenant columns and intersected them with every tenant's
    matches). Queries scope their tsquery the same way (``scoped``) and still filter by the tenant
    columns, so two datasets whose tokens collide share posting lists but never results."""
    conn.execute(SCOPE_FUNCTIONS)
    for table, words in WORDS.items():
        conn.execute(f"""
        DROP INDEX {table}_tsv;
        ALTER TABLE {table} DROP COLUMN tsv;
        ALTER TABLE {table} ADD COLUMN tsv tsvector GENERATED ALWAYS AS
            (kenning_scoped(kenning_scope_token(project, environment, dataset), {words})) STORED;
        CREATE INDEX {table}_tsv ON {table} USING gin (tsv) WITH (fastupdate = off);
        """)


def m013_distributable_keys(conn) -> None:
    """Every unique index leads with the tenant columns, so the schema can be distributed by dataset
    (Citus: a unique index must hold the distribution column). The lookups of ids without a dataset
    (``status(request_id)``, ``status(memory_id)``) keep an index that is no longer unique: ids are random
    (uuid4) and unique within a dataset by the primary key."""
    conn.execute("""
    DROP INDEX facts_fact_id;
    CREATE INDEX facts_fact_id ON facts (fact_id);
    DROP INDEX notes_note_id;
    CREATE INDEX notes_note_id ON notes (note_id);
    DROP INDEX jobs_job_id;
    CREATE INDEX jobs_job_id ON jobs (job_id);
    """)


# How each table spreads over a distributed PostgreSQL (Citus): by its tenant's dataset (the column named),
# or copied whole to every node (reference tables: the store's own bookkeeping and the credentials, read
# by id). tests/store/test_postgres_distribution.py checks the migrated catalog against it.
DISTRIBUTION = {
    "facts": "dataset", "entities": "dataset", "episodes": "dataset", "ingests": "dataset", "notes": "dataset",
    "jobs": "dataset", "core_files": "dataset", "core_file_versions": "dataset", "usage": "dataset",
    "erasures": "dataset", "documents": "scope_key",
    "meta": None, "migrations": None, "api_keys": None, "sessions": None,
}
TENANT_COLUMNS = ("project", "environment")   # before the distribution column in every key


def distribution_statements() -> list[str]:
    """The Citus statements that distribute a migrated kenning database (docs/scaling.md prints them)."""
    out = [f"SELECT create_reference_table('{t}');" for t, column in DISTRIBUTION.items() if column is None]
    first = None
    for table, column in DISTRIBUTION.items():
        if column == "dataset":
            colocate = "" if first is None else f", colocate_with => '{first}'"
            out.append(f"SELECT create_distributed_table('{table}', '{column}'{colocate});")
            first = first or table
    out += [f"SELECT create_distributed_table('{t}', '{c}');" for t, c in DISTRIBUTION.items()
            if c not in (None, "dataset")]
    return out


def _recount_usage(conn) -> None:
    """Every dataset's character count taken again from its rows (change versions kept)."""
    everything = " UNION ALL ".join(f"SELECT project, environment, dataset, {size.replace('#', t)} AS n FROM {t}"
                                    for t, size in USAGE_COLUMNS.items())
    conn.execute(f"""
    UPDATE usage SET chars = 0;
    INSERT INTO usage AS u (project, environment, dataset, chars)
    SELECT project, environment, dataset, sum(n) FROM ({everything}) e GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (project, environment, dataset) DO UPDATE SET chars = excluded.chars;
    """)


def m014_usage_counts_names(conn) -> None:
    """The quota counts everything a tenant can make the store hold: paths, namespaces, names and ids
    beside the texts (a core file's 1 MB path counted nothing before), and entities; every dataset's
    count is taken again from its rows."""
    for table, size in USAGE_COLUMNS.items():
        conn.execute(f"""
        DROP TRIGGER IF EXISTS usage_{table}_added ON {table}; DROP FUNCTION IF EXISTS usage_{table}_added();
        DROP TRIGGER IF EXISTS usage_{table}_removed ON {table}; DROP FUNCTION IF EXISTS usage_{table}_removed();
        """)
        _usage_statement_triggers(conn, table, size)
    _recount_usage(conn)


def m015_erasures(conn) -> None:
    """The erasure log: ids, counts and hashes of what each erasure removed, never the text."""
    conn.execute("""
    CREATE TABLE erasures (
        project text NOT NULL, environment text NOT NULL, dataset text NOT NULL, erasure_id text NOT NULL,
        kind text NOT NULL, at timestamptz NOT NULL, record jsonb NOT NULL, compacted_at timestamptz,
        PRIMARY KEY (project, environment, dataset, erasure_id));
    CREATE INDEX erasures_time ON erasures (project, environment, at);
    """)


# Columns holding what people said: the planner keeps no statistics of them, since ANALYZE copies sampled
# values (most common values, histogram bounds, most common lexemes) into pg_statistic, where an erasure
# cannot reach them. The queries find these rows through the tenant columns' indexes and need no such estimate.
TEXT_COLUMNS = {"episodes": ("content", "context", "embed_text", "tsv"),
                "facts": ("predicate", "object", "text", "source_quote", "embed_text", "tsv"),
                "entities": ("name", "aliases"), "notes": ("text", "tsv"), "core_files": ("content",),
                "core_file_versions": ("content",), "jobs": ("payload", "result", "error"), "documents": ("text",)}


def m016_no_text_statistics(conn) -> None:
    """No planner statistics of what people said (TEXT_COLUMNS), and those already gathered cleared
    (PostgreSQL 18's pg_clear_attribute_stats; on an older server they stay until a superuser removes them:
    docs/erasure.md)."""
    clear = conn.execute("SELECT 1 FROM pg_proc WHERE proname = 'pg_clear_attribute_stats'").fetchone()
    for table, columns in TEXT_COLUMNS.items():
        for column in columns:
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS 0")
            if clear:
                conn.execute("SELECT pg_clear_attribute_stats(current_schema(), %s, %s, false)", (table, column))


def m017_usage_on_update(conn) -> None:
    """A row rewritten in place (a finished turn's words dropped, a message redacted by an erasure) moves
    its dataset's count by the difference: one statement-level trigger per table over the statement's old
    and new rows (it also moves the change version of the searched tables, as m011's did). Before, only
    inserts and deletes counted, so the count drifted up by what each rewrite removed. Every dataset's
    count is taken again from its rows."""
    for table, size in USAGE_COLUMNS.items():
        bump = "1" if table in SEARCHED_TABLES else "0"   # a changed searched row moves the change version
        plain = size.replace("#.", "")
        conn.execute(f"""
        DROP TRIGGER IF EXISTS usage_{table}_changed ON {table}; DROP FUNCTION IF EXISTS usage_{table}_changed();
        CREATE FUNCTION usage_{table}_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE usage u SET chars = u.chars + d.chars, changes = u.changes + d.n
            FROM (SELECT project, environment, dataset, sum(chars) AS chars, sum(n) AS n FROM (
                      SELECT project, environment, dataset, {plain} AS chars, {bump} AS n FROM changed
                      UNION ALL
                      SELECT project, environment, dataset, -({plain}), 0 FROM previous) x
                  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) d
            WHERE u.project = d.project AND u.environment = d.environment AND u.dataset = d.dataset
                AND (d.chars <> 0 OR d.n <> 0);   -- a job's lease moving changes neither: no write
            RETURN NULL;
        END $$;
        CREATE TRIGGER usage_{table}_changed AFTER UPDATE ON {table}
            REFERENCING OLD TABLE AS previous NEW TABLE AS changed
            FOR EACH STATEMENT EXECUTE FUNCTION usage_{table}_changed();
        """)
    _recount_usage(conn)


MIGRATIONS = [m001_initial, m002_notes, m003_jobs, m004_core_files_and_documents, m005_api_keys, m006_sessions,
              m007_fair_turns, m008_usage, m009_dated_messages, m010_fact_episodes,
              m011_change_versions, m012_scoped_words, m013_distributable_keys,
              m014_usage_counts_names, m015_erasures, m016_no_text_statistics, m017_usage_on_update]


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def _words(text: str) -> list[str] | None:
    """The distinct words of a query (each stemmed by the configuration in SQL), or None."""
    words = [w for w in re.findall(r"\w+", text.lower()) if len(w) > 1 or w.isdigit()]
    return list(dict.fromkeys(words)) or None


def scoped(tsquery: str) -> str:
    """SQL of ``tsquery`` (an SQL expression) in the vocabulary of the dataset %(p)s, %(e)s, %(d)s (m012)."""
    return f"kenning_scoped_query(kenning_scope_token(%(p)s, %(e)s, %(d)s), {tsquery})"


def _bm25(table: str, key: str, where: str) -> str:
    """SQL ranking ``table``'s rows of one dataset that match any of ``%(words)s`` (those also meeting
    ``where``, on alias f), best first: per word, ts_rank (field weights, term frequency) times the word's
    BM25 inverse document frequency, FTS5's formula with FTS5's statistics: the rows of the dataset that
    hold the word against the rows of the table (the planner's estimate once that is large), so a word
    in most of the rows weighs next to nothing, as in SQLite. As there, a word in half or more of a large
    dataset's rows is left out (ranking its thousands of matches would cost milliseconds and move nothing);
    the dataset's rows are counted only for such a word, and only as far as that decides it."""
    # MATERIALIZED: the statistics are computed once per query, never per matching row.
    return f"""
        WITH terms AS MATERIALIZED (
            SELECT DISTINCT {scoped("plainto_tsquery('" + CONFIG + "', w)")} AS q
            FROM unnest(%(words)s::text[]) AS w),
        counted AS MATERIALIZED (
            SELECT q, (SELECT count(*) FROM {table} x WHERE x.project = %(p)s AND x.environment = %(e)s
                       AND x.dataset = %(d)s AND x.tsv @@ terms.q) AS hits
            FROM terms WHERE numnode(q) > 0),
        stats AS MATERIALIZED (
            SELECT q, hits, CASE WHEN hits >= {int(COMMON_MIN_ROWS * COMMON_SHARE)} THEN (
                       SELECT count(*) FROM (SELECT 1 FROM {table} x WHERE x.project = %(p)s
                           AND x.environment = %(e)s AND x.dataset = %(d)s LIMIT (hits / {COMMON_SHARE})::bigint + 1) c)
                   END AS rows
            FROM counted),
        total AS MATERIALIZED (
            SELECT CASE WHEN c.reltuples >= {EXACT_ROWS} THEN c.reltuples::bigint
                        ELSE (SELECT count(*) FROM {table}) END AS rows
            FROM pg_class c WHERE c.oid = '{table}'::regclass),
        idf AS MATERIALIZED (
            SELECT s.q, greatest(ln((total.rows - s.hits + 0.5) / (s.hits + 0.5)), 1e-6)::float8 AS w
            FROM stats s, total
            WHERE s.rows IS NULL OR s.rows NOT BETWEEN {COMMON_MIN_ROWS} AND s.hits / {COMMON_SHARE})
        SELECT f.{key} AS id, sum(idf.w * ts_rank('{RANK_WEIGHTS}', f.tsv, idf.q)::float8) AS score
        FROM {table} f JOIN idf ON f.tsv @@ idf.q
        WHERE {SCOPE} AND {where}
        GROUP BY f.{key}, f.seq ORDER BY score DESC, f.seq LIMIT %(n)s"""


def _tenant(scope: Scope, **more) -> dict:
    return {"p": scope.project, "e": scope.environment, "d": scope.dataset, **more}


POSTGRES = Dialect("postgresql", "%s", lambda value: value, Jsonb, ' COLLATE "C"', "seq", "")


class PostgresStore(MatrixSearch, SQLStore):
    """The Store contract on PostgreSQL + pgvector. ``url``: a libpq URL (postgresql://…)."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0,
                 ann_index: bool = False, parallel_reads: bool | None = None, replicas: Sequence[str] = (),
                 replica_max_lag: float = 5.0, replica_wait: float = 0.1):
        self.url = url
        self.ann_index = ann_index
        # Independent queries on pooled connections: recall can run its signal reads side by side. That
        # pays where round trips are long or cores many; on two cores the threads only contend (recall
        # p95 at 10,000 rows per dataset, 1M-row store: 16.1 ms side by side vs 10.1 ms one after another).
        self.parallel_reads = (os.cpu_count() or 1) >= 4 if parallel_reads is None else parallel_reads
        self.path = redact(url)   # what front ends print as "data in …"
        self._local = threading.local()
        self._dim: int | None = None
        self._migrated_now: list[str] = []
        self._matrix_cache_init()
        self._pgvector: tuple[int, ...] = (0, 0)
        self._migrate()
        self._pool = ConnectionPool(url, min_size=min_size, max_size=max_size, timeout=timeout, open=False,
                                    kwargs={"autocommit": True}, configure=self._configure,
                                    name=f"kenning {self.path}")
        try:
            self._pool.open(wait=True, timeout=timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise ConfigError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc
        if ann_index and self.embedding_dim() is not None and not self._has_ann_index():
            self._build_ann_index(self.embedding_dim())   # turned on after the dimension was fixed
        # read replicas: the WAL position of this store's last write, per dataset and store-wide
        self._written: dict[Scope, int] = {}
        self._written_any = 0
        self.replicas: ReplicaSet | None = None
        if replicas:
            self.replicas = ReplicaSet(list(replicas), self._primary_lsn, configure=self._configure, redact=redact,
                                       max_lag=replica_max_lag, wait=replica_wait)

    # -- lifecycle ---------------------------------------------------------------
    @staticmethod
    def _configure(conn) -> None:
        register_vector(conn)
        conn.execute("SET TIME ZONE 'UTC'")
        # psycopg prepares a statement after its fifth run; after five custom plans the server then moves
        # to one generic plan, blind to the tenant in the parameters: a keyword read over one dataset
        # measured 3x slower with it (bench/reads.py). Each run is planned for its own dataset.
        conn.execute("SET plan_cache_mode = force_custom_plan")
        conn.row_factory = dict_row

    def close(self) -> None:
        if self.replicas is not None:
            self.replicas.close()
        self._pool.close()

    # -- read replicas ------------------------------------------------------------------
    def _primary_lsn(self) -> int:
        """The primary's WAL insert position: at or past the end of every transaction committed so far
        (the write position may trail it under synchronous_commit = off)."""
        with self._pool.connection() as conn:
            return conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS n"
                                ).fetchone()["n"]

    def _note_write(self, scope: Scope | None) -> None:
        """After a commit: reads of ``scope`` (None: of every dataset) wait for a replica to replay it."""
        if self.replicas is None:
            return
        lsn = self._primary_lsn()
        if scope is None:
            self._written_any = max(self._written_any, lsn)
        else:
            self._written[scope] = max(self._written.get(scope, 0), lsn)

    @contextmanager
    def reading(self, *scopes: Scope):
        """Reads of ``scopes`` (none: of every dataset) inside the block go to a replica that has replayed
        this store's last write to them (read-your-writes), else to the primary; inside a transaction,
        always the primary."""
        if self.replicas is None or getattr(self._local, "conn", None) is not None or _ROUTE.get() is not _UNROUTED:
            yield
            return
        # no scope: a read across datasets waits for every write of this store
        wrote = (self._written.get(s, 0) for s in scopes) if scopes else self._written.values()
        need = max([self._written_any, *wrote])
        token = _ROUTE.set(self.replicas.choose(need))
        try:
            yield
        finally:
            _ROUTE.reset(token)

    def _on_replica(self, replica, sql: str, params, binary: bool):
        """The statement on ``replica``, or None when it could not answer (the caller reads the primary)."""
        try:
            with replica.pool.connection() as conn:
                cur = conn.execute(sql, params, binary=binary)
                rows = cur.fetchall() if cur.description else []
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self.replicas.failed(replica, exc)
            self.replicas.fallbacks += 1
            return None
        except psycopg.Error:   # a conflict with recovery, a write: the primary answers it
            self.replicas.fallbacks += 1
            return None
        replica.reads += 1
        return rows

    def _connect(self):
        try:
            extra = {} if "connect_timeout" in self.url else {"connect_timeout": 10}
            return psycopg.connect(self.url, autocommit=True, **extra)
        except psycopg.Error as exc:
            raise ConfigError(f"cannot connect to PostgreSQL at {self.path}: {exc}; check the URL and that the "
                              "server is running") from exc

    def _migrate(self) -> None:
        with self._connect() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_MIGRATE,))
                    conn.execute("CREATE TABLE IF NOT EXISTS migrations "
                                 "(name text PRIMARY KEY, applied_at timestamptz NOT NULL)")
                done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
                for migration in MIGRATIONS:
                    if migration.__name__ in done:
                        continue
                    with conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_MIGRATE,))
                        if conn.execute("SELECT 1 FROM migrations WHERE name = %s", (migration.__name__,)).fetchone():
                            continue  # another process applied it while we waited
                        migration(conn)
                        conn.execute("INSERT INTO migrations VALUES (%s, now())", (migration.__name__,))
                        self._migrated_now.append(migration.__name__)
                version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
                self._pgvector = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
                if self._pgvector < (0, 5):
                    raise MigrationError(f"{self.path} has pgvector {version}; kenning needs 0.5 or newer (HNSW), "
                                         "0.8 or newer for filtered cross-dataset search: ALTER EXTENSION vector UPDATE")
            except psycopg.errors.InsufficientPrivilege as exc:
                raise MigrationError(f"migration on {self.path} needs a privilege the user lacks ({exc}); "
                                     "have an administrator run CREATE EXTENSION vector; CREATE EXTENSION btree_gin; "
                                     "or grant the user CREATE on the database") from exc
            except psycopg.Error as exc:
                raise MigrationError(f"migrating {self.path} failed: {exc}") from exc

    # -- connections and transactions ---------------------------------------------
    @contextmanager
    def _conn(self):
        """The thread's transaction connection inside ``transaction``, else a pooled one (autocommit)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(f"no PostgreSQL connection free at {self.path} ({exc}); raise the pool size "
                             "or the server's max_connections") from exc

    def _q(self, sql: str, params=None, *, binary: bool = False) -> list[dict]:
        """Rows as dicts; ``binary``: results in binary format (vectors arrive as float32, not parsed text).
        Inside :meth:`reading` (and outside a transaction), on the replica chosen there while it is up."""
        replica = _ROUTE.get()
        if replica is not _UNROUTED and replica is not None and replica.up and getattr(self._local, "conn", None) is None:
            rows = self._on_replica(replica, sql, params, binary)
            if rows is not None:
                return rows
        with self._conn() as conn:
            try:
                cur = conn.execute(sql, params, binary=binary)
                return cur.fetchall() if cur.description else []
            except (psycopg.Error, UnicodeEncodeError) as exc:
                raise _error(self.path, exc) from exc

    def _x(self, sql: str, params=None) -> int:
        """Execute a write; returns the number of rows it touched."""
        with self._conn() as conn:
            try:
                touched = conn.execute(sql, params).rowcount
            except (psycopg.Error, UnicodeEncodeError) as exc:
                raise _error(self.path, exc) from exc
        if self.replicas is not None and getattr(self._local, "conn", None) is None:
            self._note_write(None)   # a write outside a dataset's transaction: every dataset's reads wait
        return touched

    # -- the shared SQL layer's primitives (kenning.store.sql) -------------------------------------
    dialect = POSTGRES

    def _read(self, sql: str, params: tuple = ()) -> list[dict]:
        return self._q(self.dialect.sql(sql), params)

    def _write(self, sql: str, params: tuple = ()) -> int:
        return self._x(self.dialect.sql(sql), params)

    def _document_lock(self, key: tuple[str, str, str, str]):
        return self._tx((LOCK_DOC, "\x1f".join(key)))

    def _vector_value(self, vector):
        return _vec(vector)

    @property
    def migrated_now(self) -> list[str]:
        return self._migrated_now

    @contextmanager
    def _tx(self, *locks: tuple[int, str]):
        """A transaction on the thread's connection holding advisory ``locks`` (class, key) until it ends;
        nested calls join the outer transaction and take the locks it does not hold yet."""
        local = self._local
        if getattr(local, "conn", None) is not None:
            self._lock(local.conn, locks, local.held)
            yield local.conn
            return
        with self._conn() as conn:
            local.conn, local.held = conn, set()
            try:
                with conn.transaction():
                    self._lock(conn, locks, local.held)
                    yield conn
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL transaction failed on {self.path}: {exc}") from exc
            finally:
                held, local.conn, local.held = local.held, None, None
        if self.replicas is not None:
            scopes = [Scope(*key.split("\x1f")) for kind, key in held if kind == LOCK_SCOPE]
            if scopes or not held or any(kind != LOCK_DOC for kind, _ in held):   # documents are read on the primary
                for scope in scopes or [None]:
                    self._note_write(scope)

    def _lock(self, conn, locks, held: set) -> None:
        for lock in locks:
            if lock not in held:
                try:
                    conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", lock)
                except psycopg.Error as exc:
                    raise StoreError(f"PostgreSQL error on {self.path}: {exc}") from exc
                held.add(lock)

    def transaction(self, scope: Scope | None = None):
        """All or nothing; writers of one dataset (or, without a scope, store-wide ones) take turns."""
        if scope is None:
            return self._tx((LOCK_STORE, ""))
        return self._tx((LOCK_SCOPE, "\x1f".join(scope)))

    def get_job(self, request_id: str, project: str, environment: str) -> Job | None:
        """The job (always from the primary); once it is done, this store's reads of its dataset wait for
        a replica to replay what its worker wrote, wherever that worker ran."""
        job = super().get_job(request_id, project, environment)
        if job is not None and job.status == "done" and self.replicas is not None:
            self._note_write(job.scope)
        return job

    # -- metadata ----------------------------------------------------------------
    def embedding_dim(self) -> int | None:
        if self._dim is None:   # fixed once recorded: read it once per store
            self._dim = super().embedding_dim()
        return self._dim

    def check_embedding_model(self, name: str, dim: int) -> None:
        super().check_embedding_model(name, dim)
        self._dim = None  # read again after the commit

    def _vectors_sized(self, dim: int) -> None:
        """Fix the vector columns' dimension (a CHECK) and build the cross-dataset HNSW index."""
        for table in ("facts", "entities", "episodes", "notes"):
            self._x(f"ALTER TABLE {table} ADD CONSTRAINT {table}_embedding_dim "
                    f"CHECK (vector_dims(embedding) = {int(dim)})")
        if self.ann_index:
            self._build_ann_index(dim)

    def _build_ann_index(self, dim: int) -> None:
        if dim <= HNSW_MAX_DIM:
            self._x(f"CREATE INDEX IF NOT EXISTS {ANN_INDEX} ON facts USING hnsw ((embedding::vector({int(dim)}))"
                    " vector_cosine_ops) WHERE invalid_at IS NULL")

    def _has_ann_index(self) -> bool:
        return bool(self._q("SELECT 1 FROM pg_class WHERE relname = %s AND relkind = 'i'", (ANN_INDEX,)))

    @contextmanager
    def bulk(self):
        """Around a bulk import: into an empty store, the indexes that no insert needs (every index of the
        searched tables but the primary keys and unique ones, which ON CONFLICT relies on; the HNSW index
        if there is one) are dropped and built once at the end, which is several times cheaper than
        keeping them up row by row. Joins the caller's transaction; the indexes are dropped and built inside
        it, so readers of those tables wait for the import (the store is empty: there is nothing to read)."""
        with self._tx((LOCK_STORE, "")):
            empty = not any(self._q(f"SELECT 1 FROM {t} LIMIT 1") for t in SEARCHED_TABLES)
            deferred = [] if not empty else self._q(
                "SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i"
                " JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ANY(%s::regclass[])"
                " AND NOT i.indisunique AND NOT i.indisprimary ORDER BY c.relname", (list(SEARCHED_TABLES),))
            for index in deferred:
                self._x(f'DROP INDEX "{index["name"]}"')
            yield
            if deferred:
                self._x("SET LOCAL maintenance_work_mem = '256MB'")   # the builds sort in memory
                for index in deferred:
                    self._x(index["definition"])

    def analyze(self) -> None:
        """Refresh the planner's statistics of the searched tables (after a bulk load: autovacuum would get
        there later, and until then a plan may take a dataset's thousands of rows for one)."""
        self._x("ANALYZE " + ", ".join(SEARCHED_TABLES))

    def maintain(self) -> None:
        """After a bulk load has committed: ``VACUUM (ANALYZE)`` the searched tables, so the new rows are
        marked visible to all (the visibility map, hint bits) and counted by the planner now, not when
        autovacuum gets there; until then the first reads of fresh rows pay for it (recall p95 measured
        17.7 ms before, 12.7 ms after, at 10,000 rows in a 100,000-row store). Inside a transaction, where
        VACUUM cannot run, it only analyzes (autovacuum does the rest)."""
        if getattr(self._local, "conn", None) is not None:
            self.analyze()
            return
        self._x("VACUUM (ANALYZE) " + ", ".join(SEARCHED_TABLES))

    def in_transaction(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    def compact(self, tables=None) -> bool:
        """``VACUUM (FULL)`` each table an erasure touched: a plain VACUUM frees a deleted row's space for
        reuse but leaves its bytes in the page, and a GIN or B-tree index keeps erased words as keys; the
        rewrite writes new files without them (the old ones are truncated). Each table is locked for every
        tenant while it is rewritten; a lock not granted within ERASE_LOCK_TIMEOUT leaves the erasure pending
        (the log says so) rather than queue every reader behind it. Outside a transaction only.

        The rewrite keeps a deleted row that a transaction begun before the deletion may still read (an open
        one anywhere on the server, or a snapshot in this database, a replication slot's): measured, one such
        transaction in another database and the erased fact rows came through a rewrite whole. So it first
        waits ERASE_WAIT_SECONDS for those to end; one still open leaves the erasure pending, not "done"."""
        if self.in_transaction():
            return False
        done = True
        with self._conn() as conn:
            older = self._older_readers(conn)
            if older:
                log.warning("compaction waits for what still reads the erased rows (%s); their bytes stay until "
                            "the next `kenning compact`", "; ".join(older))
                return False
            conn.execute(f"SET lock_timeout = '{ERASE_LOCK_TIMEOUT}'")
            try:
                for table in tables or ERASABLE_TABLES:
                    try:
                        conn.execute(f"VACUUM (FULL) {table}")
                    except psycopg.errors.LockNotAvailable:
                        log.warning("compaction of %s waited over %s for its lock; its erased rows' bytes stay "
                                    "until the next `kenning compact`", table, ERASE_LOCK_TIMEOUT)
                        done = False
            finally:
                conn.execute("RESET lock_timeout")
        if done:
            self._compacted()
        return done

    @staticmethod
    def _older_readers(conn) -> list[str]:
        """What may still see rows deleted before now, after waiting up to ERASE_WAIT_SECONDS for it to end:
        a transaction anywhere on the server holding a transaction id from before now (it holds back every
        snapshot's horizon, the rewrite's own included), a session of this database or a walsender whose
        snapshot is older (but a plain VACUUM's, which the horizon leaves out), a replication slot's xmin. A role
        without pg_read_all_stats sees only its own sessions' snapshots; the first test needs no privilege."""
        now = conn.execute("SELECT pg_current_xact_id()::text AS now").fetchone()["now"]
        deadline = time.monotonic() + ERASE_WAIT_SECONDS
        while True:
            found = [r["who"] for r in conn.execute("""
                SELECT 'a transaction older than the erasure' AS who WHERE pg_snapshot_xmin(pg_current_snapshot()) < %(now)s::xid8
                UNION ALL
                SELECT format('session %%s on %%s, in a transaction since %%s', pid, coalesce(datname, 'replication'),
                              xact_start)
                  FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (datname = current_database() OR datname IS NULL)
                   AND backend_xmin IS NOT NULL AND age(backend_xmin) > age(%(now)s::xid8::xid)
                   AND NOT (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM%%')
                UNION ALL
                SELECT format('replication slot %%s', slot_name) FROM pg_replication_slots
                 WHERE xmin IS NOT NULL AND age(xmin) > age(%(now)s::xid8::xid)""", {"now": now}).fetchall()]
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    # -- the cached matrices (kenning.store.matrices) -------------------------------------
    def _version(self, scope: Scope):
        rows = self._q(f"SELECT changes FROM usage WHERE {TENANT}", _tenant(scope))
        return rows[0]["changes"] if rows else None

    def _matrix_rows(self, kind: str, scope: Scope) -> list:
        return self._q(MATRIX_ROWS[kind], _tenant(scope), binary=kind != "order")

    # -- episodes -------------------------------------------------------------------
    def insert_episode(self, scope: Scope, episode: Episode, vector: np.ndarray | None = None, *,
                       context: str = "", embed_text: str | None = None) -> None:
        self._check(vector)
        self._x("INSERT INTO episodes (project, environment, dataset, episode_id, role, chat, content, at,"
                " created_at, embedding, context, embed_text) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                (*scope, episode.episode_id, episode.role, episode.chat, episode.content, episode.at,
                 episode.created_at, _vec(vector), context,
                 embed_text if embed_text is not None else episode.content[:2000]))

    def episode_keyword_search(self, scope: Scope, query: str, limit: int,
                               exclude_chat: str | None = None) -> list[tuple[str, float]]:
        words = _words(query)
        if words is None:
            return []
        where = "TRUE" if exclude_chat is None else "f.chat IS DISTINCT FROM %(c)s"
        rows = self._q(_bm25("episodes", "episode_id", where), _tenant(scope, words=words, c=exclude_chat, n=limit))
        return [(r["id"], float(r["score"])) for r in rows]

    # -- entities -------------------------------------------------------------------
    def entity_vectors(self, scope: Scope, type: str) -> tuple[list[str], np.ndarray]:
        rows = self._q(f"SELECT entity_id, embedding::vector AS embedding FROM entities WHERE {TENANT}"
                       " AND type = %(type)s AND embedding IS NOT NULL ORDER BY seq", _tenant(scope, type=type))
        if not rows:
            return [], np.zeros((0, self.embedding_dim() or 0), dtype=np.float32)
        return [r["entity_id"] for r in rows], np.stack([_array(r["embedding"]) for r in rows])

    def insert_entity(self, scope: Scope, entity: Entity, vector: np.ndarray | None) -> None:
        self._check(vector)
        self._x("INSERT INTO entities (project, environment, dataset, entity_id, name, type, aliases, embedding,"
                " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (*scope, entity.entity_id, entity.name, entity.type, Jsonb(entity.aliases), _vec(vector),
                 entity.created_at))

    def add_alias(self, scope: Scope, entity_id: str, alias: str) -> None:
        self._x(f"UPDATE entities SET aliases = aliases || %(a)s WHERE {TENANT} AND entity_id = %(id)s"
                " AND NOT aliases ? %(alias)s", _tenant(scope, a=Jsonb([alias]), alias=alias, id=entity_id))

    def find_entities(self, scope: Scope, names: list[str]) -> list[Entity]:
        if not names:
            return []
        rows = self._q(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {TENANT}"
                       " AND (name = ANY(%(names)s) OR aliases ?| %(names)s) ORDER BY seq",
                       _tenant(scope, names=list(names)))
        return [entity_of(r) for r in rows]

    # -- facts ---------------------------------------------------------------------------
    def insert_fact(self, scope: Scope, fact: Fact, embed_text: str, vector: np.ndarray | None,
                    entity_id: str | None = None) -> None:
        """Insert one fact; DuplicateFact when a unique index (the live-fact backstop) holds a twin. ON CONFLICT
        DO NOTHING waits for a racing uncommitted twin and then skips, and leaves the caller's transaction usable."""
        self._check(vector)
        with self._conn() as conn:
            try:
                inserted = conn.execute(
                    "INSERT INTO facts (project, environment, dataset, fact_id, subject, predicate, object,"
                    " object_is_entity, entity_id, entity_type, text, kind, confidence, source_quote, valid_at,"
                    " valid_until, invalid_at, superseded_by, episode_id, created_at, embed_text, embedding)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                    " %s, %s) ON CONFLICT DO NOTHING",
                    (*scope, fact.fact_id, fact.subject, fact.predicate, fact.object, fact.object_is_entity,
                     entity_id, fact.entity_type, fact.text, fact.kind, fact.confidence, fact.source_quote,
                     fact.valid_at, fact.valid_until, fact.invalid_at, fact.superseded_by, fact.episode_id,
                     fact.created_at, embed_text, _vec(vector))).rowcount
            except psycopg.Error as exc:
                raise StoreError(f"fact rejected by the database: {exc}") from exc
        if inserted != 1:
            raise DuplicateFact(f"a live fact '{fact.predicate} {fact.object}' already exists")

    def live_fact_ids(self, scope: Scope, at: datetime, limit: int, predicates: list[str] | None = None,
                      entity_ids: list[str] | None = None) -> list[tuple[str, str]]:
        where, params = [SCOPE, LIVE], _tenant(scope, t=at, n=limit)
        for column, values in (("predicate", predicates), ("entity_id", entity_ids)):
            if values is not None:
                if not values:
                    return []
                where.append(f"f.{column} = ANY(%({column})s)")
                params[column] = list(values)
        rows = self._q(f"SELECT f.fact_id, f.predicate FROM facts f WHERE {' AND '.join(where)}"
                       " ORDER BY f.valid_at DESC, f.seq DESC LIMIT %(n)s", params)
        return [(r["fact_id"], r["predicate"]) for r in rows]

    def fact_vectors(self, scope: Scope, fact_ids: list[str]) -> dict[str, np.ndarray]:
        return self._vectors("facts", "fact_id", scope, fact_ids)

    def _vectors(self, table: str, key: str, scope: Scope, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._q(f"SELECT {key}, embedding::vector AS embedding FROM {table} WHERE {TENANT}"
                       f" AND {key} = ANY(%(ids)s) AND embedding IS NOT NULL", _tenant(scope, ids=list(ids)))
        return {r[key]: _array(r["embedding"]) for r in rows}


    def list_facts(self, scope: Scope, query: FactQuery) -> tuple[list[Fact], int]:
        where, params = [SCOPE], _tenant(scope)
        if query.as_of is not None:
            where.append(LIVE_AS_OF)
            params["t"] = query.as_of
        elif not query.include_invalidated:
            where.append(LIVE)
            params["t"] = timeutil.now()
        if query.entity:
            ids = [e.entity_id for e in self.find_entities(scope, [query.entity.strip().lower()])]
            ids += [r["entity_id"] for r in self._q(f"SELECT entity_id FROM entities WHERE {TENANT}"
                                                    " AND entity_id = %(id)s", _tenant(scope, id=query.entity.strip()))]
            if not ids:
                return [], 0
            where.append("f.entity_id = ANY(%(ents)s)")
            params["ents"] = ids
        narrower, values = fact_filters(query, lambda name: f"%({name})s")
        where += narrower
        params.update(values)
        if query.q:
            words = _words(query.q)
            if words is None:
                return [], 0
            # any of the words: websearch's "or" between them ("or" itself is a stop word)
            where.append("f.tsv @@ " + scoped(f"websearch_to_tsquery('{CONFIG}', %(w)s)"))
            params["w"] = " or ".join(w for w in words if w != "or")
        clause = " AND ".join(where)
        total = self._q(f"SELECT count(*) AS n FROM facts f WHERE {clause}", params)[0]["n"]
        params.update(limit=query.limit, offset=query.offset)
        rows = self._q(f"SELECT {FACT_COLUMNS} FROM facts f WHERE {clause} ORDER BY {fact_order(query.order, self.dialect)}"
                       " LIMIT %(limit)s OFFSET %(offset)s", params)
        return [fact_of(r) for r in rows], total

    # -- search ------------------------------------------------------------------------------
    def keyword_search(self, scope: Scope, query: str, at: datetime, limit: int) -> list[tuple[str, float]]:
        words = _words(query)
        if words is None:
            return []
        rows = self._q(_bm25("facts", "fact_id", LIVE), _tenant(scope, words=words, t=at, n=limit))
        return [(r["id"], float(r["score"])) for r in rows]

    def cross_dataset_search(self, project: str, environment: str, query: np.ndarray,
                             k: int) -> list[tuple[Scope, str, float]]:
        """(scope, fact_id, cosine similarity) of the live facts nearest ``query`` across every dataset of the
        project and environment: the HNSW index, with iterative scan so the tenant filter still fills ``k``."""
        dim = self.embedding_dim()
        if dim is None or k < 1:
            return []
        self._check(query)
        typed = f"vector({int(dim)})"
        now = timeutil.now()
        try:
            with self._pool.connection() as conn, conn.transaction():
                if self._pgvector >= (0, 8):  # before 0.8 a filter may leave fewer than k
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, 2 * int(k)))}")
                rows = conn.execute(
                    f"SELECT dataset, fact_id, (embedding::{typed}) <=> %(q)s::{typed} AS distance FROM facts"
                    " WHERE project = %(p)s AND environment = %(e)s AND invalid_at IS NULL AND embedding IS NOT NULL"
                    " AND valid_at <= %(t)s AND (valid_until IS NULL OR valid_until > %(t)s)"
                    f" ORDER BY (embedding::{typed}) <=> %(q)s::{typed} LIMIT %(n)s",
                    {"p": project, "e": environment, "q": _vec(query), "t": now, "n": int(k)}).fetchall()
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL error on {self.path}: {exc}") from exc
        # relaxed_order may hand rows back slightly out of order: sort them.
        hits = [(Scope(project, environment, r["dataset"]), r["fact_id"], 1.0 - float(r["distance"])) for r in rows]
        return sorted(hits, key=lambda h: -h[2])

    # -- notes ------------------------------------------------------------------------
    def note_keyword_search(self, scope: Scope, query: str, limit: int,
                            namespaces: list[str] | None = None) -> list[tuple[str, float]]:
        words = _words(query)
        if words is None:
            return []
        where = "f.forgotten_at IS NULL" + ("" if namespaces is None else " AND f.namespace = ANY(%(ns)s)")
        rows = self._q(_bm25("notes", "note_id", where),
                       _tenant(scope, words=words, ns=list(namespaces or []), n=limit))
        return [(r["id"], float(r["score"])) for r in rows]

    # -- the job queue ----------------------------------------------------------------------
    def claim(self, worker: str, lease_seconds: float, now: datetime) -> Job | None:
        """The runnable job of the earliest turn (then the oldest), leased to ``worker``: queued (or leased to a
        worker whose lease ran out), with no earlier unfinished job of its dataset; crashed work first. Rows
        another claimer holds are skipped, not waited for. The choice is a materialized CTE, run once: as a
        subquery in ``UPDATE … FROM``, a plan that scanned ``jobs`` first ran it again for each row, each run
        locked and leased another job, and all but the first waited out their lease with no worker."""
        rows = self._q(f"""
            WITH c AS MATERIALIZED (SELECT j.seq, j.project, j.environment, j.dataset FROM jobs j
                  WHERE j.status IN ('queued', 'distilling') AND (j.status = 'queued' OR j.lease_until < %(now)s)
                  AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.project = j.project AND k.environment = j.environment
                                  AND k.dataset = j.dataset AND k.status IN ('queued', 'distilling') AND k.seq < j.seq)
                  ORDER BY j.status = 'queued', j.turn, j.seq LIMIT 1 FOR UPDATE SKIP LOCKED)
            UPDATE jobs SET status = 'distilling', lease_owner = %(w)s, lease_until = %(until)s,
                   attempts = attempts + 1, updated_at = %(now)s
            FROM c WHERE jobs.project = c.project AND jobs.environment = c.environment AND jobs.dataset = c.dataset
              AND jobs.seq = c.seq
            RETURNING {', '.join('jobs.' + c for c in JOB_COLUMNS.split(', '))}""",
                       {"w": worker, "until": now + timedelta(seconds=lease_seconds), "now": now})
        return self._job(rows[0]) if rows else None

    def datasets(self, project: str, environment: str, q: str | None, limit: int,
                 offset: int) -> tuple[list[DatasetSummary], int]:
        names = " UNION ".join(f"SELECT dataset FROM {t} WHERE project = %(p)s AND environment = %(e)s"
                               for t in DATASET_TABLES)
        # Internal datasets (a leading underscore, which no user dataset may have) are left out.
        where = "left(dataset, 1) <> '_'" + (" AND strpos(lower(dataset), lower(%(q)s)) > 0" if q else "")
        params = {"p": project, "e": environment, "q": q, "n": limit, "o": offset, "t": timeutil.now()}
        total = self._q(f"SELECT count(*) AS n FROM ({names}) d WHERE {where}", params)[0]["n"]
        rows = self._q(f"""
            SELECT d.dataset,
              (SELECT count(*) FROM facts f WHERE {SCOPE.replace('%(d)s', 'd.dataset')}
                 AND {LIVE}) AS facts,
              (SELECT count(*) FROM entities x WHERE x.project = %(p)s AND x.environment = %(e)s
                 AND x.dataset = d.dataset) AS entities,
              (SELECT count(*) FROM notes x WHERE x.project = %(p)s AND x.environment = %(e)s
                 AND x.dataset = d.dataset AND x.forgotten_at IS NULL) AS notes,
              (SELECT count(*) FROM episodes x WHERE x.project = %(p)s AND x.environment = %(e)s
                 AND x.dataset = d.dataset) AS messages,
              GREATEST(
                (SELECT max(created_at) FROM facts x WHERE x.project = %(p)s AND x.environment = %(e)s
                   AND x.dataset = d.dataset),
                (SELECT max(created_at) FROM episodes x WHERE x.project = %(p)s AND x.environment = %(e)s
                   AND x.dataset = d.dataset),
                (SELECT max(created_at) FROM notes x WHERE x.project = %(p)s AND x.environment = %(e)s
                   AND x.dataset = d.dataset),
                (SELECT max(updated_at) FROM jobs x WHERE x.project = %(p)s AND x.environment = %(e)s
                   AND x.dataset = d.dataset),
                (SELECT max(updated_at) FROM core_files x WHERE x.project = %(p)s AND x.environment = %(e)s
                   AND x.dataset = d.dataset)) AS last_activity
            FROM (SELECT dataset FROM ({names}) u WHERE {where} ORDER BY dataset COLLATE "C"
                  LIMIT %(n)s OFFSET %(o)s) d
            ORDER BY d.dataset COLLATE "C"
            """, params)
        return [DatasetSummary(dataset=r["dataset"], facts=r["facts"], entities=r["entities"], notes=r["notes"],
                               messages=r["messages"], last_activity=load_time(r["last_activity"])) for r in rows], total

    # -- export and import ---------------------------------------------------------------------
    def export_rows(self, kinds: Sequence[str], project: str, environment: str, dataset: str | None,
                    vectors: bool) -> Iterator[tuple[str, dict]]:
        with self._snapshot() as conn:
            for kind in kinds:
                sql, params = _export_query(kind, project, environment, dataset, vectors)
                try:
                    with conn.cursor(name=f"kenning_export_{kind}") as cur:
                        cur.itersize = 1000
                        cur.execute(sql, params)
                        for r in cur:
                            yield kind, _exported(kind, r)
                except psycopg.Error as exc:
                    raise StoreError(f"PostgreSQL error exporting {self.path}: {exc}") from exc

    @contextmanager
    def _snapshot(self):
        """A connection reading one consistent state: a repeatable-read, read-only transaction of its own
        (inside the caller's transaction: that one)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._conn() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def import_row(self, kind: str, project: str, environment: str, row: dict, vector: np.ndarray | None) -> bool:
        self._check(vector)
        place, fields = RECORDS[kind]
        values = {"project": project, "environment": environment, place: row[place]}
        values.update((f, _stored(t, row[f])) for f, t in fields.items())
        if vector is not None:
            values["embedding"] = _vec(vector)
        # DO NOTHING on any uniqueness conflict: the key (or a live twin) is already there.
        sql = (f"INSERT INTO {EXPORT_TABLES[kind]} ({', '.join(values)}) VALUES ({', '.join(['%s'] * len(values))})"
               " ON CONFLICT DO NOTHING")
        with self._conn() as conn:
            try:
                return conn.execute(sql, tuple(values.values())).rowcount == 1
            except psycopg.Error as exc:
                raise StoreError(f"the database refused the {kind}: {exc}") from exc

    def import_rows(self, kind: str, project: str, environment: str,
                    rows: Sequence[tuple[dict, np.ndarray | None]]) -> int:
        """The batch through ``COPY`` into a temporary table of the same columns, then one
        ``INSERT … SELECT … ON CONFLICT DO NOTHING`` in the batch's order: one round trip for the rows
        instead of one per row. A batch the database refuses is retried row by row (in a savepoint) to name
        the row; the caller's transaction stays usable either way."""
        if not rows:
            return 0
        place, fields = RECORDS[kind]
        table = EXPORT_TABLES[kind]
        columns = ["project", "environment", place, *fields] + (["embedding"] if kind in VECTOR_TABLES else [])
        names, stage = ", ".join(columns), f"kenning_stage_{table}"
        for i, (_, vector) in enumerate(rows):
            try:
                self._check(vector)
            except KenningError as exc:
                exc.row_index = i
                raise
        with self._tx() as conn:
            try:
                with conn.transaction():
                    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DROP AS"
                                 f" SELECT {names} FROM {table} WITH NO DATA")
                    conn.execute(f"TRUNCATE {stage}")
                    types = [r["t"] for r in conn.execute(
                        "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = %s::regclass"
                        " AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (stage,))]
                    with conn.cursor().copy(f"COPY {stage} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
                        copy.set_types(types)   # binary: a vector travels as its float32 bytes, not as text
                        for row, vector in rows:
                            values = [project, environment, row[place], *(_stored(t, row[f]) for f, t in fields.items())]
                            if kind in VECTOR_TABLES:
                                values.append(_vec(vector))
                            copy.write_row(values)
                    return conn.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} ORDER BY ctid"
                                        " ON CONFLICT DO NOTHING").rowcount
            except (psycopg.Error, UnicodeEncodeError) as exc:
                first = exc
            for i, (row, vector) in enumerate(rows):   # name the row the database refuses
                try:
                    with conn.transaction():
                        self.import_row(kind, project, environment, row, vector)
                except (StoreError, InputError) as exc:
                    error = exc if isinstance(exc, StoreError) else StoreError(str(exc))
                    error.row_index = i
                    raise error from exc
                except (psycopg.Error, UnicodeEncodeError) as exc:
                    error = _error(self.path, exc)
                    error.row_index = i
                    raise error from exc
            raise StoreError(f"the database refused the batch of {len(rows)} {kind} rows: {first}") from first

    # -- pending embeddings --------------------------------------------------------------
# -- rows to models ---------------------------------------------------------------------------------

def _vec(vector) -> np.ndarray | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32)


def _array(value) -> np.ndarray:
    if hasattr(value, "to_numpy"):  # pgvector's Vector
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _export_query(kind: str, project: str, environment: str, dataset: str | None, vectors: bool) -> tuple[str, dict]:
    place, fields = RECORDS[kind]
    columns = [place, *fields] + (["embedding::vector AS embedding"] if vectors and kind in VECTOR_TABLES else [])
    where, params = "project = %(p)s AND environment = %(e)s", {"p": project, "e": environment}
    if dataset is not None and place == "dataset":
        where, params = where + " AND dataset = %(d)s", params | {"d": dataset}
    return (f"SELECT {', '.join(columns)} FROM {EXPORT_TABLES[kind]} WHERE {where}"
            f" ORDER BY {place} COLLATE \"C\", seq", params)


def _exported(kind: str, r: dict) -> dict:
    """A stored row as JSON values: times as fixed-width text, JSON columns decoded, the vector as an array."""
    place, fields = RECORDS[kind]
    row = {place: r[place]} | {f: _decoded(t, r[f]) for f, t in fields.items()}
    if "embedding" in r:
        row["vector"] = None if r["embedding"] is None else _array(r["embedding"])
    return row


def _decoded(type_: str, value):
    if value is None:
        return None
    if type_ in TIME_TYPES:
        return timeutil.dump(value)
    if type_ == "object":
        return json.loads(value)
    return value


def _stored(type_: str, value):
    if value is None:
        return None
    if type_ in TIME_TYPES:
        return timeutil.load(value)
    if type_ == "list":
        return Jsonb(value)
    if type_ == "object":
        return json.dumps(value, ensure_ascii=False)
    return value
