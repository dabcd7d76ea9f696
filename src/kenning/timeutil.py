"""Time in one form: timezone-aware UTC datetimes, stored as sortable ISO text."""
from __future__ import annotations

from datetime import datetime, timezone

from .errors import InvalidTime


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
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+01:00 or 9999-12-31T23:59-01:00: no such UTC time
        raise InvalidTime(f"{field} {value.isoformat()} lies outside the years 1 to 9999 in UTC") from None


def dump(value: datetime | None) -> str | None:
    """Fixed-width text whose string order is time order (SQLite compares text)."""
    # isoformat pads the year to four digits; strftime's %Y does not below 1000 (glibc), and such a
    # row could never be read back.
    return None if value is None else to_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def load(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)  # 3.11 reads the trailing Z


WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
MONTHS = "january february march april may june july august september october november december".split()


def date_words(at: datetime) -> str:
    """A day in words, in English whatever the locale (``sunday 7 may 2023``): what keyword
    search can match a question's "in May 2023" or "on a Sunday" against."""
    return f"{WEEKDAYS[at.weekday()]} {at.day} {MONTHS[at.month - 1]} {at.year}"
