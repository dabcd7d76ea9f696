"""The export record format: for each kind of row, the column that places it and its typed fields.

Shared by kenning.transfer (which checks and writes records) and the stores (which read and write the
rows), so a backend depends on the format and not on the export machinery.
"""
from __future__ import annotations

S, S_, I, F, B, T, T_, L, O = "str", "str?", "int", "float", "bool", "time", "time?", "list", "object"
# kind -> (the column that places the row in its project, {stored field: type}), in export order.
RECORDS: dict[str, tuple[str, dict[str, str]]] = {
    "fact": ("dataset", {
        "fact_id": S, "subject": S, "predicate": S, "object": S, "object_is_entity": B, "entity_id": S_,
        "entity_type": S_, "text": S, "kind": S, "confidence": F, "source_quote": S, "valid_at": T,
        "valid_until": T_, "invalid_at": T_, "superseded_by": S_, "episode_id": S_, "created_at": T,
        "embed_text": S}),
    "entity": ("dataset", {"entity_id": S, "name": S, "type": S, "aliases": L, "created_at": T}),
    "episode": ("dataset", {"episode_id": S, "role": S, "chat": S_, "content": S, "context": S, "embed_text": S_,
                            "at": T, "created_at": T}),
    "ingest": ("dataset", {"client_ref": S, "receipt": O, "created_at": T}),
    "note": ("dataset", {"note_id": S, "namespace": S, "text": S, "created_at": T, "forgotten_at": T_,
                         "superseded_by": S_}),
    "core_file_version": ("dataset", {"namespace": S, "path": S, "version": I, "content": S_, "op": S, "at": T}),
    "core_file": ("dataset", {"namespace": S, "path": S, "content": S, "version": I, "created_at": T,
                              "updated_at": T}),
    "document": ("scope_key", {"path": S, "text": S, "version": I, "expires_at": T_, "created_at": T,
                               "updated_at": T}),
}
