"""KubeRay's and Kueue's rules about one Ray group (head or workers), checked before anything is sent.

KubeRay v1.7.0 (ray-operator/controllers/ray/utils/validation.go, ValidateRayClusterSpec) fails a cluster
whose ``rayStartParams`` hold ``labels`` (Ray node labels go in the group's top-level ``labels`` field),
that gives resources both in ``rayStartParams`` and in the group's ``resources`` field, or whose head sets
``RAY_enable_autoscaler_v2`` to ``1``/``true`` without in-tree autoscaling; a real cluster then shows only
a Warning Event and never starts. Kueue v0.19.2 (pkg/controller/jobframework/tas_validation.go) refuses a
pod template with more than one of its topology annotations, and a ``podset-slice-size`` above the pod
set's count.

Each check raises :class:`~rayqueue_sdk.errors.ConfigError` naming the field, the value and the rule.

Example:
    >>> check_ray_start_params({"num-cpus": "2"}, "worker_groups[0].ray_start_params")
    >>> check_ray_start_params({"labels": "zone=a"}, "worker_groups[0].ray_start_params")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: worker_groups[0].ray_start_params['labels']: KubeRay refuses ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError

__all__ = [
    "AUTOSCALER_V2_ENV",
    "TOPOLOGY_ANNOTATIONS",
    "check_autoscaler_v2_env",
    "check_group_manifest",
    "check_ray_start_params",
    "check_topology_annotations",
]

#: The head's environment variable that turns on Ray's autoscaler v2 (KubeRay's RAY_ENABLE_AUTOSCALER_V2).
AUTOSCALER_V2_ENV = "RAY_enable_autoscaler_v2"
#: Kueue's pod-template topology annotations: a template may carry one of them.
TOPOLOGY_ANNOTATIONS = (
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
)
_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
_RAY_START_RESOURCES = ("num-cpus", "num-gpus", "memory", "resources")


def check_ray_start_params(params: Mapping[str, Any], field: str) -> None:
    """No ``labels`` in ``rayStartParams`` (KubeRay v1.7.0 fails the cluster: "rayStartParams['labels'] is
    not supported")."""
    if "labels" in params:
        raise ConfigError(
            f"{field}['labels']",
            params["labels"],
            "any other `ray start` parameter; Ray node labels go in KubeRay's group-level `labels` field",
            problem="KubeRay refuses rayStartParams['labels'] (the cluster would never start)",
        )


def check_autoscaler_v2_env(envs: Mapping[str, Any], *, autoscaling: bool, field: str) -> None:
    """``RAY_enable_autoscaler_v2`` on (``1``/``true``) needs in-tree autoscaling (KubeRay v1.7.0).

    Example:
        >>> check_autoscaler_v2_env({"RAY_enable_autoscaler_v2": "1"}, autoscaling=True, field="envs")
        >>> check_autoscaler_v2_env({"RAY_enable_autoscaler_v2": "1"}, autoscaling=False, field="envs")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: envs['RAY_enable_autoscaler_v2']: KubeRay refuses autoscaler v2 ...
    """
    value = envs.get(AUTOSCALER_V2_ENV)
    if not autoscaling and str(value) in ("1", "true"):
        raise ConfigError(
            f"{field}[{AUTOSCALER_V2_ENV!r}]",
            value,
            "unset or '0', or enable_autoscaling=True",
            problem="KubeRay refuses autoscaler v2 without in-tree autoscaling (the cluster never starts)",
        )


def check_topology_annotations(annotations: Mapping[str, Any], field: str, count: int | None = None) -> None:
    """At most one Kueue topology annotation per pod template, and a slice size within ``count`` pods.

    Example:
        >>> check_topology_annotations({"kueue.x-k8s.io/podset-required-topology": "rack",
        ...     "kueue.x-k8s.io/podset-preferred-topology": "rack"}, "worker_groups[0].annotations")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker_groups[0].annotations: Kueue refuses a pod template ...
    """
    found = [key for key in TOPOLOGY_ANNOTATIONS if key in annotations]
    if len(found) > 1:
        raise ConfigError(
            field,
            {key: annotations[key] for key in found},
            "one of " + ", ".join(TOPOLOGY_ANNOTATIONS) + " (topology= and topology_mode= set one)",
            problem="Kueue refuses a pod template with more than one topology annotation",
        )
    raw = annotations.get(_SLICE_SIZE)
    if raw is not None and count is not None and str(raw).isdigit() and int(raw) > count:
        raise ConfigError(
            f"{field}[{_SLICE_SIZE!r}]",
            raw,
            f"at most the pod set's count ({count})",
            problem="Kueue refuses a slice larger than its pod set",
        )


def check_group_manifest(group: Mapping[str, Any], path: str, *, count: int | None) -> None:
    """A rendered head or worker group (``headGroupSpec``/``workerGroupSpecs[i]``): containers, the
    ``rayStartParams`` rules and the topology annotations."""
    template = group.get("template") or {}
    if not (template.get("spec") or {}).get("containers"):
        raise ConfigError(
            f"{path}.template.spec.containers",
            [],
            "at least one container",
            problem="KubeRay refuses a group without containers",
        )
    params = group.get("rayStartParams") or {}
    check_ray_start_params(params, f"{path}.rayStartParams")
    if group.get("resources") and any(params.get(key) for key in _RAY_START_RESOURCES):
        raise ConfigError(
            f"{path}.resources",
            group["resources"],
            "resources in rayStartParams or in .resources, not both",
            problem="KubeRay refuses resources given twice",
        )
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    check_topology_annotations(annotations, f"{path}.template.metadata.annotations", count)
