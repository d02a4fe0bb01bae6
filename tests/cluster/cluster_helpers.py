"""Admin objects and small helpers for the Cluster tests (the seeds' setups, per test namespace)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rayqueue_sdk.manifests import kueue as k

PRIORITIES = [
    k.workload_priority_class("prod-priority", 1000, "Priority class for prod jobs"),
    k.workload_priority_class("dev-priority", 100, "Priority class for development jobs"),
    k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
]
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def zero_quota_queue(ns: str) -> list[dict[str, Any]]:
    """LocalQueue ``parked`` in ``ns`` on a ClusterQueue without quota: clusters there stay queued."""
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            f"parked-{ns}",
            namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": ns}},
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0})
                )
            ],
        ),
        k.local_queue("parked", ns, f"parked-{ns}"),
    ]


def team_queue(
    ns: str, queue: str, *, cpu: int, memory: str, gpus: int, pods: int | None = None
) -> list[dict[str, Any]]:
    """A ClusterQueue of its own (named after ``ns``) and LocalQueue ``queue`` in ``ns``."""
    quotas: dict[str, Any] = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpus}
    if pods is not None:
        quotas["pods"] = pods
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            f"cq-{ns}",
            namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": ns}},
            resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", quotas))],
        ),
        k.local_queue(queue, ns, f"cq-{ns}"),
    ]


def seed004_admin(team_a: str, team_b: str, cohort: str) -> list[dict[str, Any]]:
    """Seed 004's queues (cohort with a shared CPU pool, team-a's GPU, priorities) for two namespaces."""
    shared = k.preemption(
        reclaim_within_cohort="Any",
        borrow_within_cohort="LowerPriority",
        max_priority_threshold=100,
        within_cluster_queue="Never",
    )
    team_a_preemption = k.preemption(
        reclaim_within_cohort="Any",
        borrow_within_cohort="LowerPriority",
        max_priority_threshold=100,
        within_cluster_queue="LowerPriority",
    )

    def only(ns: str) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": ns}}

    return [
        k.resource_flavor("default-flavor"),
        k.resource_flavor(
            "gpu-flavor", node_labels={"nvidia.com/gpu.present": "true"}, tolerations=[GPU_TOLERATION]
        ),
        k.cluster_queue(
            f"shared-{cohort}",
            cohort=cohort,
            preemption=shared,
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 6, "memory": "16Gi"}))
            ],
        ),
        k.cluster_queue(
            f"a-{cohort}",
            cohort=cohort,
            preemption=team_a_preemption,
            namespace_selector=only(team_a),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
                k.resource_group(k.flavor_quotas("gpu-flavor", {"nvidia.com/gpu": "1"})),
            ],
        ),
        k.cluster_queue(
            f"b-{cohort}",
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
        k.local_queue("local-queue", team_a, f"a-{cohort}"),
        k.local_queue("local-queue", team_b, f"b-{cohort}"),
    ]


def eventually(check: Callable[[], Any], *, timeout: float = 120.0, what: str = "condition") -> Any:
    """Poll ``check`` until it is truthy (nothing timed is asserted: the limit only ends a hang)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen")
        time.sleep(0.1)


def later(action: Callable[[], Any], *, after: Callable[[], bool]) -> threading.Thread:
    """Run ``action`` in a thread once ``after()`` is true (polled); returns the started thread."""

    def run() -> None:
        eventually(after, what="trigger")
        action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
