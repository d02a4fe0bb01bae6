"""What every part of :class:`~rayqueue_sdk.cluster.cluster.Cluster` shares: the configuration, the
manifest rendered offline (no I/O, no credentials), and the connection made on first use.

:class:`ClusterBase` holds the state; the concepts built on it live beside it, one module each:
:mod:`~rayqueue_sdk.cluster.card` (the notebook card), :mod:`~rayqueue_sdk.cluster.rayjobs` (the running
cluster's addresses and Ray jobs), :mod:`~rayqueue_sdk.cluster.idle` (Kueue's deactivate/resume and idle
scale-to-zero) and :mod:`~rayqueue_sdk.cluster.cluster` (the lifecycle, and ``Cluster`` itself).

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration
    >>> ClusterBase(ClusterConfiguration(name="ws", namespace="ds")).to_dict()["metadata"]["namespace"]
    'ds'
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.config.idle import IdlePolicy
from rayqueue_sdk.config.models import ClusterConfiguration
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests import dump_yaml
from rayqueue_sdk.manifests.raycluster import build_raycluster

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.live import LiveFollow
    from rayqueue_sdk.display.controls import ClusterControls
    from rayqueue_sdk.kube.session import KubeSession, SessionLike

__all__ = ["ClusterBase", "one_client"]

log = logging.getLogger(__name__)


class _Unset:
    """The type of ``_UNSET``: no idle policy set on the ``Cluster`` yet (the configuration's applies)."""


_UNSET = _Unset()


class ClusterBase:
    """A ``Cluster``'s configuration and connection, and its manifest rendered offline.

    The constructor only checks its argument: it does no I/O and needs no credentials. ``client`` (an
    ``ApiClient`` or an authentication object; ``api_client`` is codeflare-sdk's name for it) overrides
    the process-wide login for this cluster only.

    Example:
        >>> from rayqueue_sdk.config.models import ClusterConfiguration
        >>> ClusterBase(ClusterConfiguration(name="ws")).to_dict()["kind"]
        'RayCluster'
    """

    def __init__(
        self,
        config: ClusterConfiguration,
        *,
        client: SessionLike = None,
        api_client: SessionLike = None,
    ) -> None:
        if not isinstance(config, ClusterConfiguration):
            raise ConfigError(
                "config",
                config,
                "a ClusterConfiguration (a ManagedClusterConfig belongs to RayJob(cluster_config=...))",
                problem=f"not a ClusterConfiguration but {type(config).__name__}",
            )
        if not config.name:
            raise ConfigError(
                "name",
                None,
                "a DNS-1035 label of at most 53 characters: ClusterConfiguration(name=...)",
                problem="required for a Cluster",
            )
        self.config = config
        #: the idle policy that :meth:`scale_to_zero` applied or removed (``None``: removed), kept here
        #: rather than written into the user's configuration; unset until it is called.
        self._idle_policy: IdlePolicy | None | _Unset = _UNSET
        self._client = one_client(client, api_client)
        self._session: KubeSession | None = None  # made on first use: offline, no Kubernetes code loads
        #: the namespace once known (given, or resolved through the session), for what says it offline
        self._namespace: str | None = config.namespace
        self._existing_seen: dict[str, Any] | None = None  # the RayCluster apply()'s preflight read
        #: the LocalQueues apply()'s preflight listed (``None``: not listed), for the card's estimate
        self._queues_seen: list[dict[str, Any]] | None = None
        #: the notebook card with its buttons (shown when built in a notebook, and by apply()/up();
        #: followed by wait_ready(), status(), details()).
        self._card: ClusterControls | None = None
        self._clicked = False  # a button of the box is running apply()/wait_ready()
        #: the card's live updates from the session's shared watches (cluster/live.py)
        self._live: LiveFollow | None = None
        #: where write_to_file() wrote the manifest (codeflare-sdk's ``resource_yaml`` reads it back).
        self._written: str | None = None
        if config.write_to_file:
            self.write_to_file()

    # -- offline -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The RayCluster's name (``config.name``).

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).name
            'ws'
        """
        return self.config.name

    @property
    def idle_policy(self) -> IdlePolicy | None:
        """The idle scale-to-zero policy this cluster applies: the one :meth:`scale_to_zero` last set
        (``None`` once it removed it), else the configuration's ``idle_scale_to_zero``. The
        configuration itself stays as the user gave it.

        Example:
            >>> from rayqueue_sdk.config.idle import IdlePolicy
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).idle_policy is None
            True
            >>> Cluster(ClusterConfiguration(name="ws", idle_scale_to_zero=IdlePolicy(idle_minutes=5))
            ...         ).idle_policy.idle_minutes == 5
            True
        """
        if isinstance(self._idle_policy, _Unset):
            return self.config.idle_scale_to_zero
        return self._idle_policy

    def to_dict(self) -> dict[str, Any]:
        """The ``ray.io/v1`` RayCluster manifest as a plain dict (a fresh copy on every call).

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).to_dict()["metadata"]["namespace"]
            'ds'
        """
        return build_raycluster(self.config)

    def to_yaml(self) -> str:
        """The RayCluster manifest as YAML (what ``kubectl apply -f`` would take), followed by the idle
        scale-to-zero objects when the configuration has ``idle_scale_to_zero``.

        Offline, ``mode="auto"`` shows the reaper (discovery decides at apply time), and the objects'
        ownerReferences (and KEDA's Workload name) are filled in at apply time: the server assigns the uid.

        Example:
            >>> from rayqueue_sdk.config.idle import IdlePolicy
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).to_yaml().splitlines()[0]
            'apiVersion: ray.io/v1'
            >>> text = Cluster(ClusterConfiguration(name="ws", local_queue="q",
            ...                idle_scale_to_zero=IdlePolicy(idle_minutes=60))).to_yaml()
            >>> "kind: Deployment" in text and "name: ws-idle" in text
            True
        """
        manifest = self.to_dict()
        text = dump_yaml(manifest)
        policy = self.idle_policy
        if policy is None:
            return text
        from rayqueue_sdk.scaling.planning import build_plan, offline_facts  # lazy: scale-to-zero

        the_plan = build_plan(manifest, policy, offline_facts(policy))
        note = (
            f"# idle scale-to-zero, {the_plan.summary().split(':')[0]}; at apply time: ownerReferences to "
            "the RayCluster (its uid), the mode (auto: KEDA where served) and KEDA's Workload name\n"
        )
        return text + "---\n" + note + dump_yaml(the_plan.objects)

    def write_to_file(self, path: str | os.PathLike[str] | None = None) -> str:
        """Write the RayCluster manifest as YAML where codeflare-sdk does,
        ``~/.codeflare/resources/<name>.yaml`` (or ``path``), and return the path. Logged at ``INFO``.

        ``ClusterConfiguration(write_to_file=True)`` calls it when the ``Cluster`` is made, as codeflare-sdk
        does; :meth:`apply` still sends the manifest built from the configuration, not the file.

        Example:
            >>> import pathlib, tempfile
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> target = pathlib.Path(tempfile.mkdtemp()) / "ws.yaml"
            >>> written = Cluster(ClusterConfiguration(name="ws")).write_to_file(target)
            >>> written == str(target), target.read_text().splitlines()[0]
            (True, 'apiVersion: ray.io/v1')
        """
        default = Path.home() / ".codeflare" / "resources" / f"{self.name}.yaml"
        target = Path(path) if path is not None else default
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_yaml(), encoding="utf-8")
        self._written = str(target)
        log.info("%s: RayCluster manifest written to %s", self.name, target)
        return self._written

    @property
    def resource_yaml(self) -> str | dict[str, Any]:
        """codeflare-sdk's ``resource_yaml``: the path :meth:`write_to_file` wrote, else the manifest dict.

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).resource_yaml["kind"]
            'RayCluster'
        """
        return self._written if self._written is not None else self.to_dict()

    def __repr__(self) -> str:
        return f"Cluster(name={self.config.name!r}, namespace={self._namespace or self.config.namespace!r})"

    # -- connection --------------------------------------------------------------------------------
    @property
    def session(self) -> KubeSession:
        """The connection this cluster uses: ``client=`` (else the login, resolved on first use) in
        ``config.namespace`` (else the credentials' namespace).

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).session.namespace
            'ds'
        """
        if self._session is None:
            from rayqueue_sdk.kube.session import KubeSession  # lazy: offline use loads no I/O path

            self._session = KubeSession.of(self._client, namespace=self.config.namespace)
        return self._session

    @property
    def namespace(self) -> str:
        """``config.namespace``, else the namespace of the credentials (kubeconfig context, service account).

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).namespace
            'ds'
        """
        if self._namespace is None:
            self._namespace = self.session.namespace
        return self._namespace


def one_client(client: SessionLike, api_client: SessionLike) -> SessionLike:
    """``client``, or codeflare-sdk's spelling ``api_client``; both (different) is an error."""
    if client is not None and api_client is not None and client is not api_client:
        raise ConfigError(
            "api_client",
            f"<{type(api_client).__name__}>",
            "one of client= and api_client= (codeflare-sdk's name for the same thing)",
            problem="given together with client",
        )
    return client if client is not None else api_client
