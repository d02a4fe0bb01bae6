"""``WorkerGroup``: one group of identical Ray workers, for clusters with several (e.g. GPU and CPU) groups.

Users import it from :mod:`rayqueue_sdk.config.models` (which re-exports it) or from ``rayqueue_sdk``;
reprs and tracebacks name this module, where it is defined.

Example:
    >>> g = WorkerGroup(name="cpu", replicas=3)
    >>> g.min_replicas, g.max_replicas, g.cpu_limits
    (3, 3, 1)
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from rayqueue_sdk.config.errors import StrictModel
from rayqueue_sdk.config.fields import (
    COUNT_ALLOWED,
    NODE_SELECTOR_ALLOWED,
    TOLERATIONS_ALLOWED,
    Counts,
    Cpu,
    Envs,
    Memory,
    OptCpu,
    OptImage,
    OptMemory,
    Replicas,
    StrMap,
    Tolerations,
    resolve_limits,
)
from rayqueue_sdk.manifests.grouprules import check_ray_start_params, check_topology_annotations
from rayqueue_sdk.manifests.kueue import topology_annotation
from rayqueue_sdk.manifests.quantities import CPU_ALLOWED, MEMORY_ALLOWED
from rayqueue_sdk.manifests.rules import check_annotations, check_dns_label, check_labels, check_replicas

__all__ = ["WorkerGroup"]


class WorkerGroup(StrictModel):
    """One group of identical Ray workers (a ``workerGroupSpecs`` entry).

    Give ``ClusterConfiguration(worker_groups=[...])`` several groups for heterogeneous workers (e.g. GPU
    and CPU-only). Unset limits default to ``max(default, request)``; memory numbers mean GB.

    Example:
        >>> gpu = WorkerGroup(name="gpu", replicas=2, cpu_requests=4, memory_requests=16,
        ...                   extended_resource_requests={"nvidia.com/gpu": 1})
        >>> gpu.cpu_limits, gpu.memory_limits, (gpu.min_replicas, gpu.max_replicas)
        (4, 16, (2, 2))
        >>> WorkerGroup(name="gpu", topology="hostname", topology_mode="preferred").topology
        'hostname'

    """

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {"cpu_limits": 1, "memory_limits": 6}

    name: str = Field(description="a DNS label (lower-case, <= 63 chars), not 'head', unique in the cluster")
    replicas: Replicas = Field(default=1, description="an integer >= 0 within [min_replicas, max_replicas]")
    min_replicas: Replicas | None = Field(default=None, description="an integer >= 0 (default: replicas)")
    max_replicas: Replicas | None = Field(
        default=None, description="an integer >= min_replicas (default: replicas)"
    )
    cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= cpu_requests")
    memory_requests: Memory = Field(default=3, description=MEMORY_ALLOWED)
    memory_limits: OptMemory = Field(default=None, description=MEMORY_ALLOWED + "; >= memory_requests")
    extended_resource_requests: Counts = Field(default_factory=dict, description=COUNT_ALLOWED)
    tolerations: Tolerations = Field(default=None, description=TOLERATIONS_ALLOWED)
    node_selector: StrMap = Field(default_factory=dict, description=NODE_SELECTOR_ALLOWED)
    labels: StrMap = Field(default_factory=dict, description="pod labels: a dict of str -> str")
    annotations: StrMap = Field(default_factory=dict, description="pod annotations: a dict of str -> str")
    envs: Envs = Field(default_factory=dict, description="extra environment variables for this group")
    image: OptImage = Field(default=None, description="a container image (default: the cluster's image)")
    ray_start_params: StrMap = Field(
        default_factory=dict, description="extra `ray start` parameters (str -> str)"
    )
    topology: str | None = Field(
        default=None,
        description="this group's topology level ('block', 'rack', 'hostname' or a node label key); "
        "None: the cluster's topology",
    )
    topology_mode: str | None = Field(
        default=None, description="'required' or 'preferred'; None: the cluster's topology_mode"
    )

    @model_validator(mode="after")
    def _resolve(self) -> WorkerGroup:
        check_dns_label(self.name, "name", "worker group name")
        resolve_limits(
            self, "cpu_requests", "cpu_limits", self._LIMIT_DEFAULTS["cpu_limits"], compare_cpu=True
        )
        resolve_limits(self, "memory_requests", "memory_limits", self._LIMIT_DEFAULTS["memory_limits"])
        if self.min_replicas is None:
            low = min(self.replicas, self.max_replicas if self.max_replicas is not None else self.replicas)
            self._derive("min_replicas", low)
        if self.max_replicas is None:
            self._derive("max_replicas", max(self.replicas, self.min_replicas or 0))
        check_replicas(self.replicas, self.min_replicas, self.max_replicas, "")
        check_labels(self.labels, "labels")
        check_annotations(self.annotations, "annotations")
        check_ray_start_params(self.ray_start_params, "ray_start_params")
        own = topology_annotation(self.topology, self.topology_mode or "required")
        check_topology_annotations({**self.annotations, **own}, "annotations", self.replicas)
        return self
