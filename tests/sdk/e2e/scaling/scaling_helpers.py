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


def seed_cluster(name: str, ns: str, client: Any, queue: str = "user-queue") -> Cluster:
    """One of seed 000's 2-GPU clusters (a 1-GPU head and one 1-GPU worker), in the SDK's words."""
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
            worker_memory_requests=8,
            worker_memory_limits=8,
            local_queue=queue,
        ),
        client=client,
    )
