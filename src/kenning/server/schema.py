"""The input rules of the library, written once as JSON Schema so the OpenAPI document promises
exactly what the routes accept (a generated client, or schemathesis, can trust it).

Each type mirrors a check the library makes anyway (kenning.services, write, notes, core_files,
documents); the server validates against the same rule before the library sees the value. Limits
an operator may change (``max_text_chars`` & co.) are marked ``x-kenning-limit`` and filled in from
the server's settings when the document is built (server/openapi.py).
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Literal

from fastapi import Header, Path, Query
from pydantic import BeforeValidator, Field, WithJsonSchema
from starlette.convertors import Convertor, register_url_convertor

from ..model import JOB_STATUSES
from ..services import MAX_QUERY_CHARS
from ..core_files import MAX_NAME_CHARS, MAX_PATH_CHARS
from ..write import MAX_ID_CHARS, ROLES

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$"          # kenning.model.SCOPE_NAME
NAMESPACE = r"^(?:user|organization|project|(?:agent|chat|project):[A-Za-z0-9_.@-]{1,128})$"   # notes.NAMESPACE
def _not_dots(chars: str, named: bool = False, most: int | None = None) -> str:
    """One path segment of these characters that is not '..' (``named``: nor '.' or empty), of at most
    ``most`` characters. Patterns stay free of look-arounds, which pydantic's regex engine lacks."""
    c, nd = f"[{chars}]", f"[{chars.replace('.', '')}]"

    def run(least: int, taken: int) -> str:   # the rest of the segment after ``taken`` characters
        return ("*" if least == 0 else "+") if most is None else f"{{{least},{most - taken}}}"
    if named:
        return f"(?:{nd}{c}{run(0, 1)}|\\.{nd}{c}{run(0, 2)}|\\.\\.{c}{run(1, 2)})"
    return f"(?:{nd}{c}{run(0, 1)}|\\.(?:{nd}{c}{run(0, 2)})?|\\.\\.{c}{run(1, 2)})?"


_DOC_SEGMENT = _not_dots("A-Za-z0-9_.:@-")
SCOPE_KEY = f"^{_DOC_SEGMENT}(?:/{_DOC_SEGMENT})*$"   # documents.check_name: no '..' part
# A core file path under /memories: printable ASCII, no '..' part, nothing percent-encoded or escaped
# (core_files.canonical refuses those; other characters it accepts are left out of the promise).
_CORE_CHARS = "A-Za-z0-9 _.,:;=+@#!~'()\\[\\]{}&$^-"
_CORE_SEGMENT = _not_dots(_CORE_CHARS, most=MAX_NAME_CHARS)     # core_files: a part holds at most 255
CORE_PATH = f"^/memories(?:/{_CORE_SEGMENT})*$"                          # /memories itself included
CORE_ENTRY = f"^/memories(?:/{_CORE_SEGMENT})*/{_not_dots(_CORE_CHARS, True, MAX_NAME_CHARS)}$"   # a file or folder in it
# A character str.strip() keeps: Python's whitespace spelled out, since "\s" means three different sets in
# Python, in pydantic's Rust regex and in JSON Schema's ECMA-262 (U+001C-1F, U+0085). Not anchored.
WORDS = r"[^\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
SOME_TEXT = r"\S[\s\S]*\S"   # two characters that are not spaces, at least (erase by content)
# What each pattern asks for, in words: a refusal names it (app.validation_message), since a caller acts on
# "a dataset name: letters, digits …", not on the regular expression.
PATTERN_WORDS = {
    NAME: "a name of letters, digits and _ . : @ -, starting with a letter or digit, at most 128 characters",
    NAMESPACE: "user, organization, project, or agent:, chat: or project: followed by a name",
    SCOPE_KEY: "a scope key: names of letters, digits and _ . : @ - joined by /, none of them '..'",
    CORE_PATH: "/memories or a path under it, with no '..' part", CORE_ENTRY: "a path under /memories, with no '..' part",
    WORDS: "some text, not only spaces", SOME_TEXT: "a text of at least two characters that are not spaces",
}
SAFE_INT = 2 ** 53 - 1   # the largest integer every JSON reader (JavaScript's included) holds exactly
ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
ISO_TIME = re.compile(ISO_DATE.pattern + r"[Tt ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[Zz]|[+-]\d\d:?\d\d)?")
TIME_WORDS = ("an ISO 8601 date and time, like 2026-03-02T09:30:00Z, or a date, like 2026-03-02 "
              "(midnight UTC)")


def _iso_only(value: object) -> object:
    """A time is an ISO 8601 string, parsed here: pydantic would also read a number ("0.5") as seconds
    since 1970, and strict bodies take no string for a datetime. A bare date is midnight UTC, as
    kenning.timeutil.to_utc reads it: one rule for times in the library and over HTTP."""
    if isinstance(value, datetime):
        return value
    text = value.strip() if isinstance(value, str) else None
    if text is None or not (ISO_TIME.fullmatch(text) or ISO_DATE.fullmatch(text)):
        raise ValueError(f"a time is {TIME_WORDS}")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{value!r} is no date and time ({TIME_WORDS})") from None
    return parsed.replace(tzinfo=timezone.utc) if ISO_DATE.fullmatch(text) else parsed


def _integral(value: object) -> object:
    """JSON's integers: 42 and 42.0 (JSON Schema counts both), never true or 42.5."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def whole(least: int, most: int | None = None) -> object:
    """An integer in [least, most] for strict bodies: true is refused, 42.0 is 42."""
    return Annotated[Annotated[int, Field(ge=least, le=most)], BeforeValidator(_integral)]


def limit(setting: str) -> dict:
    """The marker the document builder turns into ``maxLength`` from the server's settings."""
    return {"x-kenning-limit": setting}


# A time in the OpenAPI document: a date-time, or a full date (JSON Schema's two formats, so a generated
# client parses either); a time without an offset and a bare date are read as UTC.
Instant = Annotated[datetime, BeforeValidator(_iso_only),
                    WithJsonSchema({"anyOf": [{"type": "string", "format": "date-time"},
                                              {"type": "string", "format": "date"}],
                                    "description": "ISO 8601 (RFC 3339) date and time, or a date (midnight UTC); "
                                                   "a time without an offset is read as UTC",
                                    "examples": ["2026-03-02T09:30:00Z", "2026-03-02"]})]
DatasetName = Annotated[str, Field(pattern=NAME, min_length=1, max_length=128,
                                   description="the end user whose memory this is", examples=["sam"])]
Ident = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=WORDS)]
Role = Literal[ROLES]
Namespace = Annotated[str, Field(pattern=NAMESPACE, max_length=150,
                                 description="user, organization, project, agent:<id>, chat:<id> or project:<id>")]
CorePathText = Annotated[str, Field(pattern=CORE_ENTRY, max_length=MAX_PATH_CHARS, description="a file or folder under "
                                    "/memories", examples=["/memories/preferences.md"])]
Query_ = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=WORDS)]


def text(setting: str, description: str, example: str) -> object:
    return Annotated[str, Field(min_length=1, pattern=WORDS, description=description, examples=[example],
                                json_schema_extra=limit(setting))]


# -- parameters ----------------------------------------------------------------------------------
def dataset_path() -> object:
    return Path(pattern=NAME, max_length=128, description="the end user whose memory this is",
                examples=["sam"])


# An id in a URL path: no '/', and at least one character that is neither a space nor a dot (so never '.'
# or '..', which URL handling resolves away: the guard refuses such segments before any route).
ID_SEGMENT = ("^[^/]*[^/." + WORDS[2:-1] + "][^/]*$")


class MessageId(Convertor):
    """A message id in a URL: any segment but ``search``, which names the search route beside it
    (``/messages/search``), so that path serves GET alone and its ``Allow`` says so."""

    regex = r"(?!search(?:/|$))[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("message_id", MessageId())


def id_path(description: str) -> object:
    return Path(min_length=1, max_length=MAX_ID_CHARS, pattern=ID_SEGMENT, description=description)


def limit_query(default: int, most: int = 100) -> object:
    return Query(default, ge=1, le=most, description=f"at most {most} a page")


def offset_query() -> object:
    return Query(0, ge=0, le=2 ** 63 - 1, description="rows to skip")


def namespace_query(default: str | None = "user") -> object:
    return Query(default, pattern=NAMESPACE, max_length=150, description=Namespace.__metadata__[0].description)


_ONE_NAMESPACE = NAMESPACE[1:-1]
NAMESPACES = rf"^{_ONE_NAMESPACE}(?:,{_ONE_NAMESPACE}){{0,19}}$"   # a comma-separated list of up to 20
PATTERN_WORDS[NAMESPACES] = "up to 20 namespaces joined by commas (each " + PATTERN_WORDS[NAMESPACE] + ")"


def namespaces_query() -> object:
    return Query(None, pattern=NAMESPACES, max_length=3020,
                 description="only these namespaces, comma-separated (default: every one the caller may read)")


def core_path_query(default=..., root: bool = False) -> object:
    return Query(default, pattern=CORE_PATH if root else CORE_ENTRY, max_length=MAX_PATH_CHARS,
                 description="a path under /memories")


GET_QUERY_CHARS = 2_000   # words in a URL (servers and proxies cap the request line; POST /v1/recall takes more)


def words_query(description: str, most: int = GET_QUERY_CHARS) -> object:
    return Query(..., min_length=1, max_length=most, pattern=WORDS, description=description)


def ident_query(description: str) -> object:
    return Query(None, min_length=1, max_length=MAX_ID_CHARS, pattern=WORDS, description=description)


def name_query(description: str) -> object:
    return Query(None, pattern=NAME, max_length=128, description=description)


def environment_header() -> object:
    return Header(None, pattern=NAME, max_length=128, description="the environment to act in (default: the "
                  "server's); an API key is for every environment of its project, a user token for its own")


JobStatus = Literal[JOB_STATUSES]
