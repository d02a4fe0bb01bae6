"""``Codeflare``, ``SDKConfig`` and ``JobOptions``: codeflare-sdk 0.40's single entry point, over this SDK.

``cf = Codeflare(config=SDKConfig(auth=..., namespace=...))`` turns ``auth`` into a Kubernetes client
(:func:`client_from`), makes it the SDK's current client (as codeflare-sdk does, so a plain
``Cluster(config)`` afterwards uses it) and binds it to what ``cf.clusters`` and ``cf.jobs`` make.
``auth`` may be a kube-authkit ``AuthConfig`` (kube-authkit is not a dependency: it is used when the
notebook brought it), one of this SDK's authentication objects, an ``ApiClient``, or ``None`` (the
kubeconfig, else the pod's service account).

Example:
    >>> from rayqueue_sdk.kube.client import build_api_client, set_current_client
    >>> cf = Codeflare(config=SDKConfig(auth=build_api_client("https://k8s.example:6443"), namespace="ds"))
    >>> cf.config.namespace, cf.client.configuration.host
    ('ds', 'https://k8s.example:6443')
    >>> set_current_client(None)
"""

from __future__ import annotations

import builtins
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from rayqueue_sdk.cluster.cluster import Cluster, get_cluster
from rayqueue_sdk.cluster.compat import list_all_clusters, list_all_queued
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.job.rayjob import RayJob
from rayqueue_sdk.kube.client import set_api_client
from rayqueue_sdk.kube.session import KubeSession

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "LOG_LEVELS",
    "ClusterHandler",
    "Codeflare",
    "JobHandler",
    "JobOptions",
    "SDKConfig",
    "client_from",
]

#: The log levels SDKConfig accepts (the names of :mod:`logging`'s levels).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass
class SDKConfig:
    """codeflare-sdk's configuration of a :class:`Codeflare` entry point.

    Args:
        auth: a kube-authkit ``AuthConfig``, a ``TokenAuthentication``/``KubeConfigFileAuthentication``,
            a ``kubernetes.client.ApiClient``, or ``None`` (detected: kubeconfig, else in-cluster).
        namespace: the default namespace of ``cf.clusters``/``cf.jobs`` (``None``: the credentials').
        log_level: the level of the ``rayqueue_sdk`` logger, set when the ``Codeflare`` is made.

    Example:
        >>> SDKConfig(namespace="ds").log_level
        'WARNING'
        >>> SDKConfig(log_level="LOUD")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: log_level: got 'LOUD'; allowed: one of DEBUG, INFO, WARNING, ...
    """

    auth: Any = None
    namespace: str | None = None
    log_level: str = "WARNING"

    def __post_init__(self) -> None:
        if self.log_level not in LOG_LEVELS:
            raise ConfigError("log_level", self.log_level, "one of " + ", ".join(LOG_LEVELS))

    def __repr__(self) -> str:  # auth may carry a token: name its type only
        auth = f"<{type(self.auth).__name__}>" if self.auth is not None else None
        return f"SDKConfig(auth={auth}, namespace={self.namespace!r}, log_level={self.log_level!r})"


def client_from(auth: Any) -> ApiClient:
    """The ``ApiClient`` that ``auth`` stands for (see :class:`SDKConfig`).

    A kube-authkit ``AuthConfig`` goes through kube-authkit's own ``get_k8s_client`` (imported only then).

    Raises:
        ConfigError: ``auth`` is none of the above, or is an ``AuthConfig`` while kube-authkit is missing.

    Example:
        >>> from rayqueue_sdk.kube.client import build_api_client
        >>> api = build_api_client("https://k8s.example:6443")
        >>> client_from(api) is api
        True
        >>> client_from(42)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: auth: not an authentication (got '<int>'); allowed: ...
    """
    if auth is None:
        return KubeSession().api
    if callable(getattr(auth, "api_client", None)):
        return KubeSession(auth).api
    if hasattr(auth, "configuration") and callable(getattr(auth, "call_api", None)):
        given: ApiClient = auth  # an ApiClient, or one shaped like it (duck-typed)
        return given
    allowed = (
        "a kube_authkit.AuthConfig, TokenAuthentication(...), KubeConfigFileAuthentication(...), "
        "a kubernetes.client.ApiClient, or None (kubeconfig, else in-cluster)"
    )
    if type(auth).__module__.split(".")[0] == "kube_authkit":
        try:
            from kube_authkit import get_k8s_client  # lazy: optional, the user's own package
        except ImportError:
            raise ConfigError(
                "auth", f"<{type(auth).__name__}>", allowed, problem="kube_authkit is not importable"
            ) from None
        made: ApiClient = get_k8s_client(config=auth)
        return made
    raise ConfigError("auth", f"<{type(auth).__name__}>", allowed, problem="not an authentication")


class ClusterHandler:
    """``cf.clusters``: clusters bound to the :class:`Codeflare` entry point's client and namespace.

    Example:
        >>> from rayqueue_sdk.kube.client import build_api_client, set_current_client
        >>> cf = Codeflare(SDKConfig(auth=build_api_client("https://k8s.example:6443"), namespace="ds"))
        >>> cf.clusters.create(ClusterConfiguration(name="ws")).namespace
        'ds'
        >>> set_current_client(None)
    """

    def __init__(self, sdk: Codeflare) -> None:
        self._sdk = sdk

    def create(self, config: ClusterConfiguration, namespace: str | None = None) -> Cluster:
        """A :class:`~rayqueue_sdk.cluster.cluster.Cluster` (not applied yet) in ``namespace``, else the
        configuration's, else the entry point's."""
        ns = namespace or config.namespace or self._sdk.config.namespace
        if ns and ns != config.namespace:
            config = config.model_copy(update={"namespace": ns})
        return Cluster(config, client=self._sdk.session)

    def get(
        self, name: str, namespace: str | None = None, *, verify_tls: bool = True, write_to_file: bool = False
    ) -> Cluster:
        """The live cluster ``name`` (see :func:`~rayqueue_sdk.cluster.cluster.get_cluster`)."""
        return get_cluster(
            name,
            self._sdk.namespace(namespace),
            client=self._sdk.session,
            verify_tls=verify_tls,
            write_to_file=write_to_file,
        )

    def list(self, namespace: str | None = None) -> builtins.list[ClusterStatus]:
        """Every cluster of the namespace with its phase (no console output)."""
        return list_all_clusters(self._sdk.namespace(namespace), False, self._sdk.client)

    def list_queued(self, namespace: str | None = None) -> builtins.list[ClusterStatus]:
        """The clusters of the namespace that are not up yet (queued, admitted, starting)."""
        return list_all_queued(self._sdk.namespace(namespace), False, self._sdk.client)


class JobOptions(TypedDict, total=False):
    """The keyword arguments ``cf.jobs.create``/``cf.jobs.submit`` take besides the job's target.

    Example:
        >>> opts: JobOptions = {"local_queue": "batch", "runtime_env": {"pip": ["numpy"]}}
        >>> sorted(opts)
        ['local_queue', 'runtime_env']
    """

    runtime_env: dict[str, Any] | None
    ttl_seconds_after_finished: int
    active_deadline_seconds: int | None
    local_queue: str | None
    priority_class: str | None


class JobHandler:
    """``cf.jobs``: RayJobs bound to the :class:`Codeflare` entry point's client and namespace.

    Example:
        >>> from rayqueue_sdk.kube.client import build_api_client, set_current_client
        >>> cf = Codeflare(SDKConfig(auth=build_api_client("https://k8s.example:6443"), namespace="ds"))
        >>> job = cf.jobs.create("nightly", "python train.py",
        ...                      cluster_config=ClusterConfiguration(num_workers=1))
        >>> job.namespace, job.owns_cluster
        ('ds', True)
        >>> set_current_client(None)
    """

    def __init__(self, sdk: Codeflare) -> None:
        self._sdk = sdk

    def create(
        self,
        name: str,
        entrypoint: str,
        namespace: str | None = None,
        *,
        cluster_name: str | None = None,
        cluster_config: ClusterConfiguration | ManagedClusterConfig | None = None,
        runtime_env: dict[str, Any] | None = None,
        ttl_seconds_after_finished: int = 0,
        active_deadline_seconds: int | None = None,
        local_queue: str | None = None,
        priority_class: str | None = None,
    ) -> RayJob:
        """A :class:`~rayqueue_sdk.job.rayjob.RayJob` (not submitted): on ``cluster_name``, or on its own
        cluster from ``cluster_config``."""
        return RayJob(
            job_name=name,
            entrypoint=entrypoint,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            namespace=namespace or self._sdk.config.namespace,
            runtime_env=runtime_env,
            local_queue=local_queue,
            priority_class=priority_class,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            active_deadline_seconds=active_deadline_seconds,
            client=self._sdk.client,  # the job's own ``client`` attribute stays the ApiClient given
        )

    def submit(
        self,
        name: str,
        entrypoint: str,
        namespace: str | None = None,
        *,
        cluster_name: str | None = None,
        cluster_config: ClusterConfiguration | ManagedClusterConfig | None = None,
        runtime_env: dict[str, Any] | None = None,
        ttl_seconds_after_finished: int = 0,
        active_deadline_seconds: int | None = None,
        local_queue: str | None = None,
        priority_class: str | None = None,
    ) -> RayJob:
        """:meth:`create`, then ``submit()``; returns the submitted job."""
        job = self.create(
            name,
            entrypoint,
            namespace,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            runtime_env=runtime_env,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            active_deadline_seconds=active_deadline_seconds,
            local_queue=local_queue,
            priority_class=priority_class,
        )
        job.submit()
        return job


class Codeflare:
    """codeflare-sdk 0.40's entry point: one client, ``cf.clusters`` and ``cf.jobs`` bound to it.

    Making one turns ``config.auth`` into a client (no request is sent: the credentials are checked on first
    use), makes it the SDK's current client (``set_api_client``, as codeflare-sdk does, so
    ``Cluster(config)`` made afterwards uses it too) and sets the ``rayqueue_sdk`` logger's level.

    Example:
        >>> from rayqueue_sdk.kube.client import build_api_client, get_api_client, set_current_client
        >>> cf = Codeflare(config=SDKConfig(auth=build_api_client("https://k8s.example:6443")))
        >>> get_api_client() is cf.client
        True
        >>> set_current_client(None)
    """

    def __init__(self, config: SDKConfig | None = None) -> None:
        self.config = config or SDKConfig()
        logging.getLogger("rayqueue_sdk").setLevel(self.config.log_level)
        self._client = client_from(self.config.auth)
        set_api_client(self._client)
        #: the session the handlers' clusters and jobs share: this client, ``config.namespace`` by default
        self.session = KubeSession(self._client, namespace=self.config.namespace)
        self.clusters = ClusterHandler(self)
        self.jobs = JobHandler(self)

    @property
    def client(self) -> ApiClient:
        """The Kubernetes ``ApiClient`` of this entry point."""
        return self._client

    def namespace(self, namespace: str | None = None) -> str:
        """``namespace``, else ``SDKConfig.namespace``, else the credentials' namespace.

        Example:
            >>> from rayqueue_sdk.kube.client import build_api_client, set_current_client
            >>> Codeflare(SDKConfig(auth=build_api_client("https://k.example"), namespace="ds")).namespace()
            'ds'
            >>> set_current_client(None)
        """
        return namespace or self.session.namespace

    def __repr__(self) -> str:
        return f"Codeflare(server={self._client.configuration.host!r}, namespace={self.config.namespace!r})"
