"""Quota headroom, pure: what each LocalQueue the reader can see may still get now, per flavor and resource.

From an overview (:class:`~rayqueue_sdk.admission.overview.QueueOverview`) and the LocalQueues as read:

- ``queue_used``: what the LocalQueue's own workloads hold (its ``status.flavorsReservation``, else
  ``flavorsUsage``; ``flavorUsage`` at ``v1beta1``), readable by anyone who may read the LocalQueue;
- ``nominal``, ``used`` (the whole ClusterQueue's), ``free`` (what a workload could get now: the
  ClusterQueue's unused nominal quota plus what its cohort lends, within its ``borrowingLimit``) and
  ``borrowable`` (the part of ``free`` that would be borrowed), computed by the same rules as
  :func:`~rayqueue_sdk.admission.fit.fit_requests` (:func:`~rayqueue_sdk.admission.fit.room`). These need
  the ClusterQueue; where it cannot be read they are ``None`` and ``hidden`` says which permission would
  show them.

Example:
    >>> from rayqueue_sdk.admission.overview import build_overview
    >>> cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
    ...       "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 8}]}]}]},
    ...       "status": {"flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "6"}]}]}}
    >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq"}, "status": {
    ...       "flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "2"}]}]}}
    >>> h = headroom_of(build_overview("ds", [lq], [cq], []), [lq])
    >>> print(h.text())
    LOCALQUEUE   CLUSTERQUEUE FLAVOR       RESOURCE        NOMINAL BORROWABLE   USED (QUEUE)   FREE
    q            cq           f            cpu                   8          0          6 (2)      2
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.estimate import CLUSTERQUEUE_PERMISSION
from rayqueue_sdk.admission.fit import room
from rayqueue_sdk.admission.overview import QueueOverview, format_amount
from rayqueue_sdk.manifests.meta import name_of
from rayqueue_sdk.manifests.quantities import quantity_or_zero

__all__ = ["HeadroomRow", "QueueHeadroom", "headroom_of"]

_ZERO = Decimal(0)


@dataclass(frozen=True)
class HeadroomRow:
    """One LocalQueue, flavor and resource: what it may still get now.

    Example:
        >>> HeadroomRow("q", "cq", "f", "cpu", Decimal(8), Decimal(0), Decimal(6), Decimal(2),
        ...             Decimal(2)).to_dict()["free"]
        '2'
    """

    local_queue: str
    cluster_queue: str | None
    flavor: str
    resource: str
    nominal: Decimal | None
    borrowable: Decimal | None
    used: Decimal | None
    queue_used: Decimal
    free: Decimal | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (amounts as short quantities; ``None`` where hidden)."""

        def fmt(v: Decimal | None) -> str | None:
            return None if v is None else format_amount(self.resource, v)

        return {
            "local_queue": self.local_queue,
            "cluster_queue": self.cluster_queue,
            "flavor": self.flavor,
            "resource": self.resource,
            "nominal": fmt(self.nominal),
            "borrowable": fmt(self.borrowable),
            "used": fmt(self.used),
            "queue_used": fmt(self.queue_used),
            "free": fmt(self.free),
        }


@dataclass(frozen=True)
class QueueHeadroom:
    """The headroom of every LocalQueue of a namespace; ``hidden`` says what could not be read and which
    permission would show it.

    Example:
        >>> QueueHeadroom("ds", (), ("x",)).to_dict()
        {'namespace': 'ds', 'rows': [], 'hidden': ['x']}
    """

    namespace: str
    rows: tuple[HeadroomRow, ...] = ()
    hidden: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "namespace": self.namespace,
            "rows": [r.to_dict() for r in self.rows],
            "hidden": list(self.hidden),
        }

    def text(self) -> str:
        """A plain table (``-`` where hidden), then what is hidden.

        Example:
            >>> print(QueueHeadroom("ds").text())
            LOCALQUEUE   CLUSTERQUEUE FLAVOR       RESOURCE        NOMINAL BORROWABLE   USED (QUEUE)   FREE
        """
        lines = [
            f"{'LOCALQUEUE':12} {'CLUSTERQUEUE':12} {'FLAVOR':12} {'RESOURCE':14} {'NOMINAL':>8} "
            f"{'BORROWABLE':>10} {'USED (QUEUE)':>14} {'FREE':>6}"
        ]
        for r in self.rows:
            d = r.to_dict()
            used = f"{d['used'] or '-'} ({d['queue_used']})"
            lines.append(
                f"{r.local_queue:12} {r.cluster_queue or '-':12} {r.flavor:12} {r.resource:14} "
                f"{d['nominal'] or '-':>8} {d['borrowable'] or '-':>10} {used:>14} {d['free'] or '-':>6}"
            )
        lines += [f"note: {h}" for h in self.hidden]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        head = "".join(
            f"<th>{h}</th>"
            for h in (
                "LocalQueue",
                "ClusterQueue",
                "flavor",
                "resource",
                "nominal",
                "borrowable",
                "used",
                "queue used",
                "free",
            )
        )
        body = ""
        for r in self.rows:
            d = r.to_dict()
            cells = [
                d[k]
                for k in (
                    "local_queue",
                    "cluster_queue",
                    "flavor",
                    "resource",
                    "nominal",
                    "borrowable",
                    "used",
                    "queue_used",
                    "free",
                )
            ]
            body += (
                "<tr>"
                + "".join(f"<td>{html.escape(str(c if c is not None else '-'))}</td>" for c in cells)
                + "</tr>"
            )
        notes = "".join(f"<p><em>{html.escape(h)}</em></p>" for h in self.hidden)
        title = f"<h4>quota headroom in {html.escape(self.namespace)}</h4>"
        return f"{title}<table><tr>{head}</tr>{body}</table>{notes}"


def _queue_usage(lq: Mapping[str, Any]) -> dict[tuple[str, str], Decimal]:
    status = lq.get("status") or {}
    usage = status.get("flavorsReservation") or status.get("flavorsUsage") or status.get("flavorUsage") or []
    return {
        (str(f.get("name")), str(r.get("name"))): quantity_or_zero(r.get("total"))
        for f in usage
        for r in f.get("resources") or []
    }


def headroom_of(overview: QueueOverview, local_queues: Iterable[Mapping[str, Any]]) -> QueueHeadroom:
    """The :class:`QueueHeadroom` of ``overview``'s LocalQueues (``local_queues``: the same, as read).

    Example:
        >>> from rayqueue_sdk.admission.overview import build_overview
        >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq"}}
        >>> h = headroom_of(build_overview("ds", [lq], [], [], cluster_queues_readable=False), [lq])
        >>> h.hidden[0].startswith("quota of ClusterQueue cq (nominal, borrowable, free) is hidden")
        True
    """
    by_name = {name_of(o): o for o in local_queues}
    rows: list[HeadroomRow] = []
    hidden: list[str] = []
    for q in overview.queues:
        mine = _queue_usage(by_name.get(q.name) or {})
        cq = q.cluster_queue
        if cq is None:
            if not overview.cluster_queues_readable:
                hidden.append(
                    f"quota of ClusterQueue {q.cluster_queue_name} (nominal, borrowable, free) is hidden: "
                    f"it needs {CLUSTERQUEUE_PERMISSION}"
                )
            for (flavor, resource), used in sorted(mine.items()):
                rows.append(
                    HeadroomRow(q.name, q.cluster_queue_name, flavor, resource, None, None, None, used, None)
                )
            continue
        members = overview.cohort_members(cq)
        for quota in cq.quotas:
            available, _ceiling, used = room(cq, members, quota.flavor, quota.resource)
            own_free = max(_ZERO, quota.nominal - used)
            rows.append(
                HeadroomRow(
                    q.name,
                    cq.name,
                    quota.flavor,
                    quota.resource,
                    quota.nominal,
                    max(_ZERO, available - own_free),
                    used,
                    mine.get((quota.flavor, quota.resource), _ZERO),
                    available,
                )
            )
    return QueueHeadroom(overview.namespace, tuple(rows), tuple(dict.fromkeys(hidden)))
