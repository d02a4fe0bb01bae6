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
``StrictFIFO`` it blocks its queue for the rest of the pass (but a head from a namespace the queue
does not select is set aside under either strategy, as Kueue does). A head that needs preemption
and finds no candidates keeps its queue's unused nominal quota for the cycle unless the queue has
``reclaimWithinCohort: Any`` (a ``StrictFIFO`` head, retried every cycle, for the rest of the pass), so
a cohort borrower cannot take it first. A Workload is admitted whole or not
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

from rayqueue_local.apimachinery.selectors import match_selector_object
from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.controllers.kueue import admissionfairsharing as admission_fs
from rayqueue_local.controllers.kueue import fairsharing as fs
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue import topology as tas
from rayqueue_local.controllers.kueue.admissionchecks import waits_for_backoff
from rayqueue_local.controllers.kueue.conditions import find, is_true
from rayqueue_local.controllers.kueue.flavors import Assignment, Mode, assign_flavors
from rayqueue_local.controllers.kueue.preemption import Target, get_targets
from rayqueue_local.controllers.kueue.queue_status import admission_check_problems
from rayqueue_local.controllers.kueue.snapshot import (
    ClusterQueueInfo,
    Snapshot,
    WorkloadInfo,
    build_snapshot,
)

__all__ = [
    "CREATION_TIMESTAMP",
    "EVICTION_TIMESTAMP",
    "Admission",
    "Eviction",
    "PassResult",
    "PendingStatus",
    "admission_pass",
    "pods_ready_eviction_time",
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
    #: fair sharing: each ClusterQueue's and Cohort's ``weightedShare`` after the pass (by name)
    weighted_shares: dict[str, int] = field(default_factory=dict)
    cohort_weighted_shares: dict[str, int] = field(default_factory=dict)
    #: Admission Fair Sharing: each LocalQueue's consumed resources after the pass's entry penalties
    consumed: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)


EVICTION_TIMESTAMP = "Eviction"
"""``waitForPodsReady.requeuingStrategy.timestamp``: queue a Workload evicted by ``PodsReadyTimeout`` by
the time of that eviction (Kueue's default)."""
CREATION_TIMESTAMP = "Creation"
"""``waitForPodsReady.requeuingStrategy.timestamp``: queue it by its creation time."""


def pods_ready_eviction_time(obj: Mapping[str, Any]) -> float | None:
    """When a Workload was evicted for ``PodsReadyTimeout``, while that eviction stands (``Evicted=True``
    with that reason), else ``None`` (``workloadevict.IsEvictedByPodsReadyTimeout``).

    Example:
        >>> pods_ready_eviction_time({"status": {"conditions": [{"type": "Evicted", "status": "True",
        ...     "reason": "PodsReadyTimeout", "lastTransitionTime": "2026-01-01T00:00:10Z"}]}})
        1767225610.0
    """
    evicted = find(dict(obj), "Evicted")
    if not evicted or evicted.get("status") != "True" or evicted.get("reason") != "PodsReadyTimeout":
        return None
    return parse_rfc3339(evicted.get("lastTransitionTime"))


def queue_order_key(wl: WorkloadInfo) -> tuple[int, float, str, str]:
    """Queue order within a ClusterQueue: higher priority first, then older, then by name."""
    return (-wl.priority, wl.created, wl.namespace, wl.name)


class _ListSource:
    """A ClusterQueue's pending Workloads in fixed queue order."""

    def __init__(self, items: list[WorkloadInfo]) -> None:
        self.items, self.position = items, 0

    def pop(self) -> WorkloadInfo | None:
        if self.position >= len(self.items):
            return None
        self.position += 1
        return self.items[self.position - 1]

    def admitted(self, wl: WorkloadInfo, requests: Mapping[str, float]) -> None:
        pass

    def remaining(self, exclude: set[int]) -> list[WorkloadInfo]:
        return [wl for wl in self.items if id(wl) not in exclude]


def _requests_by_resource(usage: Mapping[q.FR, int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for (_, res), value in usage.items():
        out[res] = out.get(res, 0.0) + value
    return out


class _Pass:
    def __init__(
        self,
        snap: Snapshot,
        namespaces: Mapping[str, Mapping[str, str]],
        now: float,
        fair: fs.FairSharingSettings | None = None,
        weights: Mapping[tuple[bool, str], float] | None = None,
        topology: tas.TopologyIndex | None = None,
    ) -> None:
        self.snap, self.namespaces, self.now = snap, namespaces, now
        self.result = PassResult()
        self.preempted: set[tuple[str, str]] = set()
        #: the Workloads chosen as preemption victims so far, by key
        self.victims: dict[tuple[str, str], WorkloadInfo] = {}
        self.fair = fair or fs.FairSharingSettings()
        self.weights = dict(weights or {})
        self.topology = topology or tas.TopologyIndex()
        self.sources: dict[str, Any] = {}
        self.lendable: dict[int, dict[str, int]] = {}
        #: quota held in this cycle for heads without preemption candidates (:meth:`hold_for_unreclaimable`)
        self.holds: list[tuple[ClusterQueueInfo, dict[q.FR, int]]] = []
        #: heads of this cycle that no longer fitted after the ones before them
        self.skipped: list[tuple[WorkloadInfo, ClusterQueueInfo]] = []
        #: stop after this many cycles (``None``: until no queue has a head left)
        self.max_cycles: int | None = None
        #: waitForPodsReady.blockAdmission; :attr:`blocked_on_pods` once a head met the block
        self.block_admission = False
        self.blocked_on_pods = False

    def place_topology(
        self, wl: WorkloadInfo, assignment: Assignment
    ) -> tuple[list[tuple[str, str, dict[str, int], dict[str, int]]], str | None]:
        """TAS: ``(pod set, flavor, per-pod requests, {node: pods})`` for each pod set in a TAS flavor, or
        the Pending message when one does not fit. The index is left as it was found."""
        placements: list[tuple[str, str, dict[str, int], dict[str, int]]] = []
        specs = {ps.get("name"): ps for ps in (wl.obj.get("spec") or {}).get("podSets") or ()}
        per_pod = {ps.name: ps.per_pod for ps in wl.pod_sets}
        problem: str | None = None
        try:
            for psa in assignment.pod_sets:
                request = tas.topology_request(specs.get(psa.name) or {})
                flavors = sorted({f for f, _ in psa.flavors.values()})
                tas_flavors = [f for f in flavors if self.topology.is_tas(f)]
                if not tas_flavors:
                    why = tas.flavor_problem(self.snap.flavors.get(flavors[0]) if flavors else None, request)
                    if why:
                        problem = msg.couldnt_assign(psa.name, [why])
                        break
                    continue
                flavor, pp = tas_flavors[0], per_pod.get(psa.name, {})
                pods, why = self.topology.place(flavor, pp, psa.count, request)
                if pods is None:
                    problem = msg.couldnt_assign(psa.name, [why])
                    break
                self.topology.commit(flavor, pp, pods)  # later pod sets see it
                placements.append((psa.name, flavor, pp, pods))
        finally:
            for _, flavor, pp, pods in placements:
                self.topology.commit(flavor, {r: -v for r, v in pp.items()}, pods)
        return ([], problem) if problem else (placements, None)

    def namespace_ok(self, wl: WorkloadInfo, cq: ClusterQueueInfo) -> bool:
        labels = dict(self.namespaces.get(wl.namespace) or {})
        labels.setdefault("kubernetes.io/metadata.name", wl.namespace)
        return match_selector_object(cq.namespace_selector, labels)

    def fits(self, cq: ClusterQueueInfo, usage: dict[q.FR, int], targets: list[Target]) -> bool:
        """Whether ``usage`` fits once ``targets`` and every Workload already chosen as a victim in this
        pass are gone: their preemptors hold the room they will leave (:meth:`process`), so counting
        them too would count that room twice. Kueue v0.19.2 ``fits`` (pkg/scheduler/scheduler.go):
        ``preemptedWorkloads.MergeWithTargets`` then ``SimulateWorkloadUsageRemoval``."""
        victims = list(self.victims.values())
        victims += [t.workload for t in targets if t.workload.key not in self.victims]
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
        uses_time = "LowerOrNewerEqualPriority" in (cq.within_cluster_queue, cq.reclaim_within_cohort)
        # Flavor assignment depends on the snapshot (its version), the queue, the pod sets (shape,
        # tolerations, node selector) and, through the preemption oracle, the priority; the search for
        # targets depends on these and the assignment: alike heads get one answer (only read afterwards).
        nominate_key = ("nominate", self.snap.version, cq.name, wl.priority, wl.created if uses_time else 0.0)
        nominate_key += wl.shape
        found = self.snap.memo.get(nominate_key)
        if found is not None:
            return found[0], list(found[1])
        assignment = assign_flavors(self.snap, wl, cq)
        targets: list[Target] = []
        if assignment.mode != Mode.PREEMPT:
            self.snap.memo[nominate_key] = (assignment, ())
            return assignment, targets
        # The search depends only on the snapshot (its version), the queue, the preemptor's priority
        # (and queue time, for LowerOrNewerEqualPriority) and the usage: heads alike share one answer.
        frs = assignment.frs_needing_preemption()
        key = (
            "targets",
            self.snap.version,
            cq.name,
            wl.priority,
            wl.created if uses_time else 0.0,
            tuple(sorted(assignment.usage.items())),
            tuple(sorted(frs)),
        )
        if key in self.snap.memo:
            self.snap.memo[nominate_key] = (assignment, tuple(self.snap.memo[key]))
            return assignment, list(self.snap.memo[key])
        if self.fair.enabled:
            targets = fs.fair_targets(
                self.snap,
                wl,
                cq,
                frs,
                assignment.usage,
                self.fair.preemption_strategies,
                self.weights,
            )
        else:
            targets = get_targets(self.snap, wl, cq, frs, assignment.usage)
        self.snap.memo[key] = list(targets)
        self.snap.memo[nominate_key] = (assignment, tuple(targets))
        return assignment, targets

    def hold_for_unreclaimable(self, cq: ClusterQueueInfo, assignment: Assignment) -> None:
        """A head needs preemption but found no candidates: unless ``cq`` can always reclaim
        (``reclaimWithinCohort: Any``), keep for it what it could still use, so that no borrower from
        the cohort takes that quota in this cycle.

        Kueue v0.19.2 ``Scheduler.reserveCapacityForUnreclaimablePreempt`` with
        ``resourcesToReserve``/``quotaResourcesToReserve`` (pkg/scheduler/scheduler.go) and
        ``preemption.CanAlwaysReclaim`` (pkg/scheduler/preemption/policy.go): per flavor-resource the
        head's request capped by the unused nominal quota (never below 0), or, when the assignment
        borrows, by nominal plus ``borrowingLimit`` minus usage (the whole request without a limit).
        Upstream holds in the cycle's snapshot only; ``ClusterQueue.RequeueIfNotPresent``
        (pkg/cache/queue/cluster_queue.go) puts a StrictFIFO head straight back, so it holds again in
        every cycle while it waits, while a BestEffortFIFO head goes to the inadmissible list and
        holds no more: :meth:`release_holds` gives back the holds of the latter at the end of the
        cycle."""
        if cq.reclaim_within_cohort == "Any":
            return
        reserve: dict[q.FR, int] = {}
        for fr, value in assignment.usage.items():
            quota = cq.node.quotas.get(fr)
            nominal = quota.nominal if quota else 0
            used = cq.node.usage.get(fr, 0)
            if assignment.borrowing > 0:
                limit = quota.borrowing_limit if quota else None
                amount = value if limit is None else min(value, nominal + limit - used)
            else:
                amount = min(value, nominal - used)
            if amount > 0:
                reserve[fr] = amount
        if reserve:
            self.snap.add_usage(cq, reserve)
            self.holds.append((cq, reserve))

    def all_pods_ready(self) -> bool:
        """Whether every Workload holding quota (admitted in this pass included) has ``PodsReady=True``."""
        if self.result.admitted:
            return False  # just admitted: its pods cannot be ready yet
        queues = self.snap.queues.values()
        return all(is_true(wl.obj, "PodsReady") for cq in queues for wl in cq.workloads.values())

    def release_holds(self, keep: set[str]) -> bool:
        """End of a cycle: give back the holds of every queue not in ``keep`` (the blocked StrictFIFO
        queues, whose head is retried, and holds again, in every later cycle of the pass); return
        whether any was given back."""
        kept, released = [], False
        for cq, reserve in self.holds:
            if cq.name in keep:
                kept.append((cq, reserve))
            else:
                self.snap.remove_usage(cq, reserve)
                released = True
        self.holds = kept
        return released

    def process(
        self, wl: WorkloadInfo, cq: ClusterQueueInfo, assignment: Assignment, targets: list[Target]
    ) -> bool:
        """Act on one nominated head; return whether it was admitted."""
        mode = assignment.mode
        message = assignment.message()
        if mode == Mode.PREEMPT and not targets:
            self.hold_for_unreclaimable(cq, assignment)
        if mode == Mode.NO_FIT or (mode == Mode.PREEMPT and not targets):
            self.pending(wl, message)
            return False
        if any(t.workload.key in self.preempted for t in targets):
            self.pending(wl, msg.OVERLAPPING_TARGETS)
            return False
        if not self.fits(cq, assignment.usage, targets):
            self.pending(wl, msg.NO_LONGER_FITS)
            self.skipped.append((wl, cq))
            return False
        if mode == Mode.PREEMPT:
            self.preempted.update(t.workload.key for t in targets)
            self.victims.update((t.workload.key, t.workload) for t in targets)
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
        placements, problem = self.place_topology(wl, assignment)
        if problem is not None:
            self.pending(wl, problem)
            return False
        if self.block_admission and not self.all_pods_ready():
            self.pending(wl, msg.WAITING_FOR_PODS_READY, msg.WAITING)
            self.blocked_on_pods = True
            return False
        admission = assignment.to_admission()
        for name, flavor, per_pod, pods in placements:
            self.topology.commit(flavor, per_pod, pods)
            for psa in admission["podSetAssignments"]:
                if psa["name"] == name:
                    psa["topologyAssignment"] = self.topology.assignment(flavor, pods)
        wl.cluster_queue, wl.usage, wl.reserved, wl.reserved_at = (
            cq.name,
            dict(assignment.usage),
            True,
            self.now,
        )
        self.snap.add_workload(wl)
        self.sources[cq.name].admitted(wl, _requests_by_resource(wl.usage))
        self.result.admitted.append(Admission(wl, admission))
        return True

    def run(self, sources: dict[str, Any]) -> None:
        """Cycles until no queue offers a head (or :attr:`max_cycles`).

        A head skipped because it no longer fitted is offered again in the next cycle when holds
        were given back at the end of this one, as Kueue requeues it at once
        (``RequeueReasonFailedAfterNomination`` is immediate under either strategy)."""
        self.sources = sources
        blocked: set[str] = set()
        exhausted: set[str] = set()
        retry: dict[str, WorkloadInfo] = {}
        cycles = 0
        while (self.max_cycles is None or cycles < self.max_cycles) and not self.blocked_on_pods:
            cycles += 1
            heads: list[tuple[WorkloadInfo, ClusterQueueInfo]] = []
            for name in sorted(sources):
                if name in retry:
                    heads.append((retry.pop(name), self.snap.queues[name]))
                    continue
                if name in blocked or name in exhausted:
                    continue
                head = sources[name].pop()
                if head is None:
                    exhausted.add(name)
                else:
                    heads.append((head, self.snap.queues[name]))
            if not heads:
                return
            nominated = []
            for wl, cq in heads:
                if not self.namespace_ok(wl, cq):
                    # Set aside, even by a StrictFIFO queue: Kueue's Scheduler.nominate gives it
                    # RequeueReasonNamespaceMismatch, which ClusterQueue.RequeueIfNotPresent sends to
                    # the inadmissible list (not back to the head) under either strategy.
                    self.pending(wl, msg.NAMESPACE_MISMATCH)
                    continue
                nominated.append((wl, cq, *self.nominate(wl, cq)))
            self.skipped = []
            if self.fair.enabled:
                self.run_fair(nominated, blocked)
            else:
                # As Kueue: all heads of a cycle are assigned against the same snapshot, then handled
                # least borrowing first, then by priority and age; one that no longer fits waits.
                nominated.sort(key=lambda e: (e[2].borrowing, *queue_order_key(e[0])))
                for wl, cq, assignment, targets in nominated:
                    if self.blocked_on_pods:
                        break  # Kueue's scheduler waits for the pods before anything else
                    if not self.process(wl, cq, assignment, targets) and cq.strategy == "StrictFIFO":
                        blocked.add(cq.name)
            if self.release_holds(blocked):
                for wl, cq in self.skipped:
                    retry[cq.name] = wl
                    blocked.discard(cq.name)

    def run_fair(self, nominated: list[Any], blocked: set[str]) -> None:
        """Fair sharing: the cycle's heads in tournament order (lowest DRS first), each DRS taken after
        the admissions before it (upstream's fairSharingIterator)."""
        remaining = list(nominated)
        cache: dict[int, Any] = {}
        nested = any(e[1].node.parent is not None and e[1].node.parent.parent is not None for e in remaining)
        # How both orders read an entry (workload, ClusterQueue, assignment, targets), and their caches.
        ordering: dict[str, Any] = {
            "node_of": lambda e: e[1].node,
            "usage_of": lambda e: e[2].usage,
            "tie_key": lambda e: queue_order_key(e[0]),
            "weights": self.weights,
            "lendable_cache": self.lendable,
        }
        if not nested:
            # One level of cohorts: an entry's share is its own ClusterQueue's, which only its own
            # admission changes, so the tournament's order is fixed for the cycle.
            shares = self.snap.memo.setdefault(("flat_shares", self.snap.version), {})
            ordered = fs.flat_order(remaining, **ordering, share_cache=shares)
            for wl, cq, assignment, targets in ordered:
                if not self.process(wl, cq, assignment, targets) and cq.strategy == "StrictFIFO":
                    blocked.add(cq.name)
            return
        while remaining:
            entry = fs.tournament_order(remaining, **ordering, cache=cache)
            remaining.remove(entry)
            wl, cq, assignment, targets = entry
            admitted = self.process(wl, cq, assignment, targets)
            if not admitted and cq.strategy == "StrictFIFO":
                blocked.add(cq.name)
            if admitted and nested:
                cache.clear()  # an admission moves the shares of the cohorts above it


def admission_pass(
    *,
    cluster_queues: Iterable[dict[str, Any]],
    cohorts: Iterable[dict[str, Any]] = (),
    resource_flavors: Iterable[dict[str, Any]] = (),
    local_queues: Iterable[dict[str, Any]] = (),
    workloads: Iterable[dict[str, Any]] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    now: float = 0.0,
    fair_sharing: fs.FairSharingSettings | None = None,
    topologies: Iterable[dict[str, Any]] = (),
    nodes: Iterable[dict[str, Any]] = (),
    admission_checks: Iterable[dict[str, Any]] | None = None,
    max_cycles: int | None = None,
    block_admission: bool = False,
    requeuing_timestamp: str = EVICTION_TIMESTAMP,
) -> PassResult:
    """Run one admission pass; see the module docstring. ``now`` stamps new admissions (epoch seconds).

    ``admission_checks`` (the AdmissionCheck objects; ``None``: not considered) makes a ClusterQueue
    naming a missing or not ``Active`` check inactive, as Kueue's cache does
    (:func:`~.queue_status.admission_check_problems`): its pending Workloads read "ClusterQueue <name> is
    inactive" and it admits nothing.

    ``block_admission`` is Kueue's ``waitForPodsReady.blockAdmission``: while a Workload holding quota
    has no ``PodsReady=True`` nothing more is admitted; the first head that would be reads ``Waiting``,
    "waiting for all admitted workloads to be in PodsReady condition", and the pass ends, as Kueue's
    scheduler blocks there (``Scheduler.waitForPodsReadyIfNeeded``, ``Cache.WaitForPodsReady`` and
    ``podsReadyForAllAdmittedWorkloads`` in v0.19.2: any quota-reserving Workload not ``PodsReady``
    blocks; the condition reason is the ``UnadmittedWorkloadsObservability``-off fallback).
    ``requeuing_timestamp`` is its ``requeuingStrategy.timestamp``: with ``Eviction`` (the default) a
    Workload evicted by ``PodsReadyTimeout`` is queued, and compared for ``LowerOrNewerEqualPriority``,
    by the time of that eviction instead of its creation (``Ordering.GetQueueOrderTimestamp``,
    pkg/workload/workload.go); with ``Creation`` by its creation.

    ``max_cycles`` stops the pass after that many scheduling cycles (one head a ClusterQueue each),
    as a single call of Kueue's ``Scheduler.schedule`` does with ``1`` (its unit tables observe that).

    ``fair_sharing`` turns on cohort fair sharing and Admission Fair Sharing (:mod:`.fairsharing`);
    ``topologies`` and ``nodes`` (v1 Nodes with the level labels) enable topology-aware scheduling for
    flavors naming a Topology (:mod:`.topology`)."""
    infos = [WorkloadInfo.from_object(obj) for obj in workloads]
    if requeuing_timestamp == EVICTION_TIMESTAMP:
        for info in infos:
            evicted_at = pods_ready_eviction_time(info.obj)
            if evicted_at is not None:
                info.created = evicted_at
    cqs = list(cluster_queues)
    cohort_objs = list(cohorts)
    flavor_objs = list(resource_flavors)
    snap = build_snapshot(
        cluster_queues=cqs, cohorts=cohort_objs, resource_flavors=flavor_objs, workloads=infos
    )
    lqs = {(lq["metadata"].get("namespace", ""), lq["metadata"]["name"]): lq for lq in local_queues}
    fair = fair_sharing or fs.FairSharingSettings()
    topology_index = _topology_index(topologies, flavor_objs, nodes, infos)
    run = _Pass(snap, namespaces or {}, now, fair, fs.weights_of(cqs, cohort_objs), topology_index)
    run.max_cycles = max_cycles
    run.block_admission = block_admission
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

    checks = None if admission_checks is None else {ac["metadata"]["name"]: ac for ac in admission_checks}
    active = {
        name
        for name, cq in snap.queues.items()
        if cq.active and (checks is None or admission_check_problems(cq.obj, checks) == ([], []))
    }
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
        if cq_name not in active:
            run.pending(wl, msg.cluster_queue_inactive(cq_name), msg.INADMISSIBLE)
    for name in queues:
        queues[name].sort(key=queue_order_key)
    sources = {name: _source(snap.queues[name], wls, lqs, fair) for name, wls in queues.items()}
    run.run({name: src for name, src in sources.items() if name in active})
    admitted = {id(a.workload) for a in result.admitted}
    result.queue_order = {name: src.remaining(admitted) for name, src in sources.items()}
    if fair.enabled:
        for name, cq in snap.queues.items():
            share = fs.dominant_resource_share(
                cq.node, run.weights.get((False, name), 1.0), None, run.lendable
            )
            result.weighted_shares[name] = share.rounded()
        for name, node in snap.tree.cohorts.items():
            share = fs.dominant_resource_share(node, run.weights.get((True, name), 1.0), None, run.lendable)
            result.cohort_weighted_shares[name] = share.rounded()
    for src in sources.values():
        if isinstance(src, admission_fs.AdmissionFairQueue):
            result.consumed.update(src.consumed)
    return result


def _source(
    cq: ClusterQueueInfo,
    wls: list[WorkloadInfo],
    lqs: Mapping[tuple[str, str], dict[str, Any]],
    fair: fs.FairSharingSettings,
) -> Any:
    """The order a ClusterQueue's pending Workloads are tried in: fixed, or by LocalQueue usage (AFS)."""
    scope = ((cq.obj.get("spec") or {}).get("admissionScope") or {}).get("admissionMode")
    if fair.admission is None or scope != admission_fs.USAGE_BASED:
        return _ListSource(wls)
    keys = {(wl.namespace, wl.queue_name) for wl in wls} | {
        k for k, lq in lqs.items() if (lq.get("spec") or {}).get("clusterQueue") == cq.name
    }
    consumed = {k: admission_fs.consumed_resources(lqs.get(k)) for k in keys}
    weights = {k: fs.fair_weight(lqs.get(k)) for k in keys}
    usage = {
        k: admission_fs.local_queue_usage(consumed[k], weights[k], fair.admission.resource_weights)
        for k in keys
    }
    return admission_fs.AdmissionFairQueue(
        wls,
        lq_of=lambda wl: (wl.namespace, wl.queue_name),
        usage=usage,
        weights=weights,
        settings=fair.admission,
        key=queue_order_key,
        consumed=consumed,
    )


def _topology_index(
    topologies: Iterable[dict[str, Any]],
    flavors: list[dict[str, Any]],
    nodes: Iterable[dict[str, Any]],
    infos: list[WorkloadInfo],
) -> tas.TopologyIndex:
    """The TAS index with the room the admitted Workloads' ``topologyAssignment`` take."""
    topology_list = list(topologies)
    if not topology_list:
        return tas.TopologyIndex()
    index = tas.TopologyIndex.build(topology_list, flavors, nodes, [])
    for wl in infos:
        if not wl.reserved or wl.finished:
            continue
        per_pod = {ps.name: ps.per_pod for ps in wl.pod_sets}
        for psa in ((wl.obj.get("status") or {}).get("admission") or {}).get("podSetAssignments") or ():
            if not psa.get("topologyAssignment"):
                continue
            tas_flavors = sorted(f for f in set((psa.get("flavors") or {}).values()) if index.is_tas(f))
            if tas_flavors:
                pods = tas.placed_pods(psa["topologyAssignment"])
                index.commit(tas_flavors[0], per_pod.get(psa.get("name"), {}), pods)
    return index
