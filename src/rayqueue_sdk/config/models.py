"""Configuration models: :class:`ClusterConfiguration`, :class:`ManagedClusterConfig`, :class:`WorkerGroup`.

The models accept the peer SDK's spelling and meaning (``worker_cpu_requests=2``, ``worker_memory_requests=8``
meaning 8 GB, ``worker_extended_resource_requests={"nvidia.com/gpu": 1}``, ...) and add what the peer lacks:
``priority_class`` for interactive clusters and several worker groups. Every check runs in the constructor,
which does no I/O; a bad value raises :class:`~rayqueue_sdk.errors.ConfigError` (a ``ValueError``) naming
the field, the value and what is allowed. No pydantic ``ValidationError`` escapes.

Limits: a limit left unset is ``max(default limit, request)``, so ``worker_cpu_requests=4`` alone is valid;
an explicit limit below its request is an error.

Accelerators: extended resources map to Ray resources through :data:`DEFAULT_ACCELERATORS` (GPU kinds are
summed into ``num-gpus``; the others go into ``resources``). ``extended_resource_mapping`` adds entries;
changing a default entry needs ``overwrite_default_resource_mapping=True``.

The parts live in their own modules, re-exported here: the accelerator mapping
(:mod:`rayqueue_sdk.config.accelerators`), the default image (:mod:`rayqueue_sdk.manifests.ray_image`),
the field types (:mod:`rayqueue_sdk.config.fields`), pydantic errors as ConfigError
(:mod:`rayqueue_sdk.config.errors`) and :class:`WorkerGroup` (:mod:`rayqueue_sdk.config.worker_group`).

Example:
    >>> cfg = ClusterConfiguration(name="my-workspace-cluster", num_workers=2, worker_cpu_requests=2,
    ...     worker_memory_requests=8, worker_extended_resource_requests={"nvidia.com/gpu": 1},
    ...     local_queue="ds-workspace-queue", labels={"kueue.x-k8s.io/priority-class": "rd-priority"})
    >>> cfg.priority_class, cfg.worker_cpu_limits
    ('rd-priority', 2)
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, PrivateAttr, model_validator

from rayqueue_sdk.config.accelerators import DEFAULT_ACCELERATORS, accelerator_mapping, check_mapped
from rayqueue_sdk.config.errors import (
    StrictModel as StrictModel,
)  # re-exported: job.spec builds its models on it
from rayqueue_sdk.config.fields import (
    COUNT_ALLOWED,
    NODE_SELECTOR_ALLOWED,
    TOLERATIONS_ALLOWED,
    Counts,
    Cpu,
    DictList,
    Envs,
    Image,
    Memory,
    Names,
    OptCpu,
    OptMemory,
    OptName,
    Replicas,
    StrMap,
    Tolerations,
    resolve_limits,
)
from rayqueue_sdk.config.idle import IdlePolicy
from rayqueue_sdk.config.worker_group import WorkerGroup
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.gcs import check_gcs_ft
from rayqueue_sdk.manifests.grouprules import check_autoscaler_v2_env, check_topology_annotations
from rayqueue_sdk.manifests.kueue import topology_annotation
from rayqueue_sdk.manifests.quantities import CPU_ALLOWED, MEMORY_ALLOWED
from rayqueue_sdk.manifests.ray_image import default_image
from rayqueue_sdk.manifests.rules import (
    ELASTIC_JOB_ANNOTATION,
    MAX_WORKER_GROUPS_RAYCLUSTER,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    check_annotations,
    check_autoscaling,
    check_labels,
    check_raycluster_name,
    check_worker_groups,
    resolve_queue_and_priority,
)
from rayqueue_sdk.manifests.security import POD_SECURITY_LEVELS

__all__ = [
    "DEFAULT_ACCELERATORS",
    "ClusterConfiguration",
    "ClusterShape",
    "ManagedClusterConfig",
    "WorkerGroup",
    "accelerator_mapping",
    "default_image",
    "managed_from",
]


# ---------------------------------------------------------------------------------------------------
# models

#: The flat fields that describe the default worker group, each with the WorkerGroup field it becomes
#: (its extended resources besides, a field each model spells its own way).
_FLAT_TO_GROUP: dict[str, str] = {
    "num_workers": "replicas",
    "worker_cpu_requests": "cpu_requests",
    "worker_cpu_limits": "cpu_limits",
    "worker_memory_requests": "memory_requests",
    "worker_memory_limits": "memory_limits",
    "worker_tolerations": "tolerations",
    "worker_node_selector": "node_selector",
}


class ClusterShape(StrictModel):
    """Fields shared by ClusterConfiguration and ManagedClusterConfig (head, flat workers, pods, image):
    what the RayCluster spec builder reads of either.

    Example:
        >>> issubclass(ClusterConfiguration, ClusterShape), issubclass(ManagedClusterConfig, ClusterShape)
        (True, True)
    """

    #: Each limit left unset and not implied by its request: the request or this default, whichever is more.
    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {
        "head_cpu_limits": 2,
        "head_memory_limits": 8,
        "worker_cpu_limits": 1,
        "worker_memory_limits": 6,
    }
    #: The fields naming the head's and the workers' extended resources (each model's own spelling).
    _HEAD_EXTENDED: ClassVar[str]
    _WORKER_EXTENDED: ClassVar[str]
    _DEFAULT_GROUP = "worker-group"

    num_workers: Replicas = Field(default=1, description="an integer >= 0: workers in the default group")
    head_cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    head_cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= head_cpu_requests")
    head_memory_requests: Memory = Field(default=5, description=MEMORY_ALLOWED)
    head_memory_limits: OptMemory = Field(
        default=None, description=MEMORY_ALLOWED + "; >= head_memory_requests"
    )
    worker_cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    worker_cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= worker_cpu_requests")
    worker_memory_requests: Memory = Field(default=3, description=MEMORY_ALLOWED)
    worker_memory_limits: OptMemory = Field(
        default=None, description=MEMORY_ALLOWED + "; >= worker_memory_requests"
    )
    worker_groups: list[WorkerGroup] | None = Field(
        default=None, description="a list of WorkerGroup (instead of the flat worker_* fields)"
    )
    image: Image = Field(default_factory=default_image, description="a container image with Ray installed")
    image_pull_secrets: Names = Field(default_factory=list, description="a list of Secret names")
    envs: Envs = Field(default_factory=dict, description="a dict of environment variables")
    annotations: StrMap = Field(default_factory=dict, description="a dict of str -> str annotations")
    head_tolerations: Tolerations = Field(default=None, description=TOLERATIONS_ALLOWED)
    worker_tolerations: Tolerations = Field(default=None, description=TOLERATIONS_ALLOWED)
    head_node_selector: StrMap = Field(default_factory=dict, description=NODE_SELECTOR_ALLOWED)
    worker_node_selector: StrMap = Field(default_factory=dict, description=NODE_SELECTOR_ALLOWED)
    volumes: DictList = Field(default_factory=list, description="Kubernetes volume dicts, each with a name")
    volume_mounts: DictList = Field(
        default_factory=list, description="Kubernetes volumeMount dicts (name, mountPath) naming a volume"
    )
    extended_resource_mapping: StrMap = Field(
        default_factory=dict,
        description="a dict of extended resource -> Ray resource, e.g. {'x.com/fpga': 'FPGA'}",
    )
    overwrite_default_resource_mapping: bool = Field(default=False, description="True or False")
    topology: str | None = Field(
        default=None,
        description="a topology level for the worker pods (Kueue topology-aware scheduling): 'block', "
        "'rack', 'hostname' or a node label key such as 'cloud.provider.com/topology-rack'; None: anywhere",
    )
    topology_mode: str = Field(
        default="required",
        description="'required' (wait until one domain of the level has room) or 'preferred' "
        "(one domain if possible)",
    )
    pod_security: str | None = Field(
        default=None,
        description="None (the pods as written) or 'restricted': every head and worker pod passes Pod "
        "Security 'restricted' (non-root uid 1000, no privilege escalation, all capabilities dropped, "
        "RuntimeDefault seccomp), for a namespace labelled pod-security.kubernetes.io/enforce: restricted",
    )

    _groups: list[WorkerGroup] = PrivateAttr(default_factory=list)
    _mapping: dict[str, str] = PrivateAttr(default_factory=dict)

    def head_extended_resources(self) -> dict[str, int | str]:
        """The head's extended resource requests (GPUs, TPUs, ...): ``head_extended_resource_requests``, or
        ``head_accelerators`` in the peer's spelling.

        Example:
            >>> ClusterConfiguration(name="c", head_extended_resource_requests={"nvidia.com/gpu": 1}
            ...     ).head_extended_resources()
            {'nvidia.com/gpu': 1}
            >>> ManagedClusterConfig(head_accelerators={"google.com/tpu": 4}).head_extended_resources()
            {'google.com/tpu': 4}
        """
        value: dict[str, int | str] = getattr(self, self._HEAD_EXTENDED)
        return value

    @classmethod
    def flat_worker_fields(cls) -> frozenset[str]:
        """The flat ``worker_*`` fields that describe the default worker group (not with ``worker_groups``).

        Example:
            >>> sorted(ManagedClusterConfig.flat_worker_fields() - ClusterConfiguration.flat_worker_fields())
            ['worker_accelerators']
        """
        return frozenset(_FLAT_TO_GROUP) | {cls._WORKER_EXTENDED}

    def pod_labels(self) -> dict[str, str]:
        """Labels for the head and worker pod templates (the cluster's own labels go on its metadata).

        Example:
            >>> ClusterConfiguration(name="c", labels={"team": "a"}).pod_labels()
            {}
        """
        return {}

    def pod_annotations(self) -> dict[str, str]:
        """Annotations for the pod templates: ``annotations`` without Kueue's keys (those stay on the object).

        Example:
            >>> ClusterConfiguration(name="c", elastic=True, annotations={"a": "1"}).pod_annotations()
            {'a': '1'}
        """
        return {k: v for k, v in self.annotations.items() if not k.startswith("kueue.x-k8s.io/")}

    @property
    def resource_mapping(self) -> dict[str, str]:
        """The extended-resource -> Ray-resource mapping in force for this configuration.

        Example:
            >>> ClusterConfiguration(name="c").resource_mapping["google.com/tpu"]
            'TPU'
        """
        return self._mapping

    def resolved_worker_groups(self) -> list[WorkerGroup]:
        """The worker groups to render: ``worker_groups`` or one group built from the flat worker_* fields.

        Example:
            >>> [g.name for g in ClusterConfiguration(name="c", num_workers=2).resolved_worker_groups()]
            ['worker-group']
        """
        return self._groups

    def _resolve_shape(self, *, autoscaling: bool, min_workers: int | None, max_workers: int | None) -> None:
        self._mapping = accelerator_mapping(
            self.extended_resource_mapping, overwrite=self.overwrite_default_resource_mapping
        )
        d = self._LIMIT_DEFAULTS
        resolve_limits(self, "head_cpu_requests", "head_cpu_limits", d["head_cpu_limits"], compare_cpu=True)
        resolve_limits(self, "head_memory_requests", "head_memory_limits", d["head_memory_limits"])
        check_mapped(self.head_extended_resources(), self._mapping, self._HEAD_EXTENDED)
        mounts_ok = {v["name"] for v in self.volumes}
        for i, mount in enumerate(self.volume_mounts):
            if mount["name"] not in mounts_ok:
                raise ConfigError(
                    f"volume_mounts[{i}].name",
                    mount["name"],
                    f"one of the volumes: {sorted(mounts_ok)}",
                    problem="names no volume",
                )
        check_annotations(self.annotations, "annotations")
        topology_annotation(self.topology, self.topology_mode)
        if self.pod_security not in POD_SECURITY_LEVELS:
            raise ConfigError("pod_security", self.pod_security, "None or 'restricted'")
        if self.worker_groups is not None:
            flat = sorted(self.flat_worker_fields() & self.model_fields_set)
            if flat:
                raise ConfigError(
                    "worker_groups",
                    [g.name for g in self.worker_groups],
                    "either worker_groups=[WorkerGroup(...)] or the flat worker_* fields, not both",
                    problem=f"given together with {', '.join(flat)}",
                )
            self._groups = list(self.worker_groups)
        else:
            resolve_limits(
                self, "worker_cpu_requests", "worker_cpu_limits", d["worker_cpu_limits"], compare_cpu=True
            )
            resolve_limits(self, "worker_memory_requests", "worker_memory_limits", d["worker_memory_limits"])
            low = min_workers if min_workers is not None else (0 if autoscaling else self.num_workers)
            high = max_workers if max_workers is not None else max(self.num_workers, low)
            if low > high:
                raise ConfigError("min_workers", low, f"at most max_workers={high}", problem="min above max")
            if autoscaling and high < 1:
                raise ConfigError(
                    "max_workers",
                    high,
                    "at least 1 with enable_autoscaling=True (the autoscaler could never add a worker)",
                    problem="no room to scale",
                )
            if not low <= self.num_workers <= high:
                raise ConfigError(
                    "num_workers",
                    self.num_workers,
                    f"an integer within [min_workers={low}, max_workers={high}]",
                    problem="outside the autoscaling bounds",
                )
            from_flat = {group: getattr(self, field) for field, group in _FLAT_TO_GROUP.items()}
            self._groups = [
                WorkerGroup.model_construct(
                    name=self._DEFAULT_GROUP,
                    min_replicas=low,
                    max_replicas=high,
                    extended_resource_requests=getattr(self, self._WORKER_EXTENDED),
                    labels={},
                    annotations={},
                    envs={},
                    image=None,
                    ray_start_params={},
                    **from_flat,
                )
            ]
        for i, group in enumerate(self._groups):
            field = (
                f"worker_groups[{i}].extended_resource_requests"
                if self.worker_groups is not None
                else self._WORKER_EXTENDED
            )
            check_mapped(group.extended_resource_requests, self._mapping, field)
            level = group.topology if group.topology is not None else self.topology
            rendered = topology_annotation(level, group.topology_mode or self.topology_mode)
            where = f"worker_groups[{i}].annotations" if self.worker_groups is not None else "annotations"
            check_topology_annotations({**self.pod_annotations(), **group.annotations, **rendered}, where)
        check_autoscaler_v2_env(self.envs, autoscaling=autoscaling, field="envs")


#: codeflare-sdk's ClusterConfiguration fields kept only at their default: field -> (default, what to do).
_UNSUPPORTED: dict[str, tuple[Any, str]] = {
    "additional_worker_groups": (None, "None: give every group in worker_groups=[WorkerGroup(...), ...]"),
}


class ClusterConfiguration(ClusterShape):
    """A long-running RayCluster: head, workers, Kueue queue and priority. Pass it to :class:`Cluster`.

    Seed spelling works unchanged (``worker_cpu_requests=2``, ``worker_memory_requests=8`` meaning 8 GB,
    ``worker_extended_resource_requests={'nvidia.com/gpu': 1}``, ``local_queue=...``, ``labels={...}``).
    ``priority_class="rd-priority"`` and ``labels={"kueue.x-k8s.io/priority-class": "rd-priority"}`` mean the
    same thing (different values in both is an error); likewise ``local_queue`` and the queue-name label.
    ``namespace=None`` leaves the namespace to the connection (chosen at ``apply()`` time).
    ``labels`` and ``annotations`` go on the RayCluster's metadata (annotations on the pods too).
    An autoscaling cluster under a Kueue queue (the one given, or the namespace's default queue that
    ``apply()`` finds) is an elastic job by default: it gets Kueue's elastic-job annotation, which Kueue
    needs to admit autoscaling (``elastic=True`` asks for it always, ``elastic=False`` never, and then
    autoscaling under a queue is refused).
    ``topology="rack"`` asks Kueue to place the workers in one rack (``topology_mode="preferred"``: if it
    can); a :class:`WorkerGroup` may set its own.

    Example:
        >>> cfg = ClusterConfiguration(name="first-raycluster", namespace="demo", head_cpu_requests=2,
        ...     head_cpu_limits=2, head_memory_requests=8, head_memory_limits=8,
        ...     head_extended_resource_requests={"nvidia.com/gpu": 1}, num_workers=1,
        ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}, local_queue="user-queue")
        >>> cfg.local_queue, cfg.priority_class
        ('user-queue', None)
        >>> ClusterConfiguration(name="c", topology="rack").topology_mode
        'required'
        >>> ClusterConfiguration(name="Bad_Name")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: name: not a DNS-1035 label (got 'Bad_Name'); allowed: ...
    """

    _HEAD_EXTENDED: ClassVar[str] = "head_extended_resource_requests"
    _WORKER_EXTENDED: ClassVar[str] = "worker_extended_resource_requests"

    name: str = Field(
        default="",
        description="a DNS-1035 label of at most 53 characters (required by Cluster; a RayJob's "
        "cluster_config may leave it out)",
    )
    namespace: OptName = Field(
        default=None, description="a namespace name (DNS label), or None for the current one"
    )
    local_queue: OptName = Field(default=None, description="the name of a Kueue LocalQueue in the namespace")
    priority_class: OptName = Field(default=None, description="the name of a Kueue WorkloadPriorityClass")
    labels: StrMap = Field(default_factory=dict, description="a dict of str -> str labels for the RayCluster")
    head_extended_resource_requests: Counts = Field(default_factory=dict, description=COUNT_ALLOWED)
    worker_extended_resource_requests: Counts = Field(default_factory=dict, description=COUNT_ALLOWED)
    enable_autoscaling: bool = Field(default=False, description="True or False")
    min_workers: Replicas | None = Field(default=None, description="an integer >= 0 and <= num_workers")
    max_workers: Replicas | None = Field(default=None, description="an integer >= num_workers")
    elastic: bool | None = Field(
        default=None,
        description="None (elastic when autoscaling under a Kueue queue), True (always adds the "
        "kueue.x-k8s.io/elastic-job annotation) or False (never; autoscaling under a queue is then refused)",
    )
    verify_tls: bool = Field(
        default=True, description="True or False: verify the dashboard's TLS certificate"
    )
    idle_scale_to_zero: IdlePolicy | None = Field(
        default=None, description="an IdlePolicy(idle_minutes=...) or None: give the quota back when idle"
    )
    write_to_file: bool = Field(
        default=False,
        description="True or False: Cluster(config) writes its manifest to ~/.codeflare/resources/",
    )
    enable_usage_stats: bool = Field(
        default=False, description="True or False: Ray's usage stats (RAY_USAGE_STATS_ENABLED)"
    )
    enable_gcs_ft: bool = Field(
        default=False,
        description="True or False: GCS fault tolerance with an external Redis (KubeRay's "
        "gcsFaultToleranceOptions; needs redis_address)",
    )
    redis_address: str | None = Field(
        default=None, description="host:port of the external Redis (with enable_gcs_ft=True), or None"
    )
    redis_password_secret: dict[str, str] | None = Field(
        default=None,
        description="{'name': <Secret>, 'key': <key>}: the Secret holding the Redis password, or None",
    )
    external_storage_namespace: str | None = Field(
        default=None, description="the Redis key prefix of the cluster's GCS data (default: the UID), or None"
    )
    # codeflare-sdk's field that has no meaning here: accepted only at its default, so a notebook that sets
    # it learns why instead of reading "unknown field" (see _UNSUPPORTED).
    additional_worker_groups: list[Any] | None = Field(
        default=None, description="None: use worker_groups=[WorkerGroup(...), ...] for several groups"
    )

    @property
    def is_elastic(self) -> bool:
        """Whether the RayCluster carries Kueue's elastic-job annotation: ``elastic=True`` or the
        annotation given directly; by default (``elastic=None``, no annotation given) when it autoscales
        under a queue named here (a default queue found by ``apply()`` is decided there).

        Example:
            >>> ClusterConfiguration(name="c", elastic=True).is_elastic
            True
            >>> queued = ClusterConfiguration(name="c", local_queue="q", enable_autoscaling=True)
            >>> queued.is_elastic
            True
            >>> ClusterConfiguration(name="c", enable_autoscaling=True, max_workers=2).is_elastic
            False
        """
        given = self.annotations.get(ELASTIC_JOB_ANNOTATION)
        if self.elastic or given == "true":
            return True
        if self.elastic is False or given is not None:
            return False
        return self.enable_autoscaling and self.local_queue is not None

    @property
    def elastic_by_default(self) -> bool:
        """Whether the elastic-job annotation is left to the default rule (``elastic=None`` and no
        annotation given): ``apply()`` then adds it when it puts an autoscaling cluster in the
        namespace's default queue.

        Example:
            >>> ClusterConfiguration(name="c").elastic_by_default
            True
            >>> ClusterConfiguration(name="c", elastic=False).elastic_by_default
            False
        """
        return self.elastic is None and ELASTIC_JOB_ANNOTATION not in self.annotations

    @model_validator(mode="after")
    def _resolve(self) -> ClusterConfiguration:
        if self.name or "name" in self.model_fields_set:  # left out only for a RayJob's cluster_config
            check_raycluster_name(self.name, "name")
        for field, (default, allowed) in _UNSUPPORTED.items():
            if getattr(self, field) not in (default, [], {}):
                value = getattr(self, field)
                raise ConfigError(field, value, allowed, problem="not supported by rayqueue_sdk")
        if self.enable_usage_stats and "RAY_USAGE_STATS_ENABLED" not in self.envs:
            self._derive("envs", {**self.envs, "RAY_USAGE_STATS_ENABLED": "1"})
        check_labels(self.labels, "labels")
        queue, priority = resolve_queue_and_priority(self.labels, self.local_queue, self.priority_class)
        self._derive("local_queue", queue)
        self._derive("priority_class", priority)
        self._resolve_shape(
            autoscaling=self.enable_autoscaling, min_workers=self.min_workers, max_workers=self.max_workers
        )
        queued = self.local_queue is not None
        check_worker_groups(
            [g.name for g in self._groups],
            field="worker_groups",
            limit=MAX_WORKER_GROUPS_RAYCLUSTER if queued else None,
            what="a RayCluster",
        )
        check_autoscaling(self.enable_autoscaling, queued=queued, elastic=self.is_elastic)
        check_gcs_ft(
            self.enable_gcs_ft,
            self.redis_address,
            self.redis_password_secret,
            self.external_storage_namespace,
        )
        return self


class ManagedClusterConfig(ClusterShape):
    """The cluster a :class:`RayJob` creates for itself and deletes when the job ends (``rayClusterSpec``).

    Uses the peer's spelling: ``head_accelerators`` / ``worker_accelerators`` for extended resources.
    There is no name, namespace or queue here: those belong to the RayJob (``RayJob(local_queue=...,
    priority_class=..., labels=...)``). ``labels`` and ``annotations`` go on the pods; Kueue keys there
    are rejected rather than silently dropped.

    Example:
        >>> cfg = ManagedClusterConfig(num_workers=4, worker_cpu_requests=8, worker_cpu_limits=8,
        ...     worker_memory_requests=16, worker_memory_limits=16, worker_accelerators={"nvidia.com/gpu": 2})
        >>> cfg.resolved_worker_groups()[0].replicas
        4
    """

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {**ClusterShape._LIMIT_DEFAULTS, "worker_memory_limits": 2}
    _HEAD_EXTENDED: ClassVar[str] = "head_accelerators"
    _WORKER_EXTENDED: ClassVar[str] = "worker_accelerators"

    head_cpu_requests: Cpu = Field(default=2, description=CPU_ALLOWED)
    head_memory_requests: Memory = Field(default=8, description=MEMORY_ALLOWED)
    worker_memory_requests: Memory = Field(default=2, description=MEMORY_ALLOWED)
    head_accelerators: Counts = Field(default_factory=dict, description=COUNT_ALLOWED)
    worker_accelerators: Counts = Field(default_factory=dict, description=COUNT_ALLOWED)
    labels: StrMap = Field(
        default_factory=dict, description="pod labels: a dict of str -> str (no Kueue keys)"
    )

    def pod_labels(self) -> dict[str, str]:
        """Labels for the pod templates: ``labels`` (Kueue keys belong on the RayJob instead).

        Example:
            >>> ManagedClusterConfig(labels={"team": "a"}).pod_labels()
            {'team': 'a'}
        """
        return dict(self.labels)

    @model_validator(mode="after")
    def _resolve(self) -> ManagedClusterConfig:
        check_labels(self.labels, "labels")
        for key in (QUEUE_LABEL, PRIORITY_LABEL):
            if key in self.labels:
                raise ConfigError(
                    f"labels[{key!r}]",
                    self.labels[key],
                    "RayJob(local_queue=..., priority_class=..., labels=...): Kueue reads them on the RayJob",
                    problem="Kueue labels on the managed cluster's pods would be ignored",
                )
        self._resolve_shape(autoscaling=False, min_workers=None, max_workers=None)
        check_worker_groups(
            [g.name for g in self._groups], field="worker_groups", limit=None, what="a RayJob"
        )
        return self


def managed_from(
    config: ClusterConfiguration, local_queue: str | None = None, priority_class: str | None = None
) -> tuple[ManagedClusterConfig, str | None, str | None]:
    """A RayJob's cluster from a :class:`ClusterConfiguration` (codeflare-sdk 0.40's
    ``RayJob(cluster_config=ClusterConfiguration(...))``): the same shape, ClusterConfiguration's defaults
    and values kept (``*_extended_resource_requests`` become ``*_accelerators``), and its queue and priority
    class handed to the job unless the job names its own. Returns ``(config, local_queue, priority_class)``.

    What a job-owned cluster cannot have is refused: autoscaling, an idle policy, a name or a namespace of
    its own (the RayJob names its cluster and lives in one namespace).

    Example:
        >>> managed, queue, _ = managed_from(ClusterConfiguration(num_workers=2, local_queue="batch",
        ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}))
        >>> managed.num_workers, managed.worker_accelerators, managed.head_memory_requests, queue
        (2, {'nvidia.com/gpu': 1}, 5, 'batch')
    """
    refused = {
        "enable_autoscaling": (config.enable_autoscaling, "False: a RayJob's cluster has a fixed size"),
        "idle_scale_to_zero": (config.idle_scale_to_zero, "None: a RayJob's cluster ends with the job"),
        "name": (config.name, "left out: the RayJob names its cluster <job_name>-..."),
        "namespace": (config.namespace, "left out: use RayJob(namespace=...)"),
        "enable_gcs_ft": (config.enable_gcs_ft, "False: a RayJob's cluster lives as long as its job"),
    }
    for field, (value, allowed) in refused.items():
        if value:
            raise ConfigError(
                f"cluster_config.{field}", value, allowed, problem="not for a RayJob's own cluster"
            )
    shared = set(ManagedClusterConfig.model_fields) & set(ClusterConfiguration.model_fields) - {"labels"}
    if config.worker_groups is not None:
        shared -= ClusterConfiguration.flat_worker_fields()
    values: dict[str, Any] = {name: getattr(config, name) for name in shared}
    if config.worker_groups is None:
        values["worker_accelerators"] = dict(config.worker_extended_resource_requests)
    values["head_accelerators"] = dict(config.head_extended_resource_requests)
    values["labels"] = {k: v for k, v in config.labels.items() if k not in (QUEUE_LABEL, PRIORITY_LABEL)}
    managed = ManagedClusterConfig(**values)
    return managed, local_queue or config.local_queue, priority_class or config.priority_class
