"""Erasure in SQL, written once for both stores (``SQLStore`` mixes it in).

The statements remove or rewrite rows; what makes their bytes leave the files (SQLite's secure delete,
FTS merge and WAL truncation; PostgreSQL's table rewrite) is each backend's ``compact``.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .. import timeutil
from ..model import Fact, Scope
from .base import ErasurePlan, Found
from .rows import FACT_COLUMNS, fact_of

SCOPED = "project = ? AND environment = ? AND dataset = ?"
# How long compaction waits for what another connection holds (a PostgreSQL table's lock, a SQLite reader's
# snapshot) before it leaves the erasure pending rather than hold every writer behind it.
ERASE_WAIT_SECONDS = 5
# The tables an erasure can touch, for compaction (documents are placed by scope key, not dataset).
ERASABLE_TABLES = ("facts", "entities", "episodes", "notes", "core_files", "core_file_versions", "jobs", "documents")


class SQLErasure:
    """The ErasureStore contract over ``_read``/``_write`` and the dialect (see kenning.store.sql)."""

    def slot_versions(self, scope: Scope, fact_ids: Sequence[str]) -> list[Fact]:
        if not fact_ids:
            return []
        among, params = self.dialect.any_of("g.fact_id", list(fact_ids))
        rows = self._read(f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.project = ? AND f.environment = ?"
                          " AND f.dataset = ? AND EXISTS (SELECT 1 FROM facts g WHERE g.project = f.project"
                          " AND g.environment = f.environment AND g.dataset = f.dataset AND g.predicate = f.predicate"
                          f" AND g.object = f.object AND {among}) ORDER BY f.valid_at, f.{self.dialect.row_order}",
                          (*scope, *params))
        return [fact_of(r) for r in rows]

    def containing(self, scope: Scope, text: str, document_scopes: Sequence[str] = ()) -> list[Found]:
        has = self.dialect.contains
        found: list[Found] = []
        for r in self._read(f"SELECT fact_id, text, object, source_quote FROM facts WHERE {SCOPED} AND"
                            f" ({has('text')} OR {has('object')} OR {has('source_quote')})",
                            (*scope, text, text, text)):
            found.append(Found("fact", r["fact_id"], r["text"]))
        for r in self._read(f"SELECT episode_id, content FROM episodes WHERE {SCOPED} AND {has('content')}",
                            (*scope, text)):
            found.append(Found("message", r["episode_id"], r["content"]))
        for r in self._read(f"SELECT note_id, text FROM notes WHERE {SCOPED} AND {has('text')}", (*scope, text)):
            found.append(Found("note", r["note_id"], r["text"]))
        folded = text.casefold()
        for e in self.entities(scope):   # aliases are a JSON list: read them as values, not as JSON text
            if folded in e.name.casefold() or any(folded in a.casefold() for a in e.aliases):
                found.append(Found("entity", e.entity_id, e.name))
        for r in self._read(f"SELECT namespace, path, content FROM core_files WHERE {SCOPED} AND {has('content')}",
                            (*scope, text)):
            found.append(Found("core_file", f"{r['namespace']}:{r['path']}", r["content"], (r["namespace"], r["path"])))
        for r in self._read(f"SELECT namespace, path, version, content FROM core_file_versions WHERE {SCOPED}"
                            f" AND content IS NOT NULL AND {has('content')} ORDER BY namespace, path, version",
                            (*scope, text)):
            found.append(Found("core_file_version", f"{r['namespace']}:{r['path']}@{r['version']}", r["content"],
                               (r["namespace"], r["path"], r["version"])))
        content = self.dialect.json_text("payload", "content")
        for r in self._read(f"SELECT job_id, {content} AS content FROM jobs WHERE {SCOPED} AND {has(content)}",
                            (*scope, text)):
            found.append(Found("job", r["job_id"], r["content"]))
        if document_scopes:
            among, params = self.dialect.any_of("scope_key", list(document_scopes))
            for r in self._read(f"SELECT scope_key, path, text FROM documents WHERE project = ? AND environment = ?"
                                f" AND {among} AND {has('text')}", (scope.project, scope.environment, *params, text)):
                found.append(Found("document", f"{r['scope_key']}:{r['path']}", r["text"], (r["scope_key"], r["path"])))
        return found

    def erase(self, scope: Scope, plan: ErasurePlan) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        with self.transaction(scope):
            named: set[str] = set(plan.entities)
            if plan.facts:
                among, params = self.dialect.any_of("fact_id", list(dict.fromkeys(plan.facts)))
                gone = {r["fact_id"]: r for r in self._read(
                    f"SELECT fact_id, valid_at, invalid_at, superseded_by, entity_id FROM facts WHERE {SCOPED}"
                    f" AND {among}", (*scope, *params))}
                if gone:
                    out["restored"] = self._mend_history(scope, gone)
                    among, params = self.dialect.any_of("fact_id", list(gone))
                    self._write(f"DELETE FROM facts WHERE {SCOPED} AND {among}", (*scope, *params))
                    named |= {r["entity_id"] for r in gone.values() if r["entity_id"]}
                out["facts"] = list(gone)
            for fact_id, quote in plan.quotes.items():
                self._write(f"UPDATE facts SET source_quote = ? WHERE {SCOPED} AND fact_id = ?", (quote, *scope, fact_id))
            carried = list(dict.fromkeys([*plan.messages, *plan.job_messages]))
            jobs: list[str] = []
            if carried:   # the turns that carried them, queued or done: a job keeps its message's words
                sent, sent_params = self.dialect.any_of(self.dialect.json_text("payload", "message_id"), carried)
                kept, kept_params = self.dialect.any_of(self.dialect.json_text("result", "episode_id"), carried)
                jobs += [r["job_id"] for r in self._read(f"SELECT job_id FROM jobs WHERE {SCOPED} AND ({sent} OR {kept})",
                                                         (*scope, *sent_params, *kept_params))]
            jobs = list(dict.fromkeys([*jobs, *plan.jobs]))
            if jobs:
                among, params = self.dialect.any_of("job_id", jobs)
                self._write(f"DELETE FROM jobs WHERE {SCOPED} AND {among}", (*scope, *params))
                out["jobs"] = jobs
            for episode_id, (content, embed_text, vector) in plan.redactions.items():
                if episode_id in plan.messages:
                    continue
                self._check(vector)
                if self._write(f"UPDATE episodes SET content = ?, embed_text = ?, embedding = ? WHERE {SCOPED}"
                               " AND episode_id = ?", (content, embed_text, self._vector_value(vector), *scope,
                                                       episode_id)):
                    self._message_rewritten(scope, episode_id)
                    out.setdefault("redacted", []).append(episode_id)
            if plan.messages:
                among, params = self.dialect.any_of("episode_id", list(dict.fromkeys(plan.messages)))
                out["messages"] = [r["episode_id"] for r in self._read(
                    f"SELECT episode_id FROM episodes WHERE {SCOPED} AND {among}", (*scope, *params))]
                self._write(f"DELETE FROM episodes WHERE {SCOPED} AND {among}", (*scope, *params))
                out["ingests"] = self._forget_ingests(scope, out["messages"])
            if plan.notes:
                among, params = self.dialect.any_of("note_id", list(dict.fromkeys(plan.notes)))
                out["notes"] = [r["note_id"] for r in self._read(f"SELECT note_id FROM notes WHERE {SCOPED} AND {among}",
                                                                 (*scope, *params))]
                self._write(f"DELETE FROM notes WHERE {SCOPED} AND {among}", (*scope, *params))
                # a forgotten note that named an erased one as its successor names none (it stays forgotten)
                if out["notes"]:
                    among, params = self.dialect.any_of("superseded_by", out["notes"])
                    self._write(f"UPDATE notes SET superseded_by = NULL WHERE {SCOPED} AND {among}", (*scope, *params))
            for (namespace, path), content in plan.core.items():
                if self._write(f"UPDATE core_files SET content = ? WHERE {SCOPED} AND namespace = ? AND path = ?",
                               (content, *scope, namespace, path)):
                    out.setdefault("core_files", []).append(f"{namespace}:{path}")
            for (namespace, path, version), content in plan.core_versions.items():
                if self._write(f"UPDATE core_file_versions SET content = ? WHERE {SCOPED} AND namespace = ?"
                               " AND path = ? AND version = ?", (content, *scope, namespace, path, version)):
                    out.setdefault("core_file_versions", []).append(f"{namespace}:{path}@{version}")
            for scope_key, path in plan.documents:
                if self._write("DELETE FROM documents WHERE project = ? AND environment = ? AND scope_key = ?"
                               " AND path = ?", (scope.project, scope.environment, scope_key, path)):
                    out.setdefault("documents", []).append(f"{scope_key}:{path}")
            if plan.aliases is not None:
                folded = plan.aliases.casefold()
                for e in self.entities(scope):
                    keep = [a for a in e.aliases if folded not in a.casefold()]
                    if len(keep) != len(e.aliases):
                        self._write(f"UPDATE entities SET aliases = ? WHERE {SCOPED} AND entity_id = ?",
                                    (self.dialect.dump_json(keep), *scope, e.entity_id))
            if named:   # an entity no fact names any more goes (its name is what was said)
                among, params = self.dialect.any_of("e.entity_id", sorted(named))
                unnamed = ("e.project = ? AND e.environment = ? AND e.dataset = ? AND " + among +
                           " AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.project = e.project AND"
                           " f.environment = e.environment AND f.dataset = e.dataset AND f.entity_id = e.entity_id)")
                out["entities"] = [r["entity_id"] for r in self._read(
                    f"SELECT e.entity_id FROM entities e WHERE {unnamed}", (*scope, *params))]
                if out["entities"]:
                    self._write(f"DELETE FROM entities AS e WHERE {unnamed}", (*scope, *params))
            self._changed(scope)
        self._drop_cached(scope)
        return {kind: ids for kind, ids in out.items() if ids}

    def _forget_ingests(self, scope: Scope, episode_ids: list[str]) -> list[str]:
        """Drop the idempotency receipts (``client_ref``) of erased messages: else sending the message again
        would be answered "already ingested", with the erased ids, and keep nothing. Found by the receipt's
        text (``record_ingest`` writes it with ``json.dumps``), then read to be sure."""
        refs = []
        for episode_id in episode_ids:
            needle = f'"episode_id": {json.dumps(episode_id)}'
            needle = needle.replace("!", "!!").replace("%", "!%").replace("_", "!_")
            rows = self._read(f"SELECT client_ref, receipt FROM ingests WHERE {SCOPED} AND receipt LIKE ? ESCAPE '!'",
                              (*scope, f"%{needle}%"))
            refs += [r["client_ref"] for r in rows if json.loads(r["receipt"]).get("episode_id") == episode_id]
        if refs:
            among, params = self.dialect.any_of("client_ref", refs)
            self._write(f"DELETE FROM ingests WHERE {SCOPED} AND {among}", (*scope, *params))
        return refs

    def _message_rewritten(self, scope: Scope, episode_id: str) -> None:
        """A message's content was rewritten in place: a backend whose keyword index is not derived from the
        row by itself (SQLite's FTS5) rebuilds the message's entry."""

    def log_erasure(self, project: str, environment: str, record: Mapping) -> None:
        self._write("INSERT INTO erasures (project, environment, dataset, erasure_id, kind, at, record)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (project, environment, record["dataset"], record["erasure_id"], record["kind"],
                     self.dialect.dump_time(timeutil.load(record["at"])), self.dialect.dump_json(dict(record))))

    def erasures(self, project: str, environment: str, dataset: str | None, limit: int,
                 offset: int) -> tuple[list[dict], int]:
        where, params = "project = ? AND environment = ?", (project, environment)
        if dataset is not None:
            where, params = f"{where} AND dataset = ?", (*params, dataset)
        total = self._read(f"SELECT count(*) AS n FROM erasures WHERE {where}", params)[0]["n"]
        rows = self._read(f"SELECT record, compacted_at FROM erasures WHERE {where}"
                          f" ORDER BY at DESC, erasure_id{self.dialect.code_point_order} LIMIT ? OFFSET ?",
                          (*params, limit, offset))
        out = []
        for r in rows:
            record = self.dialect.load_json(r["record"])
            compacted = self.dialect.load_time(r["compacted_at"])
            record["compacted_at"] = timeutil.dump(compacted) if compacted is not None else None
            out.append(record)
        return out, total

    def _compacted(self) -> None:
        """The log's entries waiting for compaction are done."""
        self._write("UPDATE erasures SET compacted_at = ? WHERE compacted_at IS NULL",
                    (self.dialect.dump_time(timeutil.now()),))
