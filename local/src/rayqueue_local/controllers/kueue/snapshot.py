"""A scheduling snapshot: ClusterQueues with their settings, the quota tree and the Workloads in it.

Built from plain objects (v1beta2 dicts) by :func:`build_snapshot`; the engine, the flavor assigner
and the preemptor read and (for simulations) mutate it. Nothing here does I/O.

Example:
    >>> snap = build_snapshot(cluster_queues=[{"metadata": {"name": "cq"}, "spec": {}}], cohorts=[],
    ...                       resource_flavors=[], workloads=[])
    >>> snap.queues["cq"].strategy, snap.queues["cq"].active
    ('BestEffortFIFO', True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.amounts import to_amount
from rayqueue_local.controllers.kueue.workloads import JOB_UID_LABEL, pod_requests

__all__ = [
    "ClusterQueueInfo",
    "PodSetInfo",
    "Snapshot",
    "WorkloadInfo",
    "build_snapshot",
]


def _hashable(value: Any) -> Any:
    """``value`` as a hashable key (``None`` for an empty or missing field)."""
    return repr(value) if value else None


@dataclass(slots=True)
class PodSetInfo:
    """One pod set: its name, count, per-pod requests (Kueue units) and pod spec."""

    name: str
    count: int
    per_pod: dict[str, int]
    spec: dict[str, Any]


@dataclass(eq=False, slots=True)
class WorkloadInfo:
    """What scheduling needs to know about one Workload."""

    obj: dict[str, Any]
    namespace: str
    name: str
    uid: str
    job_uid: str
    priority: int
    created: float
    queue_name: str
    active: bool
    pod_sets: list[PodSetInfo]
    cluster_queue: str | None = None
    reserved: bool = False
    evicted: bool = False
    finished: bool = False
    reserved_at: float = 0.0
    usage: dict[q.FR, int] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        """``(namespace, name)``."""
        return (self.namespace, self.name)

    @property
    def shape(self) -> tuple[Any, ...]:
        """What flavor assignment reads of the pod sets (name, count, per-pod requests, tolerations and
        nodeSelector), hashable: Workloads with equal shapes get equal assignments in one snapshot. Not
        kept: a pass nominates a Workload once, and thousands of kept shapes would only cost memory."""
        return tuple(
            [
                (
                    ps.name,
                    ps.count,
                    tuple(ps.per_pod.items()),
                    _hashable(ps.spec.get("tolerations")),
                    _hashable(ps.spec.get("nodeSelector")),
                )
                for ps in self.pod_sets
            ]
        )

    @staticmethod
    def from_object(obj: dict[str, Any]) -> WorkloadInfo:
        """Read a v1beta2 Workload."""
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        seen_evicted = seen_finished = False
        pod_sets = []
        for ps in spec.get("podSets") or ():
            pod_spec = (ps.get("template") or {}).get("spec") or {}
            pod_sets.append(PodSetInfo(ps["name"], int(ps.get("count", 1)), pod_requests(pod_spec), pod_spec))
        info = WorkloadInfo(
            obj=obj,
            namespace=meta.get("namespace", ""),
            name=meta.get("name", ""),
            uid=meta.get("uid", ""),
            job_uid=(meta.get("labels") or {}).get(JOB_UID_LABEL, ""),
            priority=int(spec.get("priority") or 0),
            created=parse_rfc3339(meta.get("creationTimestamp")) or 0.0,
            queue_name=spec.get("queueName") or "",
            active=spec.get("active", True) is not False,
            pod_sets=pod_sets,
        )
        reserved = None
        for cond in status.get("conditions") or ():  # one scan; the first condition of a type counts
            ctype = cond.get("type")
            if ctype == "Evicted" and not seen_evicted:
                seen_evicted, info.evicted = True, cond.get("status") == "True"
            elif ctype == "Finished" and not seen_finished:
                seen_finished, info.finished = True, cond.get("status") == "True"
            elif ctype == "QuotaReserved" and reserved is None:
                reserved = cond
        admission = status.get("admission")
        if admission and reserved is not None and reserved.get("status") == "True":
            info.reserved = True
            info.cluster_queue = admission.get("clusterQueue")
            info.reserved_at = parse_rfc3339(reserved.get("lastTransitionTime")) or 0.0
            for psa in admission.get("podSetAssignments") or ():
                flavors = psa.get("flavors") or {}
                for res, amount in (psa.get("resourceUsage") or {}).items():
                    if res in flavors:
                        fr = (flavors[res], res)
                        info.usage[fr] = info.usage.get(fr, 0) + to_amount(res, amount)
        return info


@dataclass(eq=False)
class ClusterQueueInfo:
    """A ClusterQueue's scheduling settings, its node in the quota tree and its admitted Workloads."""

    name: str
    obj: dict[str, Any]
    node: q.QuotaNode
    strategy: str
    within_cluster_queue: str
    reclaim_within_cohort: str
    borrow_within_cohort: str
    max_priority_threshold: int | None
    when_can_borrow: str
    when_can_preempt: str
    preference: str | None
    resource_groups: list[tuple[list[str], list[str]]]
    namespace_selector: dict[str, Any] | None
    stop_policy: str
    missing_flavors: list[str]
    workloads: dict[tuple[str, str], WorkloadInfo] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether the queue can admit (not stopped, every flavor exists)."""
        return self.stop_policy == "None" and not self.missing_flavors

    def group_of(self, resource: str) -> tuple[list[str], list[str]] | None:
        """The ``(coveredResources, flavors)`` group covering ``resource``."""
        for group in self.resource_groups:
            if resource in group[0]:
                return group
        return None

    def covers(self, resource: str) -> bool:
        """Whether some resource group covers ``resource``."""
        return self.group_of(resource) is not None

    def path(self) -> str:
        """Kueue's ``/root/.../cq`` path used in preemption messages."""
        parts = [n.name for n in q.path_to_root(self.node)][::-1] + [self.name]
        return "/" + "/".join(parts)

    @staticmethod
    def from_object(obj: dict[str, Any], node: q.QuotaNode, flavor_names: set[str]) -> ClusterQueueInfo:
        """Read a v1beta2 ClusterQueue (v1beta1 field names are accepted too)."""
        spec = obj.get("spec") or {}
        preemption = spec.get("preemption") or {}
        borrow = preemption.get("borrowWithinCohort") or {}
        fungibility = spec.get("flavorFungibility") or {}
        groups = [
            (list(g.get("coveredResources") or ()), [f["name"] for f in g.get("flavors") or ()])
            for g in spec.get("resourceGroups") or ()
        ]
        referenced = [f for _, flavors in groups for f in flavors]
        threshold = borrow.get("maxPriorityThreshold")
        when_can_borrow = fungibility.get("whenCanBorrow") or "MayStopSearch"
        when_can_preempt = fungibility.get("whenCanPreempt") or "TryNextFlavor"
        return ClusterQueueInfo(
            name=obj["metadata"]["name"],
            obj=obj,
            node=node,
            strategy=spec.get("queueingStrategy") or "BestEffortFIFO",
            within_cluster_queue=preemption.get("withinClusterQueue") or "Never",
            reclaim_within_cohort=preemption.get("reclaimWithinCohort") or "Never",
            borrow_within_cohort=borrow.get("policy") or "Never",
            max_priority_threshold=None if threshold is None else int(threshold),
            when_can_borrow="MayStopSearch" if when_can_borrow == "Borrow" else when_can_borrow,
            when_can_preempt="MayStopSearch" if when_can_preempt == "Preempt" else when_can_preempt,
            preference=fungibility.get("preference"),
            resource_groups=groups,
            namespace_selector=spec.get("namespaceSelector"),
            stop_policy=spec.get("stopPolicy") or "None",
            missing_flavors=sorted({f for f in referenced if f not in flavor_names}),
        )


@dataclass
class Snapshot:
    """ClusterQueues, the quota tree, ResourceFlavors and the Workloads holding quota."""

    queues: dict[str, ClusterQueueInfo]
    tree: q.QuotaTree
    flavors: dict[str, dict[str, Any]]
    #: changed by every change of usage; simulations that undo their changes restore it
    version: int = 0
    #: answers that depend only on the state (the version) and their inputs, keyed by both: flavor
    #: assignments and targets (engine), oracle answers and candidate lists (.preemption, .fairsharing),
    #: tournament shares; each key holds all else its answer reads, so a version's entries stay valid
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    #: the last version handed out: a new state never reuses the number of one a simulation restored
    clock: int = 0

    def _bump(self) -> None:
        self.clock += 1
        self.version = self.clock

    def add_workload(self, wl: WorkloadInfo) -> None:
        """Account ``wl``'s usage to its ClusterQueue (and the tree above it)."""
        self._bump()
        cq = self.queues[wl.cluster_queue or ""]
        cq.workloads[wl.key] = wl
        for fr, value in wl.usage.items():
            q.add_usage(cq.node, fr, value)

    def remove_workload(self, wl: WorkloadInfo) -> None:
        """Undo :meth:`add_workload`."""
        self._bump()
        cq = self.queues[wl.cluster_queue or ""]
        cq.workloads.pop(wl.key, None)
        for fr, value in wl.usage.items():
            q.remove_usage(cq.node, fr, value)

    def take_usage(self, wl: WorkloadInfo, frs: Iterable[q.FR]) -> None:
        """Remove only ``wl``'s usage of ``frs`` from the tree (its ClusterQueue keeps listing it): for
        simulations that read nothing but these flavor-resources; :meth:`give_back_usage` undoes it."""
        self._move_usage(wl, frs, q.remove_usage)

    def give_back_usage(self, wl: WorkloadInfo, frs: Iterable[q.FR]) -> None:
        """Undo :meth:`take_usage`."""
        self._move_usage(wl, frs, q.add_usage)

    def _move_usage(
        self, wl: WorkloadInfo, frs: Iterable[q.FR], account: Callable[[q.QuotaNode, q.FR, int], None]
    ) -> None:
        """Add or remove (``account``) in its node the usage of ``wl`` of those of ``frs`` it uses."""
        self._bump()
        node = self.queues[wl.cluster_queue or ""].node
        for fr in frs:
            value = wl.usage.get(fr)
            if value is not None:
                account(node, fr, value)

    def add_usage(self, cq: ClusterQueueInfo, usage: dict[q.FR, int]) -> None:
        """Reserve ``usage`` in ``cq`` without a Workload (a preemptor waiting for its victims)."""
        self._bump()
        for fr, value in usage.items():
            q.add_usage(cq.node, fr, value)

    def remove_usage(self, cq: ClusterQueueInfo, usage: dict[q.FR, int]) -> None:
        """Undo :meth:`add_usage` (a hold given back)."""
        self._bump()
        for fr, value in usage.items():
            q.remove_usage(cq.node, fr, value)


def build_snapshot(
    *,
    cluster_queues: Iterable[dict[str, Any]],
    cohorts: Iterable[dict[str, Any]],
    resource_flavors: Iterable[dict[str, Any]],
    workloads: Iterable[WorkloadInfo],
) -> Snapshot:
    """Build the snapshot; Workloads holding quota in an existing ClusterQueue are accounted."""
    cqs = list(cluster_queues)
    tree = q.build_tree(cqs, cohorts)
    flavors = {f["metadata"]["name"]: f for f in resource_flavors}
    queues = {
        obj["metadata"]["name"]: ClusterQueueInfo.from_object(
            obj, tree.queues[obj["metadata"]["name"]], set(flavors)
        )
        for obj in cqs
    }
    snap = Snapshot(queues, tree, flavors)
    for wl in workloads:
        if wl.reserved and not wl.finished and wl.cluster_queue in queues:
            snap.add_workload(wl)
    return snap
