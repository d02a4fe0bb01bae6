"""The pure admission engine: one scheduling pass over plain Kueue objects, returning decisions.

Inputs are v1beta2 dicts (ClusterQueues, Cohorts, ResourceFlavors, LocalQueues, Workloads) and
namespace labels; the output is a :class:`PassResult` saying which Workloads to admit (with their
``status.admission``), which to evict (preemption victims, drained queues) and with what reason
and message, and which Pending/Inadmissible message to show on the others. No I/O, no clock
reads (``now`` is passed in), no mutation of the inputs.

A pass repeats Kueue's scheduling cycle (pkg/scheduler/scheduler.go) until no queue has a head
left: each cycle takes the head of every active ClusterQueue (by priority, then creation time),
assigns flavors against the current usage, looks for preemption targets where needed, orders the
heads (less borrowing first, then priority, then age) and admits those that still fit. With
``BestEffortFIFO`` a head that cannot be admitted steps aside for the next one; with
``StrictFIFO`` it blocks its queue for the rest of the pass. A Workload is admitted whole or not
at all, and only when its usage fits the quota tree (nominal quota, borrowing and lending limits),
so quota is never over-committed.

Example:
    >>> cq = {"metadata": {"name": "cq"}, "spec": {"namespaceSelector": {}, "resourceGroups": [
    ...     {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "default-flavor", "resources": [
    ...         {"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}]}}
    >>> lq = {"metadata": {"name": "lq", "namespace": "demo"}, "spec": {"clusterQueue": "cq"}}
    >>> def wl(name, t):
    ...     return {"metadata": {"name": name, "namespace": "demo", "uid": name,
    ...             "creationTimestamp": f"2026-01-01T00:00:0{t}Z"},
    ...             "spec": {"queueName": "lq", "podSets": [{"name": "head", "count": 1, "template": {
    ...                 "spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": 2}}}]}}}]}}
    >>> result = admission_pass(cluster_queues=[cq], cohorts=[], resource_flavors=[
    ...     {"metadata": {"name": "default-flavor"}}], local_queues=[lq], workloads=[wl("a", 1), wl("b", 2)])
    >>> [a.workload.name for a in result.admitted], result.pending[0].message
    (['a'], "couldn't assign flavors to pod set head: insufficient unused quota for nvidia.com/gpu in \
flavor default-flavor, 2 more needed")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.admissionchecks import waits_for_backoff
from rayqueue_local.controllers.kueue.flavors import Assignment, Mode, assign_flavors
from rayqueue_local.controllers.kueue.preemption import Target, get_targets
from rayqueue_local.controllers.kueue.snapshot import (
    ClusterQueueInfo,
    Snapshot,
    WorkloadInfo,
    build_snapshot,
)

__all__ = [
    "Admission",
    "Eviction",
    "PassResult",
    "PendingStatus",
    "admission_pass",
    "matches_selector",
    "queue_order_key",
]


@dataclass
class Admission:
    """Admit ``workload``: write ``admission`` as its ``status.admission``."""

    workload: WorkloadInfo
    admission: dict[str, Any]


@dataclass
class Eviction:
    """Evict ``workload`` (``Evicted`` reason and message); for preemptions also the ``Preempted``
    reason and the preemptor."""

    workload: WorkloadInfo
    reason: str
    message: str
    preemption_reason: str | None = None
    preemptor: WorkloadInfo | None = None


@dataclass
class PendingStatus:
    """Leave ``workload`` pending with ``QuotaReserved=False`` ``reason``/``message``."""

    workload: WorkloadInfo
    reason: str
    message: str


@dataclass
class PassResult:
    """Everything one pass decided, each ClusterQueue's pending Workloads in queue order, and every
    Workload as the pass saw it (new admissions included)."""

    admitted: list[Admission] = field(default_factory=list)
    evicted: list[Eviction] = field(default_factory=list)
    pending: list[PendingStatus] = field(default_factory=list)
    queue_order: dict[str, list[WorkloadInfo]] = field(default_factory=dict)
    workloads: list[WorkloadInfo] = field(default_factory=list)


def queue_order_key(wl: WorkloadInfo) -> tuple[int, float, str, str]:
    """Queue order within a ClusterQueue: higher priority first, then older, then by name."""
    return (-wl.priority, wl.created, wl.namespace, wl.name)


def matches_selector(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a metav1.LabelSelector matches ``labels`` (``None`` matches nothing, ``{}`` everything).

    Example:
        >>> matches_selector({"matchLabels": {"team": "a"}}, {"team": "a"}), matches_selector(None, {})
        (True, False)
    """
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


class _Pass:
    def __init__(self, snap: Snapshot, namespaces: Mapping[str, Mapping[str, str]], now: float) -> None:
        self.snap, self.namespaces, self.now = snap, namespaces, now
        self.result = PassResult()
        self.preempted: set[tuple[str, str]] = set()

    def namespace_ok(self, wl: WorkloadInfo, cq: ClusterQueueInfo) -> bool:
        labels = dict(self.namespaces.get(wl.namespace) or {})
        labels.setdefault("kubernetes.io/metadata.name", wl.namespace)
        return matches_selector(cq.namespace_selector, labels)

    def fits(self, cq: ClusterQueueInfo, usage: dict[q.FR, int], targets: list[Target]) -> bool:
        victims = [t.workload for t in targets if t.workload.key not in self.preempted]
        for wl in victims:
            self.snap.remove_workload(wl)
        try:
            return all(value <= q.available(cq.node, fr) for fr, value in usage.items())
        finally:
            for wl in victims:
                self.snap.add_workload(wl)

    def pending(self, wl: WorkloadInfo, message: str, reason: str = msg.PENDING) -> None:
        self.result.pending.append(PendingStatus(wl, reason, message))

    def nominate(self, wl: WorkloadInfo, cq: ClusterQueueInfo) -> tuple[Assignment, list[Target]]:
        """Assign flavors and, where needed, find preemption targets against the cycle's snapshot."""
        assignment = assign_flavors(self.snap, wl, cq)
        targets: list[Target] = []
        if assignment.mode == Mode.PREEMPT:
            targets = get_targets(self.snap, wl, cq, assignment.frs_needing_preemption(), assignment.usage)
        return assignment, targets

    def process(
        self, wl: WorkloadInfo, cq: ClusterQueueInfo, assignment: Assignment, targets: list[Target]
    ) -> bool:
        """Act on one nominated head; return whether it was admitted."""
        mode = assignment.mode
        message = assignment.message()
        if mode == Mode.NO_FIT or (mode == Mode.PREEMPT and not targets):
            self.pending(wl, message)
            return False
        if any(t.workload.key in self.preempted for t in targets):
            self.pending(wl, msg.OVERLAPPING_TARGETS)
            return False
        if not self.fits(cq, assignment.usage, targets):
            self.pending(wl, msg.NO_LONGER_FITS)
            return False
        if mode == Mode.PREEMPT:
            self.preempted.update(t.workload.key for t in targets)
            self.snap.add_usage(cq, assignment.usage)  # hold the room the victims will leave
            for target in targets:
                if not target.workload.evicted:
                    text = msg.preemption_message(
                        wl.uid, wl.job_uid, target.reason, cq.path(), target.cluster_queue.path()
                    )
                    self.result.evicted.append(
                        Eviction(target.workload, msg.EVICTED_BY_PREEMPTION, text, target.reason, wl)
                    )
            self.pending(wl, message + msg.pending_preemption(len(targets)))
            return False
        wl.cluster_queue, wl.usage, wl.reserved, wl.reserved_at = (
            cq.name,
            dict(assignment.usage),
            True,
            self.now,
        )
        self.snap.add_workload(wl)
        self.result.admitted.append(Admission(wl, assignment.to_admission()))
        return True

    def run(self, queues: dict[str, list[WorkloadInfo]]) -> None:
        position = dict.fromkeys(queues, 0)
        blocked: set[str] = set()
        while True:
            heads: list[tuple[WorkloadInfo, ClusterQueueInfo]] = []
            for name in sorted(queues):
                if name not in blocked and position[name] < len(queues[name]):
                    heads.append((queues[name][position[name]], self.snap.queues[name]))
                    position[name] += 1
            if not heads:
                return
            nominated = []
            for wl, cq in heads:
                if not self.namespace_ok(wl, cq):
                    self.pending(wl, msg.NAMESPACE_MISMATCH)
                    if cq.strategy == "StrictFIFO":
                        blocked.add(cq.name)
                    continue
                nominated.append((wl, cq, *self.nominate(wl, cq)))
            # As Kueue: all heads of a cycle are assigned against the same snapshot, then handled
            # least borrowing first, then by priority and age; one that no longer fits waits.
            nominated.sort(key=lambda e: (e[2].borrowing, *queue_order_key(e[0])))
            for wl, cq, assignment, targets in nominated:
                if not self.process(wl, cq, assignment, targets) and cq.strategy == "StrictFIFO":
                    blocked.add(cq.name)


def admission_pass(
    *,
    cluster_queues: Iterable[dict[str, Any]],
    cohorts: Iterable[dict[str, Any]] = (),
    resource_flavors: Iterable[dict[str, Any]] = (),
    local_queues: Iterable[dict[str, Any]] = (),
    workloads: Iterable[dict[str, Any]] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    now: float = 0.0,
) -> PassResult:
    """Run one admission pass; see the module docstring. ``now`` stamps new admissions (epoch seconds)."""
    infos = [WorkloadInfo.from_object(obj) for obj in workloads]
    cqs = list(cluster_queues)
    snap = build_snapshot(
        cluster_queues=cqs, cohorts=cohorts, resource_flavors=resource_flavors, workloads=infos
    )
    lqs = {(lq["metadata"].get("namespace", ""), lq["metadata"]["name"]): lq for lq in local_queues}
    run = _Pass(snap, namespaces or {}, now)
    result = run.result
    result.workloads = infos

    for cq in snap.queues.values():
        for wl in list(cq.workloads.values()):
            if wl.evicted:
                continue
            lq_spec = (lqs.get((wl.namespace, wl.queue_name)) or {}).get("spec") or {}
            if cq.stop_policy == "HoldAndDrain":
                result.evicted.append(
                    Eviction(wl, msg.EVICTED_BY_CLUSTER_QUEUE_STOPPED, msg.CLUSTER_QUEUE_STOPPED_MESSAGE)
                )
            elif lq_spec.get("stopPolicy") == "HoldAndDrain":
                result.evicted.append(
                    Eviction(wl, msg.EVICTED_BY_LOCAL_QUEUE_STOPPED, "The LocalQueue is stopped")
                )

    queues: dict[str, list[WorkloadInfo]] = {name: [] for name in snap.queues}
    for wl in infos:
        if wl.finished or wl.reserved or not wl.active or waits_for_backoff(wl.obj):
            continue  # a Workload in its requeue backoff (.admissionchecks) waits out of the queue
        lq = lqs.get((wl.namespace, wl.queue_name))
        if lq is None:
            run.pending(wl, msg.local_queue_missing(wl.queue_name), msg.INADMISSIBLE)
            continue
        if ((lq.get("spec") or {}).get("stopPolicy") or "None") != "None":
            run.pending(wl, msg.local_queue_inactive(wl.queue_name), msg.INADMISSIBLE)
            continue
        cq_name = (lq.get("spec") or {}).get("clusterQueue", "")
        target = snap.queues.get(cq_name)
        if target is None:
            run.pending(wl, msg.cluster_queue_missing(cq_name), msg.INADMISSIBLE)
            continue
        queues[cq_name].append(wl)
        if not target.active:
            run.pending(wl, msg.cluster_queue_inactive(cq_name), msg.INADMISSIBLE)
    for name in queues:
        queues[name].sort(key=queue_order_key)
    run.run({name: wls for name, wls in queues.items() if snap.queues[name].active})
    admitted = {a.workload.key for a in result.admitted}
    result.queue_order = {name: [wl for wl in wls if wl.key not in admitted] for name, wls in queues.items()}
    return result
