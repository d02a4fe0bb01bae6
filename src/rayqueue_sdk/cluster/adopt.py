"""Rebuild a :class:`~rayqueue_sdk.config.models.ClusterConfiguration` from a live RayCluster (pure, no I/O).

Used by :func:`rayqueue_sdk.get_cluster`. Unlike the peer (first worker group and first container
only), every worker group is kept, with its replicas and bounds, resources, accelerators, tolerations,
node selector, image, pod labels/annotations, extra environment and extra ``ray start`` parameters.
What the SDK derives itself (``num-cpus``/``num-gpus``/``resources`` start parameters, the
``managed-by`` label, Kueue's labels) is turned back into the fields that produce it.

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration, WorkerGroup
    >>> from rayqueue_sdk.manifests.raycluster import build_raycluster
    >>> cfg = ClusterConfiguration(name="ws", namespace="ds", local_queue="team-q", worker_groups=[
    ...     WorkerGroup(name="gpu", replicas=2, extended_resource_requests={"nvidia.com/gpu": 1}),
    ...     WorkerGroup(name="cpu", replicas=1, cpu_requests=4)])
    >>> again = config_from_raycluster(build_raycluster(cfg))
    >>> [g.name for g in again.resolved_worker_groups()], again.local_queue
    (['gpu', 'cpu'], 'team-q')
    >>> build_raycluster(again) == build_raycluster(cfg)
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.config.models import DEFAULT_ACCELERATORS, ClusterConfiguration, WorkerGroup
from rayqueue_sdk.manifests.gcs import gcs_fields_from_spec
from rayqueue_sdk.manifests.labels import (
    ELASTIC_JOB_ANNOTATION,
    MANAGED_BY_LABEL,
    PRIORITY_LABEL,
    QUEUE_LABEL,
)
from rayqueue_sdk.manifests.meta import meta_of

__all__ = ["config_from_raycluster"]

_DERIVED_PARAMS = {"num-cpus", "num-gpus", "resources", "dashboard-host"}
_PLAIN_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_SYSTEM_LABEL = re.compile(r"^(ray\.io/|kueue\.x-k8s\.io/)")


def _container(pod_spec: Mapping[str, Any], preferred: str) -> Mapping[str, Any]:
    containers: list[Mapping[str, Any]] = pod_spec.get("containers") or [{}]
    for c in containers:
        if c.get("name") == preferred:
            return c
    return containers[0]


def _envs(container: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(e["name"]): str(e["value"]) for e in container.get("env") or [] if "value" in e and "name" in e
    }


def _res(container: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    return requests, limits


def _extended(requests: Mapping[str, Any], limits: Mapping[str, Any]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for key, value in {**limits, **requests}.items():
        if key in _PLAIN_RESOURCES or key.startswith("hugepages-"):
            continue
        out[str(key)] = int(value) if isinstance(value, int) or str(value).isdigit() else str(value)
    return out


def _custom_mapping(extended: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, str]:
    """A mapping for accelerator keys the defaults do not know (named after the Ray resource if given)."""
    unknown = [k for k in extended if k not in DEFAULT_ACCELERATORS]
    if not unknown:
        return {}
    ray_names: list[str] = []
    raw = str(params.get("resources") or "").strip().strip('"').replace('\\"', '"')
    if raw:
        try:
            ray_names = list(json.loads(raw))
        except ValueError:
            ray_names = []
    out = {}
    for i, key in enumerate(unknown):
        out[key] = ray_names[i] if i < len(ray_names) else key.rsplit("/", 1)[-1]
    return out


def _cpu_memory(prefix: str, requests: Mapping[str, Any], limits: Mapping[str, Any]) -> dict[str, str]:
    """The config fields ``{prefix}cpu_requests``, ``..._limits`` and the memory ones a container sets."""
    return {
        f"{prefix}{resource}_{which}": str(source[resource])
        for resource in ("cpu", "memory")
        for which, source in (("requests", requests), ("limits", limits))
        if source.get(resource) is not None
    }


def _podmeta_of(template: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    meta = meta_of(template)
    return dict(meta.get("labels") or {}), dict(meta.get("annotations") or {})


def _group(
    spec: Mapping[str, Any], cluster_envs: Mapping[str, str], pod_annotations: Mapping[str, str]
) -> tuple[WorkerGroup, dict[str, str]]:
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    container = _container(pod, "ray-worker")
    requests, limits = _res(container)
    extended = _extended(requests, limits)
    params = {str(k): str(v) for k, v in (spec.get("rayStartParams") or {}).items()}
    labels, annotations = _podmeta_of(template)
    envs = {k: v for k, v in _envs(container).items() if cluster_envs.get(k) != v}
    fields: dict[str, Any] = {
        "name": spec.get("groupName") or "worker-group",
        "replicas": int(spec.get("replicas", 1) or 0),
        "min_replicas": spec.get("minReplicas"),
        "max_replicas": spec.get("maxReplicas"),
        "extended_resource_requests": extended,
        "tolerations": pod.get("tolerations") or None,
        "node_selector": dict(pod.get("nodeSelector") or {}),
        "labels": labels,
        "annotations": {k: v for k, v in annotations.items() if pod_annotations.get(k) != v},
        "envs": envs,
        "image": container.get("image"),
        "ray_start_params": {k: v for k, v in params.items() if k not in _DERIVED_PARAMS},
    }
    fields.update(_cpu_memory("", requests, limits))
    return WorkerGroup(**fields), _custom_mapping(extended, params)


def config_from_raycluster(obj: Mapping[str, Any]) -> ClusterConfiguration:
    """The :class:`ClusterConfiguration` that renders (to the SDK's own fields) the RayCluster ``obj``.

    Example:
        >>> rc = {"metadata": {"name": "ws", "namespace": "ds",
        ...                    "labels": {"kueue.x-k8s.io/queue-name": "q", "team": "a"}},
        ...       "spec": {"headGroupSpec": {"template": {"spec": {"containers": [
        ...                    {"name": "ray-head", "image": "rayproject/ray:2.60.0",
        ...                     "resources": {"requests": {"cpu": "1", "memory": "5G"}}}]}}},
        ...                "workerGroupSpecs": [{"groupName": "a", "replicas": 1},
        ...                                     {"groupName": "b", "replicas": 3}]}}
        >>> cfg = config_from_raycluster(rc)
        >>> cfg.local_queue, cfg.labels, [(g.name, g.replicas) for g in cfg.resolved_worker_groups()]
        ('q', {'team': 'a'}, [('a', 1), ('b', 3)])
    """
    meta = meta_of(obj)
    spec = obj.get("spec") or {}
    labels = dict(meta.get("labels") or {})
    annotations = dict(meta.get("annotations") or {})
    head = spec.get("headGroupSpec") or {}
    head_template = head.get("template") or {}
    head_pod = head_template.get("spec") or {}
    head_container = _container(head_pod, "ray-head")
    head_requests, head_limits = _res(head_container)
    head_extended = _extended(head_requests, head_limits)
    cluster_envs = _envs(head_container)
    elastic = annotations.pop(ELASTIC_JOB_ANNOTATION, None) == "true"
    pod_annotations = {k: v for k, v in annotations.items() if not k.startswith("kueue.x-k8s.io/")}

    groups: list[WorkerGroup] = []
    mapping = _custom_mapping(head_extended, head.get("rayStartParams") or {})
    for group_spec in spec.get("workerGroupSpecs") or []:
        group, extra = _group(group_spec, cluster_envs, pod_annotations)
        if group.image == head_container.get("image"):
            group = group.model_copy(update={"image": None})
        groups.append(group)
        mapping.update(extra)

    fields: dict[str, Any] = {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "local_queue": labels.pop(QUEUE_LABEL, None),
        "priority_class": labels.pop(PRIORITY_LABEL, None),
        "labels": {k: v for k, v in labels.items() if k != MANAGED_BY_LABEL and not _SYSTEM_LABEL.match(k)},
        "annotations": annotations,
        "elastic": elastic,
        "enable_autoscaling": bool(spec.get("enableInTreeAutoscaling")),
        "head_extended_resource_requests": head_extended,
        "head_tolerations": head_pod.get("tolerations") or None,
        "head_node_selector": dict(head_pod.get("nodeSelector") or {}),
        "envs": cluster_envs,
        "volumes": list(head_pod.get("volumes") or []),
        "volume_mounts": list(head_container.get("volumeMounts") or []),
        "image_pull_secrets": [
            s.get("name") for s in head_pod.get("imagePullSecrets") or [] if s.get("name")
        ],
        "worker_groups": groups,
    }
    if head_container.get("image"):
        fields["image"] = head_container["image"]
    if mapping:
        fields["extended_resource_mapping"] = mapping
    fields.update(gcs_fields_from_spec(spec))
    fields.update(_cpu_memory("head_", head_requests, head_limits))
    return ClusterConfiguration(**fields)
