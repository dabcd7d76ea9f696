"""The HTTP API's request and response bodies, declared once so the OpenAPI document and the
generated clients see exactly what the routes accept and answer (the rules: server/schema.py)."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..model import OUTPUT
from .schema import SAFE_INT, SCOPE_KEY, SOME_TEXT, CorePathText, DatasetName, Ident, Instant, Namespace, Query_, Role, limit, text, whole

MessageText = text("max_text_chars", "what was said, verbatim", "I moved to Lisbon last month.")
Version = whole(0, SAFE_INT)   # a core file's or document's version (0: absent)
Line = whole(0, 999_999)       # the memory tool's insert_line range
Limit = whole(1, 100)
Offset = whole(0, SAFE_INT)
Budget = whole(1)   # no ceiling: a budget larger than the dataset is all of it
NoteText = text("max_note_chars", "the note, verbatim", "Prefers answers in bullet points.")


def example(**values) -> ConfigDict:
    """A request body's config: strict (``0`` is no boolean, ``false`` no version) and one example."""
    return ConfigDict(strict=True, json_schema_extra={"examples": [values]})


class AddBody(BaseModel):
    model_config = example(text="I moved to Lisbon last month.", dataset="sam", at="2026-03-02T09:30:00Z")
    text: MessageText
    dataset: DatasetName
    at: Instant | None = Field(None, description="when it was said (default: now); relative dates resolve "
                               "against it")
    client_ref: Ident | None = Field(None, description="your id for this message; sending it again is a no-op")
    role: Role = Field("user", description="who said it; only the user's words are mined for facts")
    chat: Ident | None = Field(None, description="the conversation it belongs to")
    message_id: Ident | None = Field(None, description="the message's id (default: a new one)")
    temporary: bool = Field(False, description="a temporary chat: nothing is stored")


class AddTurnBody(BaseModel):
    model_config = example(dataset="sam", role="user", content="I moved to Lisbon last month.", thread="t1")
    dataset: DatasetName
    role: Role = "user"
    content: MessageText
    thread: Ident | None = Field(None, description="the conversation (a chat id)")
    client_ref: Ident | None = Field(None, description="your id for this turn; sending it again returns the "
                                     "first receipt")
    at: Instant | None = None
    chat: Ident | None = None
    temporary: bool = False
    message_id: Ident | None = None


class RecallBody(BaseModel):
    model_config = example(query="Where does the user live now?", dataset="sam", limit=10)
    query: Query_ = Field(description="the question, or the user's message to recall for")
    dataset: DatasetName
    limit: Limit = Field(10, description="items in the ranked list")
    budget: Budget | None = Field(None, description="the context block's size cap (the server's "
                               "context budget unit)")
    as_of: Instant | None = Field(None, description="recall as of this time: the facts live then, what had been "
                                  "said by then")


class MessageBody(BaseModel):
    model_config = example(content="We talked about the trip to Porto.", role="user", chat="c1")
    content: MessageText
    role: Role = "user"
    chat: Ident | None = None
    message_id: Ident | None = None
    at: Instant | None = None
    temporary: bool = False


class NoteBody(BaseModel):
    model_config = example(text="Prefers answers in bullet points.", namespace="user")
    text: NoteText
    namespace: Namespace = "user"


class NotesBody(BaseModel):
    model_config = example(texts=["Prefers answers in bullet points.", "Works in the Lisbon office."])
    texts: list[NoteText] = Field(min_length=1, json_schema_extra={"x-kenning-items": "max_notes_per_call"})
    namespace: Namespace = "user"
    dedupe_threshold: float | None = Field(None, gt=0, le=1, description="cosine similarity at which a text "
                                           "counts as a note already kept (default: the server's)")


class ForgetBody(BaseModel):
    model_config = example(superseded_by=None)
    superseded_by: Ident | None = Field(None, description="the note that replaces it")


class ToolBody(BaseModel):
    model_config = example(command={"command": "view", "path": "/memories"}, namespace="user")
    command: dict[str, Any] = Field(description="one memory_20250818 tool call's input: view, create, "
                                    "str_replace, insert, delete or rename")
    namespace: Namespace = "user"


class ToolResult(BaseModel):
    model_config = OUTPUT
    content: str = Field(description="the tool result's text, as Anthropic's memory tool words it")
    is_error: bool = False


class CoreWriteBody(BaseModel):
    model_config = example(path="/memories/preferences.md", text="likes tea\n", expected_version=None)
    path: CorePathText
    text: str = Field(json_schema_extra=limit("max_core_chars"))
    expected_version: Version | None = Field(None, description="the version you read; the write "
                                         "is refused (409) if the file has moved on. None: create or overwrite")
    namespace: Namespace = "user"


class DocumentBody(BaseModel):
    model_config = example(text="# Onboarding\n...", expected_version=None)
    text: str = Field(pattern=r"^$|\S", description="the text (empty, or some words)",
                      json_schema_extra=limit("max_text_chars"))
    expected_version: Version | None = Field(None)
    expires_in: float | None = Field(None, ge=1e-6, le=2.5e11, description="seconds until it expires")


class TokenBody(BaseModel):
    model_config = example(dataset="sam", role="member", expires_in=3600)
    dataset: DatasetName
    role: str = Field("member", pattern=r"^(?:owner|admin|member)$", description="owner, admin or member")
    expires_in: float | None = Field(None, gt=0, description="seconds; the server's default (an hour) when "
                                     "absent, at most its maximum (a day)")


class TokenResult(BaseModel):
    model_config = OUTPUT
    token: str
    expires_at: int = Field(description="Unix seconds")
    key_id: str | None = Field(None, description="the key that minted it: revoking that key ends the token")


class KeyInfo(BaseModel):
    model_config = OUTPUT
    key_id: str
    project: str
    role: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None


class Count(BaseModel):
    model_config = OUTPUT
    count: int


class Text(BaseModel):
    model_config = OUTPUT
    text: str


class Health(BaseModel):
    model_config = OUTPUT
    status: str
    version: str


class ReplaceBody(BaseModel):
    model_config = example(path="/memories/preferences.md", old="likes tea", new="likes green tea")
    path: CorePathText
    old: str = Field(min_length=1, description="text that appears exactly once in the file")
    new: str = ""
    expected_version: Version | None = Field(None)
    namespace: Namespace = "user"


class InsertBody(BaseModel):
    model_config = example(path="/memories/preferences.md", line=0, text="hates mornings\n")
    path: CorePathText
    line: Line = Field(description="insert after this line (0: at the top)")
    text: str
    namespace: Namespace = "user"


class PathBody(BaseModel):
    model_config = example(path="/memories/preferences.md")
    path: CorePathText
    namespace: Namespace = "user"


class RenameBody(BaseModel):
    model_config = example(old_path="/memories/preferences.md", new_path="/memories/prefs.md")
    old_path: CorePathText
    new_path: CorePathText
    namespace: Namespace = "user"


class RemineBody(BaseModel):
    model_config = example(message_ids=None, all_messages=False, limit=100, offset=0)
    message_ids: list[Ident] | None = Field(
        None, max_length=100, description="these messages (each once); default: the user messages no fact cites")
    all_messages: bool = Field(False, description="every user message of the dataset, in the order said")
    limit: Limit = Field(100, description="at most this many messages per call, oldest first")
    offset: Offset = Field(0, description="skip this many of them")


class RetryBody(BaseModel):
    model_config = example(dataset="sam")
    dataset: DatasetName | None = Field(None, description="one dataset's failed jobs (default: every dataset the "
                                        "caller may write)")


class ErrorDetail(BaseModel):
    model_config = OUTPUT
    code: str = Field(description="stable, machine-readable: INVALID_INPUT, NOT_FOUND, CONFLICT, …")
    message: str = Field(description="for people: what went wrong and what to do")


class ErrorBody(BaseModel):
    """What every 4xx and 5xx answer carries (server/errors.py), declared so clients and checks see it."""
    model_config = OUTPUT
    error: ErrorDetail


class EraseBody(BaseModel):
    model_config = example(dry_run=True)
    dry_run: bool = Field(..., description="true: only say what would be erased (nothing is removed or logged); "
                          "false: erase for good. Required: a body without it (or with it misspelt, `dryRun`) erases nothing")


class EraseContentBody(BaseModel):
    model_config = example(text="Lisbon", dry_run=True)
    text: Annotated[str, Field(min_length=2, max_length=1_000, pattern=SOME_TEXT,
                               description="erase everything that holds this text, case-insensitively")]
    dry_run: bool = Field(..., description="true: only say what would be erased (nothing is removed or logged); "
                          "false: erase for good. Required: a body without it (or with it misspelt, `dryRun`) erases nothing")
    document_scopes: list[Annotated[str, Field(pattern=SCOPE_KEY, min_length=1, max_length=256)]] = Field(default_factory=list, max_length=100, description="document scope keys "
                                         "whose documents holding the text go too (documents belong to no dataset)")
    organization: bool = Field(False, description="the organization memory's notes and core files too (a user "
                               "token needs the manage permission)")
