"""Build a ``ray.io/v1`` RayJob (job-owned cluster) and the Ray job-submission request (pure, no I/O).

A RayJob with ``rayClusterSpec`` owns its cluster: KubeRay creates it, runs the entrypoint and, with
``shutdownAfterJobFinishes``, deletes it afterwards. Kueue manages such a RayJob through the queue and
priority labels on its metadata. A job for an *existing* cluster is not a RayJob at all (Kueue cannot
manage a ``clusterSelector`` RayJob): it is a request to Ray's job-submission API, rendered by
:func:`build_job_submission`.

In K8sJobMode (the default) KubeRay starts a pod of its own, the *submitter*, that runs ``ray job
submit``: from ``spec.submitterPodTemplate``, else from its default template, which has no
``securityContext`` and so is refused in a namespace enforcing Pod Security "restricted". With
``pod_security="restricted"`` the RayJob carries that default template (:func:`submitter_template`)
made to comply, like the cluster's own pods.

Example:
    >>> from rayqueue_sdk.config.models import ManagedClusterConfig
    >>> from rayqueue_sdk.manifests.raycluster import build_cluster_spec
    >>> job = build_rayjob(name="train", namespace=None, entrypoint="python train.py",
    ...     cluster_spec=build_cluster_spec(ManagedClusterConfig()), runtime_env={"pip": ["torch"]},
    ...     labels={"kueue.x-k8s.io/queue-name": "batch"})
    >>> job["spec"]["submissionMode"], job["spec"]["shutdownAfterJobFinishes"], job["spec"]["runtimeEnvYAML"]
    ('K8sJobMode', True, 'pip:\\n- torch\\n')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.raycluster import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rayqueue_sdk.manifests.rules import check_rayjob
from rayqueue_sdk.manifests.security import POD_SECURITY_LEVELS, make_restricted

__all__ = [
    "SUBMITTER_CONTAINER",
    "build_job_submission",
    "build_rayjob",
    "check_submitter_security",
    "runtime_env_yaml",
    "submitter_template",
]

#: The submitter container's name in KubeRay's default template (``utils.SubmitterContainerName``).
SUBMITTER_CONTAINER = "ray-job-submitter"


def submitter_template(cluster_spec: Mapping[str, Any], *, pod_security: str | None = None) -> dict[str, Any]:
    """KubeRay's default submitter pod template for ``cluster_spec`` (its ``GetDefaultSubmitterTemplate``:
    the head container's image, 500m CPU and 200Mi requested, 1 CPU and 1Gi at most, never restarted),
    with the head pod's ``imagePullSecrets`` (the same image); ``pod_security="restricted"`` makes it
    pass Pod Security "restricted" (:func:`~rayqueue_sdk.manifests.security.make_restricted`).

    Example:
        >>> head = {"template": {"spec": {"containers": [{"image": "rayproject/ray:2.41.0"}]}}}
        >>> t = submitter_template({"headGroupSpec": head}, pod_security="restricted")["spec"]
        >>> t["containers"][0]["image"], t["restartPolicy"], t["securityContext"]["runAsNonRoot"]
        ('rayproject/ray:2.41.0', 'Never', True)
    """
    head = ((cluster_spec.get("headGroupSpec") or {}).get("template") or {}).get("spec") or {}
    image = ((head.get("containers") or [{}])[0]).get("image") or "rayproject/ray"
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": SUBMITTER_CONTAINER,
                "image": image,
                "resources": {
                    "requests": {"cpu": "500m", "memory": "200Mi"},
                    "limits": {"cpu": "1", "memory": "1Gi"},
                },
            }
        ],
    }
    if head.get("imagePullSecrets"):
        pod["imagePullSecrets"] = [dict(s) for s in head["imagePullSecrets"]]
    if pod_security == "restricted":
        pod = make_restricted(pod)
    return {"spec": pod}


def check_submitter_security(
    pod_security: str | None, submission_mode: str, *, field: str = "pod_security"
) -> None:
    """Refuse a ``pod_security`` the submitter pod of ``submission_mode`` cannot have (``field``: its name
    in the caller's words).

    In SidecarMode KubeRay adds its submitter to the head pod as a container of its own, with no
    ``securityContext``, and takes no ``submitterPodTemplate``: Pod Security "restricted" would refuse
    the head pod.

    Example:
        >>> check_submitter_security("restricted", "SidecarMode")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: pod_security: KubeRay's SidecarMode submitter cannot comply ...
    """
    if pod_security not in POD_SECURITY_LEVELS:
        raise ConfigError(field, pod_security, "None or 'restricted'")
    if pod_security == "restricted" and submission_mode == "SidecarMode":
        raise ConfigError(
            field,
            pod_security,
            "None with submission_mode='SidecarMode', or 'restricted' with submission_mode 'K8sJobMode' "
            "(the default: the submitter pod gets a compliant template), 'HTTPMode' or 'InteractiveMode' "
            "(no submitter pod)",
            problem="KubeRay's SidecarMode submitter cannot comply (a container KubeRay adds to the head "
            "pod with no securityContext; SidecarMode takes no submitterPodTemplate)",
        )


def build_rayjob(
    *,
    name: str,
    namespace: str | None,
    entrypoint: str,
    cluster_spec: Mapping[str, Any],
    runtime_env: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    shutdown_after_job_finishes: bool = True,
    ttl_seconds_after_finished: int = 0,
    active_deadline_seconds: int | None = None,
    submission_mode: str = "K8sJobMode",
    pod_security: str | None = None,
) -> dict[str, Any]:
    """Render a RayJob that owns its cluster (``spec.rayClusterSpec``); the rules are checked on the result.

    ``labels`` go on the RayJob's metadata (put Kueue's queue-name and priority-class labels there).
    ``pod_security="restricted"`` gives K8sJobMode's submitter pod a template that passes Pod Security
    "restricted" (the cluster's pods are the cluster spec's business); SidecarMode cannot have it
    (:func:`check_submitter_security`).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "ray-head"}]}}}
        >>> job = build_rayjob(name="j", namespace="ds", entrypoint="python x.py",
        ...     cluster_spec={"headGroupSpec": head},
        ...     ttl_seconds_after_finished=60, active_deadline_seconds=3600)
        >>> job["spec"]["ttlSecondsAfterFinished"], job["spec"]["activeDeadlineSeconds"]
        (60, 3600)
    """
    check_submitter_security(pod_security, submission_mode)
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["labels"] = {**(labels or {}), MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    if annotations:
        metadata["annotations"] = dict(annotations)
    spec: dict[str, Any] = {
        "entrypoint": entrypoint,
        "submissionMode": submission_mode,
        "shutdownAfterJobFinishes": shutdown_after_job_finishes,
        "ttlSecondsAfterFinished": ttl_seconds_after_finished,
    }
    if active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    if runtime_env:
        spec["runtimeEnvYAML"] = runtime_env_yaml(runtime_env)
    spec["rayClusterSpec"] = dict(cluster_spec)
    if pod_security == "restricted" and submission_mode == "K8sJobMode":
        spec["submitterPodTemplate"] = submitter_template(cluster_spec, pod_security=pod_security)
    manifest = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": metadata, "spec": spec}
    check_rayjob(manifest)
    return manifest


def build_job_submission(
    *,
    entrypoint: str,
    submission_id: str,
    runtime_env: Mapping[str, Any] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Render the body of a request to Ray's job-submission API (``POST /api/jobs/``) on an existing cluster.

    Example:
        >>> build_job_submission(entrypoint="python t.py", submission_id="quick-dev-test",
        ...                      runtime_env={"working_dir": "."})
        {'entrypoint': 'python t.py', 'submission_id': 'quick-dev-test', 'runtime_env': {'working_dir': '.'}}
    """
    body: dict[str, Any] = {"entrypoint": entrypoint, "submission_id": submission_id}
    if runtime_env:
        body["runtime_env"] = dict(runtime_env)
    if metadata:
        body["metadata"] = dict(metadata)
    return body


def runtime_env_yaml(runtime_env: Mapping[str, Any]) -> str:
    """Serialise a runtime environment for ``spec.runtimeEnvYAML`` (a YAML *string*, as KubeRay expects).

    Example:
        >>> print(runtime_env_yaml({"env_vars": {"A": "1"}, "pip": ["numpy>=1.26"]}), end="")
        env_vars:
          A: '1'
        pip:
        - numpy>=1.26
    """
    import yaml  # lazy: PyYAML, imported on first use only

    return str(yaml.safe_dump(dict(runtime_env), sort_keys=False, default_flow_style=False))
