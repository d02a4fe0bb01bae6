"""Builders for the objects the SDK tests write as the admin (playing Kueue and KubeRay)."""

from __future__ import annotations

import uuid
from typing import Any

NS = "team-a"
OTHER_NS = "team-b"


def raycluster(name: str, *, queue: str | None = "team-q", suspend: bool = True) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    container = {"name": "ray", "image": "rayproject/ray:2.40.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {
            "suspend": suspend,
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "worker-group",
                    "replicas": 2,
                    "minReplicas": 2,
                    "maxReplicas": 2,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
        },
    }


def workload(cluster: dict[str, Any], *, queue: str = "team-q") -> dict[str, Any]:
    meta = cluster["metadata"]
    pod = {"spec": {"containers": [{"name": "ray", "image": "rayproject/ray:2.40.0"}]}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": f"raycluster-{meta['name']}-{uuid.uuid4().hex[:5]}",
            "namespace": meta["namespace"],
            "labels": {"kueue.x-k8s.io/job-uid": meta["uid"]},
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "queueName": queue,
            "active": True,
            "podSets": [
                {"name": "head", "count": 1, "template": pod},
                {"name": "worker-group", "count": 2, "template": pod},
            ],
        },
    }


def cond(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
