"""Public data types (pydantic v2): facts, entities, episodes and receipts."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field, model_validator

ENTITY_TYPES = ("PERSON", "ORG", "PLACE", "PRODUCT", "SKILL", "TOPIC", "EVENT", "FOOD",
                "ROLE", "CONCEPT", "THING", "DATE")
FACT_KINDS = ("attribute", "relation", "preference", "possession", "skill", "routine", "plan", "event",
              "relationship", "goal", "habit", "trait")   # the last four: earlier names, still accepted
MAX_OBJECT_CHARS = 500
# The valid_at of a fact whose start nobody said ("I quit smoking two years ago", "I'm no longer at
# Google"): it held for some time before its valid_until. Stored as the earliest time there is, so the
# live and as_of rules need no special case and show it as true before it ended; ``start_known`` says so.
UNKNOWN_START = datetime(1, 1, 1, tzinfo=timezone.utc)
FactState = Literal["live", "future", "ended", "superseded", "deleted"]
FACT_STATES = FactState.__args__


# Response models mark every field required in their JSON schema: the API always sends each one
# (null where empty), so a generated client need not treat them as possibly absent.
OUTPUT = ConfigDict(json_schema_serialization_defaults_required=True)


SCOPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")   # a project, environment or dataset name: fullmatch it ("$" lets "alice\n" through)


class Scope(NamedTuple):
    """The tenant key every row and query carries; nothing crosses it."""

    project: str
    environment: str
    dataset: str


class Fact(BaseModel):
    model_config = ConfigDict(frozen=False, json_schema_serialization_defaults_required=True)

    fact_id: str
    subject: Literal["user"] = "user"
    predicate: str
    object: str = Field(max_length=MAX_OBJECT_CHARS)
    object_is_entity: bool = False
    entity_type: str | None = None
    text: str
    kind: str = "attribute"
    confidence: float = Field(ge=0.0, le=1.0, default=0.8)
    source_quote: str = ""
    valid_at: datetime
    valid_until: datetime | None = None
    invalid_at: datetime | None = None
    superseded_by: str | None = None
    episode_id: str | None = None
    created_at: datetime

    @computed_field  # derived, never stored
    @property
    def anchor(self) -> str:
        return self.object if self.object_is_entity else self.subject

    @computed_field  # derived, never stored
    @property
    def start_known(self) -> bool:
        """False: nobody said when this became true; ``valid_at`` is then the earliest time there is."""
        return self.valid_at > UNKNOWN_START

    _seen_at: datetime | None = PrivateAttr(default=None)
    _said_state: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_state(cls, data, handler):
        """A fact read from a server keeps the state the server named (as of the listing's time)."""
        fact = handler(data)
        if isinstance(data, dict) and data.get("state") in FACT_STATES:
            fact._said_state = data["state"]
        return fact

    @computed_field  # derived, never stored
    @property
    def state(self) -> FactState:
        """`live`, `future` (starts later), `ended` (its valid_until has passed), `superseded` (replaced by
        another value) or `deleted`: as of the listing's as_of, or the recall's time, or now."""
        if self._said_state is not None and self._seen_at is None:
            return self._said_state
        return self.state_at(self._seen_at or datetime.now(timezone.utc))

    def seen_at(self, at: datetime | None) -> Fact:
        """Name :attr:`state` as of ``at`` (a listing as of a past time); None: now."""
        self._seen_at = at
        return self

    @property
    def id(self) -> str:
        return self.fact_id

    def live_at(self, t: datetime) -> bool:
        """The as_of form of the live predicate, in Python (the stores do it in SQL)."""
        return self.state_at(t) == "live"

    def state_at(self, at: datetime) -> FactState:
        """What the fact was at ``at``, the one naming every interface uses: ``superseded`` or ``deleted``
        once withdrawn (replaced by another value, or removed), else ``future`` before it starts,
        ``ended`` after ``valid_until`` (an ending, a stay that is over), and ``live`` in between. As of
        a past time, a fact withdrawn since is what it was then."""
        if self.invalid_at is not None and self.invalid_at <= at:
            return "superseded" if self.superseded_by else "deleted"
        if self.valid_at > at:
            return "future"
        if self.valid_until is not None and self.valid_until <= at:
            return "ended"
        return "live"


class Entity(BaseModel):
    model_config = OUTPUT
    entity_id: str
    name: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    created_at: datetime

    @property
    def entity_type(self) -> str:
        return self.type


class Episode(BaseModel):
    model_config = OUTPUT
    episode_id: str
    role: str
    content: str
    chat: str | None = None
    at: datetime
    created_at: datetime


class Note(BaseModel):
    """Archival memory: free text saved on purpose, searchable, forgotten but never lost."""
    model_config = OUTPUT

    note_id: str
    text: str
    namespace: str = "user"
    created_at: datetime
    forgotten_at: datetime | None = None
    superseded_by: str | None = None

    @property
    def id(self) -> str:
        return self.note_id


class MessageHit(BaseModel):
    model_config = OUTPUT
    message_id: str
    chat: str | None = None
    role: str
    at: datetime
    text: str
    score: float
    signals: dict[str, float] = Field(default_factory=dict)


class NoteHit(BaseModel):
    model_config = OUTPUT
    note: Note
    score: float
    signals: dict[str, float] = Field(default_factory=dict)


class AddResult(BaseModel):
    """The receipt of one ``add``: what happened to every candidate, and why."""
    model_config = OUTPUT

    status: Literal["stored", "skipped"]
    reason: str | None = None
    memory: Fact | None = None
    memory_ids: list[str] = Field(default_factory=list)
    episode_id: str | None = None
    candidates_extracted: int = 0
    candidates_stored: int = 0
    candidates_updated: int = 0
    candidates_deduped: int = 0
    candidates_rejected: int = 0
    deduplicated_against: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    rejections: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)      # what the write path decided that a reader should know
    extraction_error: str | None = None                 # the extractor failed; the message is kept (re-mine it)


JOB_STATUSES = ("queued", "distilling", "done", "failed")


class Job(BaseModel):
    """A queued turn: what ``add_turn`` stored, and what became of it."""
    model_config = OUTPUT

    request_id: str
    project: str
    environment: str
    dataset: str
    role: str
    content: str
    chat: str | None = None
    at: datetime
    temporary: bool = False
    message_id: str | None = None
    client_ref: str | None = None
    status: Literal["queued", "distilling", "done", "failed"] = "queued"
    attempts: int = 0
    error: str | None = None
    result: AddResult | None = None
    created_at: datetime
    updated_at: datetime

    @property
    def scope(self) -> Scope:
        return Scope(self.project, self.environment, self.dataset)


class Receipt(BaseModel):
    """The answer of ``add_turn`` (at once) and of ``status(request_id)`` (any time later)."""
    model_config = OUTPUT

    status: Literal["processing", "done", "failed", "skipped"]
    processing_status: Literal["queued", "distilling", "done", "failed"] | None = None
    request_id: str | None = None
    already_exists: bool = False
    processing_error: str | None = None
    reason: str | None = None
    memory_id: str | None = None
    result: AddResult | None = None


class MemoryStatus(BaseModel):
    """Whether one memory is stored, live and findable by vector search."""
    model_config = OUTPUT

    memory_id: str
    stored: bool
    live: bool = False
    searchable: bool = False


class CoreFile(BaseModel):
    """A core memory file: small text the model edits with the memory tool, versioned."""
    model_config = OUTPUT

    path: str
    namespace: str = "user"
    content: str
    version: int
    created_at: datetime
    updated_at: datetime

    @property
    def size(self) -> int:
        return len(self.content.encode())


class CoreFileVersion(BaseModel):
    model_config = OUTPUT
    path: str
    namespace: str
    version: int
    content: str | None       # None: deleted (or renamed away) at this version
    op: str
    at: datetime


class Document(BaseModel):
    """Versioned text for agent runtimes, under an opaque scope key and a path."""
    model_config = OUTPUT

    scope_key: str
    path: str
    text: str
    version: int
    expires_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class FactPage(BaseModel):
    model_config = OUTPUT
    facts: list[Fact]
    total: int
    limit: int
    offset: int


class ChatSummary(BaseModel):
    """One conversation of a dataset: a chat (or thread), or the messages kept outside any chat (``chat`` null)."""
    model_config = OUTPUT
    chat: str | None
    messages: int = Field(description="messages kept, every role")
    user_turns: int = Field(description="the user's messages among them (the ones facts are mined from)")
    facts: int = Field(description="facts ever mined from its messages, superseded and deleted ones included")
    first_at: datetime
    last_at: datetime


class ChatPage(BaseModel):
    model_config = OUTPUT
    chats: list[ChatSummary]
    total: int
    limit: int
    offset: int


class MessagePage(BaseModel):
    """A stretch of one conversation, oldest first."""
    model_config = OUTPUT
    messages: list[Episode]
    total: int
    limit: int
    offset: int


class DatasetSummary(BaseModel):
    """One end user's memory at a glance (the dashboard's dataset list)."""
    model_config = OUTPUT

    dataset: str
    facts: int = 0            # live facts
    entities: int = 0
    notes: int = 0            # not forgotten
    messages: int = 0
    last_activity: datetime | None = None


class DatasetPage(BaseModel):
    model_config = OUTPUT
    datasets: list[DatasetSummary]
    total: int
    limit: int
    offset: int


class RecallItem(BaseModel):
    model_config = OUTPUT
    kind: str                      # fact | note | message
    id: str
    text: str
    score: float
    signals: dict[str, float] = Field(default_factory=dict)
    fact: Fact | None = None
    note: Note | None = None
    message: MessageHit | None = None
    episode_id: str | None = None   # the message an item traces to (a fact: where it came from)
    message_id: str | None = None   # a message item's own id


class RecallResult(BaseModel):
    model_config = OUTPUT
    query: str
    context: str
    facts: list[Fact] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)
    messages: list[MessageHit] = Field(default_factory=list)
    items: list[RecallItem] = Field(default_factory=list)


ERASURE_KINDS = ("fact", "message", "content", "dataset")
ErasureKind = Literal["fact", "message", "content", "dataset"]


class ErasureReceipt(BaseModel):
    """What one erasure removed (or, with ``dry_run``, would remove). ``removed`` counts rows per kind;
    ``ids`` names them (core files as ``namespace:path``, their versions as ``namespace:path@version``,
    documents as ``scope_key:path``); ``redacted`` names the messages whose quoted words were cut out and
    ``restored`` the facts made live again because what superseded them was erased. ``physical`` says
    whether the erased bytes have left the store's files: ``done``, or ``pending`` until the next
    ``erase.compact()`` (see docs/erasure.md)."""
    model_config = OUTPUT
    erasure_id: str | None          # None for a dry run: nothing was erased, nothing logged
    kind: ErasureKind
    dataset: str
    dry_run: bool
    removed: dict[str, int]
    ids: dict[str, list[str]]
    redacted: list[str] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list)
    physical: Literal["done", "pending", "none"] = "none"
    at: datetime


class ErasureRecord(BaseModel):
    """One erasure-log entry: ids, counts and SHA-256 hashes of what was erased, who asked and when,
    never the erased text itself. A hash lets an auditor confirm that a given text was erased (by hashing
    it again); it does not reveal the text, though a short guessable one can be confirmed by guessing."""
    model_config = OUTPUT
    erasure_id: str
    kind: ErasureKind
    dataset: str
    by: str | None
    at: datetime
    removed: dict[str, int]
    ids: dict[str, list[str]]
    hashes: dict[str, str]          # "<kind>:<id>" (and "query" for erase by content) -> sha256 hex
    compacted_at: datetime | None = None


class ErasurePage(BaseModel):
    model_config = OUTPUT
    erasures: list[ErasureRecord]
    total: int
    limit: int
    offset: int
