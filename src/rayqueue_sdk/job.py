"""``RayJob``: a Ray job on a cluster it owns (a KubeRay RayJob) or on an existing RayCluster.

Only the offline part lives here for now: validation in the constructor (no I/O) and rendering with
:meth:`RayJob.to_dict` / :meth:`RayJob.to_yaml`. The I/O-free pieces are module functions
(:func:`resolve_runtime_env`, :func:`render_rayjob`) so the submitting side can reuse them.

Example:
    >>> from rayqueue_sdk.config import ManagedClusterConfig
    >>> job = RayJob(job_name="nightly", entrypoint="python train.py", local_queue="batch-jobs-queue",
    ...              cluster_config=ManagedClusterConfig(num_workers=2), priority_class="prod-priority")
    >>> job.to_dict()["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    'prod-priority'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from rayqueue_sdk.config import ManagedClusterConfig, _Model
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests import dump_yaml
from rayqueue_sdk.manifests.raycluster import build_cluster_spec
from rayqueue_sdk.manifests.rayjob import build_job_submission, build_rayjob
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

__all__ = ["RayJob", "render_rayjob", "resolve_runtime_env"]

_PIP_ALLOWED = "a list of requirement strings, or the path of an existing requirements file"


class _JobSpec(_Model):
    """The validated arguments of a RayJob (types and cross-field rules; no I/O)."""

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
    ttl_seconds_after_finished: int = Field(default=0, description="an integer number of seconds >= 0")
    active_deadline_seconds: int | None = Field(
        default=None, description="None or an integer number of seconds > 0"
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
    def _rules(self) -> _JobSpec:
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
        object.__setattr__(self, "local_queue", queue)
        object.__setattr__(self, "priority_class", priority)
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


class RayJob:
    """A Ray job: on a cluster it owns (``cluster_config``) or on an existing RayCluster (``cluster_name``).

    Give exactly one of ``cluster_name`` and ``cluster_config``.

    * ``cluster_config=ManagedClusterConfig(...)``: a KubeRay ``RayJob`` whose cluster is created for the
      job and deleted after it (``shutdown_after_job_finishes=True``, required under a Kueue queue).
      ``local_queue`` / ``priority_class`` (or the same Kueue labels in ``labels``) go on its metadata.
    * ``cluster_name="my-workspace-cluster"``: there is no RayJob object (Kueue cannot manage a RayJob on an
      existing cluster); :meth:`to_dict` renders the request sent to Ray's job-submission API instead
      (``entrypoint``, ``runtime_env``, ``submission_id`` = ``job_name``). Queue, priority, TTL and deadline
      do not apply there and are rejected.

    ``runtime_env``: ``pip`` lists, ``env_vars`` and remote ``working_dir`` URIs are rendered unchanged; a
    ``pip`` string is the path of a requirements file, read when the job is rendered (a missing file is a
    :class:`~rayqueue_sdk.errors.ConfigError`). A local ``working_dir`` directory is rendered as written here
    and handled at submit time, when its contents are packaged for the cluster.

    The constructor does no I/O and needs no credentials.

    Example:
        >>> job = RayJob(job_name="quick-dev-test", entrypoint="python test_model.py",
        ...              cluster_name="my-workspace-cluster", namespace="your-namespace",
        ...              runtime_env={"working_dir": "."})
        >>> body = job.to_dict()
        >>> body["submission_id"], body["runtime_env"]
        ('quick-dev-test', {'working_dir': '.'})
    """

    job_name: str
    entrypoint: str
    cluster_name: str | None
    cluster_config: ManagedClusterConfig | None
    namespace: str | None
    runtime_env: dict[str, Any] | None
    local_queue: str | None
    labels: dict[str, str]
    priority_class: str | None
    ttl_seconds_after_finished: int
    active_deadline_seconds: int | None
    shutdown_after_job_finishes: bool
    submission_mode: str

    def __init__(
        self,
        job_name: str,
        entrypoint: str,
        cluster_name: str | None = None,
        cluster_config: ManagedClusterConfig | None = None,
        namespace: str | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        local_queue: str | None = None,
        labels: Mapping[str, str] | None = None,
        priority_class: str | None = None,
        ttl_seconds_after_finished: int = 0,
        active_deadline_seconds: int | None = None,
        shutdown_after_job_finishes: bool = True,
        submission_mode: str = "K8sJobMode",
    ) -> None:
        spec = _JobSpec(
            job_name=job_name,
            entrypoint=entrypoint,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            namespace=namespace,
            runtime_env=dict(runtime_env) if isinstance(runtime_env, Mapping) else runtime_env,
            local_queue=local_queue,
            labels=dict(labels or {}),
            priority_class=priority_class,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            active_deadline_seconds=active_deadline_seconds,
            shutdown_after_job_finishes=shutdown_after_job_finishes,
            submission_mode=submission_mode,
        )
        for name in _JobSpec.model_fields:
            setattr(self, name, getattr(spec, name))

    @property
    def owns_cluster(self) -> bool:
        """True when the job runs on a cluster it creates (``cluster_config``), False for ``cluster_name``.

        Example:
            >>> RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").owns_cluster
            False
        """
        return self.cluster_config is not None

    def to_dict(self) -> dict[str, Any]:
        """Render the RayJob (job-owned cluster) or the job-submission request (existing cluster).

        Reads a ``pip`` requirements file named in ``runtime_env``; nothing else touches the disk or network.

        Example:
            >>> from rayqueue_sdk.config import ManagedClusterConfig
            >>> RayJob(job_name="j", entrypoint="python x.py", cluster_config=ManagedClusterConfig()
            ...        ).to_dict()["spec"]["shutdownAfterJobFinishes"]
            True
        """
        return render_rayjob(self)

    def to_yaml(self) -> str:
        """:meth:`to_dict` as YAML.

        Example:
            >>> print(RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").to_yaml(), end="")
            entrypoint: python x.py
            submission_id: j
        """
        return dump_yaml(self.to_dict())

    def __repr__(self) -> str:
        target = f"cluster_name={self.cluster_name!r}" if self.cluster_name else "cluster_config=..."
        return f"RayJob(job_name={self.job_name!r}, entrypoint={self.entrypoint!r}, {target})"


def render_rayjob(job: RayJob, *, base_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Render ``job`` offline: a ``ray.io/v1`` RayJob, or for an existing cluster the submission request.

    ``base_dir`` resolves a relative requirements-file path (default: the current directory).

    Example:
        >>> render_rayjob(RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws"))["submission_id"]
        'j'
    """
    runtime_env = resolve_runtime_env(job.runtime_env, base_dir=base_dir)
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
