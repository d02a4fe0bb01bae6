"""Wait for a RayCluster to be ready, saying why it waits: the thin driver of the admission machine.

:func:`wait_for_cluster` watches the RayCluster and its Kueue Workload (two list-then-watch loops,
no fixed sleep), feeds each observation to :func:`rayqueue_sdk.admission.cluster.assess_cluster`, reports
progress when the phase, the explanation or the queue position changes (``logging`` and an
``on_progress`` callback), and ends with the final :class:`~rayqueue_sdk.cluster.status.ClusterStatus` or a
typed error. The queue position comes from Kueue's visibility API (polled while queued, since it has
no watch); if that API is absent or forbidden, that is said once and the wait goes on.

Example:
    >>> from rayqueue_sdk.cluster.wait import wait_for_cluster

    On a cluster that becomes ready, with Ray (not run here; the function's example runs)::

        status = wait_for_cluster("ws", "ds-team", timeout=600, queue_timeout=300,
                                  on_progress=lambda st: print(st))
        # ds-team/ws: queued in LocalQueue 'team-q' at position 0: couldn't assign flavors ...
        # ds-team/ws: admitted by ClusterQueue 'cq-dev'; starting, 0/2 workers ready
        # ds-team/ws: ready (2/2 workers ready)
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from rayqueue_sdk.admission.cluster import (
    Assessment,
    ClusterPhase,
    ErrorKind,
    Verdict,
    assess_cluster,
    eviction_key,
)
from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.fairshare import fair_share_sentence
from rayqueue_sdk.cluster.kueue_context import check_limits, fair_share_for, waits_for_checks, waits_for_quota
from rayqueue_sdk.cluster.observe import observe_cluster, observe_pair
from rayqueue_sdk.cluster.status import DEFAULT_TIMEOUT, ClusterStatus, status_from
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    ApiError,
    AuthenticationError,
    ForbiddenError,
    NotFoundError,
)
from rayqueue_sdk.kube.informer import SharedInformer, read_shared, shared_running
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.lookups import fetch_raycluster, list_or_none, pick_workload
from rayqueue_sdk.kube.pods import head_pod
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.kube.watch import WatchEvent, cache_by_name
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import labels_of, name_of, uid_of
from rayqueue_sdk.queues.eta import estimate_from_reads
from rayqueue_sdk.queues.local_queues import check_queue, queue_position

# observe_cluster lives in cluster/observe.py (the one read path); it is re-exported here for the callers
# that import it from this module (job/existing.py, tests/local).
__all__ = [
    "DEFAULT_TIMEOUT",
    "HEAD_REFRESH",
    "POSITION_REFRESH",
    "POSITION_REFRESH_MAX",
    "observe_cluster",
    "wait_for_cluster",
]

log = logging.getLogger(__name__)

#: How soon the queue position is re-read while queued (the visibility API has no watch): first after
#: this many seconds, then, while it stays the same, twice as long each time up to
#: :data:`POSITION_REFRESH_MAX`; at once when the cluster's Workload changes.
POSITION_REFRESH = 2.0
#: The longest pause between two reads of an unchanged queue position.
POSITION_REFRESH_MAX = 60.0
#: How often the head Pod is read while the cluster starts (a head that cannot start fails the wait at
#: once: its container waits in CrashLoopBackOff, ImagePullBackOff, ... which no RayCluster field says).
HEAD_REFRESH = 2.0
#: How often a "LocalQueue doesn't exist" verdict is re-checked against the API.
_QUEUE_RECHECK = 5.0
#: How often a cancellable wait looks at its ``cancel`` event between watch events.
_CANCEL_CHECK = 0.25


@dataclass
class _Observed:
    """What the driver has seen so far."""

    uid: str
    cluster: dict[str, Any] | None
    workloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    workloads_synced: bool = False
    workloads_unreadable: str | None = None
    #: a shared cache's copy lacked the cluster: gone, or created before the cache heard of it (one GET
    #: settles it, see :meth:`_ClusterWait._settle_doubt`)
    cluster_in_doubt: bool = False

    @property
    def workload(self) -> dict[str, Any] | None:
        return pick_workload(list(self.workloads.values()))

    def apply(self, event: WatchEvent) -> None:
        if event.source == "raycluster":
            self._apply_cluster(event)
        else:
            self._apply_workload(event)

    def _apply_cluster(self, event: WatchEvent) -> None:
        if event.type == "SYNC":
            mine = [o for o in event.objects if _uid(o) == self.uid]
            if not mine and event.cached and self.cluster is not None:
                self.cluster_in_doubt = True  # the cache may be behind the GET the wait began with
                return
            self.cluster = mine[0] if mine else None
            self.cluster_in_doubt = False
        elif event.object is not None:
            self.cluster_in_doubt = False
            if _uid(event.object) != self.uid:
                # Same name, new object: the one we waited for was deleted and replaced.
                self.cluster = None
            elif event.type == "DELETED":
                self.cluster = None
            else:
                self.cluster = event.object

    def _apply_workload(self, event: WatchEvent) -> None:
        self.workloads = cache_by_name(self.workloads, event)
        self.workloads_synced = self.workloads_synced or event.type == "SYNC"


def _uid(obj: dict[str, Any]) -> str:
    return uid_of(obj) or ""


def _name(obj: dict[str, Any]) -> str:
    return name_of(obj)


def _kueue_reason(a: Assessment) -> str:
    """Kueue's own words for an AdmissionTimeout (the explanation's tail when Kueue said nothing)."""
    if a.message and a.reason:
        return f"{a.message} ({a.reason})"
    if a.message or a.reason:
        return str(a.message or a.reason)
    head, sep, tail = a.explanation.partition(": ")
    return tail if sep and head.startswith("queued") else a.explanation


def wait_for_cluster(
    name: str,
    namespace: str,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    queue_timeout: float | None = None,
    client: SessionLike = None,
    on_progress: Callable[[ClusterStatus], None] | None = None,
    position_refresh: float = POSITION_REFRESH,
    log_level: int = logging.INFO,
    cancel: threading.Event | None = None,
    refuse_scaled_to_zero: bool = False,
) -> ClusterStatus:
    """Wait until RayCluster ``name`` is ready, explaining every change on the way.

    Args:
        name, namespace: the RayCluster.
        timeout: the most seconds for the whole wait (queue plus start-up); ``None`` waits without
            limit (only when asked: the default is :data:`DEFAULT_TIMEOUT`).
        queue_timeout: the most seconds spent queued (before Kueue admits the cluster); ``None``
            means only ``timeout`` applies.
        client: a :class:`~rayqueue_sdk.kube.session.KubeSession`, an ``ApiClient`` or an authentication
            object; default the current login.
        on_progress: called with a :class:`ClusterStatus` each time the phase, the explanation or
            the queue position changes (a console or notebook display hooks in here).
        position_refresh: seconds between reads of the queue position while queued.
        log_level: the level each change is logged at (``DEBUG`` when a display shows them already).
        cancel: set it (from another thread) to end the wait early: it then returns the last status,
            which is not ``READY`` (a job waiting for its cluster uses this when it is stopped).
        refuse_scaled_to_zero: raise :class:`~rayqueue_sdk.errors.ScaledToZeroError` at once when the
            idle policy has scaled the cluster to zero (nothing would bring it back: ``resume()`` does).

    Returns:
        The final :class:`ClusterStatus`: phase ``READY``, with the read path's dashboard address and
        idle policy state (:func:`~rayqueue_sdk.cluster.observe.observe_pair` on the objects the wait
        saw last: the RayCluster and its Workload are not read again); with ``cancel`` set, the last one
        seen.

    Raises:
        AdmissionTimeout: the queue wait or the whole wait took too long; carries the last phase,
            Kueue's last reason and message, and the last known position.
        PreemptedError: Kueue evicted the workload during the wait (preempted, deactivated,
            PodsReady timeout, ...). An eviction from before the wait that Kueue has requeued is
            not one: the wait goes on until the cluster is admitted again.
        ClusterDeletedError: the cluster was deleted while waiting.
        ClusterFailedError: the head cannot start (KubeRay could not create it, or its container
            waits in CrashLoopBackOff, ImagePullBackOff, InvalidImageName, ...): raised as soon as
            that is seen (the head Pod is read every :data:`HEAD_REFRESH` s while the cluster
            starts, if the identity may list pods), not after the timeout.
        ClusterNotFoundError: the cluster did not exist to begin with (lists those that do).
        ScaledToZeroError: with ``refuse_scaled_to_zero``, the idle policy scaled it to zero.
        QueueNotFoundError: Kueue says the LocalQueue does not exist (lists those that do).
        AuthenticationError: the credentials expired during the wait.

    Example:
        >>> from rayqueue_sdk.cluster.wait import wait_for_cluster
        >>> wait_for_cluster("not-there", "default", client=api, timeout=600, queue_timeout=120)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...
    """
    session = KubeSession.of(client, namespace=namespace)
    started = time.monotonic()
    first = fetch_raycluster(session, name=name, namespace=namespace)
    wait = _ClusterWait(
        session,
        _Observed(uid=_uid(first), cluster=first),
        name=name,
        namespace=namespace,
        started=started,
        timeout=timeout,
        queue_timeout=queue_timeout,
        on_progress=on_progress,
        position_refresh=position_refresh,
        log_level=log_level,
        cancel=cancel,
        refuse_scaled_to_zero=refuse_scaled_to_zero,
    )
    ready = wait.ready_at_once()
    if ready is not None:
        return ready
    # The session's shared watches of RayClusters and Workloads in the namespace: a card, the browser and
    # other waits in the same kernel read the same two streams (kube/informer.py).
    uid = wait.seen.uid
    readers = [
        read_shared(
            session,
            RAYCLUSTERS,
            wait.events.put,
            namespace=namespace,
            match=lambda o: _name(o) == name,
            source="raycluster",
        ),
        read_shared(
            session,
            session.kueue_kind("workloads"),
            wait.events.put,
            namespace=namespace,
            match=lambda o: labels_of(o).get(JOB_UID_LABEL) == uid,
            source="workload",
        ),
    ]
    # the estimate reads the namespace's RayClusters and Workloads from these same caches
    wait.caches = (readers[0].informer, readers[1].informer)
    try:
        return wait.run()
    finally:
        for reader in readers:
            reader.close()


class _ClusterWait:
    """The loop of :func:`wait_for_cluster`: observe, assess, report, decide, wait for the next event."""

    def __init__(
        self,
        session: KubeSession,
        seen: _Observed,
        *,
        name: str,
        namespace: str,
        started: float,
        timeout: float | None,
        queue_timeout: float | None,
        on_progress: Callable[[ClusterStatus], None] | None,
        position_refresh: float,
        log_level: int = logging.INFO,
        cancel: threading.Event | None = None,
        refuse_scaled_to_zero: bool = False,
    ) -> None:
        self.session, self.name, self.namespace, self.seen = session, name, namespace, seen
        self.cancel = cancel
        self.refuse_scaled_to_zero = refuse_scaled_to_zero
        self.timeout, self.queue_timeout = timeout, queue_timeout
        self.deadline = started + timeout if timeout is not None else None
        self.on_progress, self.position_refresh = on_progress, position_refresh
        self.log_level = log_level
        self.events: queue.Queue[WatchEvent] = queue.Queue()
        self.position: int | None = None
        self.eta: AdmissionEstimate | None = None
        self.position_unavailable: str | None = None
        self.known_eviction: str | None = None
        self.next_position_at = 0.0
        self.position_pause = 0.0
        self.fair_share: str | None = None
        self.fair_share_for: dict[str, Any] | None = None
        self.next_fair_share_at = 0.0
        self.next_queue_check = 0.0
        self.queued_seconds = 0.0
        self.last_tick = started
        self.last_key: tuple[Any, ...] | None = None
        self.assessment: Assessment | None = None
        self.limits: dict[str, int] | None = None  # the admission checks' retry limits, read once
        self.head_pod: dict[str, Any] | None = None
        self.head_unreadable: str | None = None
        self.next_head_at = 0.0
        #: the shared caches of the namespace's RayClusters and Workloads (set by wait_for_cluster)
        self.caches: tuple[SharedInformer, SharedInformer] | None = None

    def run(self) -> ClusterStatus:
        self._await_workload_listing()
        if self.refuse_scaled_to_zero:
            # the idle policy's word on the objects in hand (nothing brings a scaled-to-zero cluster back)
            status_from(
                self.seen.cluster, self.seen.workload, name=self.name, namespace=self.namespace
            ).refuse_if_scaled_to_zero()
        # An eviction that predates the wait (and that Kueue requeued) is history, not news.
        self.known_eviction = eviction_key(self.seen.workload)
        while True:
            a = self._observe()
            self._report(a)
            if a.verdict is Verdict.DONE and self.seen.cluster is not None:
                # The wait's own reading, without what only a queued cluster has (its position's absence).
                done = replace(a, position_unavailable=None)
                return observe_pair(self.session, self.seen.cluster, self.seen.workload, assessment=done)
            if a.verdict is Verdict.FAIL:
                self._fail(a)
            if self._cancelled():
                return self._status(a)
            self._check_timeouts(a)
            self._next_event(a)

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def ready_at_once(self) -> ClusterStatus | None:
        """The ready path: when the RayCluster the wait began with reads ready, its Workload (one LIST) is
        read and, if the wait's own assessment says done, the status is returned at once, with no watch
        opened. None otherwise, and where the session's shared watch of Workloads runs already (its cache
        answers without a request): the wait follows the shared watches, as if nothing had been read."""
        cluster = self.seen.cluster
        if cluster is None or (cluster.get("status") or {}).get("state") != "ready":
            return None
        workloads = self.session.kueue_kind("workloads")
        if shared_running(self.session, workloads, namespace=self.namespace):
            return None
        try:
            found = self.session.list(
                workloads,
                namespace=self.namespace,
                label_selector=f"{JOB_UID_LABEL}={self.seen.uid}",
            )
        except (ForbiddenError, NotFoundError):
            return None
        workload = pick_workload(found)
        if workload is None or assess_cluster(cluster, workload).verdict is not Verdict.DONE:
            return None
        self.seen.workloads = {name_of(w): w for w in found}
        self.seen.workloads_synced = True
        if self.refuse_scaled_to_zero:
            status_from(
                cluster, workload, name=self.name, namespace=self.namespace
            ).refuse_if_scaled_to_zero()
        self.known_eviction = eviction_key(workload)
        a = self._observe()
        if a.verdict is not Verdict.DONE:
            self.seen.workloads, self.seen.workloads_synced, self.known_eviction = {}, False, None
            return None
        self._report(a)
        done = replace(a, position_unavailable=None)
        return observe_pair(self.session, cluster, workload, assessment=done)

    # -- steps -----------------------------------------------------------------------------------
    def _await_workload_listing(self) -> None:
        """Never judge a Kueue-managed cluster before its Workload listing (or its failure) arrived."""
        while not self.seen.workloads_synced and self.seen.workloads_unreadable is None:
            if self._cancelled():
                return
            self._pump(_left(self.deadline, _CANCEL_CHECK if self.cancel is not None else 5.0))
            self._check_deadline(None)

    def _assess(self, workload: dict[str, Any] | None) -> Assessment:
        if self.limits is None and waits_for_checks(workload):
            self.limits = check_limits(self.session, workload) or {}
        return assess_cluster(
            self.seen.cluster,
            workload,
            position=self.position,
            position_unavailable=self.position_unavailable,
            known_eviction=self.known_eviction,
            check_limits=self.limits or None,
            fair_share=self._fair_share(workload),
            head_pod=self.head_pod,
        )

    def _fair_share(self, workload: dict[str, Any] | None) -> str | None:
        """Why fair sharing puts others first: read again when the Workload changes, else no more often than
        the queue position (ClusterQueues are cluster-wide: no watch a namespace's user may hold)."""
        now = time.monotonic()
        if self.position_unavailable is None and waits_for_quota(workload):
            return self.fair_share  # read with the queue position (see _refresh_queue)
        if workload is not self.fair_share_for or now >= self.next_fair_share_at:
            self.fair_share = fair_share_for(self.session, workload)
            self.fair_share_for = workload
            self.next_fair_share_at = now + max(self.position_refresh, self.position_pause)
        return self.fair_share

    def _observe(self) -> Assessment:
        now = time.monotonic()
        if self.assessment is not None and self.assessment.in_queue:
            self.queued_seconds += now - self.last_tick
        self.last_tick = now
        self._settle_doubt()
        workload = self.seen.workload
        a = self._assess(workload)
        if not a.in_queue:
            self.position = None
        elif workload is not None and self.position_unavailable is None and now >= self.next_position_at:
            self._refresh_position(a, workload)
            a = self._assess(workload)
        if self._starting(a) and now >= self.next_head_at:
            self._refresh_head()
            a = self._assess(workload)
        if self.seen.workloads_unreadable and workload is None and a.in_queue:
            a = replace(
                a,
                explanation=f"{a.explanation} (Kueue's Workload cannot be read with these credentials, "
                f"so Kueue's reason is unknown: {self.seen.workloads_unreadable})",
            )
        self.assessment = a
        return a

    def _settle_doubt(self) -> None:
        """Ask the API server whether a cluster missing from a shared cache's copy is gone (the wait's
        GET came first: a cluster created a moment ago may not be in a cache that was already running)."""
        if not self.seen.cluster_in_doubt:
            return
        self.seen.cluster_in_doubt = False
        try:
            now = self.session.get(RAYCLUSTERS, name=self.name, namespace=self.namespace)
        except NotFoundError:
            self.seen.cluster = None
            return
        self.seen.cluster = now if _uid(now) == self.seen.uid else None

    def _starting(self, a: Assessment) -> bool:
        return a.phase is ClusterPhase.STARTING and self.head_unreadable is None

    def _refresh_head(self) -> None:
        """Read the head Pod (the kubelet's waiting reasons are on it, not on the RayCluster)."""
        self.next_head_at = time.monotonic() + HEAD_REFRESH
        try:
            self.head_pod = head_pod(
                self.session,
                cluster=self.name,
                namespace=self.namespace,
                uid=self.seen.uid,
                deadline=self.deadline,
            )
        except (ForbiddenError, NotFoundError) as err:  # said once: the RayCluster's word only
            self.head_unreadable = str(err)
            log.info("%s/%s: cannot read the head pod (%s)", self.namespace, self.name, err)

    def _refresh_position(self, a: Assessment, workload: dict[str, Any]) -> None:
        queue_name = a.queue or (workload.get("spec") or {}).get("queueName")
        if not queue_name:
            self.next_position_at = time.monotonic() + self.position_refresh
            return
        before = self.position
        self.position, self.position_unavailable = queue_position(
            self.session,
            local_queue=queue_name,
            workload_name=_name(workload),
            namespace=self.namespace,
            deadline=self.deadline,
        )
        # An unchanged position is asked for less and less often (the visibility API cannot be watched);
        # a change, or a change of the Workload (see _next_event), brings the short pause back.
        unchanged = self.position == before and self.position_pause > 0
        self.position_pause = (
            min(POSITION_REFRESH_MAX, max(self.position_refresh, self.position_pause * 2))
            if unchanged
            else self.position_refresh
        )
        self.next_position_at = time.monotonic() + self.position_pause
        # the estimate and the fair share are read with the position (no polling of their own), while the
        # cluster waits for quota
        self.eta = self._refresh_queue(workload, str(queue_name)) if a.pending else None
        if self.position_unavailable:  # said once: never asked again during this wait
            log.info(
                "%s/%s: queue position unavailable: %s", self.namespace, self.name, self.position_unavailable
            )

    def _refresh_queue(self, workload: dict[str, Any], queue_name: str) -> AdmissionEstimate | None:
        """The admission estimate and the fair-share sentence from one read of the namespace's LocalQueues
        and the ClusterQueues; the Workloads and RayClusters come from the wait's shared watches."""
        try:
            local_queues = self.session.list(self.session.kueue_kind("localqueues"), namespace=self.namespace)
            cluster_queues = list_or_none(
                self.session, self.session.kueue_kind("clusterqueues", namespaced=False)
            )
        except AuthenticationError:
            raise
        except ApiError as err:  # the estimate and the sentence are optional: the wait goes on without
            log.debug("%s/%s: cannot read the queues for the estimate: %s", self.namespace, self.name, err)
            return None
        cluster_queue = next(
            (
                str((q.get("spec") or {}).get("clusterQueue") or "")
                for q in local_queues
                if name_of(q) == queue_name
            ),
            "",
        )
        self.fair_share = (
            fair_share_sentence(cluster_queue, cluster_queues)
            if cluster_queues is not None and cluster_queue and waits_for_quota(workload)
            else None
        )
        self.fair_share_for = workload
        if self.caches is None or self.seen.workloads_unreadable is not None:
            return None
        rayclusters, workloads = (cache.objects() for cache in self.caches)
        return estimate_from_reads(
            self.session,
            namespace=self.namespace,
            workload=_name(workload),
            workloads=workloads,
            rayclusters=rayclusters,
            local_queues=local_queues,
            cluster_queues=cluster_queues,
        )

    def _report(self, a: Assessment) -> None:
        eta = self.eta.text() if self.eta is not None and a.in_queue else None
        key = (a.phase, a.position, a.explanation, eta)
        if key == self.last_key:
            return
        self.last_key = key
        tail = f" (estimated admission: {eta})" if eta else ""
        log.log(self.log_level, "%s/%s: %s%s", self.namespace, self.name, a.explanation, tail)
        if self.on_progress is not None:
            self.on_progress(self._status(a))

    def _fail(self, a: Assessment) -> None:
        if a.error_kind is ErrorKind.QUEUE_NOT_FOUND:
            # Kueue says the LocalQueue is missing: check it (raises QueueNotFoundError listing the
            # queues); if it exists, Kueue's cache is behind and will catch up.
            now = time.monotonic()
            if now >= self.next_queue_check and a.queue:
                check_queue(self.session, name=a.queue, namespace=self.namespace)
                self.next_queue_check = now + _QUEUE_RECHECK
            return
        error = a.error(self.name)
        if error is not None:
            raise error

    def _check_timeouts(self, a: Assessment) -> None:
        if self.queue_timeout is not None and a.in_queue and self.queued_seconds >= self.queue_timeout:
            raise AdmissionTimeout(
                self.name,
                self.queue_timeout,
                phase=str(a.phase),
                reason=_kueue_reason(a),
                position=a.position,
            )
        self._check_deadline(a)

    def _check_deadline(self, a: Assessment | None) -> None:
        if self.deadline is None or self.timeout is None or time.monotonic() < self.deadline:
            return
        if a is None:
            raise AdmissionTimeout(
                self.name, self.timeout, phase="unknown", reason="no answer from the API server"
            )
        raise AdmissionTimeout(
            self.name,
            self.timeout,
            phase=str(a.phase),
            reason=_kueue_reason(a),
            position=a.position,
            what="admission" if a.in_queue else "the cluster to become ready",
        )

    def _next_event(self, a: Assessment) -> None:
        """Block until the next watch event, a position refresh, a queue re-check or a deadline."""
        now = time.monotonic()
        wait = _left(self.deadline, 30.0)
        if self.queue_timeout is not None and a.in_queue:
            wait = min(wait, max(0.0, self.queue_timeout - self.queued_seconds))
        if a.in_queue and self.seen.workload is not None and self.position_unavailable is None:
            wait = min(wait, max(0.0, self.next_position_at - now))
        if a.error_kind is ErrorKind.QUEUE_NOT_FOUND:
            wait = min(wait, max(0.0, self.next_queue_check - now))
        if self._starting(a):
            wait = min(wait, max(0.0, self.next_head_at - now))
        if self.cancel is not None:
            wait = min(wait, _CANCEL_CHECK)
        before = self.seen.workload
        if self._pump(wait) and self.seen.workload is not before:
            self.next_position_at = 0.0  # the Workload changed: re-read the position now
            self.position_pause = 0.0

    def _status(self, a: Assessment) -> ClusterStatus:
        return status_from(
            self.seen.cluster,
            self.seen.workload,
            name=self.name,
            namespace=self.namespace,
            assessment=a,
            eta=self.eta,
        )

    def _pump(self, wait: float) -> bool:
        return _pump(self.events, self.seen, wait)


def _left(deadline: float | None, cap: float) -> float:
    if deadline is None:
        return cap
    return max(0.0, min(cap, deadline - time.monotonic()))


def _pump(events: queue.Queue[WatchEvent], seen: _Observed, wait: float) -> bool:
    """Apply the next event (waiting up to ``wait`` s) and everything already queued behind it.

    Returns True if anything was applied. Raises the typed error of a failed RayCluster watch;
    a failed Workload watch (Kueue absent, or Workloads not readable) is said once and tolerated.
    """
    try:
        first = events.get(timeout=wait) if wait > 0 else events.get_nowait()
    except queue.Empty:
        return False
    batch = [first]
    while True:
        try:
            batch.append(events.get_nowait())
        except queue.Empty:
            break
    for event in batch:
        if event.type == "ERROR":
            err = event.error
            if event.source == "workload" and isinstance(err, ForbiddenError | NotFoundError):
                seen.workloads_unreadable = str(err)
                log.info("cannot read Kueue Workloads (%s); following the RayCluster only", err)
                continue
            assert err is not None
            raise err
        seen.apply(event)
    return True
