"""The HTTP API's request and response bodies, declared once so the OpenAPI document and the
generated clients see exactly what the routes accept and answer."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class AddBody(BaseModel):
    text: str
    dataset: str
    at: datetime | None = None
    client_ref: str | None = None
    role: str = "user"
    chat: str | None = None
    message_id: str | None = None
    temporary: bool = False


class AddTurnBody(BaseModel):
    dataset: str
    role: str = "user"
    content: str
    thread: str | None = None
    client_ref: str | None = None
    at: datetime | None = None
    chat: str | None = None
    temporary: bool = False
    message_id: str | None = None


class RecallBody(BaseModel):
    query: str
    dataset: str
    limit: int = 10
    budget: int | None = None
    as_of: datetime | None = None   # recall as of this time: the facts live then, what had been said by then


class MessageBody(BaseModel):
    content: str
    role: str = "user"
    chat: str | None = None
    message_id: str | None = None
    at: datetime | None = None
    temporary: bool = False


class NoteBody(BaseModel):
    text: str
    namespace: str = "user"


class NotesBody(BaseModel):
    texts: list[str]
    namespace: str = "user"
    dedupe_threshold: float | None = None


class ForgetBody(BaseModel):
    superseded_by: str | None = None


class ToolBody(BaseModel):
    command: dict[str, Any]
    namespace: str = "user"


class ToolResult(BaseModel):
    content: str
    is_error: bool = False


class CoreWriteBody(BaseModel):
    path: str
    text: str
    expected_version: int | None = None
    namespace: str = "user"


class DocumentBody(BaseModel):
    text: str
    expected_version: int | None = None
    expires_in: float | None = Field(None, gt=0)


class TokenBody(BaseModel):
    dataset: str
    role: str = "member"
    expires_in: float | None = Field(None, gt=0, description="seconds; the server's default (an hour) when "
                                     "absent, at most its maximum (a day)")


class TokenResult(BaseModel):
    token: str
    expires_at: int
    key_id: str | None = None   # the key that minted it: revoking that key ends the token


class KeyInfo(BaseModel):
    key_id: str
    project: str
    role: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None


class Count(BaseModel):
    count: int


class ReplaceBody(BaseModel):
    path: str
    old: str
    new: str = ""
    expected_version: int | None = None
    namespace: str = "user"


class InsertBody(BaseModel):
    path: str
    line: int
    text: str
    namespace: str = "user"


class PathBody(BaseModel):
    path: str
    namespace: str = "user"


class RenameBody(BaseModel):
    old_path: str
    new_path: str
    namespace: str = "user"


class RetryBody(BaseModel):
    dataset: str | None = None


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """What every 4xx and 5xx answer carries (server/errors.py), declared so clients and checks see it."""
    error: ErrorDetail
