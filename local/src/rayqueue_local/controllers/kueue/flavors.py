"""The flavor assigner: for each pod set, pick a ResourceFlavor per resource group, in order.

Follows ``pkg/scheduler/flavorassigner/flavorassigner.go`` of Kueue v0.19.2 with the default
feature gates (FlavorFungibility on, no TAS): pod sets are assigned in order and each sees the
usage of the ones before it; for a resource group the flavors are tried in the ClusterQueue's
order; a flavor is skipped when its taints are not tolerated or the pod's nodeSelector contradicts
its nodeLabels; each resource either fits, could fit by preemption (the preemption oracle
decides), or does not fit; ``flavorFungibility`` decides when to stop searching. The first pod set
that gets no flavor ends the assignment. Messages are upstream's.

Example:
    >>> Mode.FIT > Mode.PREEMPT > Mode.NO_FIT
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.amounts import format_amount
from rayqueue_local.controllers.kueue.preemption import Possibility, simulate_preemption
from rayqueue_local.controllers.kueue.snapshot import ClusterQueueInfo, PodSetInfo, Snapshot, WorkloadInfo

__all__ = ["Assignment", "Mode", "PodSetAssignment", "assign_flavors"]


class Mode(IntEnum):
    """How a flavor assignment can be used (Kueue's FlavorAssignmentMode)."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 3


class _PMode(IntEnum):  # Kueue's granular preemptionMode
    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    @property
    def assignment_mode(self) -> Mode:
        if self == _PMode.NO_FIT:
            return Mode.NO_FIT
        return Mode.FIT if self == _PMode.FIT else Mode.PREEMPT


_WORST = (_PMode.NO_FIT, 1 << 30)
_BEST = (_PMode.FIT, 0)


@dataclass
class PodSetAssignment:
    """Flavors chosen for one pod set: ``flavors[resource] = (flavor, mode)``."""

    name: str
    count: int
    requests: dict[str, int]
    flavors: dict[str, tuple[str, Mode]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    failed: bool = False

    @property
    def mode(self) -> Mode:
        """The pod set's worst mode (``FIT`` when nothing was short)."""
        if not self.reasons and not self.failed:
            return Mode.FIT
        if self.failed or not self.flavors:
            return Mode.NO_FIT
        return min(m for _, m in self.flavors.values())


@dataclass
class Assignment:
    """The flavor assignment of a whole Workload in one ClusterQueue."""

    cluster_queue: str
    pod_sets: list[PodSetAssignment] = field(default_factory=list)
    usage: dict[q.FR, int] = field(default_factory=dict)
    borrowing: int = 0
    #: mode and message, kept once read: an assignment is only read after :func:`assign_flavors`
    #: returns it, and the engine reads one assignment for every alike head of a cycle
    _mode: Mode | None = field(default=None, init=False, repr=False, compare=False)
    _message: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def mode(self) -> Mode:
        """The worst mode of all pod sets (``NO_FIT`` if there are none)."""
        if self._mode is None:
            self._mode = min((ps.mode for ps in self.pod_sets), default=Mode.NO_FIT)
        return self._mode

    def frs_needing_preemption(self) -> set[q.FR]:
        """Flavor-resources assigned in ``PREEMPT`` mode."""
        return {(f, res) for ps in self.pod_sets for res, (f, m) in ps.flavors.items() if m == Mode.PREEMPT}

    def message(self) -> str:
        """The Pending message: one "couldn't assign flavors to pod set ..." part per short pod set."""
        if self._message is None:
            self._message = "; ".join(
                msg.couldnt_assign(ps.name, ps.reasons) for ps in self.pod_sets if ps.mode != Mode.FIT
            )
        return self._message

    def to_admission(self) -> dict[str, Any]:
        """``status.admission`` for this assignment."""
        return {
            "clusterQueue": self.cluster_queue,
            "podSetAssignments": [
                {
                    "name": ps.name,
                    "flavors": {res: f for res, (f, _) in sorted(ps.flavors.items())},
                    "resourceUsage": {
                        res: format_amount(res, amount)
                        for res, amount in sorted(ps.requests.items())
                        if res in ps.flavors
                    },
                    "count": ps.count,
                }
                for ps in self.pod_sets
            ],
        }


def _is_preferred(a: tuple[_PMode, int], b: tuple[_PMode, int], cq: ClusterQueueInfo) -> bool:
    if a[0] == _PMode.NO_FIT:
        return False
    if b[0] == _PMode.NO_FIT:
        return True
    a_none, b_none = a[0] == _PMode.NO_CANDIDATES, b[0] == _PMode.NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if cq.preference == "PreemptionOverBorrowing":
        return a[1] < b[1] if a[1] != b[1] else a[0] > b[0]
    return a[0] > b[0] if a[0] != b[0] else a[1] < b[1]


def _should_try_next(mode: tuple[_PMode, int], cq: ClusterQueueInfo) -> bool:
    if mode[0] in (_PMode.NO_FIT, _PMode.NO_CANDIDATES):
        return True
    if mode[0] in (_PMode.PREEMPT, _PMode.RECLAIM) and cq.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and cq.when_can_borrow == "TryNextFlavor"


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (
        taint.get("value") or ""
    )


def _check_flavor(snap: Snapshot, flavor: str, pod_set: PodSetInfo) -> str | None:
    obj = snap.flavors.get(flavor)
    if obj is None:
        return f"flavor {flavor} not found"
    spec = obj.get("spec") or {}
    tolerations = list(pod_set.spec.get("tolerations") or ()) + list(spec.get("tolerations") or ())
    for taint in spec.get("nodeTaints") or ():
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            key, value, effect = taint.get("key", ""), taint.get("value", ""), taint.get("effect")
            # Kueue formats the corev1.Taint value (not a pointer) with %s: Go's struct form
            # (flavorassigner.go, "untolerated taint %s in flavor %s").
            shown = f"{{{key} {value} {effect} <nil>}}"
            return f"untolerated taint {shown} in flavor {flavor}"
    labels = spec.get("nodeLabels") or {}
    for key, value in (pod_set.spec.get("nodeSelector") or {}).items():
        if key in labels and labels[key] != value:
            return f"flavor {flavor} doesn't match node affinity"
    return None


class _Assigner:
    def __init__(self, snap: Snapshot, wl: WorkloadInfo, cq: ClusterQueueInfo) -> None:
        self.snap, self.wl, self.cq = snap, wl, cq

    def fits_resource_quota(self, fr: q.FR, assumed: int, request: int) -> tuple[_PMode, int, list[str]]:
        node, (_, resource) = self.cq.node, fr
        avail = q.available(node, fr)
        capacity = q.potential_available(node, fr)
        value = assumed + request
        if value > capacity:
            reason = msg.insufficient_quota(
                resource,
                fr[0],
                format_amount(resource, assumed),
                format_amount(resource, request),
                format_amount(resource, capacity),
            )
            return _PMode.NO_FIT, 0, [reason]
        borrow, may_reclaim = q.find_height_of_lowest_subtree_that_fits(node, fr, value)
        if value <= avail:
            return _PMode.FIT, borrow, []
        reasons = [msg.insufficient_unused_quota(resource, fr[0], format_amount(resource, value - avail))]
        nominal = node.quotas.get(fr, q.Quota()).nominal
        if nominal >= value or may_reclaim or self.cq.borrow_within_cohort != "Never":
            possibility, borrow_after = simulate_preemption(self.snap, self.wl, self.cq, fr, value)
            mode = {
                Possibility.NO_CANDIDATES: _PMode.NO_CANDIDATES,
                Possibility.PREEMPT: _PMode.PREEMPT,
                Possibility.RECLAIM: _PMode.RECLAIM,
            }[possibility]
            return mode, borrow_after, reasons
        return _PMode.NO_FIT, borrow, reasons

    def find_flavor(
        self,
        pod_set: PodSetInfo,
        group: tuple[list[str], list[str]],
        requests: dict[str, int],
        usage: dict[q.FR, int],
    ) -> tuple[dict[str, tuple[str, Mode, int]], list[str]]:
        covered, flavor_names = group
        group_requests = {r: v for r, v in sorted(requests.items()) if r in covered}
        best: dict[str, tuple[str, Mode, int]] | None = None
        best_mode = _WORST
        reasons: list[str] = []
        for flavor in flavor_names:
            problem = _check_flavor(self.snap, flavor, pod_set)
            if problem:
                reasons.append(problem)
                continue
            assignments: dict[str, tuple[str, Mode, int]] = {}
            representative = _BEST
            for resource, value in group_requests.items():
                fr = (flavor, resource)
                mode, borrow, why = self.fits_resource_quota(fr, usage.get(fr, 0), value)
                reasons.extend(why)
                if _is_preferred(representative, (mode, borrow), self.cq):
                    representative = (mode, borrow)
                if representative[0] == _PMode.NO_FIT:
                    continue
                assignments[resource] = (flavor, mode.assignment_mode, borrow)
            if not _should_try_next(representative, self.cq):
                best, best_mode = assignments, representative
                break
            if _is_preferred(representative, best_mode, self.cq):
                best, best_mode = assignments, representative
        if best_mode[0] == _PMode.FIT:
            return best or {}, []
        return best or {}, reasons

    def assign(self) -> Assignment:
        assignment = Assignment(self.cq.name)
        covers_pods = self.cq.covers("pods")
        for pod_set in self.wl.pod_sets:
            requests = {r: v * pod_set.count for r, v in pod_set.per_pod.items()}
            if covers_pods:
                requests["pods"] = pod_set.count
            psa = PodSetAssignment(pod_set.name, pod_set.count, requests)
            chosen: dict[str, tuple[str, Mode, int]] = {}
            for resource, value in sorted(requests.items()):
                group = self.cq.group_of(resource)
                if group is None:
                    if value == 0:
                        continue
                    psa.reasons, psa.failed, chosen = [msg.resource_unavailable(resource)], True, {}
                    break
                if resource in chosen:
                    continue
                found, reasons = self.find_flavor(pod_set, group, requests, assignment.usage)
                if not found:
                    psa.reasons, psa.failed, chosen = reasons, True, {}
                    break
                chosen.update(found)
                psa.reasons.extend(reasons)
            for resource, (flavor, mode, borrow) in chosen.items():
                psa.flavors[resource] = (flavor, mode)
                fr = (flavor, resource)
                assignment.usage[fr] = assignment.usage.get(fr, 0) + requests[resource]
                assignment.borrowing = max(assignment.borrowing, borrow)
            assignment.pod_sets.append(psa)
            if psa.failed:
                break
        return assignment


def assign_flavors(snap: Snapshot, wl: WorkloadInfo, cq: ClusterQueueInfo) -> Assignment:
    """Assign flavors to every pod set of ``wl`` in ``cq`` against the snapshot's current usage."""
    return _Assigner(snap, wl, cq).assign()
