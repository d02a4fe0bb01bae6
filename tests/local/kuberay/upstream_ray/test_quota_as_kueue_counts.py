"""The SDK's fit counts what Kueue counts: a RayJob's submitter and an autoscaling cluster's autoscaler.

Each ClusterQueue has 4 CPUs. A shape the SDK says fits is admitted by the plane's Kueue; one whose pods
alone fit in 4 CPUs but whose submitter (500m, K8sJobMode) or autoscaler sidecar (500m) does not is
refused by both: the SDK says it does not fit before anything is sent, and Kueue leaves its Workload
pending without quota.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.admission.fit import workload_requests
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig
from rayqueue_sdk.job.rayjob import RayJob
from rayqueue_sdk.manifests.raycluster import build_raycluster
from rayqueue_sdk.queues.overview import will_it_fit

QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: qc-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {ns}-cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods"]
    flavors:
    - name: qc-flavor
      resources:
      - {{name: cpu, nominalQuota: 4}}
      - {{name: memory, nominalQuota: 1Ti}}
      - {{name: pods, nominalQuota: 100}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: q}}
spec: {{clusterQueue: {ns}-cq}}
"""
ONE_CPU = {"cpu_requests": 1, "cpu_limits": 1, "memory_requests": 1, "memory_limits": 1}


@pytest.fixture
def cp(ray_api_cp: LocalControlPlane) -> LocalControlPlane:
    return ray_api_cp


def _namespace(cp: LocalControlPlane) -> str:
    ns = f"qc-{uuid.uuid4().hex[:6]}"
    cp.apply(QUEUE.format(ns=ns))
    return ns


def _wait(fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.1)
        value = fetch()
    return value


def _job(ns: str, workers: int) -> RayJob:
    cluster = ManagedClusterConfig(
        num_workers=workers,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests=1,
        head_memory_limits=1,
        worker_cpu_requests=1,
        worker_cpu_limits=1,
        worker_memory_requests=1,
        worker_memory_limits=1,
    )
    return RayJob(
        job_name="fit", entrypoint="python -c 1", cluster_config=cluster, namespace=ns, local_queue="q"
    )


def _autoscaling_cluster(ns: str, workers: int) -> ClusterConfiguration:
    return ClusterConfiguration(
        name="fit",
        namespace=ns,
        local_queue="q",
        elastic=True,
        enable_autoscaling=True,
        num_workers=workers,
        min_workers=workers,
        max_workers=workers,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests=1,
        head_memory_limits=1,
        worker_cpu_requests=1,
        worker_cpu_limits=1,
        worker_memory_requests=1,
        worker_memory_limits=1,
    )


def _reservation(custom: Any, ns: str) -> dict[str, Any] | None:
    items = custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", ns, "workloads")["items"]
    for wl in items:
        for cond in (wl.get("status") or {}).get("conditions") or ():
            if cond["type"] == "QuotaReserved":
                return dict(cond)
    return None


@pytest.mark.parametrize(
    ("shape", "workers", "fits"),
    [("rayjob", 2, True), ("rayjob", 3, False), ("autoscaler", 2, True), ("autoscaler", 3, False)],
)
def test_what_the_sdk_says_fits_is_what_kueue_admits(
    cp: LocalControlPlane, shape: str, workers: int, fits: bool
) -> None:
    ns = _namespace(cp)
    api = cp.api_client()
    if shape == "rayjob":
        manifest = _job(ns, workers).to_dict()
        plural = "rayjobs"
    else:
        manifest = build_raycluster(_autoscaling_cluster(ns, workers))
        plural = "rayclusters"
    cpu = workload_requests(manifest)["cpu"]
    assert cpu == workers + 1 + 0.5  # head + workers + the submitter or the autoscaler sidecar
    answer = will_it_fit(manifest, "q", client=api)
    assert answer.fits is fits, answer.reason
    custom = k8s.CustomObjectsApi(api)
    custom.create_namespaced_custom_object("ray.io", "v1", ns, plural, manifest)
    cond = _wait(
        lambda: _reservation(custom, ns),
        lambda c: c is not None and (c["status"] == "True" or "cpu" in c["message"]),
    )
    assert cond is not None
    assert (cond["status"] == "True") is fits, cond
    if not fits:
        assert "insufficient" in cond["message"].lower() or "couldn't assign" in cond["message"].lower(), cond
