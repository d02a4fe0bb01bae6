"""Timestamps as Kubernetes writes them: RFC 3339 in UTC, whole seconds (``metav1.Time``).

Every ``creationTimestamp``, ``lastTransitionTime`` and status time the emulator writes comes from
:func:`now_rfc3339` or :func:`format_rfc3339`; every one it reads back goes through
:func:`parse_rfc3339`, which accepts RFC 3339 with a ``Z`` or a numeric offset and fractional
seconds (``metav1.MicroTime``) and answers ``None`` for a missing or malformed stamp.

Example:
    >>> format_rfc3339(60.9)
    '1970-01-01T00:01:00Z'
    >>> parse_rfc3339("1970-01-01T00:01:00Z"), parse_rfc3339("1970-01-01T01:01:00.5+01:00")
    (60.0, 60.5)
    >>> parse_rfc3339("yesterday") is None
    True
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["format_rfc3339", "now_rfc3339", "parse_rfc3339"]

_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def now_rfc3339() -> str:
    """The current time as the API server writes timestamps (``2026-01-02T03:04:05Z``).

    Example:
        >>> parse_rfc3339(now_rfc3339()) is not None
        True
    """
    return datetime.now(UTC).strftime(_FORMAT)


def format_rfc3339(when: datetime | float) -> str:
    """``when`` (an aware datetime, or seconds since the epoch) in RFC 3339, UTC, whole seconds.

    Example:
        >>> format_rfc3339(datetime(2026, 1, 2, 3, 4, 5, 999, tzinfo=UTC))
        '2026-01-02T03:04:05Z'
    """
    if isinstance(when, datetime):
        return when.astimezone(UTC).strftime(_FORMAT)
    return datetime.fromtimestamp(when, UTC).strftime(_FORMAT)


def parse_rfc3339(stamp: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 timestamp; ``None`` when missing or malformed.

    Example:
        >>> parse_rfc3339("2026-01-02T03:04:05Z") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
        True
        >>> parse_rfc3339(None), parse_rfc3339(""), parse_rfc3339("2026-01-02")
        (None, None, None)
    """
    if not stamp or not _RFC3339.fullmatch(stamp):
        return None
    try:
        return datetime.fromisoformat(stamp.upper()).timestamp()
    except ValueError:  # well-formed but impossible, e.g. month 13
        return None
