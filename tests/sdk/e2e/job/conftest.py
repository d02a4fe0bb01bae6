"""Fixtures for RayJob tests: ONE session control plane with real Ray heads, seed 001's admin setup in
namespace ``your-namespace`` (as the seed writes it), and the workspace cluster of workflow 1, shared by
every test that needs an existing cluster (each Ray head costs ~12 s and hundreds of MB).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.scenarios import seed001_queues
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.kube.client import set_current_client

NS = "your-namespace"


def seed001_admin(namespace: str = NS) -> list[dict[str, Any]]:
    """Seed 001's admin setup (12 + 8 GPUs in cohort all-gpus, 40 pods each) and its namespace."""
    namespace_object = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    return [namespace_object, *seed001_queues(namespace, pods=40)]


@pytest.fixture(scope="session")
def ray_plane() -> Iterator[LocalControlPlane]:
    """The session's control plane, starting a real local Ray head per running RayCluster."""
    cp = LocalControlPlane(
        crd_dir=os.environ.get("RAYQUEUE_CRDS_DIR"), keda_enabled=False, prometheus_enabled=False
    )
    with cp:
        cp.apply(seed001_admin())
        yield cp


@pytest.fixture(autouse=True)
def logged_in(ray_plane: LocalControlPlane) -> Iterator[Any]:
    """The current login (the seed's ``auth.login()``), whose namespace is ``your-namespace`` (as a
    kubeconfig context's namespace would be), so the seeds' snippets run without naming it."""
    from rayqueue_sdk.kube.client import build_api_client

    api = build_api_client(
        ray_plane.server, token=ray_plane.token, ca_cert_path=str(ray_plane.ca_cert_path), namespace=NS
    )
    set_current_client(api)
    yield api
    set_current_client(None)


@pytest.fixture(scope="session")
def workspace(ray_plane: LocalControlPlane) -> str:
    """Seed 001 workflow 1's workspace cluster, applied through the queue and ready (one Ray head)."""
    from rayqueue_sdk.cluster.wait import wait_for_cluster

    cluster = Cluster(
        ClusterConfiguration(
            name="my-workspace-cluster",
            namespace=NS,
            num_workers=2,
            worker_cpu_requests=2,
            worker_memory_requests=8,
            worker_extended_resource_requests={"nvidia.com/gpu": 1},
            local_queue="ds-workspace-queue",
            labels={"kueue.x-k8s.io/priority-class": "rd-priority"},
        )
    )
    ray_plane.apply(cluster.to_dict())
    wait_for_cluster("my-workspace-cluster", NS, timeout=300, client=ray_plane.api_client())
    return "my-workspace-cluster"
