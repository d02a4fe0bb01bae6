"""What the displays read of a cluster: the shapes, as protocols, so that ``display/`` names no type of
``cluster/`` (which sits above it and hands it :class:`~rayqueue_sdk.cluster.status.ClusterStatus` and
:class:`~rayqueue_sdk.cluster.observe.ClusterDetails`, both of which satisfy these).

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> status: StatusView = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")
    >>> status.phase.value
    'ready'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.idle import IdleStatus
from rayqueue_sdk.admission.phases import ClusterPhase

__all__ = ["DetailsView", "GroupView", "StatusView"]


class StatusView(Protocol):
    """A cluster's status as the displays read it (read-only).

    Example:
        >>> StatusView.__name__
        'StatusView'
    """

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def phase(self) -> ClusterPhase: ...
    @property
    def ready(self) -> bool: ...
    @property
    def explanation(self) -> str: ...
    @property
    def queue(self) -> str | None: ...
    @property
    def priority_class(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def position(self) -> int | None: ...
    @property
    def position_unavailable(self) -> str | None: ...
    @property
    def cluster_queue(self) -> str | None: ...
    @property
    def workload(self) -> str | None: ...
    @property
    def workers_ready(self) -> int | None: ...
    @property
    def workers_desired(self) -> int | None: ...
    @property
    def dashboard_url(self) -> str | None: ...
    @property
    def cluster_uri(self) -> str | None: ...
    @property
    def idle_scale_to_zero(self) -> str | None: ...
    @property
    def idle(self) -> IdleStatus | None: ...
    @property
    def eta(self) -> AdmissionEstimate | None: ...


class GroupView(Protocol):
    """One head or worker group as the displays read it.

    Example:
        >>> GroupView.__name__
        'GroupView'
    """

    @property
    def name(self) -> str: ...
    @property
    def replicas(self) -> int: ...
    @property
    def min_replicas(self) -> int | None: ...
    @property
    def max_replicas(self) -> int | None: ...
    @property
    def cpu(self) -> str | None: ...
    @property
    def memory(self) -> str | None: ...
    @property
    def gpus(self) -> int: ...


class DetailsView(Protocol):
    """A cluster's status and shape as the displays read it.

    Example:
        >>> DetailsView.__name__
        'DetailsView'
    """

    @property
    def status(self) -> StatusView: ...
    @property
    def head(self) -> GroupView | None: ...
    @property
    def groups(self) -> Sequence[GroupView]: ...
    @property
    def gpus(self) -> int: ...
