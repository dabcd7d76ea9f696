"""Export and import: a tenant's memory as JSON lines, and back, without losing anything.

An export is a header line, then one record per stored row: every fact (superseded,
deleted and future ones too), entity (with its aliases), message (episode, with the
context and text its vector reads), idempotency record (ingest of a ``client_ref``),
note (forgotten ones too), core file and every version of its history, and document
(with its version and expiry, expired ones too)::

    {"kind": "kenning-export", "version": 1, "embedding_model": "…", "dim": 384, "vectors": false}
    {"kind": "fact", "project": "app", "environment": "default", "dataset": "sam", "fact_id": "…", …}

A record holds the row's stored fields under their stored names (a fact's own ``kind``
travels as ``fact_kind``), times as the fixed-width UTC text the stores sort by, so exporting an imported store gives the same
lines again. Vectors travel only when asked for (``"vector"``: base64 of float32);
without them imported rows are pending and ``embed_pending()`` computes them.

Import checks the whole export before it writes anything: a malformed line raises
:class:`~kenning.errors.InputError` naming it and nothing is written. The checked records wait in a
temporary file, then go in batch by batch, each batch its own transaction, so an import of any size
holds the store's write lock (SQLite's one writer) a batch at a time and other tenants' writes go in
between (before, 40 MB held every tenant's writes for 4.8 s). PostgreSQL, whose writers of other
datasets never wait for a store-wide transaction, may join the batches into one (``Store.bulk``). Should
the store refuse a row mid-way (say, a live fact twin of one it holds), the batches before it stay, the
error names the line, and importing the same file again after fixing it completes the rest. Imported rows pass the rules live writes pass (text sizes, the
canonical ``/memories`` path of a core file, identifier lengths, valid Unicode), so an export cannot
plant what the API would have refused. A row whose key the store already holds is kept as it
is and counted as skipped, so importing the same export twice changes nothing. This
module is I/O free apart from the :class:`~kenning.store.base.Store` calls.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import pickle
import queue
import tempfile
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import timeutil
from .core_files import ROOT, canonical
from .documents import check_name as check_document_key
from .errors import DimensionMismatch, EmbeddingError, InputError, KenningError, PermissionDenied, StoreError, TextTooLarge
from .model import SCOPE_NAME
from .notes import ORG_DATASET, check_namespace
from .records import RECORDS, B, F, I, L, O, S, S_, T, T_

if TYPE_CHECKING:
    from .store.base import Store

HEADER_KIND = "kenning-export"
VERSION = 1

KINDS = tuple(RECORDS)
RENAMED = {"kind": "fact_kind"}  # stored name -> record name, where a stored name is one a record uses itself
MAINTAIN_ROWS = 10_000  # an import this large runs the store's upkeep after it (smaller: autovacuum's job)
BATCH_ROWS = 5_000  # records per bulk write: large enough for COPY to pay, small enough to hold in memory
BATCH_CHARS = 1_000_000   # and at most this much export text: one batch holds SQLite's write lock for well under a second
VECTOR_KINDS = ("fact", "entity", "episode", "note")  # the rows that have an embedding


MAX_ID_CHARS = 256   # an id, a name, a chat, a client_ref (live writes hold the same bound)
ID_FIELDS = ("fact_id", "entity_id", "episode_id", "note_id", "client_ref", "chat", "superseded_by", "subject",
             "predicate", "entity_type", "type", "role", "op", "namespace")


class Limits(NamedTuple):
    """The sizes live writes allow (Settings.max_text_chars, max_note_chars, max_core_chars)."""
    text: int = 100_000
    note: int = 100_000
    core: int = 100_000


class Record(NamedTuple):
    kind: str
    project: str
    environment: str
    row: dict            # the placing column and the stored fields, checked
    vector: np.ndarray | None


# -- export ---------------------------------------------------------------------------------

def check_scope(project: str, environment: str, dataset: str | None) -> None:
    """The names an export or import may address; the organization's dataset included."""
    for field, value in (("project", project), ("environment", environment), ("dataset", dataset)):
        if field == "dataset" and value in (None, ORG_DATASET):
            continue
        if not isinstance(value, str) or not SCOPE_NAME.fullmatch(value):
            raise InputError(f"{field} {value!r} is not a valid name: use 1-128 letters, digits and _ . : @ - "
                             "(starting with a letter or digit)")


def export_lines(store: "Store", project: str, environment: str, dataset: str | None,
                 vectors: bool) -> Iterator[str]:
    """The header, then every row of the dataset (or of all, documents included) as JSON lines."""
    vectors = vectors and store.embedding_dim() is not None  # a store that never embedded has none to carry
    yield _line({"kind": HEADER_KIND, "version": VERSION, "embedding_model": store.embedding_model(),
                 "dim": store.embedding_dim(), "vectors": vectors})
    kinds = KINDS if dataset is None else tuple(k for k in KINDS if k != "document")  # documents have no dataset
    for kind, row in store.export_rows(kinds, project, environment, dataset, vectors):
        yield _line(_record(kind, project, environment, row, vectors))


def _record(kind: str, project: str, environment: str, row: dict, vectors: bool) -> dict:
    place, fields = RECORDS[kind]
    record = {"kind": kind, "project": project, "environment": environment, place: row[place]}
    record.update((RENAMED.get(field, field), row[field]) for field in fields)
    if vectors and kind in VECTOR_KINDS:
        vector = row.get("vector")
        record["vector"] = None if vector is None else base64.b64encode(
            np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return record


def _line(obj: dict) -> str:
    # ASCII only: U+2028 and friends stay escaped, so any line splitter reads the lines back.
    return json.dumps(obj, separators=(",", ":")) + "\n"


# -- import ---------------------------------------------------------------------------------

def import_lines(store: "Store", lines: Iterable[str], limits: Limits = Limits(),
                 tenant: tuple[str, str] | None = None) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """Check every record, then write them batch by batch; (counts per kind and ``skipped``, the
    (project, environment) pairs written to). With ``tenant``, a record of any other (project,
    environment) is refused (PermissionDenied) and nothing is written."""
    numbered = ((n, line.strip()) for n, line in enumerate(lines, start=1))
    numbered = ((n, line) for n, line in numbered if line)
    counts = dict.fromkeys(KINDS, 0) | {"skipped": 0}
    tenants: set[tuple[str, str]] = set()
    with tempfile.TemporaryFile(prefix="kenning-import-") as spool:
        try:
            first = next(numbered, None)
            if first is None:
                raise InputError("the export is empty: its first line must be the kenning-export header")
            header = read_header(*first)
            batches = 0
            for batch in _batches(numbered, header, limits, tenant):   # all checked before anything is written
                pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
                batches += 1
            with store.transaction(None):
                _adopt_vectors(store, header)
        except InputError as exc:   # the same kind of refusal (too large stays too large), saying nothing was written
            raise type(exc)(f"{exc}; nothing was imported") from exc
        spool.seek(0)
        try:
            with store.bulk():   # the store may defer the indexes it can (and join the batches into one)
                for batch in _ahead(pickle.load(spool) for _ in range(batches)):
                    with store.transaction(None):   # one batch at a time: the write lock is released between
                        _write(store, batch, counts)
                    tenants.update((r.project, r.environment) for _, r in batch)
        except InputError as exc:
            done = sum(counts.values())
            raise type(exc)(f"{exc}; {done:,} records went in before it (fix the line and import the same file "
                            "again: records already held are skipped)" if done else f"{exc}; nothing was imported") \
                from exc
    if sum(counts.values()) - counts["skipped"] >= MAINTAIN_ROWS:
        store.maintain()   # committed: make the new rows fast to read now (PostgreSQL: VACUUM ANALYZE)
    return counts, tenants


def _batches(numbered, header: dict, limits: Limits,
             tenant: tuple[str, str] | None) -> Iterator[list[tuple[int, Record]]]:
    """The checked records in batches of one kind and tenant, up to BATCH_ROWS records or BATCH_CHARS of text
    each, in their order within the kind: an export whose kinds interleave still goes in as a few large
    writes, not many small ones."""
    open_batches: dict[tuple[str, str, str], list[tuple[int, Record]]] = {}
    sizes: dict[tuple[str, str, str], int] = {}
    for number, line in numbered:
        record = read_record(number, line, header, limits)
        if tenant is not None and (record.project, record.environment) != tenant:
            raise PermissionDenied(f"line {number} belongs to another project or environment; nothing "
                                   "was imported", "ai.admin")
        key = _kind(record)
        batch = open_batches.setdefault(key, [])
        batch.append((number, record))
        sizes[key] = sizes.get(key, 0) + len(line)
        if len(batch) >= BATCH_ROWS or sizes[key] >= BATCH_CHARS:
            del sizes[key]
            yield open_batches.pop(key)
    yield from open_batches.values()


class _Failed(NamedTuple):
    error: BaseException


def _ahead(items: Iterator, depth: int = 2) -> Iterator:
    """``items``, produced on a thread of their own up to ``depth`` ahead: reading and checking the next
    batch (Python) overlaps writing this one (the database's work, during which Python waits). An error
    there is raised here; when the consumer stops early, the producer stops too."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(end)
        except BaseException as exc:   # noqa: BLE001 - handed to the consumer, which raises it
            ready.put(_Failed(exc))

    thread = threading.Thread(target=produce, name="kenning-import-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is end:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)


def _kind(record: Record) -> tuple[str, str, str]:
    return record.kind, record.project, record.environment


def _write(store: "Store", batch: list[tuple[int, Record]], counts: dict[str, int]) -> None:
    """Write consecutive records of one kind and tenant in one bulk call (PostgreSQL: one COPY)."""
    kind, project, environment = _kind(batch[0][1])
    try:
        written = store.import_rows(kind, project, environment, [(r.row, r.vector) for _, r in batch])
    except (StoreError, EmbeddingError) as exc:
        index = getattr(exc, "row_index", None)
        where = (f"line {batch[index][0]}" if index is not None
                 else f"lines {batch[0][0]}-{batch[-1][0]}")
        raise InputError(f"{where}: {kind}: {exc}") from exc
    counts[kind] += written
    counts["skipped"] += len(batch) - written


def _adopt_vectors(store: "Store", header: dict) -> None:
    """Carried vectors must be the target's kind: same dimension, same model (a store without one adopts it)."""
    if not header["vectors"]:
        return
    dim, model = store.embedding_dim(), store.embedding_model()
    if dim is None:
        store.check_embedding_model(header["embedding_model"], header["dim"])
        return
    fix = "export again without --vectors (include_vectors=False) and import with --embed"
    if dim != header["dim"]:
        raise DimensionMismatch(f"the export carries {header['dim']}-dimensional vectors from "
                                f"{header['embedding_model']}, this store holds {dim}-dimensional ones from "
                                f"{model}; {fix}")
    if model != header["embedding_model"]:
        raise EmbeddingError(f"the export carries vectors from {header['embedding_model']}, this store holds "
                             f"vectors from {model}; {fix}")


def _parse(number: int, line: str) -> dict:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise InputError(f"line {number}: not JSON ({exc})") from None
    except RecursionError:   # arrays nested thousands deep: no record is shaped so
        raise InputError(f"line {number}: nested too deeply to be a kenning record") from None
    if not isinstance(obj, dict):
        raise InputError(f"line {number}: expected a JSON object")
    return obj


def read_header(number: int, line: str) -> dict:
    header = _parse(number, line)
    if header.get("kind") != HEADER_KIND:
        raise InputError(f"line {number}: the first line must be the {HEADER_KIND} header; is this a kenning export?")
    if header.get("version") != VERSION:
        raise InputError(f"line {number}: export version {header.get('version')!r} is not one this kenning reads "
                         f"({VERSION}); import it with the kenning that wrote it, or a newer one")
    model, dim, vectors = header.get("embedding_model"), header.get("dim"), header.get("vectors", False)
    if not isinstance(vectors, bool) or not (model is None or isinstance(model, str)) or not (
            dim is None or (isinstance(dim, int) and not isinstance(dim, bool) and dim > 0)):
        raise InputError(f"line {number}: the header's embedding_model, dim or vectors is malformed")
    if vectors and (model is None or dim is None):
        raise InputError(f"line {number}: the header says vectors travel but names no embedding_model and dim")
    return {"embedding_model": model, "dim": dim, "vectors": vectors}


def read_record(number: int, line: str, header: dict, limits: Limits = Limits()) -> Record:
    """One record, checked field by field; InputError naming the line otherwise."""
    obj = _parse(number, line)
    kind = obj.get("kind")
    if kind not in RECORDS:
        raise InputError(f"line {number}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    place, fields = RECORDS[kind]
    carries = header["vectors"] and kind in VECTOR_KINDS
    named = {RENAMED.get(f, f): f for f in fields}  # record name -> stored name
    expected = {"kind", "project", "environment", place, *named} | ({"vector"} if carries else set())
    if set(obj) != expected:
        missing, extra = sorted(expected - set(obj)), sorted(set(obj) - expected)
        raise InputError(f"line {number}: {kind} record " + "; ".join(
            part for part in (f"lacks {', '.join(missing)}" if missing else "",
                              f"has unknown {', '.join(extra)}" if extra else "") if part))
    try:
        check_scope(obj["project"], obj["environment"], obj[place] if place == "dataset" else None)
        row = {place: _key(place, obj[place])} | {f: _value(n, fields[f], obj[n]) for n, f in named.items()}
        _check_names(kind, row)
        _check_like_live_writes(kind, row, limits)
        vector = _vector(obj["vector"], header["dim"]) if carries else None
    except KenningError as exc:
        kind_of = type(exc) if isinstance(exc, InputError) else InputError
        raise kind_of(f"line {number}: {kind}: {exc}") from None
    return Record(kind, obj["project"], obj["environment"], row, vector)


def _key(place: str, value) -> str:
    if place == "scope_key":
        return check_document_key("scope_key", value)
    return value


def _check_names(kind: str, row: dict) -> None:
    if "namespace" in row:
        check_namespace(row["namespace"])
    if kind == "document":
        check_document_key("path", row["path"])


def _check_like_live_writes(kind: str, row: dict, limits: Limits) -> None:
    """What the API refuses, import refuses too: oversize text, long identifiers, a core-file path that is
    not the canonical /memories path a live write stores (``/etc/passwd``, ``/memories/../x``), text that
    is no Unicode (half a surrogate pair)."""
    for field, value in row.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(f"{field} holds half a UTF-16 surrogate pair, which is no text") from None
            if field in ID_FIELDS and len(value) > MAX_ID_CHARS:
                raise InputError(f"{field} is {len(value):,} characters; at most {MAX_ID_CHARS}")
    if kind in ("core_file", "core_file_version"):
        if canonical(row["path"]) != row["path"] or row["path"] == ROOT:
            raise InputError(f"path {row['path']!r} is not a canonical file path under {ROOT} (a live write would "
                             f"store {canonical(row['path'])!r})")
    sizes = {"fact": ("text", "source_quote", "object"), "episode": ("content",), "document": ("text",),
             "note": ("text",), "core_file": ("content",), "core_file_version": ("content",), "entity": ("name",)}
    limit = {"note": limits.note, "core_file": limits.core, "core_file_version": limits.core}.get(kind, limits.text)
    for field in sizes.get(kind, ()):
        if isinstance(row[field], str) and len(row[field]) > limit:
            raise TextTooLarge(f"{field} is {len(row[field]):,} characters; a live write allows {limit:,}")
    if kind == "fact" and not 0 <= row["confidence"] <= 1:
        raise InputError(f"confidence must be from 0 to 1, not {row['confidence']!r}")
    if kind == "entity" and len(row["aliases"]) > 1_000:
        raise InputError(f"an entity holds at most 1,000 aliases, not {len(row['aliases']):,}")


def _value(field: str, type_: str, value):
    """The value if it has the field's type; times in their stored form."""
    if value is None and type_.endswith("?"):
        return None
    base = type_.rstrip("?")
    ok = {"str": isinstance(value, str), "bool": isinstance(value, bool), "object": isinstance(value, dict),
          "int": isinstance(value, int) and not isinstance(value, bool),
          "float": isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
          "list": isinstance(value, list) and all(isinstance(v, str) for v in value),
          "time": isinstance(value, str)}[base]
    if not ok:
        raise InputError(f"{field} must be {_WORDS[type_]}, not {value!r}")
    if base == "time":
        return timeutil.dump(timeutil.to_utc(value, field=field))
    return float(value) if base == "float" else value


_WORDS = {S: "a string", S_: "a string or null", I: "an integer", F: "a finite number", B: "true or false",
          T: "an ISO 8601 time", T_: "an ISO 8601 time or null", L: "a list of strings", O: "a JSON object"}


def _vector(value, dim: int) -> np.ndarray | None:
    if value is None:
        return None
    try:
        raw = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 4 * dim:
        raise InputError(f"vector must be base64 of {dim} float32 values (the header's dim)")
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.all(np.isfinite(vector)):
        raise InputError("vector holds NaN or infinity")
    return vector
