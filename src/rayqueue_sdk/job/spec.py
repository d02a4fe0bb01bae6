"""The validated arguments of a :class:`~rayqueue_sdk.job.rayjob.RayJob` and its offline rendering
(pure, no I/O).

:class:`JobSpec` holds the constructor's checks (types and cross-field rules); :class:`JobFields` is the
shape the renderers read (a ``RayJob`` and a ``JobSpec`` both have it, so this module needs neither the
facade nor any I/O); :func:`render_rayjob` renders a RayJob (job-owned cluster) or the Ray
job-submission request (existing cluster), and
:func:`resolve_runtime_env` reads a ``pip`` requirements file. Both are re-exported by
:mod:`rayqueue_sdk.job.rayjob`.

Example:
    >>> resolve_runtime_env({"env_vars": {"A": "1"}})
    {'env_vars': {'A': '1'}}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, field_validator, model_validator

from rayqueue_sdk.config.fields import Seconds
from rayqueue_sdk.config.models import ManagedClusterConfig, StrictModel
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.raycluster import build_cluster_spec
from rayqueue_sdk.manifests.rayjob import build_job_submission, build_rayjob, check_submitter_security
from rayqueue_sdk.manifests.rules import (
    MAX_WORKER_GROUPS_RAYJOB,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    SUBMISSION_MODES,
    check_dns_label,
    check_labels,
    check_raycluster_name,
    check_rayjob_lifecycle,
    check_rayjob_name,
    check_worker_groups,
    resolve_queue_and_priority,
)

__all__ = ["JobFields", "JobSpec", "build_job_manifest", "render_rayjob", "resolve_runtime_env"]

_PIP_ALLOWED = "a list of requirement strings, or the path of an existing requirements file"


class JobFields(Protocol):
    """What :func:`render_rayjob` and :func:`build_job_manifest` read of a job (read-only).

    :class:`~rayqueue_sdk.job.rayjob.RayJob` and :class:`JobSpec` both provide it.

    Example:
        >>> spec = JobSpec(job_name="j", entrypoint="python x.py", cluster_name="ws")
        >>> build_job_manifest(spec, None)["submission_id"]
        'j'
    """

    @property
    def job_name(self) -> str: ...
    @property
    def entrypoint(self) -> str: ...
    @property
    def cluster_config(self) -> ManagedClusterConfig | None: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def runtime_env(self) -> dict[str, Any] | None: ...
    @property
    def local_queue(self) -> str | None: ...
    @property
    def labels(self) -> dict[str, str]: ...
    @property
    def priority_class(self) -> str | None: ...
    @property
    def ttl_seconds_after_finished(self) -> int: ...
    @property
    def active_deadline_seconds(self) -> int | None: ...
    @property
    def shutdown_after_job_finishes(self) -> bool: ...
    @property
    def submission_mode(self) -> str: ...


class JobSpec(StrictModel):
    """The validated arguments of a RayJob (types and cross-field rules; no I/O): what ``RayJob(...)``
    checks before anything is sent, each error naming the field and what is allowed.

    Example:
        >>> JobSpec(job_name="train", entrypoint="python train.py", cluster_name="ws").namespace is None
        True
        >>> JobSpec(job_name="train", entrypoint="")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: ...entrypoint...
    """

    job_name: str = Field(description="a DNS-1035 label of at most 47 characters")
    entrypoint: str = Field(min_length=1, description="a non-empty shell command, e.g. 'python train.py'")
    cluster_name: str | None = Field(default=None, description="the name of an existing RayCluster")
    cluster_config: ManagedClusterConfig | None = Field(default=None, description="a ManagedClusterConfig")
    namespace: str | None = Field(
        default=None, description="a namespace name (DNS label), or None for the current one"
    )
    runtime_env: dict[str, Any] | None = Field(default=None, description="a Ray runtime_env dict")
    local_queue: str | None = Field(
        default=None, description="the name of a Kueue LocalQueue in the namespace"
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="a dict of str -> str labels for the RayJob"
    )
    priority_class: str | None = Field(default=None, description="the name of a Kueue WorkloadPriorityClass")
    ttl_seconds_after_finished: Seconds = Field(
        default=0, description="an integer number of seconds >= 0 and <= 2147483647"
    )
    active_deadline_seconds: Seconds | None = Field(
        default=None, description="None or an integer number of seconds > 0 and <= 2147483647"
    )
    shutdown_after_job_finishes: bool = Field(default=True, description="True or False")
    submission_mode: str = Field(default="K8sJobMode", description=" | ".join(SUBMISSION_MODES))

    @field_validator("runtime_env", mode="before")
    @classmethod
    def _runtime_env(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigError(
                "runtime_env", value, "a dict (or ray.runtime_env.RuntimeEnv)", problem="not a dict"
            )
        env = dict(value)
        pip = env.get("pip")
        if pip is not None and not isinstance(pip, (str, list, dict)):
            raise ConfigError("runtime_env['pip']", pip, _PIP_ALLOWED)
        wd = env.get("working_dir")
        if wd is not None and not isinstance(wd, str):
            raise ConfigError(
                "runtime_env['working_dir']", wd, "a local directory path or a remote URI (str)"
            )
        env_vars = env.get("env_vars")
        if env_vars is not None and (
            not isinstance(env_vars, Mapping) or not all(isinstance(v, str) for v in env_vars.values())
        ):
            raise ConfigError("runtime_env['env_vars']", env_vars, "a dict of str -> str")
        return env

    @model_validator(mode="after")
    def _rules(self) -> JobSpec:
        if (self.cluster_name is None) == (self.cluster_config is None):
            given = {"cluster_name": self.cluster_name, "cluster_config": self.cluster_config}
            raise ConfigError(
                "cluster_name/cluster_config",
                given if self.cluster_name is not None else None,
                "exactly one: cluster_name (run on an existing RayCluster) or cluster_config "
                "(a ManagedClusterConfig for a cluster the job owns)",
                problem="both given" if self.cluster_name is not None else "neither given",
            )
        check_rayjob_name(self.job_name)
        if self.namespace is not None:
            check_dns_label(self.namespace, "namespace")
        check_labels(self.labels, "labels")
        queue, priority = resolve_queue_and_priority(self.labels, self.local_queue, self.priority_class)
        self._derive("local_queue", queue)
        self._derive("priority_class", priority)
        if self.submission_mode not in SUBMISSION_MODES:
            raise ConfigError("submission_mode", self.submission_mode, " | ".join(SUBMISSION_MODES))
        if self.cluster_name is not None:
            self._existing_cluster_rules(self.cluster_name)
        else:
            self._owned_cluster_rules()
        return self

    def _existing_cluster_rules(self, cluster_name: str) -> None:
        check_raycluster_name(cluster_name, "cluster_name")
        why = "Kueue cannot manage a job on an existing cluster; it runs within that cluster's admitted quota"
        for field, value, label in (
            ("local_queue", self.local_queue, QUEUE_LABEL),
            ("priority_class", self.priority_class, PRIORITY_LABEL),
        ):
            if value is not None:
                raise ConfigError(
                    f"labels[{label!r}]" if label in self.labels else field,
                    value,
                    "None with cluster_name (give queue and priority to the cluster's ClusterConfiguration), "
                    "or use cluster_config for a job-owned cluster",
                    problem=why,
                )
        if self.ttl_seconds_after_finished != 0:
            raise ConfigError(
                "ttl_seconds_after_finished",
                self.ttl_seconds_after_finished,
                "0 with cluster_name (a TTL deletes a job-owned cluster)",
            )
        if self.active_deadline_seconds is not None:
            raise ConfigError(
                "active_deadline_seconds",
                self.active_deadline_seconds,
                "None with cluster_name (deadlines apply to job-owned clusters)",
            )
        if self.submission_mode != "K8sJobMode":
            raise ConfigError(
                "submission_mode",
                self.submission_mode,
                "the default with cluster_name (the job goes through Ray's job-submission API)",
            )

    def _owned_cluster_rules(self) -> None:
        assert self.cluster_config is not None
        check_submitter_security(
            self.cluster_config.pod_security, self.submission_mode, field="cluster_config.pod_security"
        )
        queued = self.local_queue is not None
        check_rayjob_lifecycle(
            shutdown=self.shutdown_after_job_finishes,
            ttl=self.ttl_seconds_after_finished,
            deadline=self.active_deadline_seconds,
            queued=queued,
        )
        check_worker_groups(
            [g.name for g in self.cluster_config.resolved_worker_groups()],
            field="cluster_config.worker_groups",
            limit=MAX_WORKER_GROUPS_RAYJOB if queued else None,
            what="a RayJob",
        )


def render_rayjob(job: JobFields, *, base_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Render ``job`` offline: a ``ray.io/v1`` RayJob, or for an existing cluster the submission request.

    ``base_dir`` resolves a relative requirements-file path (default: the current directory).

    Example:
        >>> spec = JobSpec(job_name="j", entrypoint="python x.py", cluster_name="ws")
        >>> render_rayjob(spec)["submission_id"]
        'j'
    """
    return build_job_manifest(job, resolve_runtime_env(job.runtime_env, base_dir=base_dir))


def build_job_manifest(job: JobFields, runtime_env: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`render_rayjob` with the runtime_env already resolved (no file is read).

    Example:
        >>> job = JobSpec(job_name="j", entrypoint="python x.py", cluster_name="ws")
        >>> build_job_manifest(job, {"env_vars": {"A": "1"}})["runtime_env"]
        {'env_vars': {'A': '1'}}
    """
    if job.cluster_config is None:
        return build_job_submission(
            entrypoint=job.entrypoint, submission_id=job.job_name, runtime_env=runtime_env
        )
    labels = dict(job.labels)
    if job.local_queue is not None:
        labels[QUEUE_LABEL] = job.local_queue
    if job.priority_class is not None:
        labels[PRIORITY_LABEL] = job.priority_class
    return build_rayjob(
        name=job.job_name,
        namespace=job.namespace,
        entrypoint=job.entrypoint,
        cluster_spec=build_cluster_spec(job.cluster_config),
        runtime_env=runtime_env,
        labels=labels,
        shutdown_after_job_finishes=job.shutdown_after_job_finishes,
        ttl_seconds_after_finished=job.ttl_seconds_after_finished,
        active_deadline_seconds=job.active_deadline_seconds,
        submission_mode=job.submission_mode,
        pod_security=job.cluster_config.pod_security,
    )


def resolve_runtime_env(
    runtime_env: Mapping[str, Any] | None, *, base_dir: str | os.PathLike[str] | None = None
) -> dict[str, Any] | None:
    """A copy of ``runtime_env`` with a ``pip`` requirements-file path replaced by its requirement lines.

    Comments, blank lines and ``-r other.txt`` includes are handled; everything else (``env_vars``,
    ``working_dir``, pip lists) is returned unchanged.

    Example:
        >>> import pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "req.txt").write_text("torch  # GPU\\n\\nnumpy>=1.26\\n")
        >>> resolve_runtime_env({"pip": "req.txt", "working_dir": "https://x/y.zip"}, base_dir=d)
        {'pip': ['torch', 'numpy>=1.26'], 'working_dir': 'https://x/y.zip'}
    """
    if runtime_env is None:
        return None
    env = dict(runtime_env)
    pip = env.get("pip")
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    if isinstance(pip, str):
        env["pip"] = _read_requirements(base / pip, "runtime_env['pip']", pip)
    elif isinstance(pip, Mapping) and isinstance(pip.get("packages"), str):
        packages = pip["packages"]
        env["pip"] = {
            **pip,
            "packages": _read_requirements(base / packages, "runtime_env['pip']['packages']", packages),
        }
    return env


def _read_requirements(path: Path, field: str, given: str, depth: int = 0) -> list[str]:
    if depth > 10:
        raise ConfigError(field, given, "requirement files that do not include each other in a loop")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ConfigError(
            field, given, _PIP_ALLOWED, problem=f"requirements file not found at {str(path)!r}"
        ) from None
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        for flag in ("-r ", "--requirement "):
            if line.startswith(flag):
                nested = line[len(flag) :].strip()
                lines.extend(_read_requirements(path.parent / nested, field, nested, depth + 1))
                break
        else:
            lines.append(line)
    return lines
