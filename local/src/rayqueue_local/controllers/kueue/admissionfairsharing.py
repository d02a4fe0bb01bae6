"""Admission Fair Sharing: LocalQueue usage, its decay and entry penalty, and the pending order it gives.

*Admission Fair Sharing* (Kueue's ``admissionFairSharing`` config; a ClusterQueue opts in with
``spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing``): each LocalQueue's consumed
resources decay with ``usageHalfLifeTime`` (``consumed = old * (1 - a) + admitted * a`` with
``a = 1 - 0.5 ** (elapsed / halfLife)``, sampled every ``usageSamplingInterval``); every admission adds
an entry penalty ``requests * (1 - 0.5 ** (sampling / halfLife))`` at once. Pending workloads of such a
ClusterQueue are ordered by their LocalQueue's usage (``sum(resourceWeight * consumed) / lq weight``),
then by priority and age. Sources: ``pkg/util/admissionfairsharing/admission_fair_sharing.go``,
``pkg/cache/queue/cluster_queue.go`` (``queueOrderingFunc``), ``pkg/controller/core/localqueue_controller.go``
and https://kueue.sigs.k8s.io/docs/concepts/admission_fair_sharing/.

Pure functions over plain objects; the engine and the controller call them. Cohort fair sharing is
:mod:`.fairsharing`.

Example:
    >>> local_queue_usage(decayed({"cpu": 1000.0}, {"cpu": 3000.0}, 300, AdmissionFairSharing()), 1.0)
    2.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.controllers.kueue.amounts import format_amount, to_amount

__all__ = [
    "USAGE_BASED",
    "AdmissionFairQueue",
    "AdmissionFairSharing",
    "consumed_resources",
    "decayed",
    "local_queue_fair_sharing_status",
    "local_queue_usage",
]

USAGE_BASED = "UsageBasedAdmissionFairSharing"
"""The ``spec.admissionScope.admissionMode`` that opts a ClusterQueue into Admission Fair Sharing."""


@dataclass(frozen=True)
class AdmissionFairSharing:
    """Kueue's ``admissionFairSharing`` configuration (seconds; ``resource_weights`` default 1 each).

    Example:
        >>> afs = AdmissionFairSharing(half_life_seconds=300, sampling_interval_seconds=300)
        >>> afs.alpha(300), afs.entry_penalty({"cpu": 2000})
        (0.5, {'cpu': 1000.0})
    """

    half_life_seconds: float = 300.0
    sampling_interval_seconds: float = 300.0
    resource_weights: Mapping[str, float] = field(default_factory=dict)

    def alpha(self, elapsed: float) -> float:
        """Upstream's ``calculateAlphaRate``: the weight of new usage after ``elapsed`` seconds."""
        if self.half_life_seconds == 0:
            return 0.0
        return 1.0 - math.pow(0.5, max(0.0, elapsed) / self.half_life_seconds)

    def entry_penalty(self, requests: Mapping[str, float]) -> dict[str, float]:
        """The usage added to a LocalQueue at once when one of its workloads is admitted."""
        alpha = self.alpha(self.sampling_interval_seconds)
        return {res: value * alpha for res, value in requests.items()}


def consumed_resources(lq: Mapping[str, Any] | None) -> dict[str, float]:
    """``status.fairSharing.admissionFairSharingStatus.consumedResources`` in Kueue units (CPU in millicores).

    Example:
        >>> consumed_resources({"status": {"fairSharing": {"admissionFairSharingStatus": {
        ...     "consumedResources": {"cpu": "1500m"}}}}})
        {'cpu': 1500.0}
    """
    status = (((lq or {}).get("status") or {}).get("fairSharing") or {}).get(
        "admissionFairSharingStatus"
    ) or {}
    return {res: float(to_amount(res, v)) for res, v in (status.get("consumedResources") or {}).items()}


def local_queue_usage(
    consumed: Mapping[str, float], lq_weight: float, resource_weights: Mapping[str, float] | None = None
) -> float:
    """Upstream's ``CalculateUsage``: ``sum(weight * quantity) / lq weight`` (``inf`` for weight <= 0);
    quantities as Kubernetes floats (CPU in cores, memory in bytes).

    Example:
        >>> local_queue_usage({"cpu": 2000, "nvidia.com/gpu": 1}, 2.0)
        1.5
    """
    total = 0.0
    for res in sorted(consumed):
        value = consumed[res] / 1000.0 if res == "cpu" else consumed[res]
        total += (resource_weights or {}).get(res, 1.0) * value
    if lq_weight <= 0:
        return math.inf
    return total / lq_weight


def decayed(
    old: Mapping[str, float], admitted: Mapping[str, float], elapsed: float, afs: AdmissionFairSharing
) -> dict[str, float]:
    """Upstream's ``CalculateDecayedConsumed``: ``old * (1 - a) + admitted * a`` after ``elapsed`` s.

    Example:
        >>> decayed({"cpu": 1000.0}, {"cpu": 3000.0}, 300, AdmissionFairSharing())
        {'cpu': 2000.0}
    """
    alpha = afs.alpha(elapsed)
    out = {res: value * (1 - alpha) for res, value in old.items()}
    for res, value in admitted.items():
        out[res] = out.get(res, 0.0) + value * alpha
    return out


def local_queue_fair_sharing_status(
    weighted_share: int, consumed: Mapping[str, float] | None, last_update: str | None
) -> dict[str, Any]:
    """A LocalQueue's ``status.fairSharing`` (``admissionFairSharingStatus`` only when AFS is on).

    Example:
        >>> local_queue_fair_sharing_status(0, {"cpu": 31999.4}, "2026-01-01T00:00:00Z")
        {'weightedShare': 0, 'admissionFairSharingStatus': {'consumedResources': {'cpu': '31999m'}, \
'lastUpdate': '2026-01-01T00:00:00Z'}}
    """
    status: dict[str, Any] = {"weightedShare": weighted_share}
    if consumed is not None:
        status["admissionFairSharingStatus"] = {
            "consumedResources": {res: format_amount(res, round(v)) for res, v in sorted(consumed.items())},
            "lastUpdate": last_update,
        }
    return status


class AdmissionFairQueue:
    """The pending Workloads of one ClusterQueue under Admission Fair Sharing: :meth:`pop` gives the head of
    the LocalQueue with the lowest usage (then ``key``: priority, age); :meth:`admitted` adds the entry
    penalty so that the LocalQueue's next Workload waits its turn. ``items`` are already in ``key`` order.

    Example:
        >>> fq = AdmissionFairQueue([("a", 1), ("a", 2), ("b", 3)], lq_of=lambda w: w[0],
        ...     usage={"a": 0.0, "b": 0.5}, weights={}, settings=AdmissionFairSharing(), key=lambda w: w[1])
        >>> first = fq.pop(); fq.admitted(first, {"cpu": 2000}); first, fq.pop()
        (('a', 1), ('b', 3))
    """

    def __init__(
        self,
        items: Iterable[Any],
        *,
        lq_of: Any,
        usage: Mapping[Any, float],
        weights: Mapping[Any, float],
        settings: AdmissionFairSharing,
        key: Any,
        consumed: Mapping[Any, Mapping[str, float]] | None = None,
    ) -> None:
        self.lq_of, self.key, self.settings = lq_of, key, settings
        self.weights = dict(weights)
        self.usage = dict(usage)
        self.consumed = {lq: dict(v) for lq, v in (consumed or {}).items()}
        self.lists: dict[Any, list[Any]] = {}
        self.keys: dict[Any, list[Any]] = {}  # each item's ``key``, computed once
        for item in items:
            lq = lq_of(item)
            self.lists.setdefault(lq, []).append(item)
            self.keys.setdefault(lq, []).append(key(item))
        self.position = dict.fromkeys(self.lists, 0)

    def pop(self) -> Any:
        """The next Workload to try (``None`` when every LocalQueue's list is exhausted)."""
        best, best_key = None, None
        for lq, items in self.lists.items():
            position = self.position[lq]
            if position < len(items):
                k = (self.usage.get(lq, 0.0), self.keys[lq][position])
                if best_key is None or k < best_key:
                    best, best_key = lq, k
        if best is None:
            return None
        self.position[best] += 1
        return self.lists[best][self.position[best] - 1]

    def admitted(self, item: Any, requests: Mapping[str, float]) -> None:
        """Add ``item``'s entry penalty to its LocalQueue's consumed resources and usage."""
        lq = self.lq_of(item)
        consumed = self.consumed.setdefault(lq, {})
        for res, value in self.settings.entry_penalty(requests).items():
            consumed[res] = consumed.get(res, 0.0) + value
        self.usage[lq] = local_queue_usage(
            consumed, self.weights.get(lq, 1.0), self.settings.resource_weights
        )

    def remaining(self, exclude: set[Any]) -> list[Any]:
        """Every item not in ``exclude`` (by identity), in the order the queue would now give them."""
        rest = [
            (self.usage.get(lq, 0.0), k, i)
            for lq, items in self.lists.items()
            for i, k in zip(items, self.keys[lq], strict=True)
            if id(i) not in exclude
        ]
        rest.sort(key=lambda entry: (entry[0], entry[1]))
        return [i for _, _, i in rest]
