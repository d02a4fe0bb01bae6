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
