"""Build a ``ray.io/v1`` RayCluster from a :class:`~rayqueue_sdk.config.models.ClusterConfiguration`
(pure, no I/O).

The Kueue keys go on the RayCluster's own ``metadata.labels`` (``kueue.x-k8s.io/queue-name``,
``kueue.x-k8s.io/priority-class``), never on the pod templates. Every object carries
``app.kubernetes.io/managed-by: rayqueue-sdk`` so the SDK can tell what it made.

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration
    >>> m = build_raycluster(ClusterConfiguration(name="demo", local_queue="team-q",
    ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}))
    >>> m["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    'team-q'
    >>> m["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"]
    '1'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.manifests.gcs import gcs_fault_tolerance_options
from rayqueue_sdk.manifests.kueue import topology_annotation
from rayqueue_sdk.manifests.labels import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rayqueue_sdk.manifests.quantities import cpu_quantity, cpu_to_ray_count, memory_quantity, parse_quantity
from rayqueue_sdk.manifests.ray_image import ray_version
from rayqueue_sdk.manifests.rules import ELASTIC_JOB_ANNOTATION, PRIORITY_LABEL, QUEUE_LABEL, check_raycluster
from rayqueue_sdk.manifests.security import make_restricted

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.config.models import ClusterConfiguration, ClusterShape, WorkerGroup

__all__ = [
    "HEAD_PORTS",
    "MANAGED_BY_LABEL",
    "MANAGED_BY_VALUE",
    "build_cluster_spec",
    "build_raycluster",
    "mark_elastic_if_autoscaling",
    "ray_resources",
]

#: The Ray head container's ports: GCS, dashboard and Ray client.
HEAD_PORTS = (
    {"name": "gcs", "containerPort": 6379},
    {"name": "dashboard", "containerPort": 8265},
    {"name": "client", "containerPort": 10001},
)


def build_raycluster(config: ClusterConfiguration) -> dict[str, Any]:
    """Render the RayCluster for ``config`` as a plain dict (``apiVersion: ray.io/v1``).

    Example:
        >>> from rayqueue_sdk.config.models import ClusterConfiguration
        >>> m = build_raycluster(ClusterConfiguration(name="ws", namespace="ds", priority_class="rd-prio"))
        >>> m["kind"], m["metadata"]["namespace"], m["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
        ('RayCluster', 'ds', 'rd-prio')
    """
    labels = dict(config.labels)
    labels[MANAGED_BY_LABEL] = MANAGED_BY_VALUE
    if config.local_queue is not None:
        labels[QUEUE_LABEL] = config.local_queue
    if config.priority_class is not None:
        labels[PRIORITY_LABEL] = config.priority_class
    metadata: dict[str, Any] = {"name": config.name}
    if config.namespace is not None:
        metadata["namespace"] = config.namespace
    metadata["labels"] = labels
    annotations = dict(config.annotations)
    if config.is_elastic:
        annotations[ELASTIC_JOB_ANNOTATION] = "true"
    if annotations:
        metadata["annotations"] = annotations
    spec = build_cluster_spec(config, autoscaling=config.enable_autoscaling)
    if config.enable_gcs_ft and config.redis_address is not None:
        spec["gcsFaultToleranceOptions"] = gcs_fault_tolerance_options(
            config.redis_address, config.redis_password_secret, config.external_storage_namespace
        )
    manifest = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": metadata, "spec": spec}
    check_raycluster(manifest)
    return manifest


def mark_elastic_if_autoscaling(manifest: dict[str, Any]) -> None:
    """Give an autoscaling RayCluster Kueue's elastic-job annotation, in place (the default for a cluster
    that ``apply()`` puts in the namespace's default queue: Kueue admits autoscaling only for an elastic
    job). A cluster that does not autoscale is left as it is.

    Example:
        >>> m = {"metadata": {"name": "c"}, "spec": {"enableInTreeAutoscaling": True}}
        >>> mark_elastic_if_autoscaling(m)
        >>> m["metadata"]["annotations"]
        {'kueue.x-k8s.io/elastic-job': 'true'}
    """
    if (manifest.get("spec") or {}).get("enableInTreeAutoscaling"):
        manifest.setdefault("metadata", {}).setdefault("annotations", {})[ELASTIC_JOB_ANNOTATION] = "true"


def build_cluster_spec(config: ClusterShape, *, autoscaling: bool = False) -> dict[str, Any]:
    """Render a RayCluster ``spec`` (also a RayJob's ``rayClusterSpec``) from a configuration.

    Example:
        >>> from rayqueue_sdk.config.models import ManagedClusterConfig
        >>> spec = build_cluster_spec(ManagedClusterConfig(num_workers=2))
        >>> spec["workerGroupSpecs"][0]["replicas"], spec["headGroupSpec"]["rayStartParams"]["num-cpus"]
        (2, '2')
    """
    mapping = config.resource_mapping
    pod_annotations = config.pod_annotations()
    pod_labels = config.pod_labels()
    head_ext = config.head_extended_resources()
    head_req, head_lim = _resources(
        config.head_cpu_requests,
        config.head_cpu_limits,
        config.head_memory_requests,
        config.head_memory_limits,
        head_ext,
    )
    head_container: dict[str, Any] = {
        "name": "ray-head",
        "image": config.image,
        "ports": [dict(p) for p in HEAD_PORTS],
        "resources": {"requests": head_req, "limits": head_lim},
        "lifecycle": _pre_stop(),
    }
    _add_env_and_mounts(head_container, config.envs, config.volume_mounts)
    head_params = {"dashboard-host": "0.0.0.0", **_start_params(head_lim["cpu"], head_ext, mapping)}
    head = {
        "rayStartParams": head_params,
        "template": _pod_template(
            head_container,
            config,
            config.head_tolerations,
            config.head_node_selector,
            pod_labels,
            pod_annotations,
        ),
    }
    spec: dict[str, Any] = {}
    version = ray_version()
    if version:
        spec["rayVersion"] = version
    spec["enableInTreeAutoscaling"] = autoscaling
    spec["headGroupSpec"] = head
    spec["workerGroupSpecs"] = [
        _worker_group(group, config, pod_labels, pod_annotations) for group in config.resolved_worker_groups()
    ]
    return spec


def ray_resources(extended: Mapping[str, Any], mapping: Mapping[str, str]) -> tuple[int, dict[str, int]]:
    """Split extended resources into Ray's GPU count and its custom ``resources`` (TPU, HPU, NPU, ...).

    Example:
        >>> from rayqueue_sdk.config.models import DEFAULT_ACCELERATORS
        >>> ray_resources({"nvidia.com/gpu": 2, "google.com/tpu": 4}, DEFAULT_ACCELERATORS)
        (2, {'TPU': 4})
    """
    gpus = 0
    custom: dict[str, int] = {}
    for key, count in extended.items():
        amount = int(parse_quantity(count))
        target = mapping[key]
        if target == "GPU":
            gpus += amount
        else:
            custom[target] = custom.get(target, 0) + amount
    return gpus, custom


def _worker_group(
    group: WorkerGroup, config: ClusterShape, pod_labels: dict[str, str], pod_annotations: dict[str, str]
) -> dict[str, Any]:
    requests, limits = _resources(
        group.cpu_requests,
        group.cpu_limits,
        group.memory_requests,
        group.memory_limits,
        group.extended_resource_requests,
    )
    container: dict[str, Any] = {
        "name": "ray-worker",
        "image": group.image or config.image,
        "resources": {"requests": requests, "limits": limits},
        "lifecycle": _pre_stop(),
    }
    _add_env_and_mounts(container, {**config.envs, **group.envs}, config.volume_mounts)
    params = {
        **_start_params(limits["cpu"], group.extended_resource_requests, config.resource_mapping),
        **group.ray_start_params,
    }
    tolerations = group.tolerations
    node_selector = group.node_selector
    return {
        "groupName": group.name,
        "replicas": group.replicas,
        "minReplicas": group.min_replicas,
        "maxReplicas": group.max_replicas,
        "rayStartParams": params,
        "template": _pod_template(
            container,
            config,
            tolerations,
            node_selector,
            {**pod_labels, **group.labels},
            {**pod_annotations, **group.annotations, **_topology(group, config)},
        ),
    }


def _topology(group: WorkerGroup, config: ClusterShape) -> dict[str, str]:
    """The group's Kueue topology annotation: its own level and mode, else the cluster's."""
    level = group.topology if group.topology is not None else config.topology
    return topology_annotation(level, group.topology_mode or config.topology_mode)


def _resources(
    cpu_req: Any, cpu_lim: Any, mem_req: Any, mem_lim: Any, extended: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    requests: dict[str, Any] = {
        "cpu": cpu_quantity(cpu_req, "cpu"),
        "memory": memory_quantity(mem_req, "memory"),
    }
    limits: dict[str, Any] = {
        "cpu": cpu_quantity(cpu_lim, "cpu"),
        "memory": memory_quantity(mem_lim, "memory"),
    }
    for key, count in extended.items():  # extended resources: requests == limits (Kubernetes requires it)
        requests[key] = count
        limits[key] = count
    return requests, limits


def _start_params(cpu_limit: str, extended: Mapping[str, Any], mapping: Mapping[str, str]) -> dict[str, str]:
    gpus, custom = ray_resources(extended, mapping)
    params = {"num-cpus": str(cpu_to_ray_count(cpu_limit)), "num-gpus": str(gpus)}
    if custom:
        # KubeRay pastes rayStartParams into a shell command line: the JSON must be a quoted word.
        text = json.dumps(custom, sort_keys=True).replace('"', '\\"')
        params["resources"] = f'"{text}"'
    return params


def _add_env_and_mounts(
    container: dict[str, Any], envs: Mapping[str, str], mounts: list[dict[str, Any]]
) -> None:
    if envs:
        container["env"] = [{"name": k, "value": v} for k, v in envs.items()]
    if mounts:
        container["volumeMounts"] = [dict(m) for m in mounts]


def _pod_template(
    container: dict[str, Any],
    config: ClusterShape,
    tolerations: list[dict[str, Any]] | None,
    node_selector: Mapping[str, str],
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [container]}
    if config.volumes:
        pod["volumes"] = [dict(v) for v in config.volumes]
    if tolerations:
        pod["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        pod["nodeSelector"] = dict(node_selector)
    if config.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": s} for s in config.image_pull_secrets]
    if config.pod_security == "restricted":
        pod = make_restricted(pod)
    template: dict[str, Any] = {"spec": pod}
    meta: dict[str, Any] = {}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    if meta:
        template["metadata"] = meta
    return template


def _pre_stop() -> dict[str, Any]:
    return {"preStop": {"exec": {"command": ["/bin/sh", "-c", "ray stop"]}}}
