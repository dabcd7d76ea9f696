"""The tables' shared column lists and the row → model conversions both stores use.

SQLite hands back times as ISO text, JSON as text and booleans as integers; PostgreSQL hands back
``datetime``, decoded ``jsonb`` and ``bool``. The loaders here accept either, so one conversion per
model serves both backends.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone

from .. import timeutil
from ..model import Entity, Episode, Fact, Note

FACT_COLUMNS = ("f.fact_id, f.subject, f.predicate, f.object, f.object_is_entity, f.entity_type, f.text, f.kind,"
                " f.confidence, f.source_quote, f.valid_at, f.valid_until, f.invalid_at, f.superseded_by,"
                " f.episode_id, f.created_at")
EPISODE_COLUMNS = "episode_id, role, content, chat, at, created_at"
NOTE_COLUMNS = "note_id, text, namespace, created_at, forgotten_at, superseded_by"
ENTITY_COLUMNS = "entity_id, name, type, aliases, created_at"
JOB_COLUMNS = ("job_id, project, environment, dataset, client_ref, payload, status, attempts, error, result,"
               " created_at, updated_at")
VECTOR_TABLES = {  # kind -> (table, key column, the text a vector is computed from)
    "fact": ("facts", "fact_id", "embed_text"),
    "entity": ("entities", "entity_id", "name"),
    "episode": ("episodes", "episode_id", "embed_text"),
    "note": ("notes", "note_id", "text"),
}
EXPORT_TABLES = {"fact": "facts", "entity": "entities", "episode": "episodes", "ingest": "ingests", "note": "notes",
                 "core_file": "core_files", "core_file_version": "core_file_versions", "document": "documents"}


def load_time(value) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    return timeutil.load(value)


def load_json(value):
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def episode_of(r: Mapping) -> Episode:
    return Episode(episode_id=r["episode_id"], role=r["role"], content=r["content"], chat=r["chat"],
                   at=load_time(r["at"]), created_at=load_time(r["created_at"]))


def note_of(r: Mapping) -> Note:
    return Note(note_id=r["note_id"], text=r["text"], namespace=r["namespace"], created_at=load_time(r["created_at"]),
                forgotten_at=load_time(r["forgotten_at"]), superseded_by=r["superseded_by"])


def entity_of(r: Mapping) -> Entity:
    return Entity(entity_id=r["entity_id"], name=r["name"], type=r["type"], aliases=load_json(r["aliases"]),
                  created_at=load_time(r["created_at"]))


def fact_of(r: Mapping) -> Fact:
    return Fact(
        fact_id=r["fact_id"], subject=r["subject"], predicate=r["predicate"], object=r["object"],
        object_is_entity=bool(r["object_is_entity"]), entity_type=r["entity_type"], text=r["text"],
        kind=r["kind"], confidence=r["confidence"], source_quote=r["source_quote"],
        valid_at=load_time(r["valid_at"]), valid_until=load_time(r["valid_until"]),
        invalid_at=load_time(r["invalid_at"]), superseded_by=r["superseded_by"],
        episode_id=r["episode_id"], created_at=load_time(r["created_at"]))
