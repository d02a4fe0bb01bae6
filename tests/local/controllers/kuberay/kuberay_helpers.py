"""Helpers for the KubeRay emulation tests: queues, manifests and a polling wait."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from rayqueue_local import LocalControlPlane

CRDS = os.environ.get("RAYQUEUE_CRDS_DIR")

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods", "nvidia.com/gpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: {cpu}}}
      - {{name: memory, nominalQuota: 64Gi}}
      - {{name: pods, nominalQuota: 10}}
      - {{name: nvidia.com/gpu, nominalQuota: {gpu}}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {ns}, name: user-queue}}
spec: {{clusterQueue: {cq}}}
"""


def queues(cp: LocalControlPlane, ns: str, *, cpu: int = 16, gpu: int = 4) -> None:
    """A namespace with a LocalQueue ``user-queue`` on its own ClusterQueue ``cq-<ns>``."""
    cp.apply(QUEUES.format(ns=ns, cq=f"cq-{ns}", cpu=cpu, gpu=gpu))


def wait_for(
    fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 120.0, every: float = 0.2
) -> Any:
    """Poll ``fetch()`` until ``done(value)``; returns the last value (the caller asserts on it)."""
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(every)
        value = fetch()
    return value


def raycluster(
    name: str, *, queue: str | None = "user-queue", workers: int = 1, gpus: int = 0, cpu: str = "1"
) -> dict:
    """A small RayCluster manifest (head + one worker group), as the SDK would render it."""
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}

    def template(container: str) -> dict:
        limits = {"cpu": cpu, "memory": "1Gi"}
        if gpus:
            limits["nvidia.com/gpu"] = str(gpus)
        return {
            "spec": {
                "containers": [
                    {
                        "name": container,
                        "image": "rayproject/ray:2.60.0",
                        "resources": {"limits": limits, "requests": dict(limits)},
                    }
                ]
            }
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "rayVersion": "2.60.0",
            "headGroupSpec": {"rayStartParams": {}, "template": template("ray-head")},
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "rayStartParams": {},
                    "template": template("machine-learning"),
                }
            ],
        },
    }


def rayjob(
    name: str, entrypoint: str, *, queue: str | None = "user-queue", ttl: int = 0, **spec: Any
) -> dict:
    """A RayJob with a job-owned cluster (Kueue-managed when ``queue``)."""
    cluster = raycluster("x", queue=None, workers=1)["spec"]
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "entrypoint": entrypoint,
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": ttl,
            "rayClusterSpec": cluster,
            **spec,
        },
    }
