"""Roll-ups of a usage report: GPU-hours per namespace, LocalQueue or ClusterQueue, as rows and CSV.

Pure arithmetic over :class:`~rayqueue_sdk.admission.usage.UsageReport` rows: every cluster row lands in
exactly one group, so each roll-up's totals are the report's totals (busy hours summed over the rows
that have metrics, ``None`` for a group where none has). A cluster with no queue goes to the group
``-``.

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> from rayqueue_sdk.admission.usage import UsageReport, UsageRow
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> report = UsageReport(t, t + timedelta(days=30), (
    ...     UsageRow("a", "ws", "q1", 3.0, 1.0, 0.5, cluster_queue="cq"),
    ...     UsageRow("b", "rc", "q2", 1.0, None, 0.0, cluster_queue="cq")))
    >>> r = rollup(report, "cluster-queue")
    >>> [(row.group, row.clusters, row.gpu_hours_allocated, row.gpu_hours_busy) for row in r.rows]
    [('cq', 2, 4.0, 1.0)]
    >>> print(r.csv().splitlines()[1])
    cluster-queue,cq,,,cq,2,4.0,1.0,0.5
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from rayqueue_sdk.admission.records import record_dict
from rayqueue_sdk.admission.usage import UsageReport, UsageRow
from rayqueue_sdk.errors import ConfigError

__all__ = ["ROLLUPS", "Rollup", "RollupBy", "RollupRow", "clusters_csv", "rollup", "rows_csv"]

#: What a report can be rolled up by.
RollupBy = Literal["namespace", "queue", "cluster-queue"]
ROLLUPS: tuple[str, ...] = get_args(RollupBy)

_NONE = "-"
_CSV_FIELDS = (
    "by",
    "group",
    "namespace",
    "local_queue",
    "cluster_queue",
    "clusters",
    "gpu_hours_allocated",
    "gpu_hours_busy",
    "gpu_hours_reclaimed",
)


@dataclass(frozen=True)
class RollupRow:
    """One group's GPU-hours: ``group`` names it (a namespace, ``namespace/LocalQueue`` or a
    ClusterQueue); ``namespace``, ``local_queue``, ``cluster_queue`` say it by parts where they apply.

    Example:
        >>> RollupRow("queue", "ds/q", "ds", "q", None, 1, 2.0, None, 0.0).to_dict()["gpu_hours_busy"] is None
        True
    """

    by: str
    group: str
    namespace: str | None
    local_queue: str | None
    cluster_queue: str | None
    clusters: int
    gpu_hours_allocated: float
    gpu_hours_busy: float | None
    gpu_hours_reclaimed: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (hours rounded to 4 decimals)."""
        return record_dict(
            self,
            gpu_hours_allocated=round(self.gpu_hours_allocated, 4),
            gpu_hours_busy=None if self.gpu_hours_busy is None else round(self.gpu_hours_busy, 4),
            gpu_hours_reclaimed=round(self.gpu_hours_reclaimed, 4),
        )


def _key(row: UsageRow, by: str) -> tuple[str, str | None, str | None, str | None]:
    """(group, namespace, LocalQueue, ClusterQueue) of a cluster row."""
    if by == "namespace":
        return row.namespace, row.namespace, None, None
    if by == "queue":
        return f"{row.namespace}/{row.queue or _NONE}", row.namespace, row.queue, row.cluster_queue
    return row.cluster_queue or _NONE, None, None, row.cluster_queue


def _busy(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@dataclass(frozen=True)
class Rollup:
    """A report's GPU-hours per group ``by`` over ``[since, until]`` (:func:`rollup`)."""

    by: str
    since: datetime
    until: datetime
    rows: tuple[RollupRow, ...]
    notes: tuple[str, ...] = ()

    @property
    def total_allocated(self) -> float:
        """Allocated GPU-hours of every group (the report's total)."""
        return sum(r.gpu_hours_allocated for r in self.rows)

    @property
    def total_reclaimed(self) -> float:
        """Reclaimed GPU-hours of every group (the report's total)."""
        return sum(r.gpu_hours_reclaimed for r in self.rows)

    @property
    def total_busy(self) -> float | None:
        """Busy GPU-hours of the groups that have metrics (``None`` when none has)."""
        return _busy(r.gpu_hours_busy for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``by``, window, rows, totals, notes."""
        busy = self.total_busy
        return {
            "by": self.by,
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "rows": [r.to_dict() for r in self.rows],
            "totals": {
                "gpu_hours_allocated": round(self.total_allocated, 4),
                "gpu_hours_busy": None if busy is None else round(busy, 4),
                "gpu_hours_reclaimed": round(self.total_reclaimed, 4),
            },
            "notes": list(self.notes),
        }

    def csv(self) -> str:
        """The rows as CSV with a header (hours rounded to 4 decimals; busy empty without metrics)."""
        return rows_csv([r.to_dict() for r in self.rows], _CSV_FIELDS)

    def text(self) -> str:
        """An 80-column table, then the totals."""
        title = {"namespace": "NAMESPACE", "queue": "LOCALQUEUE", "cluster-queue": "CLUSTERQUEUE"}[self.by]
        lines = [
            f"GPU-hours by {self.by} {self.since:%Y-%m-%d %H:%M} - {self.until:%Y-%m-%d %H:%M} UTC",
            f"{title:40} {'CLUSTERS':>8} {'ALLOC':>9} {'BUSY':>9} {'RECLAIM':>9}",
        ]
        for r in self.rows:
            busy = "-" if r.gpu_hours_busy is None else f"{r.gpu_hours_busy:.3f}"
            lines.append(
                f"{r.group[:40]:40} {r.clusters:>8} {r.gpu_hours_allocated:>9.3f} {busy:>9} "
                f"{r.gpu_hours_reclaimed:>9.3f}"
            )
        total_busy = self.total_busy
        shown = "-" if total_busy is None else f"{total_busy:.3f}"
        lines.append(f"{'TOTAL':49} {self.total_allocated:>9.3f} {shown:>9} {self.total_reclaimed:>9.3f}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def rollup(report: UsageReport, by: str) -> Rollup:
    """``report``'s rows summed per namespace, LocalQueue (``"queue"``) or ClusterQueue
    (``"cluster-queue"``), largest allocation first. Another ``by`` is a
    :class:`~rayqueue_sdk.errors.ConfigError` naming ``by`` and the allowed values.
    """
    if by not in ROLLUPS:
        raise ConfigError("by", by, f"one of {', '.join(ROLLUPS)}")
    groups: dict[tuple[str, str | None, str | None, str | None], list[UsageRow]] = {}
    for row in report.rows:
        groups.setdefault(_key(row, by), []).append(row)
    rows = [
        RollupRow(
            by,
            group,
            namespace,
            local_queue,
            cluster_queue,
            len(members),
            sum(m.gpu_hours_allocated for m in members),
            _busy(m.gpu_hours_busy for m in members),
            sum(m.gpu_hours_reclaimed for m in members),
        )
        for (group, namespace, local_queue, cluster_queue), members in groups.items()
    ]
    rows.sort(key=lambda r: (-r.gpu_hours_allocated, r.group))
    return Rollup(by, report.since, report.until, tuple(rows), report.notes)


_CLUSTER_FIELDS = (
    "namespace",
    "name",
    "kind",
    "queue",
    "cluster_queue",
    "gpu_hours_allocated",
    "gpu_hours_busy",
    "gpu_hours_reclaimed",
    "sources",
)


def clusters_csv(report: UsageReport) -> str:
    """``report``'s cluster rows as CSV with a header (the columns of :class:`UsageRow`).

    Example:
        >>> from datetime import UTC, datetime
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> print(clusters_csv(UsageReport(t, t, (UsageRow("a", "ws", "q", 1.0, None, 0.0),))), end="")
        namespace,name,kind,queue,cluster_queue,gpu_hours_allocated,gpu_hours_busy,gpu_hours_reclaimed,sources
        a,ws,RayCluster,q,,1.0,,0.0,
    """
    return rows_csv([r.to_dict() for r in report.rows], _CLUSTER_FIELDS)


def rows_csv(rows: Iterable[dict[str, Any]], fields: Iterable[str]) -> str:
    """``rows`` (dicts) as CSV with a header of ``fields``; ``None`` and lists become empty cells and
    ``;``-joined text.

    Example:
        >>> print(rows_csv([{"a": 1, "b": None, "c": ["x", "y"]}], ("a", "b", "c")), end="")
        a,b,c
        1,,x;y
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = list(fields)
    writer.writerow(names)
    for row in rows:
        cells = [row.get(name) for name in names]
        writer.writerow(
            ["" if c is None else ";".join(map(str, c)) if isinstance(c, list) else c for c in cells]
        )
    return out.getvalue()
