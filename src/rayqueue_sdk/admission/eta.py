"""The admission estimate's type: when a queued workload may be admitted, and on what basis (pure, no
dependencies, so that the overview's rows and the cluster status can carry it; the estimate itself is
computed in :mod:`rayqueue_sdk.admission.estimate`).

Example:
    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, 14, 2, tzinfo=timezone.utc)
    >>> AdmissionEstimate(t, t, "x").window()
    'about 14:02 UTC'
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["AdmissionEstimate"]


@dataclass(frozen=True)
class AdmissionEstimate:
    """When a queued workload may be admitted: ``earliest``/``latest`` (timezone-aware; either may be
    ``None``: unknown, or unbounded) and ``basis``, one sentence a user can check (what holds the quota and
    when it is released, the place in the queue, and what may move the estimate). Never a promise.

    Example:
        >>> from datetime import datetime, timezone
        >>> e = AdmissionEstimate(datetime(2026, 1, 1, 14, 2, tzinfo=timezone.utc), None, "b")
        >>> e.text(), e.to_dict()["latest"]
        ('not before 14:02 UTC; b', None)
    """

    earliest: datetime | None
    latest: datetime | None
    basis: str

    def window(self) -> str:
        """The window in words: ``"14:02–14:05 UTC"``, ``"not before 14:02 UTC"``, ``"unknown"``."""
        fmt = "%H:%M" if _whole_minutes(self.earliest, self.latest) else "%H:%M:%S"
        e = self.earliest.strftime(fmt) if self.earliest else None
        late = self.latest.strftime(fmt) if self.latest else None
        if e and late:
            return f"about {e} UTC" if e == late else f"{e}–{late} UTC"
        if e:
            return f"not before {e} UTC"
        if late:
            return f"by {late} UTC"
        return "unknown"

    def text(self) -> str:
        """One line: the window, then the basis."""
        return f"{self.window()}; {self.basis}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (times as ISO 8601 with their offset)."""
        return {
            "earliest": self.earliest.isoformat() if self.earliest else None,
            "latest": self.latest.isoformat() if self.latest else None,
            "basis": self.basis,
        }


def _whole_minutes(*times: datetime | None) -> bool:
    return all(t is None or (t.second == 0 and t.microsecond == 0) for t in times)
