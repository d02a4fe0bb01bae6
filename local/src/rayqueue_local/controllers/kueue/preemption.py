"""Kueue's classical preemption: which admitted Workloads to evict so that a pending one fits.

Follows ``pkg/scheduler/preemption`` of Kueue v0.19.2 (preemption.go ``classicalPreemptions``,
classical/candidate_generator.go, classical/hierarchical_preemption.go, common/ordering.go):

* candidates come from the preemptor's own ClusterQueue (``withinClusterQueue``) and from
  ClusterQueues of the cohort that use more than their quota (``reclaimWithinCohort``), and only
  if they use a flavor-resource that needs preemption;
* they are ordered: already evicted first, other queues before the preemptor's own, lower
  priority first, most recently admitted first;
* candidates are removed in that order until the preemptor fits, then added back in reverse
  order while it still fits, so only as many as needed are evicted;
* ``borrowWithinCohort`` (``LowerPriority`` with ``maxPriorityThreshold``) lets the preemptor
  borrow while reclaiming from lower-priority Workloads (reason ``InCohortReclaimWhileBorrowing``).

Fair-sharing preemption is :func:`.fairsharing.fair_targets`.

Example:
    >>> satisfies_policy(1000, 0.0, 100, 0.0, "LowerPriority")
    True
    >>> [satisfies_policy(5, 1.0, 5, 2.0, p) for p in ("LowerPriority", "LowerOrNewerEqualPriority", "Never")]
    [False, True, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.snapshot import ClusterQueueInfo, Snapshot, WorkloadInfo

__all__ = ["Possibility", "Target", "get_targets", "satisfies_policy", "simulate_preemption"]


class Possibility(IntEnum):
    """What a preemption simulation found (Kueue's PreemptionPossibility)."""

    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3


class _Variant(IntEnum):
    NEVER = 0
    WITHIN_CQ = 1
    HIERARCHICAL_RECLAIM = 2
    RECLAIM_WITHOUT_BORROWING = 3
    RECLAIM_WHILE_BORROWING = 4


_REASONS = {
    _Variant.WITHIN_CQ: msg.IN_CLUSTER_QUEUE,
    _Variant.HIERARCHICAL_RECLAIM: msg.IN_COHORT_RECLAMATION,
    _Variant.RECLAIM_WITHOUT_BORROWING: msg.IN_COHORT_RECLAMATION,
    _Variant.RECLAIM_WHILE_BORROWING: msg.IN_COHORT_RECLAIM_WHILE_BORROWING,
}


@dataclass
class Target:
    """A Workload to evict, with the preemption reason (``InClusterQueue``, ``InCohortReclamation``...)."""

    workload: WorkloadInfo
    reason: str
    cluster_queue: ClusterQueueInfo


@dataclass
class _Candidate:
    workload: WorkloadInfo
    lca: q.QuotaNode | None
    variant: _Variant


def satisfies_policy(
    preemptor_priority: int,
    preemptor_time: float,
    candidate_priority: int,
    candidate_time: float,
    policy: str,
) -> bool:
    """Whether a preemption policy lets a Workload preempt a candidate (priorities, queue-order times)."""
    if policy == "LowerPriority":
        return preemptor_priority > candidate_priority
    if policy == "LowerOrNewerEqualPriority":
        newer_equal = preemptor_priority == candidate_priority and preemptor_time < candidate_time
        return preemptor_priority > candidate_priority or newer_equal
    return policy == "Any"


def _uses(wl: WorkloadInfo, frs: set[q.FR]) -> bool:
    return not frs.isdisjoint(wl.usage)


class _Search:
    def __init__(
        self,
        snap: Snapshot,
        preemptor: WorkloadInfo,
        cq: ClusterQueueInfo,
        frs: set[q.FR],
        usage: dict[q.FR, int],
    ) -> None:
        self.snap, self.preemptor, self.cq, self.frs, self.usage = snap, preemptor, cq, frs, usage
        self.borrow_forbidden = cq.borrow_within_cohort == "Never"

    # -- candidates ------------------------------------------------------------------------
    def _variant(self, wl: WorkloadInfo, advantage: bool) -> _Variant:
        if not _uses(wl, self.frs):
            return _Variant.NEVER
        same = wl.cluster_queue == self.cq.name
        policy = self.cq.within_cluster_queue if same else self.cq.reclaim_within_cohort
        if not satisfies_policy(
            self.preemptor.priority, self.preemptor.created, wl.priority, wl.created, policy
        ):
            return _Variant.NEVER
        if same:
            return _Variant.WITHIN_CQ
        if advantage:
            return _Variant.HIERARCHICAL_RECLAIM
        if self.borrow_forbidden:
            return _Variant.RECLAIM_WITHOUT_BORROWING
        threshold = self.cq.max_priority_threshold
        if wl.priority >= self.preemptor.priority or (threshold is not None and wl.priority > threshold):
            return _Variant.RECLAIM_WITHOUT_BORROWING
        return _Variant.RECLAIM_WHILE_BORROWING

    def _from_queue(self, cq: ClusterQueueInfo, lca: q.QuotaNode | None, advantage: bool) -> list[_Candidate]:
        # What a queue offers depends on its Workloads (the snapshot's version), the preemptor's priority
        # (and time), the policy that applies and the flavor-resources, not on which queue preempts:
        # searches of one version share each queue's list (it is only read).
        same = cq.name == self.cq.name
        policy = self.cq.within_cluster_queue if same else self.cq.reclaim_within_cohort
        key = (
            "from_queue",
            self.snap.version,
            cq.name,
            lca,
            same,
            policy,
            advantage,
            self.borrow_forbidden,
            self.cq.max_priority_threshold,
            self.preemptor.priority,
            self.preemptor.created if policy == "LowerOrNewerEqualPriority" else 0.0,
            frozenset(self.frs),
        )
        found: list[_Candidate] | None = self.snap.memo.get(key)
        if found is None:
            found = []
            for wl in cq.workloads.values():
                variant = self._variant(wl, advantage)
                if variant != _Variant.NEVER:
                    found.append(_Candidate(wl, lca, variant))
            self.snap.memo[key] = found
        return found

    def _in_subtree(
        self,
        node: q.QuotaNode,
        root: q.QuotaNode,
        skip: q.QuotaNode | None,
        advantage: bool,
        out: list[_Candidate],
    ) -> None:
        for child in node.child_cohorts:
            if child is skip or q.is_within_nominal(child, self.frs):
                continue
            self._in_subtree(child, root, skip, advantage, out)
        for child_cq in node.child_queues:
            if child_cq is self.cq.node or q.is_within_nominal(child_cq, self.frs):
                continue
            out.extend(self._from_queue(self.snap.queues[child_cq.name], root, advantage))

    def candidates(self) -> tuple[list[_Candidate], bool, bool]:
        """The ordered candidates, whether none come from other queues and whether none are hierarchical.

        They depend on the snapshot's state (its version), the queue, the preemptor's priority (and queue
        time for ``LowerOrNewerEqualPriority``), the flavor-resources and, per cohort level, whether the
        request fits below it (upstream's ``hasAdvantage`` walk in hierarchical_preemption.go): searches
        alike in those share one list per snapshot version (the list is only read)."""
        levels: list[tuple[q.QuotaNode, bool]] = []
        if self.cq.node.parent is not None and self.cq.reclaim_within_cohort != "Never":
            advantage, remaining = q.quantities_fit_in_quota(self.cq.node, self.usage)
            for root in q.path_to_root(self.cq.node):
                levels.append((root, advantage))
                fits, remaining = q.quantities_fit_in_quota(root, remaining)
                advantage = advantage or fits
        policies = (self.cq.within_cluster_queue, self.cq.reclaim_within_cohort)
        uses_time = "LowerOrNewerEqualPriority" in policies
        key = (
            "candidates",
            self.snap.version,
            self.cq.name,
            self.preemptor.priority,
            self.preemptor.created if uses_time else 0.0,
            frozenset(self.frs),
            tuple(advantage for _, advantage in levels),
        )
        found: tuple[list[_Candidate], bool, bool] | None = self.snap.memo.get(key)
        if found is None:
            found = self._candidates(levels)
            self.snap.memo[key] = found
        return found

    def _candidates(self, levels: list[tuple[q.QuotaNode, bool]]) -> tuple[list[_Candidate], bool, bool]:
        same: list[_Candidate] = []
        if self.cq.within_cluster_queue != "Never":
            same = self._from_queue(self.cq, None, False)
        hierarchy: list[_Candidate] = []
        priority: list[_Candidate] = []
        previous = None
        for root, advantage in levels:
            self._in_subtree(root, root, previous, advantage, hierarchy if advantage else priority)
            previous = root

        def order(c: _Candidate) -> tuple[bool, bool, int, float, str]:
            wl = c.workload
            return (not wl.evicted, wl.cluster_queue == self.cq.name, wl.priority, -wl.reserved_at, wl.uid)

        groups = [sorted(g, key=order) for g in (hierarchy, priority, same)]
        ordered = [c for g in groups for c in g if c.workload.evicted]
        ordered += [c for g in groups for c in g if not c.workload.evicted]
        return ordered, not hierarchy and not priority, not hierarchy

    def _valid(self, c: _Candidate, borrowing: bool) -> bool:
        if c.workload.cluster_queue == self.cq.name:
            return True
        if borrowing and c.variant == _Variant.RECLAIM_WITHOUT_BORROWING:
            return False
        # the candidate's queue, then its cohorts below the lowest common ancestor, must all borrow
        node: q.QuotaNode | None = self.snap.queues[c.workload.cluster_queue or ""].node
        while node is not None and node is not c.lca:
            if q.is_within_nominal(node, self.frs):
                return False
            node = node.parent
        return True

    # -- the search -------------------------------------------------------------------------
    def fits(self, allow_borrowing: bool) -> bool:
        for fr, value in self.usage.items():
            if not allow_borrowing and q.borrowing_with(self.cq.node, fr, value):
                return False
            if value > q.available(self.cq.node, fr):
                return False
        return True

    def _under_nominal(self) -> bool:
        return all(
            self.cq.node.quotas.get(fr, q.Quota()).nominal > self.cq.node.usage.get(fr, 0) for fr in self.frs
        )

    def targets(self) -> list[Target]:
        # Whether the preemptor fits (and which candidates are valid) reads only the flavor-resources of
        # its usage, so candidates are taken out of those alone (upstream removes whole Workloads from
        # its snapshot copy; the outcome is the same).
        ordered, none_from_others, none_hierarchical = self.candidates()
        if none_from_others or (self.borrow_forbidden and not self._under_nominal()):
            attempts = [True]
        elif self.borrow_forbidden and none_hierarchical:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrowing in attempts:
            removed: list[_Candidate] = []
            for cand in ordered:
                if not self._valid(cand, borrowing):
                    continue
                self.snap.take_usage(cand.workload, self.usage)
                removed.append(cand)
                if self.fits(borrowing):
                    kept = self._fill_back(removed, borrowing)
                    for c in kept:
                        self.snap.give_back_usage(c.workload, self.usage)
                    return [
                        Target(
                            c.workload, _REASONS[c.variant], self.snap.queues[c.workload.cluster_queue or ""]
                        )
                        for c in kept
                    ]
            for c in removed:
                self.snap.give_back_usage(c.workload, self.usage)
        return []

    def _fill_back(self, removed: list[_Candidate], borrowing: bool) -> list[_Candidate]:
        kept = list(removed)
        for i in range(len(removed) - 2, -1, -1):
            cand = removed[i]
            self.snap.give_back_usage(cand.workload, self.usage)
            if self.fits(borrowing):
                kept.remove(cand)
            else:
                self.snap.take_usage(cand.workload, self.usage)
        return kept


def get_targets(
    snap: Snapshot, preemptor: WorkloadInfo, cq: ClusterQueueInfo, frs_need: set[q.FR], usage: dict[q.FR, int]
) -> list[Target]:
    """The Workloads to evict so that ``usage`` fits in ``cq`` (empty if none would do).

    ``frs_need`` are the flavor-resources the flavor assigner found short; the snapshot is left
    as it was found (its version too).
    """
    version = snap.version
    try:
        return _Search(snap, preemptor, cq, frs_need, usage).targets()
    finally:
        snap.version = version


def simulate_preemption(
    snap: Snapshot, preemptor: WorkloadInfo, cq: ClusterQueueInfo, fr: q.FR, quantity: int
) -> tuple[Possibility, int]:
    """Kueue's preemption oracle for one flavor-resource: whether preemption could make room and
    the borrowing level after it. Answers are memoised per snapshot version: Workloads of one
    queue with the same priority and request get the same answer without a new search."""
    uses_time = "LowerOrNewerEqualPriority" in (cq.within_cluster_queue, cq.reclaim_within_cohort)
    key = (
        "oracle",
        snap.version,
        cq.name,
        fr,
        quantity,
        preemptor.priority,
        preemptor.created if uses_time else 0,
    )
    result: tuple[Possibility, int] | None = snap.memo.get(key)
    if result is None:
        version = snap.version
        result = _simulate(snap, preemptor, cq, fr, quantity)
        snap.version = version  # the simulation put everything back
        snap.memo[key] = result
    return result


def _simulate(
    snap: Snapshot, preemptor: WorkloadInfo, cq: ClusterQueueInfo, fr: q.FR, quantity: int
) -> tuple[Possibility, int]:
    targets = get_targets(snap, preemptor, cq, {fr}, {fr: quantity})
    if not targets:
        return Possibility.NO_CANDIDATES, q.find_height_of_lowest_subtree_that_fits(cq.node, fr, quantity)[0]
    for t in targets:
        snap.take_usage(t.workload, (fr,))
    borrow = q.find_height_of_lowest_subtree_that_fits(cq.node, fr, quantity)[0]
    for t in targets:
        snap.give_back_usage(t.workload, (fr,))
    if any(t.workload.cluster_queue == cq.name for t in targets):
        return Possibility.PREEMPT, borrow
    return Possibility.RECLAIM, borrow
