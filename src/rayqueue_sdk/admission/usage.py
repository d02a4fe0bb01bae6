"""GPU-hours from history, as pure arithmetic: intervals and samples in, :class:`UsageReport` out.

Three figures per cluster (:class:`UsageRow`):

* **allocated**: admitted GPUs × time (Kueue's admission, or the pods' GPU requests as
  kube-state-metrics records them);
* **busy**: the GPU-hours the GPUs were actually busy, from the DCGM utilisation samples
  (``None`` when Prometheus has none for the cluster: never a guess);
* **reclaimed**: GPUs × time between a scale-to-zero (the Workload deactivated, ``spec.active=false``)
  and the next admission or the deletion.

:func:`gpu_hours` sums :class:`GpuInterval` s clipped to a window; :func:`integrate_samples` turns a
Prometheus range query's ``[(t, value)]`` into hours; :func:`workload_history` reads one Kueue Workload's
conditions into intervals. The gathering (Kubernetes API, Prometheus HTTP) lives in
:mod:`rayqueue_sdk.queues.usage`; this module does no I/O.

Example:
    >>> from datetime import UTC, datetime
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> t2 = datetime(2026, 1, 1, 2, tzinfo=UTC)
    >>> gpu_hours([GpuInterval(t0, None, 2)], t0, t2)
    4.0
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.records import record_dict
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.meta import condition_of, is_true, parse_time, transition_time
from rayqueue_sdk.manifests.quantities import parse_quantity

__all__ = [
    "GPU_RESOURCE",
    "GpuInterval",
    "UsageReport",
    "UsageKey",
    "UsageRow",
    "WorkloadHistory",
    "build_report",
    "cluster_of_pod",
    "gpu_hours",
    "integrate_samples",
    "step_for",
    "parse_since",
    "workload_gpus",
    "workload_history",
]

#: The extended resource counted as GPUs.
GPU_RESOURCE = "nvidia.com/gpu"

#: Evicted reasons that mean "deactivated" (``spec.active=false``): Kueue v0.9+ says ``Deactivated``
#: (or ``DeactivatedDueTo<cause>``), older releases ``InactiveWorkload``.
_DEACTIVATED = re.compile(r"^(Deactivated\w*|InactiveWorkload)$")

_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SINCE_ALLOWED = "a duration such as 30m, 12h, 7d or 2w (units s, m, h, d, w), or a timezone-aware datetime"


def parse_since(since: str | timedelta | datetime | None, now: datetime) -> datetime:
    """The start of the report's window: ``since`` as a duration before ``now``, or a datetime.

    ``None`` means 7 days. A naive datetime, a negative or empty duration, or another form is a
    :class:`~rayqueue_sdk.errors.ConfigError` naming ``since`` and the allowed forms.

    Example:
        >>> from datetime import UTC
        >>> now = datetime(2026, 1, 8, tzinfo=UTC)
        >>> parse_since("7d", now).isoformat()
        '2026-01-01T00:00:00+00:00'
        >>> parse_since("yesterday", now)
        Traceback (most recent call last):
        rayqueue_sdk.errors.ConfigError: since: got 'yesterday'; allowed: a duration such as 30m, ...
    """
    if since is None:
        return now - timedelta(days=7)
    if isinstance(since, datetime):
        if since.tzinfo is None:
            raise ConfigError("since", since.isoformat(), _SINCE_ALLOWED, problem="a naive datetime")
        if since > now:
            raise ConfigError("since", since.isoformat(), _SINCE_ALLOWED, problem="in the future")
        return since
    if isinstance(since, timedelta):
        if since.total_seconds() <= 0:
            raise ConfigError("since", str(since), _SINCE_ALLOWED, problem="not a positive duration")
        return now - since
    match = _SINCE.match(since) if isinstance(since, str) else None
    if match is None or float(match.group(1)) <= 0:
        raise ConfigError("since", since, _SINCE_ALLOWED)
    return now - timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])


@dataclass(frozen=True)
class GpuInterval:
    """``gpus`` GPUs held (or given back) from ``start`` to ``end`` (``None``: still so).

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> GpuInterval(t, None, 1).end is None
        True
    """

    start: datetime
    end: datetime | None
    gpus: float


def gpu_hours(intervals: Iterable[GpuInterval], since: datetime, until: datetime) -> float:
    """GPUs × hours of ``intervals`` inside ``[since, until]``; concurrent intervals add up.

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> h = timedelta(hours=1)
        >>> gpu_hours([GpuInterval(t - h, t + h, 2), GpuInterval(t, t + 3 * h, 1)], t, t + 2 * h)
        4.0
    """
    total = 0.0
    for iv in intervals:
        start = max(iv.start, since)
        end = min(iv.end or until, until)
        if end > start:
            total += iv.gpus * (end - start).total_seconds() / 3600.0
    return total


def integrate_samples(points: Sequence[tuple[float, float]], step: float) -> float:
    """Hours of a range query's samples ``[(unix time, value)]`` taken every ``step`` seconds:
    each sample stands for ``value × step`` (a GPU count gives GPU-hours, a busy ratio busy GPU-hours).

    Example:
        >>> integrate_samples([(0, 2.0), (60, 2.0), (120, 1.0)], 60)   # 2+2+1 GPU-minutes... x60 s
        0.08333333333333333
    """
    return sum(float(v) for _, v in points) * step / 3600.0


def _gpus_of(resources: Mapping[str, Any] | None) -> Decimal:
    value = (resources or {}).get(GPU_RESOURCE)
    return parse_quantity(value) if value is not None else Decimal(0)


def workload_gpus(workload: Mapping[str, Any]) -> float:
    """The GPUs a Workload holds when admitted: its admission's ``resourceUsage``, else what its pod
    sets ask for (count × each container's request, or limit).

    Example:
        >>> pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
        >>> workload_gpus({"spec": {"podSets": [{"count": 2, "template": pod}]}})
        2.0
    """
    admission = (workload.get("status") or {}).get("admission") or {}
    assigned = [_gpus_of(p.get("resourceUsage")) for p in admission.get("podSetAssignments") or []]
    if any(assigned):
        return float(sum(assigned))
    total = Decimal(0)
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        count = int(pod_set.get("count") or 1)
        for container in ((pod_set.get("template") or {}).get("spec") or {}).get("containers") or []:
            res = container.get("resources") or {}
            total += count * (_gpus_of(res.get("requests")) or _gpus_of(res.get("limits")))
    return float(total)


@dataclass(frozen=True)
class WorkloadHistory:
    """What one Workload's conditions say about its GPUs: the owner, queue, GPU count, the admitted
    and the reclaimed intervals, and notes on what conditions cannot tell."""

    namespace: str
    name: str
    kind: str
    queue: str | None
    gpus: float
    allocated: tuple[GpuInterval, ...]
    reclaimed: tuple[GpuInterval, ...]
    notes: tuple[str, ...] = ()
    #: The ClusterQueue of its admission (``status.admission.clusterQueue``) while it holds one.
    cluster_queue: str | None = None


def _owner(workload: Mapping[str, Any]) -> tuple[str, str]:
    meta = workload.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") in ("RayCluster", "RayJob"):
            return str(ref.get("kind")), str(ref.get("name"))
    return "Workload", str(meta.get("name") or "")


def _past_end(workload: Mapping[str, Any], admitted_at: datetime | None) -> datetime | None:
    """When the Workload's last past admission ended: ``Admitted=False``'s transition (where Kueue added
    it to ``accumulatedPastExecutionTimeSeconds``); when admitted again, no later than the requeue that
    preceded the new admission, nor than the new admission itself."""
    admitted = condition_of(workload, "Admitted")
    if admitted_at is None:
        return transition_time(admitted) if admitted is not None else None
    requeued = condition_of(workload, "Requeued")
    requeued_at = transition_time(requeued) if is_true(requeued) else None
    return min(requeued_at, admitted_at) if requeued_at is not None else admitted_at


def workload_history(workload: Mapping[str, Any], now: datetime) -> WorkloadHistory:
    """Read one Workload (normalised to ``v1beta2``) into intervals.

    * admitted now (``Admitted=True``): from its ``lastTransitionTime`` until ``Finished``, the deletion
      or now;
    * admitted before (``status.accumulatedPastExecutionTimeSeconds``, the seconds Kueue adds up each time
      the Workload loses its admission: evicted by a scale-to-zero, a preemption, a stopped queue...):
      one interval of that length ending where the last of them ended (``Admitted=False``'s transition,
      or the requeue before a resumed admission). Exact in total; spread over several cycles, they are
      placed back to back, so a window that starts among them clips them approximately;
    * deactivated (``Evicted=True`` with a deactivation reason, or ``spec.active=false``): reclaimed from
      the eviction until the next admission, the deletion or now. An eviction with no past admission
      recorded (a Kueue before v0.9) gets a note: the conditions keep only their last transition.

    Example:
        >>> wl = {"metadata": {"namespace": "ds", "name": "raycluster-rc-1",
        ...                    "ownerReferences": [{"kind": "RayCluster", "name": "rc"}]},
        ...       "spec": {"queueName": "q", "active": False, "podSets": [{"count": 1, "template": {"spec":
        ...           {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}}]}}}]},
        ...       "status": {"accumulatedPastExecutionTimeSeconds": 5400, "conditions": [
        ...           {"type": "Admitted", "status": "False", "reason": "NoReservation",
        ...            "lastTransitionTime": "2026-01-01T10:00:00Z"},
        ...           {"type": "Evicted", "status": "True", "reason": "Deactivated",
        ...            "lastTransitionTime": "2026-01-01T10:00:00Z"}]}}
        >>> from datetime import UTC
        >>> t, now = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 12, tzinfo=UTC)
        >>> h = workload_history(wl, now)
        >>> h.name, h.gpus, gpu_hours(h.allocated, t, now), gpu_hours(h.reclaimed, t, now)
        ('rc', 2.0, 3.0, 4.0)
    """
    meta = workload.get("metadata") or {}
    spec = workload.get("spec") or {}
    status = workload.get("status") or {}
    kind, name = _owner(workload)
    gpus = workload_gpus(workload)
    deleted = parse_time(meta.get("deletionTimestamp"))
    end_of_record = min(deleted, now) if deleted else None
    allocated: list[GpuInterval] = []
    reclaimed: list[GpuInterval] = []
    notes: list[str] = []
    admitted = condition_of(workload, "Admitted")
    finished = condition_of(workload, "Finished")
    evicted = condition_of(workload, "Evicted")
    finished_at = transition_time(finished) if is_true(finished) else None
    admitted_at = transition_time(admitted) if is_true(admitted) else None
    if gpus and admitted_at is not None:
        allocated.append(GpuInterval(admitted_at, finished_at or end_of_record, gpus))
    past = float(status.get("accumulatedPastExecutionTimeSeconds") or 0)
    past_end = _past_end(workload, admitted_at) if past else None
    if gpus and past_end is not None:
        allocated.append(GpuInterval(past_end - timedelta(seconds=past), past_end, gpus))
    evicted_at = transition_time(evicted) if is_true(evicted) else None
    deactivated = evicted_at is not None and (
        spec.get("active") is False or bool(_DEACTIVATED.match(str((evicted or {}).get("reason") or "")))
    )
    if gpus and deactivated and evicted_at is not None and not finished_at:
        # given back from the eviction until the next admission (a resume), the deletion, or now
        resumed = admitted_at if admitted_at is not None and admitted_at > evicted_at else None
        reclaimed.append(GpuInterval(evicted_at, resumed or end_of_record, gpus))
    recorded = status.get("accumulatedPastExecutionTimeSeconds") is not None
    if gpus and evicted_at is not None and admitted_at is None and not recorded:
        notes.append(
            f"{kind} {name}: admitted before its eviction at {evicted_at:%Y-%m-%d %H:%M} UTC for a "
            "time the Workload does not record (no accumulatedPastExecutionTimeSeconds; Prometheus keeps it)"
        )
    return WorkloadHistory(
        namespace=str(meta.get("namespace") or ""),
        name=name,
        kind=kind,
        queue=spec.get("queueName"),
        gpus=gpus,
        allocated=tuple(allocated),
        reclaimed=tuple(reclaimed),
        notes=tuple(notes),
        cluster_queue=(status.get("admission") or {}).get("clusterQueue"),
    )


@dataclass(frozen=True)
class UsageRow:
    """One cluster's GPU-hours in the report's window (a RayJob's: its generated RayCluster's, in one row).

    ``gpu_hours_busy`` is ``None`` where Prometheus has no GPU metrics for the cluster.

    Example:
        >>> UsageRow("ds", "rc", "q", 2.0, None, 0.5).to_dict()["gpu_hours_busy"] is None
        True
    """

    namespace: str
    name: str
    queue: str | None
    gpu_hours_allocated: float
    gpu_hours_busy: float | None
    gpu_hours_reclaimed: float
    kind: str = "RayCluster"
    sources: tuple[str, ...] = ()
    #: The ClusterQueue behind ``queue`` (the admission's, else the LocalQueue's ``spec.clusterQueue``).
    cluster_queue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (hours rounded to 4 decimals)."""
        return record_dict(
            self,
            gpu_hours_allocated=round(self.gpu_hours_allocated, 4),
            gpu_hours_busy=None if self.gpu_hours_busy is None else round(self.gpu_hours_busy, 4),
            gpu_hours_reclaimed=round(self.gpu_hours_reclaimed, 4),
            sources=list(self.sources),
        )


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if value < 10 else f"{value:.1f}"


@dataclass(frozen=True)
class UsageReport:
    """GPU-hours per cluster between ``since`` and ``until`` (:func:`rayqueue_sdk.usage_report`).

    ``sources`` says where the history came from (``"prometheus"``, ``"workload-conditions"``);
    ``notes`` what could not be known (e.g. ``since`` older than Prometheus' retention).

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> r = UsageReport(t, t + timedelta(days=7), (UsageRow("ds", "rc", "q", 3.0, 1.5, 0.0),))
        >>> r.total_allocated, r.rows[0].name
        (3.0, 'rc')
        >>> print(r.text().splitlines()[1])
        NAMESPACE    CLUSTER                  QUEUE              ALLOC    BUSY RECLAIM
    """

    since: datetime
    until: datetime
    rows: tuple[UsageRow, ...]
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: GPU-hours per ClusterQueue behind the namespace's LocalQueues, from Kueue's own metrics
    #: (``kueue_cluster_queue_resource_usage``): every workload's, not only this namespace's clusters.
    cluster_queues: tuple[tuple[str, float], ...] = ()

    @property
    def total_allocated(self) -> float:
        """Allocated GPU-hours of every row."""
        return sum(r.gpu_hours_allocated for r in self.rows)

    @property
    def total_reclaimed(self) -> float:
        """Reclaimed GPU-hours of every row."""
        return sum(r.gpu_hours_reclaimed for r in self.rows)

    @property
    def total_busy(self) -> float | None:
        """Busy GPU-hours of the rows that have metrics (``None`` when none has)."""
        known = [r.gpu_hours_busy for r in self.rows if r.gpu_hours_busy is not None]
        return sum(known) if known else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: window, rows, totals, sources, notes."""
        busy = self.total_busy
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "rows": [r.to_dict() for r in self.rows],
            "totals": {
                "gpu_hours_allocated": round(self.total_allocated, 4),
                "gpu_hours_busy": None if busy is None else round(busy, 4),
                "gpu_hours_reclaimed": round(self.total_reclaimed, 4),
            },
            "sources": list(self.sources),
            "notes": list(self.notes),
            "cluster_queues": {name: round(hours, 4) for name, hours in self.cluster_queues},
        }

    def text(self) -> str:
        """An 80-column table (GPU-hours), then the totals and notes."""
        lines = [
            f"GPU-hours {self.since:%Y-%m-%d %H:%M} - {self.until:%Y-%m-%d %H:%M} UTC "
            f"(from {', '.join(self.sources) or 'nothing'})",
            f"{'NAMESPACE':12} {'CLUSTER':24} {'QUEUE':16} {'ALLOC':>7} {'BUSY':>7} {'RECLAIM':>7}",
        ]
        for r in self.rows:
            lines.append(
                f"{r.namespace[:12]:12} {r.name[:24]:24} {(r.queue or '-')[:16]:16} "
                f"{_hours(r.gpu_hours_allocated):>7} {_hours(r.gpu_hours_busy):>7} "
                f"{_hours(r.gpu_hours_reclaimed):>7}"
            )
        if not self.rows:
            lines.append("(no cluster held GPUs in this window)")
        lines.append(
            f"{'TOTAL':54} {_hours(self.total_allocated):>7} {_hours(self.total_busy):>7} "
            f"{_hours(self.total_reclaimed):>7}"
        )
        lines.extend(
            f"ClusterQueue {name}: {_hours(hours)} GPU-hours in use (all its workloads, Kueue's metrics)"
            for name, hours in self.cluster_queues
        )
        lines.extend(textwrap.fill(f"note: {n}", width=80, subsequent_indent="  ") for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


def cluster_of_pod(pod: str, clusters: Iterable[str]) -> str | None:
    """Which of ``clusters`` a pod belongs to, by KubeRay's pod names (``<cluster>-head-<suffix>``,
    ``<cluster>-<group>-worker-<suffix>``); the longest matching cluster name wins.

    Example:
        >>> cluster_of_pod("ws-2-head-abcde", ["ws", "ws-2"]), cluster_of_pod("ws-g-worker-x1", ["ws"])
        ('ws-2', 'ws')
        >>> cluster_of_pod("other-pod", ["ws"]) is None
        True
    """
    best: str | None = None
    for name in clusters:
        if re.fullmatch(rf"{re.escape(name)}-(head|[a-z0-9-]+-worker)-[a-z0-9]+", pod) and (
            best is None or len(name) > len(best)
        ):
            best = name
    return best


def step_for(since: datetime, until: datetime, max_points: int = 10_000) -> float:
    """The range-query step (seconds) covering ``[since, until]`` in at most ``max_points`` samples
    (Prometheus refuses more than 11,000), never below 1 s.

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> step_for(t, t + timedelta(days=7)), step_for(t, t + timedelta(minutes=5))
        (61.0, 1.0)
    """
    span = (until - since).total_seconds()
    return float(max(1, -(-int(span) // max_points)))


#: A row's key: (namespace, cluster name).
UsageKey = tuple[str, str]


def build_report(
    since: datetime,
    until: datetime,
    histories: Sequence[WorkloadHistory],
    *,
    allocated_by_metrics: Mapping[UsageKey, float] | None = None,
    busy_by_metrics: Mapping[UsageKey, float] | None = None,
    queues: Mapping[UsageKey, str] | None = None,
    sources: Sequence[str] = (),
    notes: Sequence[str] = (),
    cluster_queues: Mapping[str, float] | None = None,
    owners: Mapping[UsageKey, UsageKey] | None = None,
    local_queues: Mapping[tuple[str, str], str] | None = None,
) -> UsageReport:
    """Combine what the Workloads' conditions and Prometheus say into one row per cluster.

    Allocated GPU-hours come from ``allocated_by_metrics`` (pod GPU requests in Prometheus) when given,
    else from the Workloads' admitted intervals; reclaimed ones always from the Workloads; busy ones only
    from ``busy_by_metrics`` (a cluster missing there gets ``None``). ``owners`` maps a RayJob's generated
    RayCluster to the RayJob (its Workload's owner), so the job is one row; ``local_queues`` maps
    (namespace, LocalQueue) to its ClusterQueue for the rows whose Workload holds no admission now.

    Example:
        >>> from datetime import UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> h = WorkloadHistory("ds", "rc", "RayCluster", "q", 1.0, (GpuInterval(t, None, 1.0),), ())
        >>> r = build_report(t, t + timedelta(hours=3), [h], busy_by_metrics={("ds", "rc"): 0.5})
        >>> r.rows[0].gpu_hours_allocated, r.rows[0].gpu_hours_busy
        (3.0, 0.5)
    """
    alias = dict(owners or {})
    allocated_by_metrics = None if allocated_by_metrics is None else _merged(allocated_by_metrics, alias)
    busy_by_metrics = None if busy_by_metrics is None else _merged(busy_by_metrics, alias)
    queues = _merged_first(queues or {}, alias)
    by_key: dict[UsageKey, list[WorkloadHistory]] = {}
    for h in histories:
        by_key.setdefault((h.namespace, h.name), []).append(h)
    keys = set(by_key) | set(allocated_by_metrics or {}) | set(busy_by_metrics or {})
    all_notes = list(notes)
    rows: list[UsageRow] = []
    for key in sorted(keys):
        hs = by_key.get(key, [])
        row_sources: list[str] = []
        if allocated_by_metrics is not None:
            allocated = float(allocated_by_metrics.get(key, 0.0))
            row_sources.append("prometheus:kube-state-metrics")
        else:
            allocated = sum(gpu_hours(h.allocated, since, until) for h in hs)
            row_sources.append("workload-conditions")
            all_notes.extend(n for h in hs for n in h.notes)
        reclaimed = sum(gpu_hours(h.reclaimed, since, until) for h in hs)
        if hs and "workload-conditions" not in row_sources:
            row_sources.append("workload-conditions")
        busy = None if busy_by_metrics is None else busy_by_metrics.get(key)
        if busy is not None:
            row_sources.append("prometheus:dcgm")
        queue = next((h.queue for h in hs if h.queue), None) or queues.get(key)
        kind = hs[0].kind if hs else ("RayJob" if key in alias.values() else "RayCluster")
        cluster_queue = next((h.cluster_queue for h in hs if h.cluster_queue), None) or (
            (local_queues or {}).get((key[0], queue)) if queue else None
        )
        rows.append(
            UsageRow(
                key[0],
                key[1],
                queue,
                allocated,
                busy,
                reclaimed,
                kind=kind,
                sources=tuple(row_sources),
                cluster_queue=cluster_queue,
            )
        )
    return UsageReport(
        since,
        until,
        tuple(rows),
        sources=tuple(sources),
        notes=tuple(dict.fromkeys(all_notes)),
        cluster_queues=tuple(sorted((cluster_queues or {}).items())),
    )


def _merged(values: Mapping[UsageKey, float], alias: Mapping[UsageKey, UsageKey]) -> dict[UsageKey, float]:
    """``values`` with each aliased key's value added to its owner's."""
    out: dict[UsageKey, float] = {}
    for key, value in values.items():
        owner = alias.get(key, key)
        out[owner] = out.get(owner, 0.0) + value
    return out


def _merged_first(values: Mapping[UsageKey, str], alias: Mapping[UsageKey, UsageKey]) -> dict[UsageKey, str]:
    """``values`` under their owners' keys (an owner's own value first)."""
    out = {k: v for k, v in values.items() if k not in alias}
    for key, value in values.items():
        out.setdefault(alias.get(key, key), value)
    return out
