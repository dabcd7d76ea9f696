"""The SQL both stores run, written once.

``SQLStore`` implements the contracts whose statements are the same on SQLite and PostgreSQL (API
keys, core files, documents, idempotency receipts, migrations, id lookups of jobs and facts) on top
of three primitives each backend provides: ``_read`` and ``_write`` (statements written with ``?``
placeholders) and ``_document_lock``. A ``Dialect`` holds what differs in the text and the values:
the placeholder, how times are stored (ISO text vs ``timestamptz``), JSON columns (text vs
``jsonb``) and how to ask for code point order. Keyword search (FTS5 vs tsvector), vector search
(NumPy matrices vs pgvector) and locking stay in the backends: they truly differ.
"""
from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np

from .. import timeutil
from ..embed.base import check_vectors
from ..errors import DimensionMismatch, DocumentConflict, LeaseLost
from ..model import AddResult, ChatSummary, CoreFile, CoreFileVersion, Document, Entity, Episode, Fact, Job, Note, Scope
from .base import KEY_ID_CHARS, ApiKey, Store
from .erasing import SQLErasure
from .rows import (ENTITY_COLUMNS, EPISODE_COLUMNS, FACT_COLUMNS, JOB_COLUMNS, NOTE_COLUMNS, VECTOR_TABLES, entity_of, episode_of,
                   fact_of, load_json, load_time, note_of)

SCOPED = "project = ? AND environment = ? AND dataset = ?"
# A word in half or more of a dataset's rows has a BM25 weight of about zero, yet ranking its
# thousands of matches costs milliseconds: in large datasets such words are left out of the query.
COMMON_SHARE = 0.5
COMMON_MIN_ROWS = 1_000   # smaller datasets rank every word; checking would cost more than it saves


# A new job's turn (one statement, inside its INSERT): one after its dataset's last open job, and never before
# the front of the queue, so a dataset with nothing open goes next in line while a backlog waits its turns.
NEXT_TURN = """(SELECT CASE WHEN m.t IS NOT NULL AND m.t + 1 > f.t THEN m.t + 1 ELSE f.t END
    FROM (SELECT coalesce((SELECT min(turn) FROM jobs WHERE status = 'queued'),
                          (SELECT max(turn) FROM jobs WHERE status = 'distilling'), 0) AS t) f,
         (SELECT max(turn) AS t FROM jobs WHERE project = ? AND environment = ? AND dataset = ?
            AND status IN ('queued', 'distilling')) m)"""


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str                      # "?" or "%s"
    dump_time: Callable[[datetime | None], object]
    dump_json: Callable[[object], object]  # a value for a JSON column (text, jsonb)
    code_point_order: str                 # appended to ORDER BY a text column
    row_order: str                        # the column that keeps insertion order ("rowid", "seq")
    id_lookup: str                        # prefix on scope columns when rows are found by a unique id:
                                          # SQLite's "+" keeps the planner on the id's own index

    def any_of(self, column: str, values) -> tuple[str, tuple]:
        """``column`` is one of ``values``: an IN list (SQLite) or ``= ANY`` of one array (PostgreSQL)."""
        values = list(values)
        if self.placeholder == "?":
            return f"{column} IN ({','.join('?' * len(values))})", tuple(values)
        return f"{column} = ANY(?)", (values,)

    def sql(self, text: str) -> str:
        return _translate(text, self.placeholder)

    def contains(self, column: str) -> str:
        """``column`` holds the next parameter's text, case-insensitively (SQLite: a Python function that
        casefolds both, since its lower() folds ASCII only; PostgreSQL: lower() and strpos)."""
        if self.placeholder == "?":
            return f"kenning_contains({column}, ?)"
        return f"(strpos(lower({column}), lower(?)) > 0)"

    def json_text(self, column: str, key: str) -> str:
        """One key of a JSON column as text: ``json_extract`` (SQLite) or ``->>`` (PostgreSQL's jsonb)."""
        if self.placeholder == "?":
            return f"json_extract({column}, '$.{key}')"
        return f"({column} ->> '{key}')"

    def json_blank(self, column: str, key: str) -> str:
        """The JSON column with one key's value replaced by an empty string."""
        if self.placeholder == "?":
            return f"json_set({column}, '$.{key}', '')"
        return f"jsonb_set({column}, '{{{key}}}', '\"\"'::jsonb)"

    load_time = staticmethod(load_time)   # either backend's time value → an aware UTC datetime
    load_json = staticmethod(load_json)   # either backend's JSON column → Python values


@lru_cache(maxsize=512)
def _translate(text: str, placeholder: str) -> str:
    if placeholder == "?":
        return text
    return text.replace("%", "%%").replace("?", placeholder)


# How a fact listing can be ordered (FactQuery.order): each ends in the backend's insertion order column.
# "anchor" puts the user's own facts first, then the entities' groups by name, each by slot and time.
FACT_ORDERS = {
    "time": "f.valid_at, f.created_at",
    "anchor": ("CASE WHEN f.object_is_entity THEN 1 ELSE 0 END, CASE WHEN f.object_is_entity THEN f.object ELSE '' END"
               "{collate}, f.predicate{collate}, f.valid_at, f.created_at"),
    "slot": "f.predicate{collate}, f.valid_at, f.created_at",
}


def fact_order(order: str, dialect: "Dialect") -> str:
    """The ORDER BY of a fact listing, in code point order for text on either backend."""
    return FACT_ORDERS[order].format(collate=dialect.code_point_order) + f", f.{dialect.row_order}"


def fact_filters(query, placeholder: Callable[[str], str]) -> tuple[list[str], dict]:
    """The equality narrowings of a fact listing (kind, entity type, source message) as conditions and named
    values; ``placeholder`` writes a named parameter the backend's way (``:kind``, ``%(kind)s``)."""
    where, params = [], {}
    for column, value in (("kind", query.kind), ("entity_type", query.entity_type), ("episode_id", query.message_id)):
        if value is not None:
            where.append(f"f.{column} = {placeholder(column)}")
            params[column] = value
    if query.entity_type is not None:
        where.append("f.object_is_entity")   # a boolean in PostgreSQL, 0/1 in SQLite: true either way
    return where, params


DATASET_TABLES = ("facts", "episodes", "notes", "entities", "core_files", "jobs")   # where a dataset shows
DATASET_ROWS = ("facts", "entities", "episodes", "ingests", "notes", "core_files", "core_file_versions", "jobs")


class SQLStore(SQLErasure, Store):
    """The shared half of a SQL store; a backend adds its connection, schema, search and locks."""

    dialect: Dialect
    path: str

    # -- what a backend provides ----------------------------------------------------------------
    @abstractmethod
    def _read(self, sql: str, params: tuple = ()) -> list[Mapping]:
        """Rows of a statement written with ``?`` placeholders, each readable by column name."""

    @abstractmethod
    def _write(self, sql: str, params: tuple = ()) -> int:
        """Run a statement written with ``?`` placeholders; the number of rows it touched."""

    @abstractmethod
    def _document_lock(self, key: tuple[str, str, str, str]) -> AbstractContextManager:
        """A transaction in which no other writer of this document runs."""

    @abstractmethod
    def _vector_value(self, vector: np.ndarray | None):
        """A vector as the backend's column takes it (bytes, a pgvector array)."""

    def _credential_read(self, sql: str, params: tuple = ()) -> list[Mapping]:
        """Reads of keys and sessions, which every request makes: a backend may serve them beside its
        writers (SQLite: a second connection) rather than after them."""
        return self._read(sql, params)

    def _changed(self, scope: Scope) -> None:
        """A dataset's rows changed (a backend that caches per-dataset matrices drops them)."""

    def _check(self, vector) -> None:
        if vector is not None:
            dim = self.embedding_dim()
            if dim is None:
                raise DimensionMismatch("the store has no embedding model recorded; call check_embedding_model first")
            if np.ndim(vector) != 1:
                raise DimensionMismatch(f"expected one {dim}-dimensional vector, got an array of shape {np.shape(vector)}")
            check_vectors(vector, dim)

    def _by_ids(self, select: str, key: str, scope: Scope, ids: list[str], build, *, unique: bool = True) -> list:
        """Rows of one scope by id, in the order of ``ids`` (missing ids left out)."""
        if not ids:
            return []
        plus = self.dialect.id_lookup if unique else ""
        among, params = self.dialect.any_of(key, ids)
        rows = self._read(f"{select} WHERE {plus}project = ? AND {plus}environment = ? AND {plus}dataset = ?"
                          f" AND {among}", (*scope, *params))
        by_id = {r[key]: build(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    @staticmethod
    def _given(pairs) -> tuple[list[str], list]:
        """``column = ?`` for each (column, value) whose value is not None: the optional filters."""
        where, params = [], []
        for column, value in pairs:
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        return where, params

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def location(self) -> str:
        return self.path

    def applied_migrations(self) -> list[tuple[str, datetime | None]]:
        return [(r["name"], self.dialect.load_time(r["applied_at"]))
                for r in self._read("SELECT name, applied_at FROM migrations ORDER BY name")]

    def embedding_model(self) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_model'")
        return rows[0]["value"] if rows else None

    def embedding_dim(self) -> int | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_dim'")
        return int(rows[0]["value"]) if rows else None

    def check_embedding_model(self, name: str, dim: int) -> None:
        with self.transaction():
            stored = SQLStore.embedding_dim(self)   # the committed value, not a backend's cached one
            if stored is None:
                if isinstance(dim, bool) or not isinstance(dim, int) or not 0 < dim <= 16000:
                    raise DimensionMismatch(f"an embedding dimension must be 1-16000, not {dim!r}")
                self._write("INSERT INTO meta VALUES ('embedding_dim', ?), ('embedding_model', ?)", (str(dim), name))
                self._vectors_sized(dim)
            elif stored != dim:
                raise DimensionMismatch(
                    f"{self.path} holds {stored}-dimensional vectors from {self.embedding_model() or '?'}, "
                    f"but the embedder {name} makes {dim}; use that embedder or a new database")

    def _vectors_sized(self, dim: int) -> None:
        """The first embedder fixed the dimension: a backend that types its vector columns does it now."""

    # -- idempotency ---------------------------------------------------------------------------------
    def get_ingest(self, scope: Scope, client_ref: str) -> dict | None:
        rows = self._read(f"SELECT receipt FROM ingests WHERE {SCOPED} AND client_ref = ?", (*scope, client_ref))
        return json.loads(rows[0]["receipt"]) if rows else None

    def record_ingest(self, scope: Scope, client_ref: str, receipt: dict, at: datetime) -> None:
        self._write("INSERT INTO ingests (project, environment, dataset, client_ref, receipt, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)", (*scope, client_ref, json.dumps(receipt), self.dialect.dump_time(at)))

    # -- lookups by id, within a tenant ------------------------------------------------------------
    def get_job(self, request_id: str, project: str, environment: str) -> Job | None:
        rows = self._read(f"SELECT {JOB_COLUMNS} FROM jobs WHERE job_id = ? AND project = ? AND environment = ?",
                          (request_id, project, environment))
        return self._job(rows[0]) if rows else None

    def fact_state(self, fact_id: str, project: str, environment: str) -> tuple[Scope, Fact, bool] | None:
        rows = self._read(f"SELECT f.project, f.environment, f.dataset, f.embedding IS NOT NULL AS embedded,"
                          f" {FACT_COLUMNS} FROM facts f WHERE f.fact_id = ? AND f.project = ?"
                          " AND f.environment = ?", (fact_id, project, environment))
        if not rows:
            return None
        r = rows[0]
        return Scope(r["project"], r["environment"], r["dataset"]), fact_of(r), bool(r["embedded"])

    def _job(self, r: Mapping) -> Job:
        payload, load = self.dialect.load_json(r["payload"]), self.dialect.load_time
        result = self.dialect.load_json(r["result"]) if r["result"] else None
        return Job(request_id=r["job_id"], project=r["project"], environment=r["environment"], dataset=r["dataset"],
                   role=payload["role"], content=payload["content"], chat=payload.get("chat"),
                   at=timeutil.load(payload["at"]), temporary=payload.get("temporary", False),
                   message_id=payload.get("message_id"), client_ref=r["client_ref"], status=r["status"],
                   attempts=r["attempts"], error=r["error"],
                   result=AddResult.model_validate(result) if result else None,
                   created_at=load(r["created_at"]), updated_at=load(r["updated_at"]))

    # -- API keys (only their hashes are stored) and sign-in sessions -----------------------------
    def put_api_key(self, key_hash: str, project: str, role: str, name: str | None = None) -> None:
        self._write("INSERT INTO api_keys (key_hash, project, role, name, created_at, revoked_at)"
                    " VALUES (?, ?, ?, ?, ?, NULL)",
                    (key_hash, project, role, name, self.dialect.dump_time(timeutil.now())))

    def _key(self, r: Mapping) -> ApiKey:
        load = self.dialect.load_time
        return ApiKey(key_id=r["key_hash"][:KEY_ID_CHARS], project=r["project"], role=r["role"], name=r["name"],
                      created_at=load(r["created_at"]), revoked_at=load(r["revoked_at"]) if r["revoked_at"] else None)

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        rows = self._credential_read("SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL", (key_hash,))
        return self._key(rows[0]) if rows else None

    def api_key_live(self, key_id: str) -> bool:
        return bool(self._credential_read(f"SELECT 1 AS one FROM api_keys WHERE substr(key_hash, 1, {KEY_ID_CHARS})"
                                          " = ? AND revoked_at IS NULL", (key_id,)))

    def list_api_keys(self, project: str | None = None, include_revoked: bool = False) -> list[ApiKey]:
        where = ["1 = 1"] + ([] if include_revoked else ["revoked_at IS NULL"]) + \
            ([] if project is None else ["project = ?"])
        rows = self._read(f"SELECT * FROM api_keys WHERE {' AND '.join(where)} ORDER BY created_at, key_hash",
                          () if project is None else (project,))
        return [self._key(r) for r in rows]

    def revoke_api_key(self, key_id: str, project: str | None = None) -> bool:
        return self._write(f"UPDATE api_keys SET revoked_at = ? WHERE substr(key_hash, 1, {KEY_ID_CHARS}) = ?"
                           " AND revoked_at IS NULL" + ("" if project is None else " AND project = ?"),
                           (self.dialect.dump_time(timeutil.now()), key_id,
                            *(() if project is None else (project,)))) > 0

    def count_api_keys(self) -> int:
        return self._credential_read("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL")[0]["n"]

    def put_session(self, session_hash: str, principal: dict, key_id: str | None, expires_at: datetime) -> None:
        now = self.dialect.dump_time(timeutil.now())
        self._write("DELETE FROM sessions WHERE expires_at < ?", (now,))   # sign-ins are few; purge as they come
        self._write("INSERT INTO sessions (session_hash, principal, key_id, created_at, expires_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (session_hash, self.dialect.dump_json(principal), key_id, now, self.dialect.dump_time(expires_at)))

    def find_session(self, session_hash: str) -> tuple[dict, str | None] | None:
        rows = self._credential_read("SELECT principal, key_id FROM sessions WHERE session_hash = ? AND expires_at > ?",
                          (session_hash, self.dialect.dump_time(timeutil.now())))
        return (self.dialect.load_json(rows[0]["principal"]), rows[0]["key_id"]) if rows else None

    def delete_session(self, session_hash: str) -> None:
        self._write("DELETE FROM sessions WHERE session_hash = ?", (session_hash,))

    # -- messages, notes and entities --------------------------------------------------------------
    def previous_message(self, scope: Scope, chat: str | None, at: datetime,
                         sent: datetime | None = None) -> Episode | None:
        found = self.previous_messages(scope, chat, at, 1, sent=sent)
        return found[0] if found else None

    def previous_messages(self, scope: Scope, chat: str | None, at: datetime, n: int, role: str | None = None,
                          exclude: str | None = None, sent: datetime | None = None) -> list[Episode]:
        where, params = [SCOPED, "at <= ?"], [*scope, self.dialect.dump_time(at)]
        if sent is not None:    # a turn sent later at the same time (the reply) is not before it
            where.append("(at < ? OR created_at < ?)")
            params += [self.dialect.dump_time(at), self.dialect.dump_time(sent)]
        for column, value in (("chat", chat), ("role", role)):
            if column == "chat" and value is None:
                where.append("chat IS NULL")
            elif value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if exclude is not None:
            where.append("episode_id <> ?")
            params.append(exclude)
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {' AND '.join(where)}"
                          f" ORDER BY at DESC, created_at DESC, {self.dialect.row_order} DESC LIMIT ?",
                          (*params, n))
        return [episode_of(r) for r in rows]

    def following_message(self, scope: Scope, episode: Episode) -> Episode | None:
        dump = self.dialect.dump_time
        chat = "chat IS NULL" if episode.chat is None else "chat = ?"
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {SCOPED} AND {chat} AND episode_id <> ?"
                          " AND (at > ? OR (at = ? AND created_at > ?))"
                          f" ORDER BY at, created_at, {self.dialect.row_order} LIMIT 1",
                          (*scope, *([] if episode.chat is None else [episode.chat]), episode.episode_id,
                           dump(episode.at), dump(episode.at), dump(episode.created_at)))
        return episode_of(rows[0]) if rows else None

    def set_episode_context(self, scope: Scope, episode_id: str, context: str) -> None:
        self._write(f"UPDATE episodes SET context = ? WHERE {SCOPED} AND episode_id = ?", (context, *scope, episode_id))
        self._changed(scope)

    def get_episodes(self, scope: Scope, episode_ids: list[str]) -> list[Episode]:
        return self._by_ids(f"SELECT {EPISODE_COLUMNS} FROM episodes", "episode_id", scope, episode_ids, episode_of,
                            unique=False)

    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None:
        found = self.get_episodes(scope, [episode_id])
        return found[0] if found else None

    def chats(self, scope: Scope, limit: int, offset: int) -> tuple[list[ChatSummary], int]:
        total = self._read(f"SELECT count(*) AS n FROM (SELECT chat FROM episodes WHERE {SCOPED} GROUP BY chat) c",
                           tuple(scope))[0]["n"]
        rows = self._read(f"SELECT chat, count(*) AS messages, sum(CASE WHEN role = 'user' THEN 1 ELSE 0 END) AS users,"
                          f" min(at) AS first_at, max(at) AS last_at FROM episodes WHERE {SCOPED} GROUP BY chat"
                          f" ORDER BY max(at) DESC, chat{self.dialect.code_point_order} LIMIT ? OFFSET ?",
                          (*scope, limit, offset))
        mined: dict[str | None, int] = {}
        if rows:   # facts per chat: a join inside the dataset (colocated when distributed by it)
            for r in self._read("SELECT e.chat, count(*) AS n FROM facts f JOIN episodes e ON e.project = f.project"
                                " AND e.environment = f.environment AND e.dataset = f.dataset"
                                " AND e.episode_id = f.episode_id WHERE f.project = ? AND f.environment = ?"
                                " AND f.dataset = ? GROUP BY e.chat", tuple(scope)):
                mined[r["chat"]] = r["n"]
        return [ChatSummary(chat=r["chat"], messages=r["messages"], user_turns=r["users"] or 0,
                            facts=mined.get(r["chat"], 0), first_at=load_time(r["first_at"]),
                            last_at=load_time(r["last_at"])) for r in rows], total

    def chat_messages(self, scope: Scope, chat: str | None, limit: int, offset: int) -> tuple[list[Episode], int]:
        same_chat, params = ("chat IS NULL", tuple(scope)) if chat is None else ("chat = ?", (*scope, chat))
        where = f"{SCOPED} AND {same_chat}"
        total = self._read(f"SELECT count(*) AS n FROM episodes WHERE {where}", params)[0]["n"]
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where}"
                          f" ORDER BY at, created_at, {self.dialect.row_order} LIMIT ? OFFSET ?",
                          (*params, limit, offset))
        return [episode_of(r) for r in rows], total

    def insert_note(self, scope: Scope, note: Note, vector: np.ndarray | None) -> None:
        self._check(vector)
        self._write("INSERT INTO notes (project, environment, dataset, namespace, note_id, text, created_at, embedding)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*scope, note.namespace, note.note_id, note.text,
                                                          self.dialect.dump_time(note.created_at), self._vector_value(vector)))
        self._changed(scope)

    def get_notes(self, scope: Scope, note_ids: list[str]) -> list[Note]:
        return self._by_ids(f"SELECT {NOTE_COLUMNS} FROM notes", "note_id", scope, note_ids, note_of)

    def list_notes(self, scope: Scope, namespaces: list[str] | None, include_forgotten: bool, limit: int,
                   offset: int) -> tuple[list[Note], int]:
        where, params = SCOPED, tuple(scope)
        if namespaces is not None:
            among, more = self.dialect.any_of("namespace", namespaces)
            where, params = f"{where} AND {among}", params + more
        if not include_forgotten:
            where += " AND forgotten_at IS NULL"
        total = self._read(f"SELECT count(*) AS n FROM notes WHERE {where}", params)[0]["n"]
        rows = self._read(f"SELECT {NOTE_COLUMNS} FROM notes WHERE {where}"
                          f" ORDER BY created_at, {self.dialect.row_order} LIMIT ? OFFSET ?", (*params, limit, offset))
        return [note_of(r) for r in rows], total

    def forget_note(self, scope: Scope, note_id: str, at: datetime, superseded_by: str | None) -> None:
        self._write(f"UPDATE notes SET forgotten_at = ?, superseded_by = ? WHERE {SCOPED} AND note_id = ?"
                    " AND forgotten_at IS NULL", (self.dialect.dump_time(at), superseded_by, *scope, note_id))
        self._changed(scope)

    def entities(self, scope: Scope, type: str | None = None) -> list[Entity]:
        where, params = self._given([("type", type)])
        rows = self._read(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {' AND '.join([SCOPED, *where])}"
                          f" ORDER BY created_at, name{self.dialect.code_point_order}", (*scope, *params))
        return [entity_of(r) for r in rows]

    def get_facts(self, scope: Scope, fact_ids: list[str]) -> list[Fact]:
        return self._by_ids(f"SELECT {FACT_COLUMNS} FROM facts f", "fact_id", scope, fact_ids, fact_of)

    def facts_in_slot(self, scope: Scope, predicates: list[str], at: datetime,
                      limit: int | None = None, superseded: bool = False) -> list[Fact]:
        if not predicates:
            return []
        t = self.dialect.dump_time(at)
        among, wanted = self.dialect.any_of("f.predicate", predicates)
        alive = "(f.invalid_at IS NULL OR (f.superseded_by IS NOT NULL AND f.invalid_at > ?))" if superseded \
            else "f.invalid_at IS NULL"
        sql = (f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.project = ? AND f.environment = ? AND f.dataset = ?"
               f" AND {among} AND {alive} AND (f.valid_until IS NULL OR f.valid_until > ?)")
        params = (*scope, *wanted, *((t,) if superseded else ()), t)
        order = self.dialect.row_order
        if limit is None:
            rows = self._read(f"{sql} ORDER BY f.valid_at, f.{order}", params)
        else:  # the newest first: a recall wants the current values, not all of them
            rows = self._read(f"{sql} AND f.valid_at <= ? ORDER BY f.valid_at DESC, f.{order} DESC LIMIT ?",
                              (*params, t, limit))
        return [fact_of(r) for r in rows]

    def entity_graph(self, scope: Scope, entity_ids: list[str], at: datetime, hops: int,
                     limit: int) -> list[tuple[str, str | None, int]]:
        if not entity_ids:
            return []
        t = self.dialect.dump_time(at)
        among, start = self.dialect.any_of("e.entity_id", entity_ids)
        off = self.dialect.id_lookup   # SQLite's "+": the time tests must not pull the planner onto facts_time
        live = ("{f}.invalid_at IS NULL AND " + off + "{f}.valid_at <= ? AND (" + off + "{f}.valid_until IS NULL OR "
                + off + "{f}.valid_until > ?)")
        here = "{f}.project = ? AND {f}.environment = ? AND {f}.dataset = ?"
        # UNION (not UNION ALL) stops the walk at entities already reached at that hop; the hop bound
        # stops it everywhere else. CROSS JOIN keeps SQLite's join order (entity → its facts → the
        # facts of the same messages), each step one index range inside the dataset.
        sql = f"""
        WITH RECURSIVE reach(entity_id, hop) AS (
            SELECT e.entity_id, 0 FROM entities e
            WHERE e.project = ? AND e.environment = ? AND e.dataset = ? AND {among}
            UNION
            SELECT b.entity_id, r.hop + 1 FROM reach r CROSS JOIN facts a CROSS JOIN facts b
            WHERE r.hop < ? AND {here.format(f="a")} AND a.entity_id = r.entity_id AND {live.format(f="a")}
                AND {here.format(f="b")} AND b.episode_id = a.episode_id AND b.entity_id <> a.entity_id
                AND {live.format(f="b")})
        SELECT f.fact_id, f.episode_id, min(r.hop) AS hop, max(f.valid_at) AS newest
        FROM reach r CROSS JOIN facts f
        WHERE {here.format(f="f")} AND f.entity_id = r.entity_id AND {live.format(f="f")}
        GROUP BY f.fact_id, f.episode_id ORDER BY hop, newest DESC LIMIT ?"""
        rows = self._read(sql, (*scope, *start, hops, *scope, t, t, *scope, t, t, *scope, t, t, limit))
        return [(r["fact_id"], r["episode_id"], int(r["hop"])) for r in rows]

    def update_fact(self, scope: Scope, fact_id: str, *, invalid_at=None, valid_until=None, superseded_by=None,
                    valid_at=None) -> None:
        dump = self.dialect.dump_time
        sets, params = self._given([("invalid_at", dump(invalid_at)), ("valid_until", dump(valid_until)),
                                    ("superseded_by", superseded_by), ("valid_at", dump(valid_at))])
        if sets:
            self._write(f"UPDATE facts SET {', '.join(sets)} WHERE {SCOPED} AND fact_id = ?", (*params, *scope, fact_id))
            self._changed(scope)

    def predicate_labels(self, scope: Scope) -> list[tuple[str, str]]:
        rows = self._read(f"SELECT DISTINCT predicate, kind FROM facts WHERE {SCOPED}", tuple(scope))
        return [(r["predicate"], r["kind"]) for r in rows]

    # -- vectors filled in later ------------------------------------------------------------------
    def pending(self, kind: str, limit: int, project: str | None = None, environment: str | None = None,
                dataset: str | None = None) -> list[tuple[Scope, str, str]]:
        table, key, text = VECTOR_TABLES[kind]
        where, params = self._given([("project", project), ("environment", environment), ("dataset", dataset)])
        rows = self._read(f"SELECT project, environment, dataset, {key} AS key, {text} AS text FROM {table}"
                          f" WHERE {' AND '.join(['embedding IS NULL', *where])}"
                          f" ORDER BY {self.dialect.row_order} LIMIT ?", (*params, limit))
        return [(Scope(r["project"], r["environment"], r["dataset"]), r["key"], r["text"]) for r in rows]

    def set_vector(self, kind: str, scope: Scope, key_value: str, text_value: str, vector: np.ndarray) -> bool:
        self._check(vector)
        table, key, text = VECTOR_TABLES[kind]
        done = self._write(f"UPDATE {table} SET embedding = ? WHERE {SCOPED} AND {key} = ? AND {text} = ?",
                           (self._vector_value(vector), *scope, key_value, text_value)) == 1
        self._changed(scope)
        return done

    # -- datasets --------------------------------------------------------------------------------
    def usage(self, scope: Scope) -> int:
        rows = self._read(f"SELECT chars FROM usage WHERE {SCOPED}", tuple(scope))
        return int(rows[0]["chars"]) if rows else 0

    def count_rows(self, scope: Scope) -> dict[str, int]:
        return {table: self._read(f"SELECT count(*) AS n FROM {table} WHERE {SCOPED}", tuple(scope))[0]["n"]
                for table in DATASET_ROWS}

    def delete_dataset(self, scope: Scope) -> dict[str, int]:
        with self.transaction(scope):
            counts = {table: self._write(f"DELETE FROM {table} WHERE {SCOPED}", tuple(scope)) for table in DATASET_ROWS}
            # The usage row stays, emptied: its change version keeps counting up, so no process's cached
            # matrices of the erased dataset can match a later version of a new one by the same name.
            self._write(f"UPDATE usage SET chars = 0 WHERE {SCOPED}", tuple(scope))
        self._changed(scope)
        self._drop_cached(scope)
        self._scrub()
        return counts

    def _scrub(self) -> None:
        """After rows were deleted for good: what a backend must do so their words leave its files too
        (SQLite: merge the keyword indexes, checkpoint the WAL). Nothing by default."""

    def delete_messages(self, scope: Scope, episode_ids: Sequence[str] | None = None, *,
                        chat: str | None = None) -> dict[str, int]:
        with self.transaction(scope):
            if episode_ids is None:
                rows = self._read(f"SELECT episode_id FROM episodes WHERE {SCOPED} AND chat = ?", (*scope, chat))
                episode_ids = [r["episode_id"] for r in rows]
            ids = list(dict.fromkeys(episode_ids))
            queued = 0
            if chat is not None:   # its turns still queued: a worker would bring them back
                queued = self._write(f"DELETE FROM jobs WHERE {SCOPED} AND status IN ('queued', 'distilling')"
                                     f" AND {self.dialect.json_text('payload', 'chat')} = ?", (*scope, chat))
            if not ids:
                if queued:
                    self._changed(scope)
                return {"messages": 0, "facts": 0, "entities": 0, "jobs": queued, "restored": 0}
            cited, cited_params = self.dialect.any_of("episode_id", ids)
            gone = {r["fact_id"]: r for r in self._read(
                f"SELECT fact_id, valid_at, invalid_at, superseded_by, entity_id FROM facts WHERE {SCOPED} AND {cited}",
                (*scope, *cited_params))}
            restored = len(self._mend_history(scope, gone)) if gone else 0
            facts = entities = 0
            if gone:
                among, params = self.dialect.any_of("fact_id", list(gone))
                facts = self._write(f"DELETE FROM facts WHERE {SCOPED} AND {among}", (*scope, *params))
                named = list({r["entity_id"] for r in gone.values() if r["entity_id"]})
                if named:   # an entity no fact names any more goes with them (its name is what was said)
                    among, params = self.dialect.any_of("e.entity_id", named)
                    entities = self._write(
                        f"DELETE FROM entities AS e WHERE e.project = ? AND e.environment = ? AND e.dataset = ? AND {among}"
                        " AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.project = e.project AND"
                        " f.environment = e.environment AND f.dataset = e.dataset AND f.entity_id = e.entity_id)",
                        (*scope, *params))
            # The turns that carried them: a queued one would bring its message back, a done one keeps its words.
            sent, sent_params = self.dialect.any_of(self.dialect.json_text("payload", "message_id"), ids)
            kept, kept_params = self.dialect.any_of(self.dialect.json_text("result", "episode_id"), ids)
            jobs = self._write(f"DELETE FROM jobs WHERE {SCOPED} AND ({sent} OR {kept})",
                               (*scope, *sent_params, *kept_params))
            among, params = self.dialect.any_of("episode_id", ids)
            messages = self._write(f"DELETE FROM episodes WHERE {SCOPED} AND {among}", (*scope, *params))
        self._changed(scope)
        self._scrub()
        return {"messages": messages, "facts": facts, "entities": entities, "jobs": jobs + queued,
                "restored": restored}

    def _mend_history(self, scope: Scope, gone: dict[str, Mapping]) -> list[str]:
        """Before the facts in ``gone`` are removed: what each superseded takes its place again when it was
        the live value (no later value exists), or points at what superseded it. Returns the facts restored."""
        among, params = self.dialect.any_of("superseded_by", list(gone))
        restored: list[str] = []
        for row in self._read(f"SELECT fact_id, predicate, object, valid_until, superseded_by FROM facts"
                              f" WHERE {SCOPED} AND {among}", (*scope, *params)):
            if row["fact_id"] in gone:
                continue
            successor = gone[row["superseded_by"]]
            while successor["superseded_by"] in gone:   # a chain of removed values: follow it to its end
                successor = gone[successor["superseded_by"]]
            if successor["superseded_by"] is not None:   # a later value stays: it now supersedes this one
                self._write(f"UPDATE facts SET superseded_by = ? WHERE {SCOPED} AND fact_id = ?",
                            (successor["superseded_by"], *scope, row["fact_id"]))
                continue
            live = self._read(f"SELECT 1 FROM facts WHERE {SCOPED} AND predicate = ? AND object = ?"
                              " AND invalid_at IS NULL LIMIT 1", (*scope, row["predicate"], row["object"]))
            if successor["invalid_at"] is not None or live:   # what replaced it was deleted, or it lives on
                self._write(f"UPDATE facts SET superseded_by = NULL WHERE {SCOPED} AND fact_id = ?",
                            (*scope, row["fact_id"]))
                continue
            ended = row["valid_until"] is not None and row["valid_until"] == successor["valid_at"]
            self._write("UPDATE facts SET invalid_at = NULL, superseded_by = NULL"
                        f"{', valid_until = NULL' if ended else ''} WHERE {SCOPED} AND fact_id = ?",
                        (*scope, row["fact_id"]))
            restored.append(row["fact_id"])
        return restored

    # -- the job queue ------------------------------------------------------------------------------
    def enqueue(self, job: Job) -> tuple[Job, bool]:
        """Store a job; with a client_ref already queued in its dataset, return that job and False."""
        with self.transaction(job.scope):
            if job.client_ref is not None:
                rows = self._read(f"SELECT {JOB_COLUMNS} FROM jobs WHERE {SCOPED} AND client_ref = ?",
                                  (*job.scope, job.client_ref))
                if rows:
                    return self._job(rows[0]), False
            payload = {"role": job.role, "content": job.content, "chat": job.chat, "at": timeutil.dump(job.at),
                       "temporary": job.temporary, "message_id": job.message_id}
            dump = self.dialect.dump_time
            self._write("INSERT INTO jobs (job_id, project, environment, dataset, client_ref, payload, status,"
                        f" created_at, updated_at, turn) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, {NEXT_TURN})",
                        (job.request_id, *job.scope, job.client_ref, self.dialect.dump_json(payload),
                         dump(job.created_at), dump(job.updated_at), *job.scope))
        return job, True

    def finish(self, request_id: str, worker: str, result: dict | None, error: str | None = None) -> None:
        """Mark a job done (or failed); refuses unless ``worker`` still holds its lease, so work a
        reclaimed job did twice commits once. Call inside the transaction that applied its effects."""
        status = "failed" if error is not None else "done"
        # A done job keeps its receipt, not its words: the message (if kept) holds them, and a turn of a
        # temporary chat must leave nothing. A failed one keeps them for its retry.
        payload = "payload" if status == "failed" else self.dialect.json_blank("payload", "content")
        touched = self._write(f"UPDATE jobs SET status = ?, result = ?, error = ?, lease_owner = NULL, payload = {payload},"
                              " lease_until = NULL, updated_at = ? WHERE job_id = ? AND status = 'distilling'"
                              " AND lease_owner = ?",
                              (status, self.dialect.dump_json(result) if result is not None else None, error,
                               self.dialect.dump_time(timeutil.now()), request_id, worker))
        if touched != 1:
            raise LeaseLost(f"job {request_id} is no longer leased to {worker}; its work is rolled back")

    def renew(self, worker: str, request_ids: list[str], lease_seconds: float, now: datetime) -> set[str]:
        """Extend the leases ``worker`` still holds among ``request_ids`` (a worker's heartbeat while its
        batch runs). A lease that ran out but that no other worker took is still the worker's, as
        ``finish`` would also accept it."""
        if not request_ids:
            return set()
        among, params = self.dialect.any_of("job_id", request_ids)
        rows = self._read(f"UPDATE jobs SET lease_until = ? WHERE {among} AND status = 'distilling'"
                          " AND lease_owner = ? RETURNING job_id",
                          (self.dialect.dump_time(now + timedelta(seconds=lease_seconds)), *params, worker))
        return {r["job_id"] for r in rows}

    def retry_failed(self, project: str | None = None, environment: str | None = None,
                     dataset: str | None = None) -> int:
        where, params = self._given([("project", project), ("environment", environment), ("dataset", dataset)])
        where.insert(0, "status = 'failed'")
        # Its attempts start again: a job that failed because its workers kept dying would else be given up
        # again at its next claim, without a run.
        return self._write("UPDATE jobs SET status = 'queued', attempts = 0, lease_owner = NULL, lease_until = NULL,"
                           f" updated_at = ? WHERE {' AND '.join(where)}",
                           (self.dialect.dump_time(timeutil.now()), *params))

    def count_jobs(self, statuses: tuple[str, ...], project: str | None = None,
                   environment: str | None = None, dataset: str | None = None) -> int:
        among, params = self.dialect.any_of("status", statuses)
        where, more = self._given([("project", project), ("environment", environment), ("dataset", dataset)])
        return self._read(f"SELECT count(*) AS n FROM jobs WHERE {' AND '.join([among, *where])}",
                          (*params, *more))[0]["n"]

    def list_jobs(self, project: str, environment: str, dataset: str | None = None, status: str | None = None,
                  limit: int = 50, offset: int = 0) -> list[Job]:
        where, params = self._given([("project", project), ("environment", environment), ("dataset", dataset),
                                     ("status", status)])
        rows = self._read(f"SELECT {JOB_COLUMNS} FROM jobs WHERE {' AND '.join(where)}"
                          " ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?", (*params, limit, offset))
        return [self._job(r) for r in rows]

    # -- core files ---------------------------------------------------------------------------
    def core_get(self, scope: Scope, namespace: str, path: str) -> CoreFile | None:
        rows = self._read(f"SELECT * FROM core_files WHERE {SCOPED} AND namespace = ? AND path = ?",
                          (*scope, namespace, path))
        return self._core(rows[0]) if rows else None

    def core_list(self, scope: Scope, namespace: str) -> list[CoreFile]:
        rows = self._read(f"SELECT * FROM core_files WHERE {SCOPED} AND namespace = ?"
                          f" ORDER BY path{self.dialect.code_point_order}", (*scope, namespace))
        return [self._core(r) for r in rows]

    def core_count(self, scope: Scope, namespace: str) -> int:
        return self._read(f"SELECT count(*) AS n FROM core_files WHERE {SCOPED} AND namespace = ?",
                          (*scope, namespace))[0]["n"]

    def _prune_versions(self, scope: Scope, namespace: str, path: str, newest: int, keep: int | None) -> None:
        if keep is not None:
            self._write(f"DELETE FROM core_file_versions WHERE {SCOPED} AND namespace = ? AND path = ? AND version <= ?",
                        (*scope, namespace, path, newest - keep))

    def core_put(self, scope: Scope, namespace: str, path: str, content: str, op: str,
                 keep: int | None = None) -> CoreFile:
        """Write a file at the next version of its path (versions never repeat, deletions included)."""
        now = self.dialect.dump_time(timeutil.now())
        with self.transaction(scope):
            last = self._read(f"SELECT max(version) AS v FROM core_file_versions WHERE {SCOPED} AND namespace = ?"
                              " AND path = ?", (*scope, namespace, path))[0]["v"] or 0
            self._write("INSERT INTO core_files (project, environment, dataset, namespace, path, content, version,"
                        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project,"
                        " environment, dataset, namespace, path) DO UPDATE SET content = excluded.content,"
                        " version = excluded.version, updated_at = excluded.updated_at",
                        (*scope, namespace, path, content, last + 1, now, now))
            self._write("INSERT INTO core_file_versions (project, environment, dataset, namespace, path, version,"
                        " content, op, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (*scope, namespace, path, last + 1, content, op, now))
            self._prune_versions(scope, namespace, path, last + 1, keep)
            return self.core_get(scope, namespace, path)

    def core_delete(self, scope: Scope, namespace: str, path: str, op: str = "delete", keep: int | None = None) -> None:
        with self.transaction(scope):
            found = self.core_get(scope, namespace, path)
            if found is None:
                return
            self._write(f"DELETE FROM core_files WHERE {SCOPED} AND namespace = ? AND path = ?",
                        (*scope, namespace, path))
            self._write("INSERT INTO core_file_versions (project, environment, dataset, namespace, path, version,"
                        " content, op, at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                        (*scope, namespace, path, found.version + 1, op, self.dialect.dump_time(timeutil.now())))
            self._prune_versions(scope, namespace, path, found.version + 1, keep)

    def core_history(self, scope: Scope, namespace: str, path: str, limit: int | None = None, offset: int = 0,
                     newest_first: bool = False) -> list[CoreFileVersion]:
        page = "" if limit is None else " LIMIT ? OFFSET ?"
        rows = self._read(f"SELECT * FROM core_file_versions WHERE {SCOPED} AND namespace = ? AND path = ?"
                          f" ORDER BY version{' DESC' if newest_first else ''}{page}",
                          (*scope, namespace, path, *(() if limit is None else (limit, offset))))
        return [CoreFileVersion(path=r["path"], namespace=r["namespace"], version=r["version"], content=r["content"],
                                op=r["op"], at=self.dialect.load_time(r["at"])) for r in rows]

    def _core(self, r: Mapping) -> CoreFile:
        load = self.dialect.load_time
        return CoreFile(path=r["path"], namespace=r["namespace"], content=r["content"], version=r["version"],
                        created_at=load(r["created_at"]), updated_at=load(r["updated_at"]))

    # -- documents ------------------------------------------------------------------------------
    def doc_get(self, project: str, environment: str, scope_key: str, path: str, now: datetime) -> Document | None:
        rows = self._read("SELECT * FROM documents WHERE project = ? AND environment = ? AND scope_key = ?"
                          " AND path = ? AND (expires_at IS NULL OR expires_at > ?)",
                          (project, environment, scope_key, path, self.dialect.dump_time(now)))
        return self._document(rows[0]) if rows else None

    def doc_put(self, project: str, environment: str, scope_key: str, path: str, text: str,
                expected_version: int | None, expires_at: datetime | None, now: datetime) -> Document:
        dump = self.dialect.dump_time
        with self._document_lock((project, environment, scope_key, path)):
            current = self.doc_get(project, environment, scope_key, path, now)
            have = current.version if current else None
            if have != expected_version:
                raise DocumentConflict(
                    f"document {scope_key}:{path} is at version {have if have is not None else 'none (absent)'}, "
                    f"not {expected_version if expected_version is not None else 'absent'}; read it and retry")
            old = self._read("SELECT version FROM documents WHERE project = ? AND environment = ? AND scope_key = ?"
                             " AND path = ?", (project, environment, scope_key, path))
            version = (old[0]["version"] if old else 0) + 1
            self._write("INSERT INTO documents (project, environment, scope_key, path, text, version, expires_at,"
                        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (project, environment, scope_key, path) DO UPDATE SET text = excluded.text,"
                        " version = excluded.version, expires_at = excluded.expires_at, updated_at = excluded.updated_at",
                        (project, environment, scope_key, path, text, version, dump(expires_at), dump(now), dump(now)))
            return self.doc_get(project, environment, scope_key, path, now)

    def doc_list(self, project: str, environment: str, scope_key: str, prefix: str, now: datetime) -> list[Document]:
        rows = self._read("SELECT * FROM documents WHERE project = ? AND environment = ? AND scope_key = ?"
                          " AND substr(path, 1, ?) = ? AND (expires_at IS NULL OR expires_at > ?)"
                          f" ORDER BY path{self.dialect.code_point_order}",
                          (project, environment, scope_key, len(prefix), prefix, self.dialect.dump_time(now)))
        return [self._document(r) for r in rows]

    def doc_delete(self, project: str, environment: str, scope_key: str, path: str, now: datetime) -> bool:
        """Delete a live document; an expired one is already gone (purge removes its row)."""
        return self._write("DELETE FROM documents WHERE project = ? AND environment = ? AND scope_key = ?"
                           " AND path = ? AND (expires_at IS NULL OR expires_at > ?)",
                           (project, environment, scope_key, path, self.dialect.dump_time(now))) == 1

    def doc_purge(self, now: datetime, project: str | None = None, environment: str | None = None) -> int:
        where, params = ["expires_at IS NOT NULL", "expires_at <= ?"], [self.dialect.dump_time(now)]
        for column, value in (("project", project), ("environment", environment)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        return self._write(f"DELETE FROM documents WHERE {' AND '.join(where)}", tuple(params))

    def _document(self, r: Mapping) -> Document:
        load = self.dialect.load_time
        return Document(scope_key=r["scope_key"], path=r["path"], text=r["text"], version=r["version"],
                        expires_at=load(r["expires_at"]), created_at=load(r["created_at"]),
                        updated_at=load(r["updated_at"]))




