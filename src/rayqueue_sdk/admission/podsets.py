"""The pod sets Kueue makes for a RayCluster or RayJob manifest, as Kueue v0.19.2 counts them, pure.

What Kueue reserves quota for is more than the pods the manifest names (pkg/controller/jobs/raycluster/
common.go ``BuildPodSets``, pkg/controller/jobs/rayjob/rayjob_controller.go ``PodSets``):

- the head, plus the **autoscaler sidecar** KubeRay adds when ``enableInTreeAutoscaling`` is on
  (``autoscalerOptions.resources``, else 500m CPU / 512Mi), plus, with GCS fault tolerance, at least the
  Redis-cleanup job's 200m / 256Mi;
- each worker group: ``replicas`` (1 when unset) × ``numOfHosts`` pods;
- for a RayJob, the **submitter**: in ``K8sJobMode`` (the default) its own pod set of one pod
  (``submitterPodTemplate``, else 500m CPU / 200Mi requested), in ``SidecarMode`` a container in the
  head pod (500m / 200Mi); ``HTTPMode`` and ``InteractiveMode`` have none.

Example:
    >>> box = {"resources": {"requests": {"cpu": "1"}}}
    >>> job = {"kind": "RayJob", "spec": {"rayClusterSpec": {"enableInTreeAutoscaling": True,
    ...        "headGroupSpec": {"template": {"spec": {"containers": [box]}}}}}}
    >>> [(name, count, [c["resources"]["requests"]["cpu"] for c in pod["containers"]])
    ...  for name, count, pod in kueue_pod_sets(job)]
    [('head', 1, ['1', '500m']), ('submitter', 1, ['500m'])]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.manifests.quantities import parse_quantity

__all__ = ["AUTOSCALER_RESOURCES", "SUBMITTER_RESOURCES", "kueue_pod_sets"]

#: KubeRay's autoscaler container when ``autoscalerOptions.resources`` is unset (Kueue counts it on the head).
AUTOSCALER_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"cpu": "500m", "memory": "512Mi"},
}
#: KubeRay's default submitter container (K8sJobMode without a template; always in SidecarMode).
SUBMITTER_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "200Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
_REDIS_CLEANUP = {"cpu": "200m", "memory": "256Mi"}

_PodSet = tuple[str, int, dict[str, Any]]


def _pod(template: Mapping[str, Any] | None) -> dict[str, Any]:
    return copy.deepcopy(dict((template or {}).get("spec") or {}))


def _head(spec: Mapping[str, Any], annotations: Mapping[str, Any]) -> dict[str, Any]:
    pod = _pod((spec.get("headGroupSpec") or {}).get("template"))
    containers = pod.setdefault("containers", [])
    ft = (
        bool(spec.get("gcsFaultToleranceOptions"))
        or str(annotations.get("ray.io/ft-enabled")).lower() == "true"
    )
    if ft and containers:
        requests = containers[0].setdefault("resources", {}).setdefault("requests", {})
        for name, floor in _REDIS_CLEANUP.items():
            if name not in requests or parse_quantity(requests[name]) < parse_quantity(floor):
                requests[name] = floor
    if spec.get("enableInTreeAutoscaling"):
        resources = (spec.get("autoscalerOptions") or {}).get("resources") or AUTOSCALER_RESOURCES
        containers.append({"name": "autoscaler", "resources": copy.deepcopy(resources)})
    return pod


def _cluster_pod_sets(spec: Mapping[str, Any], annotations: Mapping[str, Any]) -> list[_PodSet]:
    sets: list[_PodSet] = [("head", 1, _head(spec, annotations))]
    for group in spec.get("workerGroupSpecs") or ():
        replicas = group.get("replicas")
        count = int(1 if replicas is None else replicas) * int(group.get("numOfHosts") or 1)
        sets.append((str(group.get("groupName", "")).lower(), count, _pod(group.get("template"))))
    return sets


def kueue_pod_sets(manifest: Mapping[str, Any]) -> list[_PodSet]:
    """``(name, count, pod spec)`` of each pod set Kueue's Workload for ``manifest`` holds, in its order.

    A manifest with ``spec.rayClusterSpec`` (or ``kind: RayJob``) is a RayJob; otherwise a RayCluster.
    """
    spec = manifest.get("spec") or {}
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    if manifest.get("kind") != "RayJob" and "rayClusterSpec" not in spec:
        return _cluster_pod_sets(spec, annotations)
    sets = _cluster_pod_sets(spec.get("rayClusterSpec") or {}, annotations)
    mode = spec.get("submissionMode") or "K8sJobMode"
    submitter = {"name": "ray-job-submitter", "resources": copy.deepcopy(SUBMITTER_RESOURCES)}
    if mode == "K8sJobMode":
        template = spec.get("submitterPodTemplate")
        sets.append(("submitter", 1, _pod(template) if template else {"containers": [submitter]}))
    elif mode == "SidecarMode":
        sets[0][2].setdefault("containers", []).append(submitter)
    return sets
