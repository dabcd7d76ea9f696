"""Time in one form: timezone-aware UTC datetimes, stored as sortable ISO text."""
from __future__ import annotations

from datetime import datetime, timezone

from .errors import InvalidTime

_FMT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now() -> datetime:
    return datetime.now(timezone.utc)


def to_utc(value: datetime | str | None, *, field: str = "time") -> datetime | None:
    """Accept an aware or naive datetime (naive = UTC) or an ISO string."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidTime(f"{field} {value!r} is not an ISO 8601 time, e.g. 2026-08-16T09:00:00Z") from exc
    if not isinstance(value, datetime):
        raise InvalidTime(f"{field} must be a datetime or ISO 8601 string, not {type(value).__name__}")
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def dump(value: datetime | None) -> str | None:
    """Fixed-width text whose string order is time order (SQLite compares text)."""
    return None if value is None else to_utc(value).strftime(_FMT)


def load(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)  # 3.11 reads the trailing Z
