"""``Cluster``: a long-running RayCluster described by a :class:`~rayqueue_sdk.config.ClusterConfiguration`.

Only the offline part lives here for now: the constructor keeps the configuration (no I/O, no credentials)
and :meth:`Cluster.to_dict` / :meth:`Cluster.to_yaml` render the ``ray.io/v1`` RayCluster that would be sent.
The rendering itself is :func:`rayqueue_sdk.manifests.raycluster.build_raycluster`.

Example:
    >>> from rayqueue_sdk.config import ClusterConfiguration
    >>> Cluster(ClusterConfiguration(name="ws", local_queue="team-q")).to_dict()["kind"]
    'RayCluster'
"""

from __future__ import annotations

from typing import Any

from rayqueue_sdk.config import ClusterConfiguration
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests import dump_yaml
from rayqueue_sdk.manifests.raycluster import build_raycluster

__all__ = ["Cluster"]


class Cluster:
    """A RayCluster you can render offline now (and, with a connection, apply, wait on and delete).

    The constructor only checks its argument: it does no I/O and needs no credentials, so a configuration
    can be reviewed as YAML (a dry run) anywhere.

    Example:
        >>> from rayqueue_sdk.config import ClusterConfiguration
        >>> cluster = Cluster(ClusterConfiguration(name="my-workspace-cluster", num_workers=2,
        ...     worker_cpu_requests=2, worker_memory_requests=8,
        ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}, local_queue="ds-workspace-queue",
        ...     labels={"kueue.x-k8s.io/priority-class": "rd-priority"}))
        >>> cluster.to_dict()["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"]
        '1'
        >>> "kueue.x-k8s.io/queue-name: ds-workspace-queue" in cluster.to_yaml()
        True
    """

    def __init__(self, config: ClusterConfiguration) -> None:
        if not isinstance(config, ClusterConfiguration):
            raise ConfigError(
                "config",
                config,
                "a ClusterConfiguration (a ManagedClusterConfig belongs to RayJob(cluster_config=...))",
                problem=f"not a ClusterConfiguration but {type(config).__name__}",
            )
        self.config = config

    @property
    def name(self) -> str:
        """The RayCluster's name (``config.name``).

        Example:
            >>> from rayqueue_sdk.config import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).name
            'ws'
        """
        return self.config.name

    def to_dict(self) -> dict[str, Any]:
        """The ``ray.io/v1`` RayCluster manifest as a plain dict (a fresh copy on every call).

        Example:
            >>> from rayqueue_sdk.config import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).to_dict()["metadata"]["namespace"]
            'ds'
        """
        return build_raycluster(self.config)

    def to_yaml(self) -> str:
        """The RayCluster manifest as YAML (what ``kubectl apply -f`` would take).

        Example:
            >>> from rayqueue_sdk.config import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).to_yaml().splitlines()[0]
            'apiVersion: ray.io/v1'
        """
        return dump_yaml(self.to_dict())

    def __repr__(self) -> str:
        return f"Cluster(name={self.config.name!r}, namespace={self.config.namespace!r})"
