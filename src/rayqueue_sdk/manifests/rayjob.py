"""Build a ``ray.io/v1`` RayJob (job-owned cluster) and the Ray job-submission request (pure, no I/O).

A RayJob with ``rayClusterSpec`` owns its cluster: KubeRay creates it, runs the entrypoint and, with
``shutdownAfterJobFinishes``, deletes it afterwards. Kueue manages such a RayJob through the queue and
priority labels on its metadata. A job for an *existing* cluster is not a RayJob at all (Kueue cannot
manage a ``clusterSelector`` RayJob): it is a request to Ray's job-submission API, rendered by
:func:`build_job_submission`.

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

from rayqueue_sdk.manifests.raycluster import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rayqueue_sdk.manifests.rules import check_rayjob

__all__ = ["build_job_submission", "build_rayjob", "runtime_env_yaml"]


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
) -> dict[str, Any]:
    """Render a RayJob that owns its cluster (``spec.rayClusterSpec``); the rules are checked on the result.

    ``labels`` go on the RayJob's metadata (put Kueue's queue-name and priority-class labels there).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "ray-head"}]}}}
        >>> job = build_rayjob(name="j", namespace="ds", entrypoint="python x.py",
        ...     cluster_spec={"headGroupSpec": head},
        ...     ttl_seconds_after_finished=60, active_deadline_seconds=3600)
        >>> job["spec"]["ttlSecondsAfterFinished"], job["spec"]["activeDeadlineSeconds"]
        (60, 3600)
    """
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
