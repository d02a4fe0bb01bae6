"""KubeRay's own checks of a RayCluster and a RayJob, pure, with KubeRay's messages.

KubeRay v1.7.0 validates in its controllers (its validating webhook is off unless installed with
``webhook.enabled``): a RayCluster that fails gets a ``Warning`` Event ``InvalidRayClusterMetadata`` or
``InvalidRayClusterSpec`` and nothing else (no pods, no status); a RayJob that fails gets a ``Warning``
Event ``InvalidRayJobMetadata``/``InvalidRayJobSpec`` and ``status.jobDeploymentStatus: ValidationFailed``
with ``reason: ValidationFailed`` and the error as ``message``. The rules, in KubeRay's order, are those
of ray-operator/controllers/ray/utils/validation.go (ValidateRayClusterMetadata, ValidateRayClusterSpec,
ValidateRayJobMetadata, ValidateRayJobSpec) that concern what this plane runs: names, containers,
min/max replicas, resources and labels in ``rayStartParams``, the autoscaler (v2 variable, suspended
groups, restart policy, idle timeout), the RayJob's lifecycle fields, its ``clusterSelector``,
``submissionMode`` and ``runtimeEnvYAML``. Not checked: GCS fault tolerance and Redis options,
authentication, network policy, TLS, the history server, deletion strategies and feature gates.

Example:
    >>> raycluster_problem({"metadata": {"name": "a" * 54}, "spec": {}})
    ('InvalidRayClusterMetadata', 'RayCluster name should be no more than 53 characters')
    >>> rayjob_problem({"metadata": {"name": "j"}, "spec": {"suspend": True}})[1][-43:]
    'set to false is not allowed to be suspended'
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = [
    "MAX_RAYCLUSTER_NAME",
    "MAX_RAYJOB_NAME",
    "cluster_spec_error",
    "raycluster_problem",
    "rayjob_problem",
]

#: KubeRay's longest RayCluster name (it derives pod and service names from it).
MAX_RAYCLUSTER_NAME = 53
#: KubeRay's longest RayJob name (its cluster's name adds a suffix).
MAX_RAYJOB_NAME = 47
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_TEXT = (
    "[a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]"
)
_AUTOSCALER_V2 = "RAY_enable_autoscaler_v2"
_GEN_START_CMD = "KUBERAY_GEN_AUTOSCALER_START_CMD"
_RAY_START_RESOURCES = ("num-cpus", "num-gpus", "memory", "resources")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def _name_error(name: str, kind: str, limit: int) -> str | None:
    if len(name) > limit:
        return f"{kind} name should be no more than {limit} characters"
    if len(name) > 63 or not _DNS1035.match(name):
        return f"{kind} name should be a valid DNS1035 label: {_DNS1035_TEXT}"
    return None


def _containers(template: Any) -> list[dict[str, Any]]:
    return list(((template or {}).get("spec") or {}).get("containers") or [])


def _env(container: dict[str, Any], name: str) -> str | None:
    for var in container.get("env") or ():
        if var.get("name") == name:
            return str(var.get("value") or "")
    return None


def _qualified(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return bool(name) and len(name) <= 63 and bool(_NAME_PART.match(name)) and len(prefix) <= 253


def _group_error(group: str, params: dict[str, Any], resources: Any, labels: Any) -> str | None:
    if any(params.get(key) for key in _RAY_START_RESOURCES) and resources:
        return (
            "resource fields should not be set in both rayStartParams and Resources for "
            f"{group} group; please use only one"
        )
    if "labels" in params:
        return (
            f"rayStartParams['labels'] is not supported for {group} group; please use the top-level Labels "
            "field instead"
        )
    problems = []
    for key, value in sorted((labels or {}).items()):
        if not _qualified(str(key)):
            problems.append(f"invalid label key for {group} group: '{key}'")
        if len(str(value)) > 63 or not _LABEL_VALUE.match(str(value)):
            problems.append(f"invalid label value for key '{key}' in {group} group: '{value}'")
    return "; ".join(problems) or None


def _worker_error(group: dict[str, Any], autoscaling: bool) -> str | None:
    name = group.get("groupName", "")
    if not _containers(group.get("template")):
        return "workerGroupSpec should have at least one container"
    low, high = group.get("minReplicas"), group.get("maxReplicas")
    if not autoscaling and (low is None or high is None):
        return f"worker group {name} must set both minReplicas and maxReplicas when autoscaling is disabled"
    if low is not None and low < 0:
        return f"worker group {name} has negative minReplicas {low}"
    if high is not None and high < 0:
        return f"worker group {name} has negative maxReplicas {high}"
    if low is not None and high is not None and low > high:
        return f"worker group {name} has minReplicas {low} greater than maxReplicas {high}"
    return _group_error(name, group.get("rayStartParams") or {}, group.get("resources"), group.get("labels"))


def _autoscaler_error(spec: dict[str, Any], head: dict[str, Any], autoscaling: bool) -> str | None:
    groups = spec.get("workerGroupSpecs") or []
    options = spec.get("autoscalerOptions") or {}
    v2 = _env(head, _AUTOSCALER_V2)
    if not autoscaling and v2 in ("1", "true"):
        return (
            f"environment variable {_AUTOSCALER_V2} cannot be set to '{v2}' when enableInTreeAutoscaling "
            "is false. Please set enableInTreeAutoscaling: true to use autoscaler v2"
        )
    if autoscaling:
        for group in groups:
            if group.get("suspend"):
                return (
                    f"worker group {group.get('groupName', '')} cannot be suspended with Autoscaler enabled"
                )
        if options.get("version") and v2 is not None:
            return (
                f"both .spec.autoscalerOptions.version and head Pod env var {_AUTOSCALER_V2} are set, "
                "please only use the former"
            )
        if options.get("version") == "v2":
            policy = ((spec.get("headGroupSpec") or {}).get("template") or {}).get("spec", {})
            if policy.get("restartPolicy") not in (None, "", "Never"):
                return "restartPolicy for head Pod should be Never or unset when using autoscaler V2"
            for group in groups:
                if ((group.get("template") or {}).get("spec") or {}).get("restartPolicy") not in (
                    None,
                    "",
                    "Never",
                ):
                    return (
                        f"restartPolicy for worker group {group.get('groupName', '')} should be Never or "
                        "unset when using autoscaler V2"
                    )
    idle = options.get("idleTimeoutSeconds")
    if idle is not None and idle < 0:
        return f"autoscalerOptions.idleTimeoutSeconds must be non-negative, got {idle}"
    if any(var.get("name") == _GEN_START_CMD for var in options.get("env") or ()):
        return (
            f"autoscalerOptions.env must not contain {_GEN_START_CMD}: it is managed by KubeRay and injected "
            "automatically into the autoscaler container"
        )
    return None


def cluster_spec_error(spec: dict[str, Any]) -> str | None:
    """KubeRay's ValidateRayClusterSpec (the rules this module covers): the first error, or ``None``.

    Example:
        >>> cluster_spec_error({"headGroupSpec": {"template": {"spec": {"containers": []}}}})
        'headGroupSpec should have at least one container'
    """
    head_group = spec.get("headGroupSpec") or {}
    heads = _containers(head_group.get("template"))
    if not heads:
        return "headGroupSpec should have at least one container"
    error = _group_error(
        "Head", head_group.get("rayStartParams") or {}, head_group.get("resources"), head_group.get("labels")
    )
    if error:
        return error
    autoscaling = bool(spec.get("enableInTreeAutoscaling"))
    for group in spec.get("workerGroupSpecs") or ():
        error = _worker_error(group, autoscaling)
        if error:
            return error
    return _autoscaler_error(spec, heads[0], autoscaling)


def raycluster_problem(rc: dict[str, Any]) -> tuple[str, str] | None:
    """``(event reason, error)`` when KubeRay's RayCluster controller refuses to reconcile ``rc``."""
    error = _name_error(str((rc.get("metadata") or {}).get("name") or ""), "RayCluster", MAX_RAYCLUSTER_NAME)
    if error:
        return "InvalidRayClusterMetadata", error
    error = cluster_spec_error(rc.get("spec") or {})
    return ("InvalidRayClusterSpec", error) if error else None


def _rayjob_spec_error(spec: dict[str, Any]) -> str | None:
    invalid = "The RayJob spec is invalid: "
    shutdown = bool(spec.get("shutdownAfterJobFinishes"))
    if spec.get("suspend") and not shutdown:
        return invalid + "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended"
    ttl = int(spec.get("ttlSecondsAfterFinished") or 0)
    if ttl < 0:
        return invalid + "TTLSecondsAfterFinished must be a non-negative integer"
    if not shutdown and ttl > 0:
        return (
            invalid
            + "a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished"
        )
    selector = spec.get("clusterSelector") or {}
    mode = spec.get("submissionMode") or "K8sJobMode"
    backoff = spec.get("backoffLimit")
    if spec.get("suspend") and selector:
        return invalid + "the ClusterSelector mode doesn't support the suspend operation"
    if not spec.get("rayClusterSpec") and not selector:
        return invalid + "one of RayClusterSpec or ClusterSelector must be set"
    if selector:
        if not selector.get("ray.io/cluster"):
            return "cluster name in ClusterSelector should not be empty"
        if mode == "SidecarMode":
            return "ClusterSelector is not supported in SidecarMode"
        if backoff is not None and backoff > 0:
            return invalid + "BackoffLimit is incompatible with ClusterSelector mode"
    if mode == "InteractiveMode" and backoff is not None and backoff > 0:
        return invalid + "BackoffLimit is incompatible with InteractiveMode"
    if mode == "SidecarMode":
        if spec.get("submitterPodTemplate"):
            return "Currently, SidecarMode doesn't support SubmitterPodTemplate"
        if spec.get("submitterConfig"):
            return "Currently, SidecarMode doesn't support SubmitterConfig"
        head = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
        if (head.get("spec") or {}).get("restartPolicy") not in (None, "", "Never"):
            return "restartPolicy for head Pod should be Never or unset when using SidecarMode"
    if spec.get("rayClusterSpec"):
        error = cluster_spec_error(spec["rayClusterSpec"])
        if error:
            return invalid + error
    text = spec.get("runtimeEnvYAML") or ""
    try:
        parsed = yaml.safe_load(text) if text else None
    except yaml.YAMLError as err:
        return f"failed to unmarshal RuntimeEnvYAML: {text}: {err}"
    if parsed is not None and not isinstance(parsed, dict):
        return f"failed to unmarshal RuntimeEnvYAML: {text}: not a mapping"
    for key, what in (
        ("activeDeadlineSeconds", "activeDeadlineSeconds"),
        ("preRunningDeadlineSeconds", "preRunningDeadlineSeconds"),
    ):
        if spec.get(key) is not None and spec[key] <= 0:
            return invalid + f"{what} must be a positive integer"
    if backoff is not None and backoff < 0:
        return invalid + "backoffLimit must be a positive integer"
    return None


def rayjob_problem(job: dict[str, Any]) -> tuple[str, str] | None:
    """``(event reason, error)`` when KubeRay's RayJob controller fails ``job`` as ``ValidationFailed``."""
    name = str((job.get("metadata") or {}).get("name") or "")
    error = _name_error(name, "RayJob", MAX_RAYJOB_NAME)
    if error:
        return "InvalidRayJobMetadata", "The RayJob metadata is invalid: " + error
    error = _rayjob_spec_error(job.get("spec") or {})
    if error:
        return "InvalidRayJobSpec", error
    status = job.get("status") or {}
    if (
        status.get("jobDeploymentStatus") == "Waiting"
        and (job.get("spec") or {}).get("submissionMode") != "InteractiveMode"
    ):
        return (
            "InvalidRayJobStatus",
            "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when SubmissionMode is "
            "not InteractiveMode",
        )
    return None
