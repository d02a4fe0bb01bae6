"""Will it fit? A RayCluster's requests against a ClusterQueue's quota and current usage, pure.

:func:`workload_requests` sums what Kueue would ask for a RayCluster manifest: one pod set for the head and
one per worker group (``replicas × numOfHosts`` pods), each pod's requests being the sum of its containers'
(a container's limit stands for a missing request, as Kubernetes defaults it) and at least each init
container's, plus ``pods`` (Kueue ``pkg/controller/jobs/raycluster``, ``pkg/workload/resources.go``).

:func:`fit_requests` then walks the ClusterQueue's resource groups as Kueue's flavor assigner does
(``pkg/scheduler/flavorassigner``): for each group covering requested resources, the flavors in order,
the first where every requested resource fits is taken, without borrowing or, when the ClusterQueue is in a
cohort, by borrowing. What a member of a cohort may use is its own quota not lent (nominal minus
``lendingLimit``) plus what the cohort's lendable pool has free, capped by its ``borrowingLimit`` (Kueue
``pkg/cache/scheduler/resource_node.go``, "available"; docs: concepts/cluster_queue, "Borrowing limit",
"Lending limit"). It does not check ResourceFlavor node labels and taints, topology or a Cohort object's own
quota: the answer is about quota, as Kueue's ``insufficient unused quota`` messages are.

Example:
    >>> from rayqueue_sdk.admission.overview import cluster_queue_summary
    >>> cq = cluster_queue_summary({"metadata": {"name": "cq"}, "spec": {"resourceGroups": [
    ...     {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
    ...         {"name": "cpu", "nominalQuota": 4}]}]}]},
    ...     "status": {"flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "3"}]}]}})
    >>> answer = fit_requests({"cpu": Decimal(2)}, cq, [cq])
    >>> answer.fits, answer.reason
    (False, 'does not fit now: cpu short by 1 in flavor f (needs 2, 1 available; no cohort to borrow from)')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.overview import ClusterQueueSummary, format_amount
from rayqueue_sdk.admission.podsets import kueue_pod_sets
from rayqueue_sdk.admission.records import record_dict
from rayqueue_sdk.manifests.quantities import quantity_or_zero

__all__ = ["FitAnswer", "Shortage", "fit_requests", "pod_requests", "room", "workload_requests"]

_ZERO = Decimal(0)


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Decimal]:
    """One pod's requests: its containers' summed (a limit stands for a missing request), at least each init
    container's.

    Example:
        >>> pod_requests({"containers": [{"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2",
        ...     "nvidia.com/gpu": 1}}}, {"resources": {"requests": {"cpu": "500m"}}}]})
        {'cpu': Decimal('1.500'), 'nvidia.com/gpu': Decimal('1')}
    """

    def of(container: Mapping[str, Any]) -> dict[str, Decimal]:
        res = container.get("resources") or {}
        merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        return {str(k): quantity_or_zero(v) for k, v in merged.items()}

    total: dict[str, Decimal] = {}
    for container in pod_spec.get("containers") or []:
        for name, amount in of(container).items():
            total[name] = total.get(name, _ZERO) + amount
    for container in pod_spec.get("initContainers") or []:
        for name, amount in of(container).items():
            total[name] = max(total.get(name, _ZERO), amount)
    return total


def workload_requests(manifest: Mapping[str, Any]) -> dict[str, Decimal]:
    """The total requests of a RayCluster or RayJob manifest, as its Kueue Workload asks them (``pods``
    included): the pod sets of :func:`~rayqueue_sdk.admission.podsets.kueue_pod_sets`, so the autoscaler
    sidecar, the RayJob's submitter and the GCS fault-tolerance cleanup count as Kueue counts them.

    Example:
        >>> pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
        >>> rc = {"spec": {"headGroupSpec": {"template": pod},
        ...                "workerGroupSpecs": [{"replicas": 2, "template": pod}]}}
        >>> {k: str(v) for k, v in workload_requests(rc).items()}
        {'cpu': '3', 'memory': '6442450944', 'pods': '3'}
        >>> job = {"kind": "RayJob", "spec": {"rayClusterSpec": rc["spec"]}}
        >>> float(workload_requests(job)["cpu"]), int(workload_requests(job)["pods"])   # + the submitter
        (3.5, 4)
    """
    total: dict[str, Decimal] = {}
    pods = 0
    for _, count, pod in kueue_pod_sets(manifest):
        pods += count
        for name, amount in pod_requests(pod).items():
            total[name] = total.get(name, _ZERO) + amount * count
    total["pods"] = Decimal(pods)
    return {k: v for k, v in sorted(total.items()) if v > 0}


@dataclass(frozen=True)
class Shortage:
    """A resource that does not fit in a flavor: what is asked, what is available now (borrowing included,
    when the ClusterQueue may borrow), by how much it is short, and the most the queue could ever give it
    (``ceiling``: an empty queue and cohort). ``flavor`` is ``None`` when no resource group covers the
    resource.

    Example:
        >>> s = Shortage("cpu", "f", Decimal(8), Decimal(2), Decimal(6))
        >>> s.short, s.never
        (Decimal('6'), True)
    """

    resource: str
    flavor: str | None
    requested: Decimal
    available: Decimal
    ceiling: Decimal

    @property
    def short(self) -> Decimal:
        """How much is missing now."""
        return max(_ZERO, self.requested - self.available)

    @property
    def never(self) -> bool:
        """Whether it cannot fit even in an empty queue and cohort."""
        return self.requested > self.ceiling

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        fmt = format_amount
        r = self.resource
        return {
            "resource": r,
            "flavor": self.flavor,
            "requested": fmt(r, self.requested),
            "available": fmt(r, self.available),
            "short": fmt(r, self.short),
            "ceiling": fmt(r, self.ceiling),
            "never": self.never,
        }


@dataclass(frozen=True)
class FitAnswer:
    """The answer of :func:`fit_requests` (and :func:`rayqueue_sdk.queues.overview.will_it_fit`).

    ``fits``: ``True`` (admissible now), ``False`` (not now, or never: see ``never``), ``None`` (cannot tell:
    the ClusterQueue cannot be read); ``flavors`` the flavor each resource would get, ``borrowing`` what
    would be borrowed from the cohort, ``shortages`` what is missing; ``reason`` says it in a sentence.

    Example:
        >>> a = FitAnswer(None, "cannot tell: the ClusterQueue cannot be read", queue="q")
        >>> bool(a), a.to_dict()["fits"]
        (False, None)
    """

    fits: bool | None
    reason: str
    queue: str | None = None
    cluster_queue: str | None = None
    cohort: str | None = None
    requests: Mapping[str, Decimal] = field(default_factory=dict)
    flavors: Mapping[str, str] = field(default_factory=dict)
    borrowing: Mapping[str, Decimal] = field(default_factory=dict)
    shortages: tuple[Shortage, ...] = ()

    @property
    def never(self) -> bool:
        """Whether it can never fit in this queue as it is configured (a quota or a resource missing)."""
        return self.fits is False and bool(_never(self.shortages))

    def __bool__(self) -> bool:
        return self.fits is True

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return record_dict(
            self,
            requests={k: format_amount(k, v) for k, v in self.requests.items()},
            flavors=dict(self.flavors),
            borrowing={k: format_amount(k, v) for k, v in self.borrowing.items()},
            shortages=[s.to_dict() for s in self.shortages],
            never=self.never,
        )


def _room(
    cq: ClusterQueueSummary, members: Sequence[ClusterQueueSummary], flavor: str, resource: str
) -> tuple[Decimal, Decimal, Decimal]:
    """``(available now, ceiling, used)`` of ``resource`` in ``flavor`` for ``cq``, borrowing included."""
    own = cq.quota(flavor, resource)
    nominal = own.nominal if own else _ZERO
    used = own.used if own else _ZERO
    limit = own.borrowing_limit if own else None
    if not cq.cohort or (limit is not None and limit == 0):
        return max(_ZERO, nominal - used), nominal, used
    pool = pool_used = _ZERO
    guaranteed_self = _ZERO
    for m in [cq, *[m for m in members if m.name != cq.name]]:
        q = m.quota(flavor, resource)
        if q is None:
            continue
        lendable = q.nominal if q.lending_limit is None else min(q.lending_limit, q.nominal)
        guaranteed = q.nominal - lendable
        pool += lendable
        pool_used += max(_ZERO, q.used - guaranteed)
        if m.name == cq.name:
            guaranteed_self = guaranteed
    available = max(_ZERO, guaranteed_self - used) + max(_ZERO, pool - pool_used)
    ceiling = guaranteed_self + pool
    if limit is not None:
        available = min(available, max(_ZERO, nominal + limit - used))
        ceiling = min(ceiling, nominal + limit)
    return available, ceiling, used


def room(
    cq: ClusterQueueSummary, members: Sequence[ClusterQueueSummary], flavor: str, resource: str
) -> tuple[Decimal, Decimal, Decimal]:
    """``(available now, ceiling, used)`` of ``resource`` in ``flavor`` for ``cq``: what a workload could get
    now (unused nominal quota plus what the cohort lends, within ``borrowingLimit``), the most it could
    ever get, and what the ClusterQueue holds. The rule :func:`fit_requests` applies.

    Example (two ClusterQueues of one cohort, 4 cpu each):
        >>> from rayqueue_sdk.admission.overview import cluster_queue_summary
        >>> def member(name, used):
        ...     return cluster_queue_summary({"metadata": {"name": name}, "spec": {"cohortName": "c",
        ...         "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources":
        ...             [{"name": "cpu", "nominalQuota": 4}]}]}]}, "status": {"flavorsUsage": [
        ...             {"name": "f", "resources": [{"name": "cpu", "total": used}]}]}})
        >>> a, b = member("a", "3"), member("b", "1")
        >>> room(a, [a, b], "f", "cpu")  # its own 1 free and the 3 b lends; at most 4 + 4
        (Decimal('4'), Decimal('8'), Decimal('3'))
    """
    return _room(cq, members, flavor, resource)


def _borrow_note(cq: ClusterQueueSummary, flavor: str | None, resource: str) -> str:
    own = cq.quota(flavor, resource) if flavor else None
    if not cq.cohort:
        return "no cohort to borrow from"
    if own is not None and own.borrowing_limit == 0:
        return f"borrowingLimit 0: no borrowing from cohort {cq.cohort}"
    return f"borrowing from cohort {cq.cohort} included"


def fit_requests(
    requests: Mapping[str, Decimal], cq: ClusterQueueSummary, members: Sequence[ClusterQueueSummary]
) -> FitAnswer:
    """Whether ``requests`` fit ``cq`` now, given its cohort's ``members`` (``cq`` may be among them).

    Example:
        >>> from rayqueue_sdk.admission.overview import cluster_queue_summary
        >>> def cq(name, cpu, used):
        ...     return cluster_queue_summary({"metadata": {"name": name}, "spec": {"cohortName": "ab",
        ...         "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f",
        ...             "resources": [{"name": "cpu", "nominalQuota": cpu}]}]}]},
        ...         "status": {"flavorsUsage": [{"name": "f",
        ...                                      "resources": [{"name": "cpu", "total": used}]}]}})
        >>> a, shared = cq("a", 0, "0"), cq("shared", 6, "2")
        >>> answer = fit_requests({"cpu": Decimal(4)}, a, [a, shared])
        >>> answer.fits, answer.borrowing, answer.reason
        (True, {'cpu': Decimal('4')}, 'fits in ClusterQueue a by borrowing from cohort ab: cpu 4 (flavor f)')
    """
    wanted = {r: a for r, a in requests.items() if a > 0}
    covered = {r for group, _ in cq.resource_groups for r in group}
    shortages: list[Shortage] = []
    flavors: dict[str, str] = {}
    borrowing: dict[str, Decimal] = {}
    free_notes: list[str] = []
    for resource in sorted(wanted):
        if resource not in covered and resource != "pods":
            shortages.append(Shortage(resource, None, wanted[resource], _ZERO, _ZERO))
    for group, group_flavors in cq.resource_groups:
        asked = {r: wanted[r] for r in group if r in wanted}
        if not asked:
            continue
        tried: list[Shortage] = []
        for flavor in group_flavors:
            missing: list[Shortage] = []
            borrow: dict[str, Decimal] = {}
            for resource, amount in asked.items():
                available, ceiling, used = _room(cq, members, flavor, resource)
                if amount > available:
                    missing.append(Shortage(resource, flavor, amount, available, ceiling))
                    continue
                own = cq.quota(flavor, resource)
                nominal = own.nominal if own else _ZERO
                extra = max(_ZERO, used + amount - nominal) - max(_ZERO, used - nominal)
                if extra > 0:
                    borrow[resource] = extra
            if not missing:
                for resource in asked:
                    flavors[resource] = flavor
                borrowing.update(borrow)
                free_notes.append(flavor)
                break
            tried.extend(missing)
        else:
            shortages.extend(tried)
    if shortages:
        reason = _shortage_reason(cq, shortages)
        return FitAnswer(False, reason, None, cq.name, cq.cohort, wanted, flavors, shortages=tuple(shortages))
    if borrowing:
        what = ", ".join(
            f"{r} {format_amount(r, a)} (flavor {flavors[r]})" for r, a in sorted(borrowing.items())
        )
        reason = f"fits in ClusterQueue {cq.name} by borrowing from cohort {cq.cohort}: {what}"
        return FitAnswer(True, reason, None, cq.name, cq.cohort, wanted, flavors, borrowing)
    used_flavors = ", ".join(sorted(set(flavors.values()))) or "-"
    reason = f"fits in ClusterQueue {cq.name} within its nominal quota (flavor {used_flavors})"
    return FitAnswer(True, reason, None, cq.name, cq.cohort, wanted, flavors)


def _never(shortages: Sequence[Shortage]) -> list[Shortage]:
    """The shortages of the resources that no flavor could ever give."""
    by_resource: dict[str, list[Shortage]] = {}
    for s in shortages:
        by_resource.setdefault(s.resource, []).append(s)
    return [s for group in by_resource.values() if all(x.never for x in group) for s in group]


def _shortage_reason(cq: ClusterQueueSummary, shortages: Sequence[Shortage]) -> str:
    never = _never(shortages)
    parts = []
    for s in never or shortages:
        fmt = format_amount
        r = s.resource
        if s.flavor is None:
            parts.append(f"ClusterQueue {cq.name} has no quota for {r}")
        elif s.never:
            parts.append(
                f"{r} {fmt(r, s.requested)} is more than flavor {s.flavor} can ever give "
                f"({fmt(r, s.ceiling)}; {_borrow_note(cq, s.flavor, r)})"
            )
        else:
            parts.append(
                f"{r} short by {fmt(r, s.short)} in flavor {s.flavor} (needs {fmt(r, s.requested)}, "
                f"{fmt(r, s.available)} available; {_borrow_note(cq, s.flavor, r)})"
            )
    if never:
        return "never fits: " + "; ".join(parts)
    return "does not fit now: " + "; ".join(parts)
