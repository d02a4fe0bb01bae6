"""A cluster's card that follows the cluster live, at no cost of its own to the API server.

:func:`follow_live` subscribes a status callback to the session's shared watches of RayClusters and
Workloads in the cluster's namespace (:mod:`rayqueue_sdk.kube.informer`): the same two streams that
``wait_ready()``, other cards and other clusters of the namespace read, so a card adds no watch and no
request. Each change of the RayCluster or of its Workload becomes a new
:class:`~rayqueue_sdk.cluster.status.ClusterStatus` (pure: :func:`~rayqueue_sdk.cluster.status.status_from`);
the queue position, which no watch carries, is the last one read (``status()``, ``wait_ready()``) while the
cluster stays queued.

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterPhase, ClusterStatus
    >>> shown = []
    >>> follower = LiveStatus("ws", "ds", shown.append)
    >>> follower.on_cluster({"metadata": {"name": "ws", "namespace": "ds", "uid": "u1"}, "spec": {}})
    >>> shown[-1].phase.value
    'starting'
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rayqueue_sdk.cluster.status import ClusterStatus, status_from
from rayqueue_sdk.kube.informer import Subscription, read_shared
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.lookups import list_or_none, pick_workload
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.kube.watch import WatchEvent
from rayqueue_sdk.manifests.idle import IdleMode
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import meta_of, name_of
from rayqueue_sdk.queues.eta import EstimateReads, reads_from

__all__ = ["LiveFollow", "LiveStatus", "WatchedReads", "follow_live", "keep_idle_line"]

#: How long a card waits for the shared watches' first LIST before it goes without the estimate.
_SYNC_SECONDS = 10.0


class LiveStatus:
    """The pure part: the cluster and its Workloads as seen so far, and ``on_status`` told of each change.

    Example:
        >>> seen = []
        >>> live = LiveStatus("ws", "ds", seen.append)
        >>> live.on_workloads([], replace_all=True); live._tell(); seen  # the cluster not heard of yet
        []
        >>> live.on_cluster(None); seen[-1].phase.value
        'deleted'
    """

    def __init__(
        self,
        name: str,
        namespace: str,
        on_status: Callable[[ClusterStatus], None],
        last: ClusterStatus | None = None,
        workloads_now: Callable[[], list[dict[str, Any]]] | None = None,
        shown: Callable[[], ClusterStatus | None] | None = None,
    ) -> None:
        self.name, self.namespace, self.on_status = name, namespace, on_status
        #: the status on display now (a card that ``status()`` or ``wait_ready()`` also update): its queue
        #: position and idle line are kept (no watch carries them); default: the last one told
        self.shown = shown
        #: every Workload of the namespace now (the shared cache), asked when the cluster's uid changes
        self.workloads_now = workloads_now
        self.cluster: dict[str, Any] | None = None
        #: whether the RayCluster's watch has said anything yet: until it has, ``cluster is None`` means
        #: "not heard of", not "deleted", and nothing is told (the Workloads' watch can sync first)
        self.cluster_known = False
        self.workloads: dict[str, dict[str, Any]] = {}
        self.last = last
        self._lock = threading.Lock()

    @property
    def uid(self) -> str:
        """The followed RayCluster's uid (empty before it is seen)."""
        return str(meta_of(self.cluster).get("uid") or "")

    def owns(self, workload: dict[str, Any]) -> bool:
        """True for a Workload of the followed RayCluster (Kueue's ``job-uid`` label)."""
        return bool(self.uid) and (meta_of(workload).get("labels") or {}).get(JOB_UID_LABEL) == self.uid

    def on_cluster(self, cluster: dict[str, Any] | None) -> None:
        """The RayCluster changed (``None``: deleted)."""
        with self._lock:
            renewed = cluster is None or meta_of(cluster).get("uid") != self.uid
            self.cluster = cluster
            self.cluster_known = True
            if renewed:  # another object (or none): its Workloads are those of the cache with its uid
                found = self.workloads_now() if self.workloads_now is not None and cluster else []
                self.workloads = {str(meta_of(w).get("name")): w for w in found if self.owns(w)}
        self._tell()

    def on_workloads(self, workloads: list[dict[str, Any]], *, replace_all: bool) -> None:
        """Workloads changed (``replace_all``: this is every one there is)."""
        with self._lock:
            if replace_all:
                self.workloads = {}
            for wl in workloads:
                self.workloads[str(meta_of(wl).get("name"))] = wl

    def on_workload_gone(self, workload: dict[str, Any]) -> None:
        """A Workload was deleted."""
        with self._lock:
            self.workloads.pop(str(meta_of(workload).get("name")), None)

    def _tell(self) -> None:
        with self._lock:
            if not self.cluster_known:
                return
            cluster, workload = self.cluster, pick_workload(list(self.workloads.values()))
            last = self.last
            shown = self.shown() if self.shown is not None else last
            status = status_from(
                cluster,
                workload,
                name=self.name,
                namespace=self.namespace,
                position=shown.position if shown is not None else None,
                position_unavailable=shown.position_unavailable if shown is not None else None,
                eta=shown.eta if shown is not None else None,
            )
            status = keep_idle_line(status, shown, workload)
            if status == last:
                return
            self.last = status
        self.on_status(status)


def keep_idle_line(
    status: ClusterStatus, shown: ClusterStatus | None, workload: dict[str, Any] | None
) -> ClusterStatus:
    """``status`` (built from the watches) with what no watch carries of the idle state on display (read
    by ``status()``): KEDA's clock (the ScaledObject's ``lastActiveTime``), and the idle time at which a
    KEDA cluster was scaled to zero. The watched Workload decides whether it is scaled to zero: a
    resumed cluster drops the old state; the reaper's state annotation is on the watched objects and read
    afresh.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterPhase, IdleStatus
        >>> gone = IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True, scaled_at=0.0,
        ...                   idle_for=3600)
        >>> shown = ClusterStatus("ws", "ds", ClusterPhase.DEACTIVATED, False, gone.describe(), idle=gone)
        >>> watched = IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True, scaled_at=0.0)
        >>> new = ClusterStatus("ws", "ds", ClusterPhase.DEACTIVATED, False, watched.describe(), idle=watched)
        >>> kept = keep_idle_line(new, shown, {"spec": {"active": False}})
        >>> kept.scaled_to_zero, kept.explanation.startswith("scaled to zero at 00:00 UTC after 60 idle min")
        (True, True)
        >>> running = IdleStatus("keda", "workload", 60, "gpu")
        >>> back = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready", idle=running)
        >>> keep_idle_line(back, shown, {"spec": {"active": True}}).scaled_to_zero
        False
    """
    if shown is None or shown.idle is None or status.idle is None:
        return status
    new, old = status.idle, shown.idle
    if new.mode != IdleMode.KEDA or old.mode != IdleMode.KEDA:
        return status  # the reaper's state is on the watched objects: read afresh
    inactive = ((workload or {}).get("spec") or {}).get("active") is False
    if new.scaled_to_zero and old.scaled_to_zero and inactive:
        return replace(status, idle=old, explanation=old.describe())
    if not new.scaled_to_zero and not old.scaled_to_zero and new.idle_since is None:
        return replace(status, idle=old)
    return status


class LiveFollow:
    """The two subscriptions of :func:`follow_live`; :meth:`close` ends them (idempotent).

    Example:
        >>> LiveFollow([]).close()
    """

    def __init__(self, subscriptions: list[Subscription]) -> None:
        self.subscriptions = subscriptions

    @property
    def closed(self) -> bool:
        """True once every subscription is closed (by :meth:`close`, or by an error that ended a watch)."""
        return all(s.closed for s in self.subscriptions)

    def close(self) -> None:
        """Stop following (the shared watches end when no other reader is left)."""
        for sub in self.subscriptions:
            sub.close()


def follow_live(
    session: KubeSession,
    on_status: Callable[[ClusterStatus], None],
    *,
    name: str,
    namespace: str | None = None,
    last: ClusterStatus | None = None,
    shown: Callable[[], ClusterStatus | None] | None = None,
) -> LiveFollow:
    """Call ``on_status`` with the cluster's status each time its RayCluster or Workload changes.

    Reads the session's shared watches (no watch, no request of its own once they run); ``last`` is the
    status shown now; ``shown`` (default: the last status told) gives the one on display when others update
    it too: its queue position and idle policy line, which no watch carries, are kept.

    Example::

        handle = follow_live(session, card.update, name="ws", last=status); ...; handle.close()
    """
    namespace = namespace or session.namespace
    live = LiveStatus(name, namespace, on_status, last, shown=shown)

    def clusters(event: WatchEvent) -> None:
        if event.type == "SYNC":
            if not event.objects and event.cached and live.last is not None:
                return  # a running cache may not have heard of a cluster just read: its ADDED will say
            live.on_cluster(event.objects[0] if event.objects else None)
        elif event.type in ("ADDED", "MODIFIED"):
            live.on_cluster(event.object)
        elif event.type == "DELETED":
            live.on_cluster(None)

    def workloads(event: WatchEvent) -> None:
        if event.type == "SYNC":
            live.on_workloads(event.objects, replace_all=True)
        elif event.type in ("ADDED", "MODIFIED") and event.object is not None:
            live.on_workloads([event.object], replace_all=False)
        elif event.type == "DELETED" and event.object is not None:
            live.on_workload_gone(event.object)
        else:
            return
        live._tell()

    # Workloads first: when the RayCluster arrives, its Workloads are in the cache already.
    wl_sub = read_shared(
        session, session.kueue_kind("workloads"), workloads, namespace=namespace, match=live.owns
    )
    live.workloads_now = wl_sub.informer.objects
    rc_sub = read_shared(
        session, RAYCLUSTERS, clusters, namespace=namespace, match=lambda o: meta_of(o).get("name") == name
    )
    return LiveFollow([rc_sub, wl_sub])


def _by_name(*groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects of ``groups`` by name, a later group's copy winning (what a call just read is newer
    than a cache that may lag behind it)."""
    out: dict[str, dict[str, Any]] = {}
    for group in groups:
        out.update((name_of(o), o) for o in group)
    return list(out.values())


class WatchedReads:
    """A queued cluster's estimate read from the namespace's shared watches (the RayClusters and Workloads
    a card follows anyway), the LocalQueues its ``apply()`` listed (``None``: listed here) and one LIST of
    the ClusterQueues: an :data:`~rayqueue_sdk.cluster.observe.EstimateRead` for
    :func:`~rayqueue_sdk.cluster.observe.observe_object`. It holds the watches from its first read until
    :meth:`close`, so that the card's :func:`follow_live` joins them without a LIST of its own.

    Example:
        >>> reads = WatchedReads("ds", local_queues=[])
        >>> reads.close()   # never read: nothing held
    """

    def __init__(
        self,
        namespace: str,
        *,
        local_queues: list[dict[str, Any]] | None,
        sync_seconds: float = _SYNC_SECONDS,
    ) -> None:
        self.namespace, self.local_queues, self.sync_seconds = namespace, local_queues, sync_seconds
        self._subs: list[Subscription] = []

    def __call__(
        self, session: KubeSession, cluster: dict[str, Any], workloads: list[dict[str, Any]]
    ) -> EstimateReads | None:
        """The estimate's reads around ``cluster`` and its ``workloads`` (in hand: they win over the
        caches); ``None`` when the watches do not fill in time."""
        ns = self.namespace
        if not self._subs:
            self._subs = [
                read_shared(session, RAYCLUSTERS, _ignore, namespace=ns),
                read_shared(session, session.kueue_kind("workloads"), _ignore, namespace=ns),
            ]
        if not all(sub.informer.wait_synced(self.sync_seconds) for sub in self._subs):
            return None
        rcs, wls = (sub.informer.objects() for sub in self._subs)
        lqs = self.local_queues
        if lqs is None:
            lqs = list_or_none(session, session.kueue_kind("localqueues"), namespace=ns)
        if lqs is None:
            return None
        cqs = list_or_none(session, session.kueue_kind("clusterqueues", namespaced=False))
        return reads_from(
            session,
            namespace=ns,
            workloads=_by_name(wls, workloads),
            rayclusters=_by_name(rcs, [cluster]),
            local_queues=list(lqs),
            cluster_queues=None if cqs is None else list(cqs),
        )

    def close(self) -> None:
        """Let the watches go (they go on while another reader, the card's, follows them)."""
        for sub in self._subs:
            sub.close()
        self._subs = []


def _ignore(event: WatchEvent) -> None:
    """A holder's reader: the cache is what it wants, not the events."""
