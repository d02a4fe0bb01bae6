"""Container log files in the CRI format the kubelet reads (``<RFC3339Nano> <stream> <P|F> <text>``).

A container runtime writes each line a container prints as one record: the time it was read, the
stream (``stdout``/``stderr``), a tag (``F`` for a full line, ``P`` for a partial one: a line longer
than the runtime's buffer, or the last bytes before the process ended without a newline) and the text
[R kubernetes/pkg/kubelet/kuberuntime/logs/logs.go parseCRILog; CRI spec "Container logs"]. The
local control plane's processes write the same format, so the ``pods/{name}/log`` endpoint can apply
``sinceTime``/``sinceSeconds``/``timestamps`` exactly as the kubelet does.

Example:
    >>> record = format_record(0.5, "stdout", b"hello")
    >>> record
    b'1970-01-01T00:00:00.500000000Z stdout F hello\\n'
    >>> r = parse_record(record)
    >>> r.when, r.stream, r.partial, r.text
    (0.5, 'stdout', False, b'hello\\n')
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["LogRecord", "format_record", "parse_record", "rfc3339nano"]


def rfc3339nano(when: float) -> str:
    """``when`` (seconds since the epoch) as Go's ``time.RFC3339Nano`` with nine digits, UTC.

    Example:
        >>> rfc3339nano(1.25)
        '1970-01-01T00:00:01.250000000Z'
    """
    whole = int(when)
    nanos = int(round((when - whole) * 1e9))
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def format_record(when: float | None, stream: str, data: bytes, *, partial: bool = False) -> bytes:
    """One CRI log record for ``data`` (without its newline) read at ``when`` (default: now).

    Example:
        >>> format_record(0, "stderr", b"oops", partial=True)
        b'1970-01-01T00:00:00.000000000Z stderr P oops\\n'
    """
    stamp = rfc3339nano(time.time() if when is None else when)
    return b"%s %s %s %s\n" % (stamp.encode(), stream.encode(), b"P" if partial else b"F", data)


@dataclass(frozen=True)
class LogRecord:
    """One parsed record: ``text`` is what the container printed (with its newline unless partial)."""

    timestamp: str
    when: float
    stream: str
    partial: bool
    text: bytes


def _seconds(stamp: str) -> float:
    """Seconds since the epoch of an RFC3339Nano UTC stamp (``...Z``)."""
    base, _, frac = stamp.rstrip("Z").partition(".")
    whole = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    return whole + (float("0." + frac) if frac else 0.0)


def parse_record(line: bytes) -> LogRecord | None:
    """Parse one record (a line of a CRI log file); ``None`` for a malformed line.

    Example:
        >>> parse_record(b"not a record") is None
        True
        >>> parse_record(b"1970-01-01T00:00:02.000000000Z stderr P abc\\n").text
        b'abc'
    """
    parts = line.rstrip(b"\n").split(b" ", 3)
    if len(parts) < 3 or parts[2] not in (b"P", b"F"):
        return None
    stamp = parts[0].decode("ascii", errors="replace")
    try:
        when = _seconds(stamp)
    except ValueError:
        return None
    partial = parts[2] == b"P"
    text = parts[3] if len(parts) == 4 else b""
    return LogRecord(
        stamp, when, parts[1].decode("ascii", errors="replace"), partial, text + (b"" if partial else b"\n")
    )
