"""Kueue's and KubeRay's rules, checked before anything is sent to a server.

Each rule is a small function that raises :class:`~rayqueue_sdk.errors.ConfigError` naming the field, the
bad value and what is allowed. The configuration models call them with their own field names (so a data
scientist reads ``worker_groups[1].name``); :func:`check_raycluster` and :func:`check_rayjob` run the
same rules over a rendered manifest (field names are then manifest paths such as
``spec.workerGroupSpecs[0].replicas``), so a hand-written manifest gets the same checks.

Sources (see ``reference/k8s-semantics.md`` §1 and §3): KubeRay's ``utils/validation.go`` (name
lengths, DNS-1035, min <= max), Kueue's RayCluster/RayJob webhooks (group ``head`` forbidden, pod-set
names, the pod-set limit, in-tree autoscaling only for elastic jobs, ``shutdownAfterJobFinishes``).

Example:
    >>> check_raycluster_name("my-workspace-cluster")
    >>> check_raycluster_name("My_Cluster")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: name: not a DNS-1035 label (got 'My_Cluster'); allowed: ...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.grouprules import check_autoscaler_v2_env, check_group_manifest
from rayqueue_sdk.manifests.labels import ELASTIC_JOB_ANNOTATION, PRIORITY_LABEL, QUEUE_LABEL
from rayqueue_sdk.manifests.quantities import compare_quantities

__all__ = [
    "ELASTIC_JOB_ANNOTATION",
    "MAX_RAYCLUSTER_NAME",
    "MAX_RAYJOB_NAME",
    "MAX_WORKER_GROUPS_RAYCLUSTER",
    "MAX_WORKER_GROUPS_RAYJOB",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "SUBMISSION_MODES",
    "check_annotations",
    "check_autoscaling",
    "check_dns_label",
    "check_labels",
    "check_raycluster",
    "check_raycluster_name",
    "check_rayjob",
    "check_rayjob_lifecycle",
    "check_rayjob_name",
    "check_replicas",
    "check_requests_within_limits",
    "check_worker_groups",
    "resolve_queue_and_priority",
]

#: KubeRay's name limits: it derives pod and service names from them (and a suffix for a RayJob's cluster).
MAX_RAYCLUSTER_NAME = 53
MAX_RAYJOB_NAME = 47
# Kueue v0.19 Workloads hold at most 18 pod sets: the head, the worker groups and, for a RayJob in
# K8sJobMode, the submitter.
MAX_WORKER_GROUPS_RAYCLUSTER = 17
MAX_WORKER_GROUPS_RAYJOB = 16
#: KubeRay's RayJob ``spec.submissionMode`` values.
SUBMISSION_MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")


def check_raycluster_name(name: Any, field: str = "name") -> None:
    """A RayCluster name: a DNS-1035 label of at most 53 characters (KubeRay derives pod names from it).

    Example:
        >>> check_raycluster_name("a" * 54)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: name: 54 characters is too long (got 'aaaa...
    """
    _check_dns1035(name, field, MAX_RAYCLUSTER_NAME, "RayCluster")


def check_rayjob_name(name: Any, field: str = "job_name") -> None:
    """A RayJob name: a DNS-1035 label of at most 47 characters (KubeRay appends a suffix for its cluster).

    Example:
        >>> check_rayjob_name("final-training-run")
    """
    _check_dns1035(name, field, MAX_RAYJOB_NAME, "RayJob")


def check_dns_label(value: Any, field: str, what: str = "name") -> None:
    """A DNS-1123 label (namespaces, queue and priority class names used as label values): <= 63 chars.

    Example:
        >>> check_dns_label("team-a", "namespace")
        >>> check_dns_label("Team A", "namespace")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: namespace: not a DNS-1123 label (got 'Team A'); allowed: ...
    """
    allowed = f"a {what}: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric"
    if not isinstance(value, str) or not value:
        raise ConfigError(field, value, allowed, problem="not a non-empty string")
    if len(value) > 63:
        raise ConfigError(field, value, allowed, problem=f"{len(value)} characters is too long")
    if not _DNS1123_LABEL.match(value):
        raise ConfigError(field, value, allowed, problem="not a DNS-1123 label")


def check_labels(labels: Mapping[str, Any], field: str = "labels") -> None:
    """Kubernetes label syntax: ``[prefix/]name`` keys, values of at most 63 characters (strings).

    Example:
        >>> check_labels({"team": "a", "kueue.x-k8s.io/priority-class": "prod-priority"})
        >>> check_labels({"team": 1})
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: labels['team']: label values are strings (got 1); ...
    """
    allowed_value = (
        "a string of at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric"
    )
    for key, value in labels.items():
        _check_key(key, field)
        where = f"{field}[{key!r}]"
        if not isinstance(value, str):
            raise ConfigError(where, value, allowed_value, problem="label values are strings")
        if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
            raise ConfigError(where, value, allowed_value, problem="not a valid label value")


def check_annotations(annotations: Mapping[str, Any], field: str = "annotations") -> None:
    """Kubernetes annotation syntax: ``[prefix/]name`` keys and string values.

    Example:
        >>> check_annotations({"kueue.x-k8s.io/elastic-job": "true"})
    """
    for key, value in annotations.items():
        _check_key(key, field)
        if not isinstance(value, str):
            raise ConfigError(f"{field}[{key!r}]", value, "a string", problem="annotation values are strings")


def check_replicas(replicas: int, minimum: int | None, maximum: int | None, field: str) -> None:
    """``replicas`` within ``[minReplicas, maxReplicas]``: Kueue reserves ``replicas`` while KubeRay clamps.

    Example:
        >>> check_replicas(2, 1, 3, "worker_groups[0]")
        >>> check_replicas(5, 1, 3, "worker_groups[0]")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker_groups[0].replicas: outside [min, max] (got 5); allowed: ...
    """
    low = 0 if minimum is None else minimum
    high = maximum
    for name, bound in (("min_replicas", minimum), ("max_replicas", maximum)):
        if bound is not None and bound < 0:
            raise ConfigError(
                _join(field, name), bound, "an integer >= 0", problem="KubeRay refuses a negative bound"
            )
    if high is not None and low > high:
        raise ConfigError(
            _join(field, "min_replicas"), low, f"at most max_replicas={high}", problem="min above max"
        )
    if replicas < low or (high is not None and replicas > high):
        shown = f"[{low}, {'unbounded' if high is None else high}]"
        raise ConfigError(
            _join(field, "replicas"),
            replicas,
            f"an integer within {shown} (Kueue reserves replicas, KubeRay clamps to the bounds)",
            problem="outside [min, max]",
        )


def check_worker_groups(names: list[str], *, field: str, limit: int | None, what: str) -> None:
    """Worker group names: DNS-1123 labels, not ``head`` (Kueue's head pod set), unique; at most ``limit``.

    Example:
        >>> check_worker_groups(["gpu", "cpu"], field="worker_groups", limit=16, what="a RayJob")
        >>> check_worker_groups(["gpu", "gpu"], field="worker_groups", limit=16, what="a RayJob")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker_groups[1].name: duplicate worker group name (got 'gpu'); ...
    """
    seen: set[str] = set()
    for i, name in enumerate(names):
        where = f"{field}[{i}].name"
        check_dns_label(name, where, "worker group name")
        if name == "head":
            raise ConfigError(where, name, "any other DNS label", problem="'head' is Kueue's head pod set")
        if name in seen:
            raise ConfigError(
                where, name, "a name not used by another worker group", problem="duplicate worker group name"
            )
        seen.add(name)
    if limit is not None and len(names) > limit:
        raise ConfigError(
            field,
            names,
            f"at most {limit} worker groups for {what} managed by Kueue (its Workload holds 18 pod sets)",
            problem=f"{len(names)} worker groups",
        )


def check_autoscaling(
    enabled: bool, *, queued: bool, elastic: bool, field: str = "enable_autoscaling"
) -> None:
    """In-tree autoscaling under Kueue needs the elastic-job annotation (``ClusterConfiguration`` adds it
    unless ``elastic=False``), and a Kueue that admits autoscaling RayClusters as elastic workloads
    (v0.14+, kubernetes-sigs/kueue#6662; its ``ElasticJobsViaWorkloadSlices`` feature gate is alpha, off
    by default, in v0.13 to v0.17 and beta, on by default, from v0.18).

    Example:
        >>> check_autoscaling(True, queued=True, elastic=True)
        >>> check_autoscaling(True, queued=True, elastic=False)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: enable_autoscaling: Kueue rejects in-tree autoscaling ...
    """
    if enabled and queued and not elastic:
        raise ConfigError(
            field,
            True,
            "enable_autoscaling=False under a Kueue queue, or elastic=True or left unset "
            f"(adds the annotation {ELASTIC_JOB_ANNOTATION}: 'true'; the cluster's Kueue must be v0.14 "
            "or later with the ElasticJobsViaWorkloadSlices feature gate on: on by default from v0.18, "
            "an alpha gate off by default before, ask the admin)",
            problem="Kueue rejects in-tree autoscaling for a non-elastic workload",
        )


def check_rayjob_lifecycle(*, shutdown: Any, ttl: Any, deadline: Any, queued: bool, prefix: str = "") -> None:
    """RayJob lifetime rules: Kueue needs shutdown; a TTL needs shutdown; a deadline is > 0.

    Example:
        >>> check_rayjob_lifecycle(shutdown=True, ttl=60, deadline=3600, queued=True)
        >>> check_rayjob_lifecycle(shutdown=False, ttl=60, deadline=None, queued=False)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: ttl_seconds_after_finished: a TTL needs the cluster shut down ...
    """
    names = _lifecycle_names(prefix)
    if not isinstance(shutdown, bool):
        raise ConfigError(names["shutdown"], shutdown, "True or False", problem="not a boolean")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        raise ConfigError(names["ttl"], ttl, "an integer number of seconds >= 0")
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, int) or deadline <= 0
    ):
        raise ConfigError(names["deadline"], deadline, "None or an integer number of seconds > 0")
    if queued and not shutdown:
        raise ConfigError(
            names["shutdown"],
            shutdown,
            "True: Kueue only manages a RayJob whose cluster is deleted when the job finishes",
            problem="Kueue rejects a queued RayJob that keeps its cluster",
        )
    if ttl > 0 and not shutdown:
        raise ConfigError(
            names["ttl"],
            ttl,
            f"0, or {names['shutdown']}=True",
            problem="a TTL needs the cluster shut down after the job",
        )


def check_requests_within_limits(requests: Mapping[str, Any], limits: Mapping[str, Any], field: str) -> None:
    """Every request is at most its limit (a container cannot ask for more than it may use).

    Example:
        >>> check_requests_within_limits({"cpu": "2"}, {"cpu": "1"}, "worker")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker.limits['cpu']: below the request of '2' (got '1'); ...
    """
    for resource, limit in limits.items():
        if resource in requests and compare_quantities(limit, requests[resource]) < 0:
            raise ConfigError(
                f"{field}.limits[{resource!r}]",
                limit,
                f"a value >= the request {requests[resource]!r} (or leave the limit unset)",
                problem=f"below the request of {requests[resource]!r}",
            )


def check_raycluster(manifest: Mapping[str, Any], *, spec_path: str = "spec") -> None:
    """Run KubeRay's and Kueue's rules over a rendered ``ray.io/v1`` RayCluster.

    Example:
        >>> m = {"metadata": {"name": "demo"}, "spec": {"headGroupSpec": {}, "workerGroupSpecs": [
        ...     {"groupName": "head", "replicas": 1, "minReplicas": 1, "maxReplicas": 1}]}}
        >>> check_raycluster(m)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: spec.workerGroupSpecs[0].name: 'head' is Kueue's head pod set ...
    """
    metadata = manifest.get("metadata", {})
    check_raycluster_name(metadata.get("name"), "metadata.name")
    labels = metadata.get("labels", {})
    queued = QUEUE_LABEL in labels
    elastic = metadata.get("annotations", {}).get(ELASTIC_JOB_ANNOTATION) == "true"
    _check_cluster_spec(
        manifest.get("spec", {}),
        spec_path,
        queued=queued,
        elastic=elastic,
        limit=MAX_WORKER_GROUPS_RAYCLUSTER,
    )


def check_rayjob(manifest: Mapping[str, Any]) -> None:
    """Run KubeRay's and Kueue's rules over a rendered ``ray.io/v1`` RayJob.

    Example:
        >>> check_rayjob({"metadata": {"name": "j", "labels": {QUEUE_LABEL: "q"}},
        ...     "spec": {"entrypoint": "python x.py", "shutdownAfterJobFinishes": False,
        ...              "rayClusterSpec": {"headGroupSpec": {}}}})
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: spec.shutdownAfterJobFinishes: Kueue rejects ...
    """
    metadata = manifest.get("metadata", {})
    check_rayjob_name(metadata.get("name"), "metadata.name")
    spec = manifest.get("spec", {})
    queued = QUEUE_LABEL in metadata.get("labels", {})
    if "rayClusterSpec" in spec and "clusterSelector" in spec:
        raise ConfigError(
            "spec.clusterSelector", spec["clusterSelector"], "only one of rayClusterSpec and clusterSelector"
        )
    mode = spec.get("submissionMode", "K8sJobMode")
    if mode not in SUBMISSION_MODES:
        raise ConfigError("spec.submissionMode", mode, " | ".join(SUBMISSION_MODES))
    check_rayjob_lifecycle(
        shutdown=spec.get("shutdownAfterJobFinishes", False),
        ttl=spec.get("ttlSecondsAfterFinished", 0),
        deadline=spec.get("activeDeadlineSeconds"),
        queued=queued,
        prefix="spec.",
    )
    elastic = metadata.get("annotations", {}).get(ELASTIC_JOB_ANNOTATION) == "true"
    if "rayClusterSpec" in spec:
        _check_cluster_spec(
            spec["rayClusterSpec"],
            "spec.rayClusterSpec",
            queued=queued,
            elastic=elastic,
            limit=MAX_WORKER_GROUPS_RAYJOB,
        )


def _check_cluster_spec(
    spec: Mapping[str, Any], path: str, *, queued: bool, elastic: bool, limit: int
) -> None:
    groups = spec.get("workerGroupSpecs", [])
    check_worker_groups(
        [g.get("groupName") for g in groups],
        field=f"{path}.workerGroupSpecs",
        limit=limit if queued else None,
        what="a RayJob" if limit == MAX_WORKER_GROUPS_RAYJOB else "a RayCluster",
    )
    check_autoscaling(
        bool(spec.get("enableInTreeAutoscaling")),
        queued=queued,
        elastic=elastic,
        field=f"{path}.enableInTreeAutoscaling",
    )
    head = spec.get("headGroupSpec", {})
    check_group_manifest(head, f"{path}.headGroupSpec", count=1)
    head_env = (head.get("template", {}).get("spec", {}).get("containers") or [{}])[0].get("env") or []
    check_autoscaler_v2_env(
        {e.get("name"): e.get("value") for e in head_env},
        autoscaling=bool(spec.get("enableInTreeAutoscaling")),
        field=f"{path}.headGroupSpec.template.spec.containers[0].env",
    )
    for i, group in enumerate(groups):
        where = f"{path}.workerGroupSpecs[{i}]"
        check_replicas(group.get("replicas", 0), group.get("minReplicas"), group.get("maxReplicas"), where)
        count = int(group.get("replicas", 1)) * int(group.get("numOfHosts") or 1)
        check_group_manifest(group, where, count=count)
        _check_containers(group.get("template", {}), f"{where}.template")
    _check_containers(head.get("template", {}), f"{path}.headGroupSpec.template")


def _check_containers(template: Mapping[str, Any], path: str) -> None:
    for j, container in enumerate(template.get("spec", {}).get("containers", [])):
        resources = container.get("resources", {})
        check_requests_within_limits(
            resources.get("requests", {}),
            resources.get("limits", {}),
            f"{path}.spec.containers[{j}].resources",
        )


def _check_dns1035(name: Any, field: str, limit: int, kind: str) -> None:
    allowed = (
        f"a DNS-1035 label of at most {limit} characters for a {kind}: lower-case letters, digits and '-', "
        "starting with a letter and ending alphanumeric"
    )
    if not isinstance(name, str) or not name:
        raise ConfigError(field, name, allowed, problem="not a non-empty string")
    if len(name) > limit:
        raise ConfigError(field, name, allowed, problem=f"{len(name)} characters is too long")
    if not _DNS1035.match(name):
        raise ConfigError(field, name, allowed, problem="not a DNS-1035 label")


def _check_key(key: Any, field: str) -> None:
    allowed = (
        "'[prefix/]name': a DNS subdomain prefix and a name of at most 63 letters, digits, '-', '_', '.'"
    )
    if not isinstance(key, str) or not key:
        raise ConfigError(field, key, allowed, problem="not a valid key")
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        raise ConfigError(field, key, allowed, problem="key prefix is not a DNS subdomain")
    if len(name) > 63 or not _LABEL_NAME.match(name):
        raise ConfigError(field, key, allowed, problem="not a valid key")


def _lifecycle_names(prefix: str) -> dict[str, str]:
    if prefix:
        return {
            "shutdown": f"{prefix}shutdownAfterJobFinishes",
            "ttl": f"{prefix}ttlSecondsAfterFinished",
            "deadline": f"{prefix}activeDeadlineSeconds",
        }
    return {
        "shutdown": "shutdown_after_job_finishes",
        "ttl": "ttl_seconds_after_finished",
        "deadline": "active_deadline_seconds",
    }


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def resolve_queue_and_priority(
    labels: Mapping[str, str], local_queue: str | None, priority_class: str | None
) -> tuple[str | None, str | None]:
    """The effective LocalQueue and priority class from the arguments and Kueue's labels.

    ``local_queue="q"`` and ``labels={"kueue.x-k8s.io/queue-name": "q"}`` mean the same thing (so do
    ``priority_class`` and the priority-class label); different values in both places is an error.

    Example:
        >>> resolve_queue_and_priority({PRIORITY_LABEL: "prod-priority"}, "batch-jobs-queue", None)
        ('batch-jobs-queue', 'prod-priority')
        >>> resolve_queue_and_priority({PRIORITY_LABEL: "a"}, None, "b")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: priority_class: given twice with different values ...
    """
    queue = _one_of("local_queue", local_queue, labels.get(QUEUE_LABEL), QUEUE_LABEL)
    priority = _one_of("priority_class", priority_class, labels.get(PRIORITY_LABEL), PRIORITY_LABEL)
    return queue, priority


def _one_of(field: str, value: str | None, label_value: str | None, label: str) -> str | None:
    if value is not None and label_value is not None and value != label_value:
        raise ConfigError(
            field,
            (value, label_value),
            f"one value: give {field} or the {label!r} label, or the same value in both",
            problem=f"given twice with different values ({field} and labels[{label!r}])",
        )
    chosen = value if value is not None else label_value
    if chosen is not None:
        check_dns_label(chosen, field if value is not None else f"labels[{label!r}]")
    return chosen
