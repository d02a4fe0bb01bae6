"""The seeds' Kueue admin setups as ready-made scenarios: the objects a platform admin applies once.

Each function returns Kueue ``v1beta2`` dicts (ResourceFlavors, Cohorts, ClusterQueues, LocalQueues,
WorkloadPriorityClasses) built with :mod:`rayqueue_sdk.manifests.kueue`, in an order that applies
cleanly. Namespaces are not included: ``rayqueue local up --scenario NAME`` creates them as needed.
Pure: no I/O.

Example:
    >>> sorted(SCENARIOS)
    ['seed-000', 'seed-001', 'seed-004', 'team']
    >>> [o["kind"] for o in SCENARIOS["seed-000"]()]
    ['ResourceFlavor', 'ClusterQueue', 'LocalQueue']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rayqueue_sdk.manifests import kueue as k

__all__ = ["GPU_TOLERATION", "SCENARIOS", "seed000_queues", "seed001_queues", "seed004_queues", "team_queue"]

GPU_TOLERATION: dict[str, str] = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
"""The toleration of seed 004's GPU flavor (and of its GPU workers).

Example:
    >>> GPU_TOLERATION["key"]
    'nvidia.com/gpu'
"""


def seed000_queues(namespace: str = "demo", *, cluster_queue: str = "cluster-queue") -> list[dict[str, Any]]:
    """Seed 000: a ClusterQueue with 2 GPUs of quota, its flavor and LocalQueue ``user-queue``.

    Example:
        >>> flavor, cq, lq = seed000_queues()
        >>> cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][-1]
        {'name': 'nvidia.com/gpu', 'nominalQuota': 2}
        >>> (lq["metadata"]["namespace"], lq["spec"]["clusterQueue"])
        ('demo', 'cluster-queue')
    """
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            cluster_queue,
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas(
                        "default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5, "nvidia.com/gpu": 2}
                    )
                )
            ],
        ),
        k.local_queue("user-queue", namespace, cluster_queue),
    ]


def seed001_queues(
    namespace: str = "your-namespace", *, pods: int | None = None, rd_workspace: bool = False
) -> list[dict[str, Any]]:
    """Seed 001: production (12 GPUs) and development (8 GPUs) ClusterQueues in cohort ``all-gpus``.

    Both reclaim within the cohort and preempt lower priorities in their own queue. LocalQueues
    ``batch-jobs-queue`` (production) and ``ds-workspace-queue`` (development) in ``namespace``, plus
    ``lq-rd-workspace`` (development) with ``rd_workspace=True``; priorities prod 1000, dev 100, R&D 100.
    ``pods`` adds a pod quota to both ClusterQueues.

    Example:
        >>> objects = seed001_queues()
        >>> [o["metadata"]["name"] for o in objects if o["kind"] == "ClusterQueue"]
        ['cq-production', 'cq-development']
        >>> [o["metadata"]["name"] for o in objects if o["kind"] == "LocalQueue"]
        ['batch-jobs-queue', 'ds-workspace-queue']
        >>> [o["metadata"]["name"] for o in seed001_queues(rd_workspace=True) if o["kind"] == "LocalQueue"]
        ['batch-jobs-queue', 'ds-workspace-queue', 'lq-rd-workspace']
    """
    objects: list[dict[str, Any]] = [k.resource_flavor("default-flavor"), k.cohort("all-gpus")]
    for name, gpus in (("cq-production", 12), ("cq-development", 8)):
        quotas: dict[str, Any] = {"cpu": 96, "memory": "768Gi"}
        if pods is not None:
            quotas["pods"] = pods
        quotas["nvidia.com/gpu"] = gpus
        objects.append(
            k.cluster_queue(
                name,
                cohort="all-gpus",
                preemption=k.preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
                resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", quotas))],
            )
        )
    objects += [
        k.local_queue("batch-jobs-queue", namespace, "cq-production"),
        k.local_queue("ds-workspace-queue", namespace, "cq-development"),
    ]
    if rd_workspace:
        objects.append(k.local_queue("lq-rd-workspace", namespace, "cq-development"))
    objects += [
        k.workload_priority_class("prod-priority", 1000, "Production jobs"),
        k.workload_priority_class("dev-priority", 100, "Development jobs"),
        k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
    ]
    return objects


def seed004_queues(
    team_a: str = "team-a",
    team_b: str = "team-b",
    *,
    cohort: str = "team-ab",
    shared_queue: str = "shared-cq",
) -> list[dict[str, Any]]:
    """Seed 004: team-a (high priority, 1 GPU) and team-b (low priority, no GPU) share cohort ``team-ab``.

    ``shared_queue`` holds the cohort's CPU; ``<team_a>-cq`` and ``<team_b>-cq`` admit only their own
    namespace, each through LocalQueue ``local-queue``; priorities prod 1000 and dev 100.

    Example:
        >>> by_name = {o["metadata"]["name"]: o for o in seed004_queues() if o["kind"] == "ClusterQueue"}
        >>> sorted(by_name)
        ['shared-cq', 'team-a-cq', 'team-b-cq']
        >>> by_name["team-a-cq"]["spec"]["preemption"]["withinClusterQueue"]
        'LowerPriority'
    """

    def only(ns: str) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": ns}}

    def preempt(within: str) -> dict[str, Any]:
        return k.preemption(
            reclaim_within_cohort="Any",
            borrow_within_cohort="LowerPriority",
            max_priority_threshold=100,
            within_cluster_queue=within,
        )

    return [
        k.resource_flavor("default-flavor"),
        k.resource_flavor(
            "gpu-flavor", node_labels={"nvidia.com/gpu.present": "true"}, tolerations=[GPU_TOLERATION]
        ),
        k.cluster_queue(
            shared_queue,
            cohort=cohort,
            preemption=preempt("Never"),
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 6, "memory": "16Gi"}))
            ],
        ),
        k.cluster_queue(
            f"{team_a}-cq",
            cohort=cohort,
            preemption=preempt("LowerPriority"),
            namespace_selector=only(team_a),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
                k.resource_group(k.flavor_quotas("gpu-flavor", {"nvidia.com/gpu": "1"})),
            ],
        ),
        k.cluster_queue(
            f"{team_b}-cq",
            cohort=cohort,
            namespace_selector=only(team_b),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas(
                        "gpu-flavor", {"nvidia.com/gpu": "0"}, borrowing_limits={"nvidia.com/gpu": "0"}
                    )
                ),
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
            ],
        ),
        k.local_queue("local-queue", team_a, f"{team_a}-cq"),
        k.local_queue("local-queue", team_b, f"{team_b}-cq"),
        k.workload_priority_class("prod-priority", 1000, "Priority class for prod jobs"),
        k.workload_priority_class("dev-priority", 100, "Priority class for development jobs"),
    ]


def team_queue(namespace: str = "default", gpus: int = 4) -> list[dict[str, Any]]:
    """The quickstart's team queue: ClusterQueue ``cq-development`` (16 CPUs, 64Gi, ``gpus`` GPUs),
    LocalQueue ``ds-workspace-queue`` in ``namespace`` and the ``rd-priority`` WorkloadPriorityClass.

    Example:
        >>> [(o["kind"], o["metadata"]["name"]) for o in team_queue()]  # doctest: +NORMALIZE_WHITESPACE
        [('ResourceFlavor', 'default-flavor'), ('ClusterQueue', 'cq-development'),
         ('LocalQueue', 'ds-workspace-queue'), ('WorkloadPriorityClass', 'rd-priority')]
    """
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            "cq-development",
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas("default-flavor", {"cpu": 16, "memory": "64Gi", "nvidia.com/gpu": gpus})
                )
            ],
        ),
        k.local_queue("ds-workspace-queue", namespace, "cq-development"),
        k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
    ]


SCENARIOS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "seed-000": seed000_queues,
    "seed-001": seed001_queues,
    "seed-004": seed004_queues,
    "team": team_queue,
}
"""Every scenario by name (``rayqueue local up --scenario NAME``), each called with its defaults.

Example:
    >>> [o["metadata"]["namespace"] for o in SCENARIOS["team"]() if o["kind"] == "LocalQueue"]
    ['default']
"""
