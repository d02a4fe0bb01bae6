"""How many worker groups the served Kueue takes: its Workload's pod-set limit, by release.

A Kueue Workload holds at most ``MaxPodSets`` pod sets, and its RayCluster/RayJob webhook refuses more
worker groups than that leaves (one pod set is the head; a RayJob in ``K8sJobMode`` needs one more for
its submitter). The limit grew: 8 pod sets up to v0.17 (7 worker groups), 10 in v0.18 (9), 18 in v0.19
(17) (Kueue's apis/kueue/v1beta2/workload_types.go ``MaxItems`` on ``spec.podSets`` and
pkg/controller/jobframework ``MaxPodSets`` at v0.17.0, v0.18.0, v0.19.2). The configuration models check
the v0.19 limit, which needs no server; :func:`check_served_pod_sets` checks the limit the cluster
serves, read from its Workload schema, and names the release whose rule applied.

Example:
    >>> kueue_release_for(10)
    'Kueue v0.18'
    >>> check_served_pod_sets(9, 10, field="worker_groups", what="a RayCluster")
    >>> check_served_pod_sets(9, 8, field="worker_groups", what="a RayCluster")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: worker_groups: 9 worker groups; this cluster's Kueue (v0.17 or ...
"""

from __future__ import annotations

from rayqueue_sdk.errors import ConfigError

__all__ = ["SMALLEST_WORKER_GROUP_LIMIT", "check_served_pod_sets", "kueue_release_for"]

_RELEASES = {8: "Kueue v0.17 or earlier", 10: "Kueue v0.18", 18: "Kueue v0.19"}
#: Worker groups every Kueue release takes (a RayCluster under v0.17's 8 pod sets); above it, ask the server.
SMALLEST_WORKER_GROUP_LIMIT = 7


def kueue_release_for(max_pod_sets: int) -> str:
    """The Kueue release whose Workload holds ``max_pod_sets`` pod sets (or the number, if unknown)."""
    return _RELEASES.get(max_pod_sets, f"a Kueue whose Workload holds {max_pod_sets} pod sets")


def check_served_pod_sets(
    groups: int, max_pod_sets: int | None, *, field: str, what: str, submitter: bool = False
) -> None:
    """``groups`` worker groups fit the served Workload (``None``: the limit could not be read; no check)."""
    if max_pod_sets is None:
        return
    limit = max_pod_sets - 1 - (1 if submitter else 0)
    if groups > limit:
        release = kueue_release_for(max_pod_sets)
        raise ConfigError(
            field,
            groups,
            f"at most {limit} worker groups for {what} on this cluster ({release}'s rule: its Workload "
            f"holds {max_pod_sets} pod sets, the head{' and the submitter' if submitter else ''} included)",
            problem=f"{groups} worker groups; this cluster's Kueue ({release.removeprefix('Kueue ')}) "
            "refuses more",
        )
