"""Versioned documents for agent runtimes: text under an opaque scope key and a path.

Writes are compare-and-set: ``expected_version=None`` means "must not exist
yet", any other value must be the live version, so concurrent writers that
read the same version race and exactly one wins; the others get
:class:`~kenning.errors.DocumentConflict`, read again and retry. Documents may
expire; expired ones are invisible at once and ``purge()`` deletes them.
"""
from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

from . import timeutil
from .errors import InputError, NotFound
from .model import Document
from .write import check_text

if TYPE_CHECKING:
    from .services import Services

_KEY = re.compile(r"[\w.:@/-]{1,256}")   # fullmatch it


def check_name(name: str, value: str) -> str:
    if not isinstance(value, str) or not _KEY.fullmatch(value) or ".." in value.split("/"):
        raise InputError(f"{name} {value!r} must be 1-256 letters, digits and _ . : @ / - (no '..' parts)")
    return value


class Documents:
    def __init__(self, services: "Services"):
        self._s = services

    def _where(self, project, environment):
        return self._s.tenant(project, environment)

    def read(self, scope_key: str, path: str, *, project: str | None = None,
             environment: str | None = None) -> Document:
        found = self._s.store.doc_get(*self._where(project, environment), check_name("scope_key", scope_key),
                                      check_name("path", path), timeutil.now())
        if found is None:
            raise NotFound(f"no document {path!r} under {scope_key!r}")
        return found

    def write(self, scope_key: str, path: str, text: str, expected_version: int | None = None,
              expires_in: float | timedelta | None = None, *, project: str | None = None,
              environment: str | None = None) -> Document:
        check_text(text, self._s.settings.max_text_chars, "document") if text else None
        if not isinstance(text, str):
            raise InputError("text must be a string")
        if expected_version is not None and (isinstance(expected_version, bool) or not isinstance(expected_version, int)):
            raise InputError("expected_version must be an integer version, or None for a new document")
        now = timeutil.now()
        expires_at = None
        if expires_in is not None:
            seconds = expires_in.total_seconds() if isinstance(expires_in, timedelta) else float(expires_in)
            if not seconds > 0:
                raise InputError("expires_in must be a positive number of seconds")
            try:
                expires_at = now + timedelta(seconds=seconds)
            except OverflowError:
                expires_at = None
            if expires_at is None or expires_at <= now:  # under a microsecond, or past the year 9999
                raise InputError(f"expires_in must be from 0.000001 seconds to about 8,000 years, not {seconds!r}")
        return self._s.store.doc_put(*self._where(project, environment), check_name("scope_key", scope_key),
                                     check_name("path", path), text, expected_version, expires_at, now)

    def list(self, scope_key: str, prefix: str = "", *, project: str | None = None,
             environment: str | None = None) -> list[Document]:
        return self._s.store.doc_list(*self._where(project, environment), check_name("scope_key", scope_key),
                                      prefix, timeutil.now())

    def delete(self, scope_key: str, path: str, *, project: str | None = None, environment: str | None = None) -> None:
        if not self._s.store.doc_delete(*self._where(project, environment), check_name("scope_key", scope_key),
                                        check_name("path", path), timeutil.now()):
            raise NotFound(f"no document {path!r} under {scope_key!r}")

    def purge(self, *, project: str | None = None, environment: str | None = None) -> int:
        """Delete expired documents of this project and environment; returns how many."""
        return self._s.store.doc_purge(timeutil.now(), *self._where(project, environment))
