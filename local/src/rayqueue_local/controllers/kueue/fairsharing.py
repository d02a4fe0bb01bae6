"""Cohort fair sharing (dominant resource share): the scheduler's order and fair-sharing preemption.

Pure functions over the quota tree (:mod:`.quota`) and plain objects; the engine and the controller call them.

*Cohort fair sharing* (Kueue's ``fairSharing.enable``): a ClusterQueue or Cohort borrowing above its
quota gets a *dominant resource share* (DRS): for each resource, what it borrows (usage above its
subtree quota, summed over flavors) per 1000 of what the rest of the cohort tree could lend it
(``potentialAvailable`` of its parent, summed over flavors); the DRS is the largest of these ratios,
divided by ``spec.fairSharing.weight`` (default 1; weight 0 while borrowing: the maximum share). The
scheduler picks, among the heads of a cycle, the one whose queue has the lowest DRS with the workload's
usage added, in a tournament from the leaves of the cohort tree to its root; ties go to priority then age.
``status.fairSharing.weightedShare`` is the DRS rounded up. Preemption in the cohort then follows
``preemptionStrategies``: ``LessThanOrEqualToFinalShare`` (preempt only while the preemptor's queue's
share with the incoming workload is <= the target queue's share without the target) and
``LessThanInitialShare`` (< the target queue's share before). Sources: Kueue v0.19.2
``pkg/cache/scheduler/fair_sharing.go`` (``dominantResourceShare``, ``calculateLendable``,
``roundedWeightedShare``), ``pkg/scheduler/fair_sharing_iterator.go`` (the tournament),
``pkg/scheduler/preemption/fairsharing/strategy.go``, ``apis/config/v1beta2`` ``FairSharing``, and
https://kueue.sigs.k8s.io/docs/concepts/fair_sharing/.

*Admission Fair Sharing* (LocalQueue usage) is :mod:`.admissionfairsharing`; its configuration
(:class:`~.admissionfairsharing.AdmissionFairSharing`) is part of :class:`FairSharingSettings`.

Not emulated: the ``FairSharingPrioritizeNonBorrowing``, ``PrioritizePreemptorWorkloads`` and
``FairSharingPreemptWithinNominal`` gates, the preemption oracle of the flavor assigner under fair sharing
(it stays classical, so whether a head may preempt is decided as without fair sharing), the per-cohort
ordering of nested cohorts in preemption (targets come from the whole cohort tree, highest ClusterQueue
share first) and Admission Fair Sharing's candidate ordering in preemption.

Example:
    >>> from rayqueue_local.controllers.kueue.quota import build_tree
    >>> def cq(name, gpus):
    ...     return {"metadata": {"name": name}, "spec": {"cohortName": "all", "resourceGroups": [
    ...         {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "f", "resources": [
    ...             {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}}
    >>> tree = build_tree([cq("a", 4), cq("b", 4)], [])
    >>> _ = q.add_usage(tree.queues["a"], ("f", "nvidia.com/gpu"), 6)
    >>> drs = dominant_resource_share(tree.queues["a"], 1.0)
    >>> drs.weighted_share(), drs.rounded(), drs.resource
    (250.0, 250, 'nvidia.com/gpu')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.apimachinery.quantities import parse_quantity
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.admissionfairsharing import AdmissionFairSharing
from rayqueue_local.controllers.kueue.preemption import Target, satisfies_policy
from rayqueue_local.controllers.kueue.snapshot import ClusterQueueInfo, Snapshot, WorkloadInfo

__all__ = [
    "AdmissionFairSharing",
    "DRS",
    "FairSharingSettings",
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "MAX_SHARE",
    "dominant_resource_share",
    "fair_targets",
    "fair_weight",
    "flat_order",
    "strategy_allows",
    "tournament_order",
    "weights_of",
]

MAX_SHARE = 9223372036854775807
"""``weightedShare`` of a borrowing queue with weight 0 (Go's ``math.MaxInt64``)."""

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
"""Fair-sharing preemption strategy S2-a."""

LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
"""Fair-sharing preemption strategy S2-b."""


@dataclass(frozen=True)
class FairSharingSettings:
    """What the engine needs to know: cohort fair sharing on or off, its preemption strategies, and the
    Admission Fair Sharing configuration (``None``: off).

    Example:
        >>> FairSharingSettings(enabled=True).preemption_strategies
        ('LessThanOrEqualToFinalShare', 'LessThanInitialShare')
    """

    enabled: bool = False
    preemption_strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
    admission: AdmissionFairSharing | None = None


def fair_weight(obj: Mapping[str, Any] | None) -> float:
    """``spec.fairSharing.weight`` of a ClusterQueue, Cohort or LocalQueue as a float (default 1).

    Example:
        >>> fair_weight({"spec": {"fairSharing": {"weight": "500m"}}}), fair_weight({"spec": {}})
        (0.5, 1.0)
    """
    weight = (((obj or {}).get("spec") or {}).get("fairSharing") or {}).get("weight")
    return 1.0 if weight is None else float(parse_quantity(weight))


@dataclass(frozen=True)
class DRS:
    """A dominant resource share: the unweighted ratio (per 1000), the weight, the dominant resource and
    whether the node borrows at all.

    Example:
        >>> DRS(250.0, 0.5, "cpu", True).weighted_share(), DRS(10.0, 0.0, "cpu", True).rounded()
        (500.0, 9223372036854775807)
    """

    ratio: float = 0.0
    weight: float = 1.0
    resource: str = ""
    borrowing: bool = False

    def zero_weight_borrows(self) -> bool:
        """Weight 0 and a non-zero share: always last for scheduling, first for preemption."""
        return self.weight == 0 and self.ratio != 0

    def weighted_share(self) -> float:
        """The precise weighted share (``inf`` for a borrowing zero-weight node)."""
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def rounded(self) -> int:
        """``status.fairSharing.weightedShare``: the share rounded up, or :data:`MAX_SHARE`."""
        if self.zero_weight_borrows():
            return MAX_SHARE
        return int(math.ceil(self.weighted_share()))

    def sort_key(self) -> tuple[int, float]:
        """Upstream's ``CompareDRS`` as a key: lower is scheduled first, higher preempted first."""
        if self.zero_weight_borrows():
            return (1, self.ratio)
        return (0, self.weighted_share())


def _lendable(parent: q.QuotaNode) -> dict[str, int]:
    root = parent
    while root.parent is not None:
        root = root.parent
    lendable: dict[str, int] = {}
    for fr in root.subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + q.potential_available(parent, fr)
    return lendable


def dominant_resource_share(
    node: q.QuotaNode,
    weight: float,
    extra: Mapping[q.FR, int] | None = None,
    lendable_cache: dict[int, dict[str, int]] | None = None,
) -> DRS:
    """The DRS of ``node`` (a ClusterQueue or Cohort), with ``extra`` usage counted as its own.

    A node without a parent never borrows (share 0). What a cohort can lend depends on quotas only, so a
    caller may keep it in ``lendable_cache`` (by parent node) for the length of a pass.
    """
    if node.parent is None:
        return DRS(weight=weight)
    borrowed: dict[str, int] = {}
    usage, more = node.usage, extra or {}
    for fr, quota in node.subtree.items():
        amount = more.get(fr, 0) + usage.get(fr, 0) - quota
        if amount > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + amount
    if not borrowed:
        return DRS(weight=weight)
    if lendable_cache is None:
        lendable = _lendable(node.parent)
    else:
        if id(node.parent) not in lendable_cache:
            lendable_cache[id(node.parent)] = _lendable(node.parent)
        lendable = lendable_cache[id(node.parent)]
    ratio, dominant = 0.0, ""
    for resource, amount in borrowed.items():
        lr = lendable.get(resource, 0)
        if lr > 0:
            value = amount * 1000.0 / lr
            if value > ratio or (value == ratio and resource < dominant):
                ratio, dominant = value, resource
    return DRS(ratio, weight, dominant, True)


def _path_drs(
    node: q.QuotaNode,
    usage: Mapping[q.FR, int],
    weights: Mapping[tuple[bool, str], float],
    lendable_cache: dict[int, dict[str, int]],
) -> dict[str, DRS]:
    """The DRS each tournament level sees for a workload with ``usage`` in ClusterQueue ``node``: keyed by
    the parent cohort's name, the DRS of the child (CQ or cohort) on the path below it."""
    for fr, value in usage.items():
        q.add_usage(node, fr, value)
    try:
        out: dict[str, DRS] = {}
        child = node
        for ancestor in q.path_to_root(node):
            out[ancestor.name] = dominant_resource_share(
                child, weights.get((child.is_cohort, child.name), 1.0), None, lendable_cache
            )
            child = ancestor
        return out
    finally:
        for fr, value in usage.items():
            q.remove_usage(node, fr, value)


def tournament_order(
    entries: list[Any],
    node_of: Any,
    usage_of: Any,
    tie_key: Any,
    weights: Mapping[tuple[bool, str], float],
    cache: dict[int, Any] | None = None,
    lendable_cache: dict[int, dict[str, int]] | None = None,
) -> Any:
    """The next entry to consider: upstream's tournament from the leaves of each cohort tree to its root,
    lowest DRS (with the entry's usage added) winning, then ``tie_key`` (priority, age). ``node_of(e)``
    is the entry's ClusterQueue quota node, ``usage_of(e)`` its assigned usage. Entries of ClusterQueues
    without a cohort come first, in list order (upstream takes them as they come). ``cache`` keeps the
    entries' DRS values (by ``id``) between calls: the caller drops those an admission changed. The
    example has nested cohorts (org -> x -> a, org -> y -> b), which :func:`flat_order` does not handle.

    Example:
        >>> from rayqueue_local.controllers.kueue.quota import build_tree
        >>> def cq(name, cohort):  # one CPU of nominal quota
        ...     return {"metadata": {"name": name}, "spec": {"cohortName": cohort, "resourceGroups": [
        ...         {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
        ...             {"name": "cpu", "nominalQuota": 1}]}]}]}}
        >>> org = [{"metadata": {"name": c}, "spec": {"parentName": "org"}} for c in ("x", "y")]
        >>> tree = build_tree([cq("a", "x"), cq("b", "y")], org)
        >>> _ = q.add_usage(tree.queues["a"], ("f", "cpu"), 1500)
        >>> entries = [("a", {("f", "cpu"): 500}), ("b", {("f", "cpu"): 500})]
        >>> tournament_order(entries, lambda e: tree.queues[e[0]], lambda e: e[1], lambda e: 0, {})[0]
        'b'
    """
    for entry in entries:
        if node_of(entry).parent is None:
            return entry
    drs = {} if cache is None else cache
    lendable = {} if lendable_cache is None else lendable_cache
    for e in entries:
        if id(e) not in drs:
            drs[id(e)] = _path_drs(node_of(e), usage_of(e), weights, lendable)

    def key(entry: Any, cohort: str) -> tuple[Any, ...]:
        return (*drs[id(entry)][cohort].sort_key(), tie_key(entry))

    def play(cohort: q.QuotaNode, members: list[Any]) -> Any:
        by_child: dict[int, list[Any]] = {}
        for entry in members:
            node = node_of(entry)
            while node.parent is not cohort:
                node = node.parent
            by_child.setdefault(id(node), []).append(entry)
        winners = []
        for child_entries in by_child.values():
            child = node_of(child_entries[0])
            while child.parent is not cohort:
                child = child.parent
            winners.append(play(child, child_entries) if child.is_cohort else min(child_entries, key=tie_key))
        return min(winners, key=lambda e: key(e, cohort.name))

    roots: dict[int, tuple[q.QuotaNode, list[Any]]] = {}
    for entry in entries:
        root = node_of(entry)
        while root.parent is not None:
            root = root.parent
        roots.setdefault(id(root), (root, []))[1].append(entry)
    root, members = next(iter(roots.values()))
    return play(root, members)


def flat_order(
    entries: list[Any],
    node_of: Any,
    usage_of: Any,
    tie_key: Any,
    weights: Mapping[tuple[bool, str], float],
    lendable_cache: dict[int, dict[str, int]] | None = None,
    share_cache: dict[Any, DRS] | None = None,
) -> list[Any]:
    """The whole tournament order at once, for cohorts without child cohorts: ClusterQueues without a
    cohort first (in list order), then lowest DRS with the entry's usage, then ``tie_key``. There an
    entry's share is its ClusterQueue's alone, which no other entry of the cycle changes, so the
    :func:`tournament_order` of each step gives this same order. ``share_cache`` keeps the shares by
    ClusterQueue and usage: the caller passes one dict per state of the quota tree (a new one after a change).

    Example:
        >>> from rayqueue_local.controllers.kueue.quota import build_tree
        >>> cqs = [{"metadata": {"name": n}, "spec": {"cohortName": "c", "resourceGroups": [
        ...     {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
        ...         {"name": "cpu", "nominalQuota": 1}]}]}]}} for n in ("a", "b")]
        >>> tree = build_tree(cqs, [])
        >>> _ = q.add_usage(tree.queues["a"], ("f", "cpu"), 1500)
        >>> entries = [("a", {("f", "cpu"): 500}), ("b", {("f", "cpu"): 500})]
        >>> [e[0] for e in flat_order(entries, lambda e: tree.queues[e[0]], lambda e: e[1], lambda e: 0, {})]
        ['b', 'a']
    """
    lendable = {} if lendable_cache is None else lendable_cache
    shares: dict[Any, DRS] = {} if share_cache is None else share_cache

    def key(indexed: tuple[int, Any]) -> tuple[Any, ...]:
        index, entry = indexed
        node = node_of(entry)
        if node.parent is None:
            return (0, index)
        usage = usage_of(entry)
        cache_key = (node.name, tuple(usage.items()))
        share = shares.get(cache_key)
        if share is None:
            share = dominant_resource_share(node, weights.get((False, node.name), 1.0), usage, lendable)
            shares[cache_key] = share
        return (1, *share.sort_key(), tie_key(entry))

    return [entry for _, entry in sorted(enumerate(entries), key=key)]


def strategy_allows(strategy: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    """Whether a fair-sharing preemption strategy lets the preemptor's queue (share ``preemptor_new`` with
    the incoming workload) preempt from a queue whose share is ``target_old`` before and ``target_new``
    after removing the target.

    Example:
        >>> a, b, c = DRS(100.0, 1, "cpu", True), DRS(300.0, 1, "cpu", True), DRS(50.0, 1, "cpu", True)
        >>> [strategy_allows(s, a, b, c) for s in ("LessThanOrEqualToFinalShare", "LessThanInitialShare")]
        [False, True]
    """
    if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return preemptor_new.sort_key() <= target_new.sort_key()
    if strategy == LESS_THAN_INITIAL_SHARE:
        return preemptor_new.sort_key() < target_old.sort_key()
    return False


def weights_of(
    cluster_queues: Iterable[Mapping[str, Any]], cohorts: Iterable[Mapping[str, Any]]
) -> dict[tuple[bool, str], float]:
    """Fair-sharing weights keyed ``(is_cohort, name)``.

    Example:
        >>> weights_of([{"metadata": {"name": "a"}, "spec": {"fairSharing": {"weight": 2}}}], [])
        {(False, 'a'): 2.0}
    """
    weights: dict[tuple[bool, str], float] = {}
    for obj in cluster_queues:
        weights[(False, obj["metadata"]["name"])] = fair_weight(obj)
    for obj in cohorts:
        weights[(True, obj["metadata"]["name"])] = fair_weight(obj)
    return weights


def fair_targets(
    snap: Snapshot,
    preemptor: WorkloadInfo,
    cq: ClusterQueueInfo,
    frs: set[q.FR],
    usage: Mapping[q.FR, int],
    strategies: tuple[str, ...],
    weights: Mapping[tuple[bool, str], float],
) -> list[Target]:
    """Fair-sharing preemption (upstream ``fairPreemptions``): the Workloads to evict so that ``usage`` fits
    in ``cq``, taken from the ClusterQueues with the highest share first, a cohort target only when the
    first strategy allows it (the second strategy retries the rest); then as few as needed are kept.
    Candidates: ``cq``'s own (``withinClusterQueue``) and those of borrowing ClusterQueues of the cohort tree
    (``reclaimWithinCohort``), using a flavor-resource that needs preemption. The snapshot is left as found.

    Example:
        >>> from rayqueue_local.controllers.kueue.snapshot import build_snapshot
        >>> snap = build_snapshot(cluster_queues=[{"metadata": {"name": "cq"}, "spec": {}}], cohorts=[],
        ...                       resource_flavors=[], workloads=[])
        >>> fair_targets(snap, None, snap.queues["cq"], set(), {}, (LESS_THAN_INITIAL_SHARE,), {})
        []
    """
    if not frs or not strategies:
        return []
    version = snap.version
    try:
        return _FairSearch(snap, preemptor, cq, frs, usage, weights).run(strategies)
    finally:
        snap.version = version


@dataclass(eq=False)
class _FairSearch:
    """One fair-sharing preemption search: room for ``usage`` of ``frs`` in ``cq`` for preemptor ``wl``."""

    snap: Snapshot
    wl: WorkloadInfo
    cq: ClusterQueueInfo
    frs: set[q.FR]
    usage: Mapping[q.FR, int]
    weights: Mapping[tuple[bool, str], float]
    lendable: dict[int, dict[str, int]] = field(default_factory=dict)

    def candidates(self) -> dict[str, list[WorkloadInfo]]:
        """Each ClusterQueue's candidates in preemption order. They depend on the snapshot's state (its
        version), the queue, the preemptor's priority (and time, for ``LowerOrNewerEqualPriority``) and the
        flavor-resources: searches alike share one answer per version (it is only read)."""
        policies = (self.cq.within_cluster_queue, self.cq.reclaim_within_cohort)
        key = (
            "fair_candidates",
            self.snap.version,
            self.cq.name,
            self.wl.priority,
            self.wl.created if "LowerOrNewerEqualPriority" in policies else 0.0,
            frozenset(self.frs),
        )
        cached: dict[str, list[WorkloadInfo]] | None = self.snap.memo.get(key)
        if cached is None:
            cached = self._candidates()
            self.snap.memo[key] = cached
        return cached

    def _candidates(self) -> dict[str, list[WorkloadInfo]]:
        found: dict[str, list[WorkloadInfo]] = {}

        def take(queue: ClusterQueueInfo, policy: str) -> None:
            for wl in queue.workloads.values():
                if self.frs.isdisjoint(wl.usage):
                    continue
                if satisfies_policy(self.wl.priority, self.wl.created, wl.priority, wl.created, policy):
                    found.setdefault(queue.name, []).append(wl)

        if self.cq.within_cluster_queue != "Never":
            take(self.cq, self.cq.within_cluster_queue)
        if self.cq.node.parent is not None and self.cq.reclaim_within_cohort != "Never":
            root = self.cq.node.parent
            while root.parent is not None:
                root = root.parent
            for queue in self.snap.queues.values():
                node = queue.node
                if queue is self.cq or node.parent is None:
                    continue
                top = node.parent
                while top.parent is not None:
                    top = top.parent
                borrowing = any(node.usage.get(fr, 0) > node.subtree.get(fr, 0) for fr in self.frs)
                if top is root and borrowing:
                    take(queue, self.cq.reclaim_within_cohort)
        for wls in found.values():  # lower priority first, then the most recently admitted
            wls.sort(key=lambda w: (not w.evicted, w.priority, -w.reserved_at, w.uid))
        return found

    def share(self, queue: ClusterQueueInfo) -> DRS:
        return dominant_resource_share(
            queue.node, self.weights.get((False, queue.name), 1.0), None, self.lendable
        )

    def fits(self) -> bool:
        for fr, value in self.usage.items():
            q.remove_usage(self.cq.node, fr, value)
        try:
            return all(value <= q.available(self.cq.node, fr) for fr, value in self.usage.items())
        finally:
            for fr, value in self.usage.items():
                q.add_usage(self.cq.node, fr, value)

    def run(self, strategies: tuple[str, ...]) -> list[Target]:
        pools = self.candidates()
        if not pools:
            return []
        for fr, value in self.usage.items():  # shares include the incoming workload
            q.add_usage(self.cq.node, fr, value)
        targets: list[Target] = []
        try:
            fits = False
            for index, strategy in enumerate(strategies):
                fits, retry = self.pass_(pools, strategy, targets)
                if fits or index == len(strategies) - 1:
                    break
                pools = retry
        finally:
            for fr, value in self.usage.items():
                q.remove_usage(self.cq.node, fr, value)
        if not fits:
            for target in targets:
                self.snap.add_workload(target.workload)
            return []
        kept = list(targets)
        for target in reversed(targets[:-1]):  # fill back: keep only the targets still needed
            self.snap.add_workload(target.workload)
            if self._fits_without_simulation():
                kept.remove(target)
            else:
                self.snap.remove_workload(target.workload)
        for target in kept:
            self.snap.add_workload(target.workload)
        return kept

    def _fits_without_simulation(self) -> bool:
        return all(value <= q.available(self.cq.node, fr) for fr, value in self.usage.items())

    def pass_(
        self, pools: dict[str, list[WorkloadInfo]], strategy: str, targets: list[Target]
    ) -> tuple[bool, dict[str, list[WorkloadInfo]]]:
        pools = {name: list(wls) for name, wls in pools.items() if wls}
        retry: dict[str, list[WorkloadInfo]] = {}
        # A queue's share depends on its own usage only (what its cohort can lend is fixed): keep it
        # until one of its Workloads is taken.
        shares = {name: self.share(self.snap.queues[name]) for name in pools}
        keys = {name: share.sort_key() for name, share in shares.items()}
        preemptor_new = self.share(self.cq)
        while pools:
            name = max(sorted(pools), key=keys.__getitem__)  # the highest share; a tie: the first name
            queue = self.snap.queues[name]
            if queue is self.cq:
                wl = pools[name].pop(0)
                if not pools[name]:
                    del pools[name]
                self.snap.remove_workload(wl)
                shares[name] = preemptor_new = self.share(queue)
                keys[name] = preemptor_new.sort_key()
                targets.append(Target(wl, msg.IN_CLUSTER_QUEUE, queue))
                if self.fits():
                    return True, retry
                continue
            target_old = shares[name]
            if preemptor_new.sort_key() > target_old.sort_key():
                # Removing usage never raises a share, so neither strategy can pass for this queue
                # (upstream only short-cuts the infinite share; the outcome is the same).
                retry.setdefault(name, []).extend(pools.pop(name))
                continue
            weight = self.weights.get((False, name), 1.0)
            # the queue's share without a target depends on the target's usage alone until one is taken
            shares_without: dict[tuple[tuple[q.FR, int], ...], DRS] = {}
            for wl in pools.pop(name):
                target_new = target_old  # LessThanInitialShare does not look at it
                if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
                    usage_key = tuple(wl.usage.items())
                    if usage_key not in shares_without:
                        without = {fr: -value for fr, value in wl.usage.items()}
                        shares_without[usage_key] = dominant_resource_share(
                            queue.node, weight, without, self.lendable
                        )
                    target_new = shares_without[usage_key]
                if strategy_allows(strategy, preemptor_new, target_old, target_new):
                    shares_without.clear()
                    self.snap.remove_workload(wl)
                    targets.append(Target(wl, msg.IN_COHORT_FAIR_SHARING, queue))
                    if self.fits():
                        return True, retry
                else:
                    retry.setdefault(name, []).append(wl)
            shares[name] = self.share(queue)
            keys[name] = shares[name].sort_key()
        return False, retry
