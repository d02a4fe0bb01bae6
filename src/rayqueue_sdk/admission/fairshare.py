"""Why a pending workload waits under Kueue's fair sharing, in one sentence (pure: dicts in, text out).

With fair sharing on (Kueue's ``fairSharing.enable``), Kueue orders the ClusterQueues of a cohort that
compete for the same unused quota by their *weighted share*: the dominant resource share of what each
borrows, per 1000 of what the cohort can lend, divided by its ``fairSharing.weight``. The ClusterQueue
with the lower share goes first, and Kueue publishes each share as ``status.fairSharing.weightedShare``
(https://kueue.sigs.k8s.io/docs/concepts/fair_sharing/; ``pkg/cache/scheduler/fair_sharing.go``).
Kueue's own pending message says only that quota is short; this module names who goes first and why:
"behind team-b-cq's workloads: fair share 0.42 vs 0.10".

Example:
    >>> cqs = [
    ...     {"metadata": {"name": "team-a-cq"}, "spec": {"cohortName": "ml"},
    ...      "status": {"fairSharing": {"weightedShare": 420}, "pendingWorkloads": 3}},
    ...     {"metadata": {"name": "team-b-cq"}, "spec": {"cohortName": "ml"},
    ...      "status": {"fairSharing": {"weightedShare": 100}, "pendingWorkloads": 1}},
    ... ]
    >>> fair_share_sentence("team-a-cq", cqs)
    "behind team-b-cq's workloads: fair share 0.42 vs 0.10"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rayqueue_sdk.manifests.meta import name_of

__all__ = ["cohort_of", "fair_share_sentence", "weighted_share"]


def cohort_of(cluster_queue: Mapping[str, Any]) -> str | None:
    """The cohort a ClusterQueue belongs to (``spec.cohortName``), ``None`` when it has none.

    Objects read at Kueue ``v1beta1`` (``spec.cohort``) come here renamed by
    :func:`rayqueue_sdk.kube.normalize.normalize_kueue`.

    Example:
        >>> cohort_of({"spec": {"cohortName": "ml"}}), cohort_of({"spec": {}})
        ('ml', None)
    """
    spec = cluster_queue.get("spec") or {}
    name = spec.get("cohortName")
    return str(name) if name else None


def weighted_share(cluster_queue: Mapping[str, Any]) -> int | None:
    """``status.fairSharing.weightedShare`` (per 1000), or ``None`` when Kueue publishes none (fair
    sharing off).

    Example:
        >>> weighted_share({"status": {"fairSharing": {"weightedShare": 375}}}), weighted_share({})
        (375, None)
    """
    value = ((cluster_queue.get("status") or {}).get("fairSharing") or {}).get("weightedShare")
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _name(obj: Mapping[str, Any]) -> str:
    return name_of(obj)


def _ratio(share: int) -> str:
    return f"{share / 1000:.2f}"


def fair_share_sentence(cluster_queue: str, cluster_queues: Iterable[Mapping[str, Any]]) -> str | None:
    """Which ClusterQueues of the same cohort Kueue considers before ``cluster_queue`` under fair sharing:
    those with pending workloads and a lower weighted share, the lowest first (at most two named).

    ``None`` when fair sharing is off (no ``weightedShare``), the queue has no cohort, or no competitor
    with pending workloads has a lower share: then fair sharing is not why the workload waits.

    Example:
        >>> cqs = [{"metadata": {"name": "a"}, "spec": {"cohortName": "c"},
        ...         "status": {"fairSharing": {"weightedShare": 0}}},
        ...        {"metadata": {"name": "b"}, "spec": {"cohortName": "c"},
        ...         "status": {"fairSharing": {"weightedShare": 500}, "pendingWorkloads": 2}}]
        >>> fair_share_sentence("a", cqs) is None   # a's share is the lowest: it goes first
        True
    """
    queues = list(cluster_queues)
    own = next((cq for cq in queues if _name(cq) == cluster_queue), None)
    if own is None:
        return None
    cohort, own_share = cohort_of(own), weighted_share(own)
    if cohort is None or own_share is None:
        return None
    ahead: list[tuple[int, str]] = []
    for cq in queues:
        share = weighted_share(cq)
        pending = int(((cq.get("status") or {}).get("pendingWorkloads")) or 0)
        if _name(cq) == cluster_queue or cohort_of(cq) != cohort or share is None or pending <= 0:
            continue
        if share < own_share:
            ahead.append((share, _name(cq)))
    if not ahead:
        return None
    ahead.sort()
    named = " and ".join(f"{name}'s" for _, name in ahead[:2])
    more = f" (and {len(ahead) - 2} more)" if len(ahead) > 2 else ""
    shares = " / ".join(_ratio(share) for share, _ in ahead[:2])
    return f"behind {named} workloads{more}: fair share {_ratio(own_share)} vs {shares}"
