"""Helpers for the scale-to-zero end-to-end tests: a polling wait, seed 000's cluster in the SDK's words."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rayqueue_sdk import Cluster, ClusterConfiguration


def wait_for(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 240.0) -> Any:
    """Poll ``read()`` until ``ok(value)``; returns the value, or fails with the last one seen."""
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting; last value: {value!r}")
        time.sleep(0.5)
        value = read()
    return value


def seed_cluster(
    name: str,
    ns: str,
    client: Any,
    queue: str = "user-queue",
    *,
    pod_security: str | None = None,
    worker_memory: int = 8,
) -> Cluster:
    """One of seed 000's 2-GPU clusters (a 1-GPU head and one 1-GPU worker), in the SDK's words;
    ``pod_security="restricted"`` for a namespace that enforces it."""
    return Cluster(
        ClusterConfiguration(
            name=name,
            namespace=ns,
            head_cpu_requests=2,
            head_cpu_limits=2,
            head_memory_requests=8,
            head_memory_limits=8,
            head_extended_resource_requests={"nvidia.com/gpu": 1},
            worker_extended_resource_requests={"nvidia.com/gpu": 1},
            num_workers=1,
            worker_cpu_requests=2,
            worker_cpu_limits=2,
            worker_memory_requests=worker_memory,
            worker_memory_limits=worker_memory,
            local_queue=queue,
            pod_security=pod_security,
        ),
        client=client,
    )


def pods_of(admin: Any, ns: str, cluster: str) -> list[str]:
    """The names of the cluster's pods (KubeRay's label ``ray.io/cluster``)."""
    from rayqueue_sdk.kube.rest import get_path

    found = get_path(
        admin, f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": f"ray.io/cluster={cluster}"}
    )
    return [p["metadata"]["name"] for p in found.get("items") or []]


def status_honest(cluster: Cluster, admin: Any) -> Any:
    """``cluster.status()``, checked: "scaled to zero" (and "quota released") is said only once the
    cluster's pods are gone (read after the status: pods do not come back without ``resume()``)."""
    st = cluster.status()
    line = st.idle_scale_to_zero or ""
    if st.scaled_to_zero or "scaled to zero" in line or "quota released" in line:
        left = pods_of(admin, cluster.namespace, cluster.name)
        assert not left, f"{line!r} while pods remain: {left}"
    return st
