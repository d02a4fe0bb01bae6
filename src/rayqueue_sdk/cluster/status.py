"""Typed status of a RayCluster as the SDK reports it: phase, Kueue's words, queue position, workers.

Pure: :func:`status_from` builds a :class:`ClusterStatus` from the observed objects (through the
admission machine, :mod:`rayqueue_sdk.admission.cluster`), with no I/O.

Example:
    >>> rc = {"metadata": {"name": "ws", "namespace": "ds",
    ...                    "labels": {"kueue.x-k8s.io/queue-name": "team-q",
    ...                               "kueue.x-k8s.io/priority-class": "rd-priority"}},
    ...       "spec": {"suspend": True}}
    >>> st = status_from(rc, None)
    >>> st.phase, st.ready, st.queue, st.priority_class
    (<ClusterPhase.QUEUED: 'queued'>, False, 'team-q', 'rd-priority')
    >>> st.cluster_uri
    'ray://ws-head-svc.ds.svc:10001'
    >>> st
    ds/ws: queued
      queued in LocalQueue 'team-q': waiting for Kueue to create the Workload
      queue team-q, priority rd-priority
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.admission.cluster import (
    PRIORITY_LABEL,
    Assessment,
    ClusterPhase,
    JobPhase,
    assess_cluster,
)
from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.idle import IdleState, IdleStatus, idle_from
from rayqueue_sdk.admission.records import carried, record_dict
from rayqueue_sdk.admission.scaling_status import ScalingStatus
from rayqueue_sdk.display import show_status
from rayqueue_sdk.display.text import status_text
from rayqueue_sdk.display.widgets import status_html
from rayqueue_sdk.errors import ScaledToZeroError
from rayqueue_sdk.manifests.meta import meta_of, name_of

__all__ = [
    "CLIENT_PORT",
    "ClusterPhase",
    "ClusterStatus",
    "DASHBOARD_PORT",
    "DEFAULT_TIMEOUT",
    "IdleState",
    "IdleStatus",
    "JobPhase",
    "endpoint_port",
    "head_service_name",
    "not_found_status",
    "status_from",
]

#: Default limit of a whole wait, in seconds (queue wait plus start-up). Never infinite by default.
#: Kept here (not in waiting.py) so that ``Cluster`` can name it without importing the kube layer.
DEFAULT_TIMEOUT = 900.0

# KubeRay's default head ports: the dashboard (HTTP) and the Ray client
DASHBOARD_PORT = 8265
CLIENT_PORT = 10001


@dataclass(frozen=True)
class ClusterStatus:
    """What the SDK knows about a RayCluster at one moment.

    Attributes:
        name, namespace: the RayCluster.
        phase: the :class:`ClusterPhase` (queued, admitted, starting, ready, preempted, ...).
        ready: ``phase is READY``.
        explanation: one sentence for a human, quoting Kueue's message as Kueue wrote it.
        queue: the LocalQueue (``kueue.x-k8s.io/queue-name``), if any.
        priority_class: the WorkloadPriorityClass (label, or the Workload's ``priorityClassRef``).
        reason, message: the Kueue/KubeRay condition reason and message behind the phase.
        position: the 0-based position in the LocalQueue while queued, when known.
        position_unavailable: why no position is known (visibility API absent or forbidden).
        cluster_queue: the ClusterQueue that reserved quota, once known.
        workload: the Kueue Workload's name, once Kueue created it.
        workers_ready, workers_desired: worker pods ready / wanted, as KubeRay reports them.
        dashboard_url, cluster_uri: the Ray dashboard and ``ray://`` client addresses.
        idle: the idle policy in force and where its clock stands, typed
            (:class:`~rayqueue_sdk.admission.idle.IdleStatus`: mode, state, ``idle_since``,
            ``releases_at``, ``scaled_at``; ``None``: no policy). ``idle_scale_to_zero`` is its line
            (``"reaper mode: idle 12 of 60 min"``) and ``scaled_to_zero`` whether the policy gave the
            quota back (``resume()`` queues the cluster again).
        eta: while queued, when it may be admitted and on what basis
            (:class:`~rayqueue_sdk.admission.eta.AdmissionEstimate`); ``None`` once admitted or unknown.
        scaling: an autoscaling cluster's desired vs running workers and a scale-up waiting in the
            queue as a Kueue Workload slice (:class:`~rayqueue_sdk.admission.scaling_status.ScalingStatus`;
            ``None``: no in-tree autoscaling).

    Example:
        >>> st = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready (2/2 workers ready)")
        >>> str(st)
        'ds/ws: ready (2/2 workers ready)'
    """

    name: str
    namespace: str
    phase: ClusterPhase
    ready: bool
    explanation: str
    queue: str | None = None
    priority_class: str | None = None
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    position_unavailable: str | None = None
    cluster_queue: str | None = None
    workload: str | None = None
    workers_ready: int | None = None
    workers_desired: int | None = None
    dashboard_url: str | None = None
    cluster_uri: str | None = None
    idle: IdleStatus | None = None
    eta: AdmissionEstimate | None = None
    scaling: ScalingStatus | None = None

    @property
    def scaled_to_zero(self) -> bool:
        """The idle policy gave the quota back; ``resume()`` queues the cluster again.

        Example:
            >>> ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready").scaled_to_zero
            False
        """
        return self.idle is not None and self.idle.state is IdleState.SCALED_TO_ZERO

    @property
    def idle_scale_to_zero(self) -> str | None:
        """The idle policy and its clock in one line, now (``None``: no policy).

        Example:
            >>> idle = IdleStatus("reaper", "workload", 60, "gpu")
            >>> ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready", idle=idle).idle_scale_to_zero
            'reaper mode: scale to zero after 60 idle min (waiting)'
        """
        return None if self.idle is None else self.idle.text()

    def refuse_if_scaled_to_zero(self) -> None:
        """Raise :class:`~rayqueue_sdk.errors.ScaledToZeroError` when the idle policy scaled the cluster to
        zero: it will not come back by itself (``resume()`` queues it again), so waiting for it, or for its
        address, would only time out.

        Example:
            >>> ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready").refuse_if_scaled_to_zero()
        """
        if self.idle is not None and self.scaled_to_zero:
            raise ScaledToZeroError(self.name, self.namespace, self.idle.text())

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.explanation}"

    def __repr__(self) -> str:
        """A short block (a few lines within 80 columns, :func:`rayqueue_sdk.display.text.status_text`)
        rather than every field on one line; :meth:`to_dict` has them all."""
        return status_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(status_text(self))

    def _repr_html_(self) -> str:
        """The notebook's card (:func:`rayqueue_sdk.display.widgets.status_html`)."""
        return status_html(self)

    def _ipython_display_(self) -> None:
        """As a cell's value: the card, unless the cell already shows this cluster's box (``apply();
        wait_ready()``), which then shows this status: one box per cell
        (:func:`rayqueue_sdk.display.show_status`)."""
        show_status(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (the phase as its string value).

        Example:
            >>> ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued").to_dict()["phase"]
            'queued'
        """
        return record_dict(
            self,
            phase=self.phase.value,
            idle=None if self.idle is None else self.idle.to_dict(),
            eta=None if self.eta is None else self.eta.to_dict(),
            scaling=None if self.scaling is None else self.scaling.to_dict(),
            scaled_to_zero=self.scaled_to_zero,
        )

    def __iter__(self) -> Iterator[Any]:
        """``(phase, ready)``, so codeflare-sdk's ``status, ready = cluster.status()`` unpacks the same way
        (its ``CodeFlareClusterStatus`` is :class:`ClusterPhase` here) while the status stays typed.

        Example:
            >>> phase, ready = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")
            >>> phase is ClusterPhase.READY, ready
            (True, True)
        """
        return iter((self.phase, self.ready))


def head_service_name(cluster: Mapping[str, Any]) -> str:
    """The head Service name: ``status.head.serviceName``, else ``<name>-head-svc``.

    Example:
        >>> head_service_name({"metadata": {"name": "ws"}})
        'ws-head-svc'
    """
    head = ((cluster.get("status") or {}).get("head")) or {}
    name = name_of(cluster)
    return str(head.get("serviceName") or f"{name}-head-svc")


def endpoint_port(cluster: Mapping[str, Any], key: str, default: int) -> int:
    """The port KubeRay reports in ``status.endpoints[key]``, else ``default``.

    Example:
        >>> endpoint_port({"status": {"endpoints": {"dashboard": "31265"}}}, "dashboard", 8265)
        31265
        >>> endpoint_port({}, "client", 10001)
        10001
    """
    endpoints = (cluster.get("status") or {}).get("endpoints") or {}
    try:
        return int(endpoints.get(key) or default)
    except (TypeError, ValueError):
        return default


def status_from(
    cluster: Mapping[str, Any] | None,
    workload: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    namespace: str | None = None,
    position: int | None = None,
    position_unavailable: str | None = None,
    assessment: Assessment | None = None,
    dashboard_url: str | None = None,
    cluster_uri: str | None = None,
    check_limits: Mapping[str, int] | None = None,
    fair_share: str | None = None,
    head_pod: Mapping[str, Any] | None = None,
    scaled_object: Mapping[str, Any] | None = None,
    scaled_object_read: bool = False,
    eta: AdmissionEstimate | None = None,
) -> ClusterStatus:
    """Build a :class:`ClusterStatus` from the observed RayCluster, its Workload and the position.

    Args:
        cluster: the RayCluster dict, or ``None`` if it does not exist (phase ``DELETED``).
        workload: its Kueue Workload, or ``None``.
        name, namespace: used when ``cluster`` is ``None``.
        position, position_unavailable: from :func:`rayqueue_sdk.queues.local_queues.queue_position`.
        assessment: a ready-made reading (else :func:`rayqueue_sdk.admission.cluster.assess_cluster` runs).
        dashboard_url, cluster_uri: addresses found by the caller (Route, Ingress, ...); the
            defaults are the in-cluster head Service addresses.
        check_limits: the ProvisioningRequest checks' retry limits, when read
            (:func:`rayqueue_sdk.cluster.kueue_context.check_limits`).
        fair_share: why fair sharing puts other queues first, when read
            (:func:`rayqueue_sdk.cluster.kueue_context.fair_share_for`).
        head_pod: the cluster's head Pod, when read (a head that cannot start makes the phase ``FAILED``).
        scaled_object, scaled_object_read: the idle policy's ScaledObject (KEDA mode) and whether the
            caller read it (the idle clock is unknown otherwise); see
            :func:`rayqueue_sdk.admission.idle.idle_from`. A cluster the policy scaled to zero says so
            in its explanation.
        eta: the admission estimate, kept only while the cluster is in the queue.

    Example:
        >>> status_from(None, name="ws", namespace="ds").phase
        <ClusterPhase.DELETED: 'deleted'>
    """
    a = assessment or assess_cluster(
        cluster,
        workload,
        position=position,
        position_unavailable=position_unavailable,
        check_limits=check_limits,
        fair_share=fair_share,
        head_pod=head_pod,
    )
    meta = meta_of(cluster)
    the_name = str(meta.get("name") or name or "")
    the_ns = str(meta.get("namespace") or namespace or "")
    labels = meta.get("labels") or {}
    wl_spec = (workload or {}).get("spec") or {}
    priority = labels.get(PRIORITY_LABEL) or (wl_spec.get("priorityClassRef") or {}).get("name")
    if cluster is not None and the_name:
        svc = f"{head_service_name(cluster)}.{the_ns}.svc"
        dashboard_url = dashboard_url or f"http://{svc}:{endpoint_port(cluster, 'dashboard', DASHBOARD_PORT)}"
        cluster_uri = cluster_uri or f"ray://{svc}:{endpoint_port(cluster, 'client', CLIENT_PORT)}"
    idle = idle_from(cluster, workload, scaled_object, scaled_object_read=scaled_object_read)
    explanation = a.explanation
    if idle is not None and idle.state is IdleState.SCALED_TO_ZERO:
        explanation = idle.describe()
    return carried(  # the assessment's phase, words, queue, position and workers, by their names
        ClusterStatus,
        a,
        name=the_name,
        namespace=the_ns,
        ready=a.phase is ClusterPhase.READY,
        explanation=explanation,
        priority_class=priority,
        workload=meta_of(workload).get("name"),
        dashboard_url=dashboard_url,
        cluster_uri=cluster_uri,
        idle=idle,
        eta=eta if a.in_queue else None,
    )


def not_found_status(name: str, namespace: str, available: list[str] | None = None) -> ClusterStatus:
    """The status of a RayCluster that does not exist (``Cluster.status()`` before ``apply()``): phase
    ``NOT_FOUND``, the fix, and the clusters that do exist there.

    Example:
        >>> st = not_found_status("ws", "ds", ["other"])
        >>> st.phase, st.ready
        (<ClusterPhase.NOT_FOUND: 'not found'>, False)
        >>> print(st)
        ds/ws: no RayCluster 'ws' in namespace 'ds': call cluster.apply() to create it (there: other)
    """
    there = f" (there: {', '.join(available)})" if available else ""
    return ClusterStatus(
        name=name,
        namespace=namespace,
        phase=ClusterPhase.NOT_FOUND,
        ready=False,
        explanation=(
            f"no RayCluster {name!r} in namespace {namespace!r}: call cluster.apply() to create it{there}"
        ),
    )
