"""Wait for a RayCluster to be ready, saying why it waits: the thin driver of the admission machine.

:func:`wait_for_cluster` watches the RayCluster and its Kueue Workload (two list-then-watch loops,
no fixed sleep), feeds each observation to :func:`rayqueue_sdk.admission.assess_cluster`, reports
progress when the phase, the explanation or the queue position changes (``logging`` and an
``on_progress`` callback), and ends with the final :class:`~rayqueue_sdk.status.ClusterStatus` or a
typed error. The queue position comes from Kueue's visibility API (polled while queued, since it has
no watch); if that API is absent or forbidden, that is said once and the wait goes on.

Example:
    >>> from rayqueue_sdk.waiting import wait_for_cluster
    >>> # status = wait_for_cluster("ws", "ds-team", timeout=600, queue_timeout=300,
    >>> #                           on_progress=lambda st: print(st))
    >>> # ds-team/ws: queued in LocalQueue 'team-q' at position 0: couldn't assign flavors ...
    >>> # ds-team/ws: admitted by ClusterQueue 'cq-dev'; starting, 0/2 workers ready
    >>> # ds-team/ws: ready (2/2 workers ready)
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.admission import JOB_UID_LABEL, Assessment, ErrorKind, Verdict, assess_cluster, eviction_key
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    ClusterNotFoundError,
    ForbiddenError,
    NotFoundError,
    RayQueueError,
)
from rayqueue_sdk.kube.client import ClientSource, get_client
from rayqueue_sdk.kube.resources import (
    RAYCLUSTERS,
    find_workload,
    get_raycluster,
    kueue_kind,
    list_rayclusters,
    list_workloads,
    pick_workload,
)
from rayqueue_sdk.kube.watch import Watcher, WatchEvent
from rayqueue_sdk.queues import check_queue, queue_position, queue_positions
from rayqueue_sdk.status import ClusterStatus, status_from

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = ["DEFAULT_TIMEOUT", "POSITION_REFRESH", "observe_cluster", "observe_clusters", "wait_for_cluster"]

log = logging.getLogger(__name__)

#: Default limit of a whole wait, in seconds (queue wait plus start-up). Never infinite by default.
DEFAULT_TIMEOUT = 900.0
#: How often the queue position is re-read while queued (the visibility API has no watch).
POSITION_REFRESH = 2.0
#: How often a "LocalQueue doesn't exist" verdict is re-checked against the API.
_QUEUE_RECHECK = 5.0


@dataclass
class _Observed:
    """What the driver has seen so far."""

    uid: str
    cluster: dict[str, Any] | None
    workloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    workloads_synced: bool = False
    workloads_unreadable: str | None = None

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
            self.cluster = mine[0] if mine else None
        elif event.object is not None:
            if _uid(event.object) != self.uid:
                # Same name, new object: the one we waited for was deleted and replaced.
                self.cluster = None
            elif event.type == "DELETED":
                self.cluster = None
            else:
                self.cluster = event.object

    def _apply_workload(self, event: WatchEvent) -> None:
        if event.type == "SYNC":
            self.workloads = {_name(o): o for o in event.objects}
            self.workloads_synced = True
        elif event.object is not None:
            if event.type == "DELETED":
                self.workloads.pop(_name(event.object), None)
            else:
                self.workloads[_name(event.object)] = event.object


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _kueue_reason(a: Assessment) -> str:
    if a.message and a.reason:
        return f"{a.message} ({a.reason})"
    return a.message or a.reason or a.explanation


def wait_for_cluster(
    name: str,
    namespace: str,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    queue_timeout: float | None = None,
    client: ApiClient | ClientSource | None = None,
    on_progress: Callable[[ClusterStatus], None] | None = None,
    position_refresh: float = POSITION_REFRESH,
) -> ClusterStatus:
    """Wait until RayCluster ``name`` is ready, explaining every change on the way.

    Args:
        name, namespace: the RayCluster.
        timeout: the most seconds for the whole wait (queue plus start-up); ``None`` waits without
            limit (only when asked: the default is :data:`DEFAULT_TIMEOUT`).
        queue_timeout: the most seconds spent queued (before Kueue admits the cluster); ``None``
            means only ``timeout`` applies.
        client: an ``ApiClient`` or an authentication object; default the current login.
        on_progress: called with a :class:`ClusterStatus` each time the phase, the explanation or
            the queue position changes (a console or notebook display hooks in here).
        position_refresh: seconds between reads of the queue position while queued.

    Returns:
        The final :class:`ClusterStatus` (phase ``READY``).

    Raises:
        AdmissionTimeout: the queue wait or the whole wait took too long; carries the last phase,
            Kueue's last reason and message, and the last known position.
        PreemptedError: Kueue evicted the workload (preempted, deactivated, PodsReady timeout, ...).
        ClusterDeletedError: the cluster was deleted while waiting.
        ClusterNotFoundError: the cluster did not exist to begin with (lists those that do).
        QueueNotFoundError: Kueue says the LocalQueue does not exist (lists those that do).
        AuthenticationError: the credentials expired during the wait.

    Example:
        >>> from rayqueue_sdk.waiting import wait_for_cluster
        >>> # wait_for_cluster("ws", "ds-team", timeout=600, queue_timeout=120)
    """
    api = get_client(client)
    started = time.monotonic()
    deadline = started + timeout if timeout is not None else None

    try:
        first = get_raycluster(api, namespace, name)
    except NotFoundError:
        try:
            available = [_name(o) for o in list_rayclusters(api, namespace)]
        except RayQueueError:
            available = []
        raise ClusterNotFoundError(name, available, namespace=namespace) from None

    seen = _Observed(uid=_uid(first), cluster=first)
    events: queue.Queue[WatchEvent] = queue.Queue()
    watchers = [
        Watcher(api, RAYCLUSTERS, namespace, name=name, label="raycluster"),
        Watcher(
            api,
            kueue_kind(api, "workloads"),
            namespace,
            label_selector=f"{JOB_UID_LABEL}={seen.uid}",
            label="workload",
        ),
    ]
    for watcher in watchers:
        watcher.run_into(events)

    position: int | None = None
    position_unavailable: str | None = None
    known_eviction: str | None = None
    first_look = True
    next_position_at = 0.0
    next_queue_check = 0.0
    queued_seconds = 0.0
    last_tick = started
    last_key: tuple[Any, ...] | None = None
    assessment: Assessment | None = None
    try:
        while True:
            # Wait for the Workload listing (or its failure) before the first verdict, so that a
            # Kueue-managed cluster is never judged without its Workload.
            if not seen.workloads_synced and seen.workloads_unreadable is None:
                _pump(events, seen, _left(deadline, 5.0), block=True)
                if not seen.workloads_synced and seen.workloads_unreadable is None:
                    _check_deadline(name, timeout, deadline, assessment, queued_seconds)
                    continue

            now = time.monotonic()
            if assessment is not None and assessment.in_queue:
                queued_seconds += now - last_tick
            last_tick = now

            workload = seen.workload
            if first_look:
                # An eviction that predates the wait (and that Kueue requeued) is history, not news.
                known_eviction, first_look = eviction_key(workload), False
            assessment = assess_cluster(
                seen.cluster,
                workload,
                position=position,
                position_unavailable=position_unavailable,
                known_eviction=known_eviction,
            )
            if assessment.in_queue and workload is not None and position_unavailable is None:
                if now >= next_position_at:
                    queue_name = assessment.queue or ((workload.get("spec") or {}).get("queueName"))
                    if queue_name:
                        position, position_unavailable = queue_position(
                            namespace, queue_name, _name(workload), api, deadline=deadline
                        )
                        if position_unavailable:
                            log.info(
                                "%s/%s: queue position unavailable: %s", namespace, name, position_unavailable
                            )
                    next_position_at = now + position_refresh
                    assessment = assess_cluster(
                        seen.cluster,
                        workload,
                        position=position,
                        position_unavailable=position_unavailable,
                        known_eviction=known_eviction,
                    )
            elif not assessment.in_queue:
                position = None

            if seen.workloads_unreadable and workload is None and assessment.in_queue:
                assessment = replace(
                    assessment,
                    explanation=f"{assessment.explanation} (Kueue's Workload cannot be read with these "
                    f"credentials, so Kueue's reason is unknown: {seen.workloads_unreadable})",
                )
            key = (assessment.phase, assessment.position, assessment.explanation)
            if key != last_key:
                last_key = key
                log.info("%s/%s: %s", namespace, name, assessment.explanation)
                if on_progress is not None:
                    on_progress(_status(seen, assessment, name, namespace))

            if assessment.verdict is Verdict.DONE:
                return _status(seen, assessment, name, namespace)
            if assessment.verdict is Verdict.FAIL:
                if assessment.error_kind is ErrorKind.QUEUE_NOT_FOUND:
                    if now >= next_queue_check and assessment.queue:
                        check_queue(namespace, assessment.queue, api)  # raises QueueNotFoundError
                        next_queue_check = now + _QUEUE_RECHECK  # it exists: Kueue will catch up
                else:
                    error = assessment.error(name)
                    if error is not None:
                        raise error

            if queue_timeout is not None and assessment.in_queue and queued_seconds >= queue_timeout:
                raise AdmissionTimeout(
                    name,
                    queue_timeout,
                    phase=str(assessment.phase),
                    reason=_kueue_reason(assessment),
                    position=assessment.position,
                )
            _check_deadline(name, timeout, deadline, assessment, queued_seconds)

            wait = _left(deadline, 30.0)
            if queue_timeout is not None and assessment.in_queue:
                wait = min(wait, max(0.0, queue_timeout - queued_seconds))
            if assessment.in_queue and workload is not None and position_unavailable is None:
                wait = min(wait, max(0.0, next_position_at - time.monotonic()))
            if assessment.error_kind is ErrorKind.QUEUE_NOT_FOUND:
                wait = min(wait, max(0.0, next_queue_check - time.monotonic()))
            if _pump(events, seen, wait, block=True) and seen.workload is not workload:
                next_position_at = 0.0  # the Workload changed: re-read the position now
    finally:
        for watcher in watchers:
            watcher.stop()


def _status(seen: _Observed, a: Assessment, name: str, namespace: str) -> ClusterStatus:
    return status_from(seen.cluster, seen.workload, name=name, namespace=namespace, assessment=a)


def _left(deadline: float | None, cap: float) -> float:
    if deadline is None:
        return cap
    return max(0.0, min(cap, deadline - time.monotonic()))


def _check_deadline(
    name: str, timeout: float | None, deadline: float | None, a: Assessment | None, queued_seconds: float
) -> None:
    if deadline is None or timeout is None or time.monotonic() < deadline:
        return
    if a is None:
        raise AdmissionTimeout(
            name, timeout, phase="unknown", reason="no answer from the API server", what="admission"
        )
    raise AdmissionTimeout(
        name,
        timeout,
        phase=str(a.phase),
        reason=_kueue_reason(a),
        position=a.position,
        what="admission" if a.in_queue else "the cluster to become ready",
    )


def _pump(events: queue.Queue[WatchEvent], seen: _Observed, wait: float, *, block: bool) -> bool:
    """Apply the next event (waiting up to ``wait`` s) and everything already queued behind it.

    Returns True if anything was applied. Raises the typed error of a failed RayCluster watch;
    a failed Workload watch (Kueue absent, or Workloads not readable) is said once and tolerated.
    """
    try:
        first = events.get(timeout=wait) if block and wait > 0 else events.get_nowait()
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


# --------------------------------------------------------------------------------------------------
# one-shot reads (Cluster.status(), list_clusters)


def _missing(api: ApiClient, name: str, namespace: str) -> ClusterNotFoundError:
    try:
        available = [_name(o) for o in list_rayclusters(api, namespace)]
    except RayQueueError:
        available = []
    return ClusterNotFoundError(name, available, namespace=namespace)


def observe_cluster(
    name: str,
    namespace: str,
    client: ApiClient | ClientSource | None = None,
    *,
    with_position: bool = True,
) -> ClusterStatus:
    """The current :class:`ClusterStatus` of one RayCluster (no waiting).

    Reads the RayCluster, its Workload (by ``kueue.x-k8s.io/job-uid``) and, while it is queued,
    its position (Kueue's visibility API; absent or forbidden → ``position_unavailable``).

    Raises:
        ClusterNotFoundError: no such RayCluster (lists those that exist).

    Example:
        >>> from rayqueue_sdk.waiting import observe_cluster
        >>> # print(observe_cluster("ws", "ds-team"))
        >>> # ds-team/ws: queued in LocalQueue 'team-q' at position 0: couldn't assign flavors ...
    """
    api = get_client(client)
    try:
        cluster = get_raycluster(api, namespace, name)
    except NotFoundError:
        raise _missing(api, name, namespace) from None
    try:
        wl = find_workload(api, namespace, _uid(cluster))
    except (ForbiddenError, NotFoundError) as err:
        log.debug("cannot read Kueue Workloads in %s: %s", namespace, err)
        wl = None
    position, why = None, None
    reading = assess_cluster(cluster, wl)
    queue_name = reading.queue or ((wl or {}).get("spec") or {}).get("queueName")
    if with_position and reading.pending and wl is not None and queue_name:
        position, why = queue_position(namespace, queue_name, _name(wl), api)
    return status_from(cluster, wl, position=position, position_unavailable=why)


def observe_clusters(
    namespace: str,
    client: ApiClient | ClientSource | None = None,
    *,
    label_selector: str | None = None,
    with_positions: bool = True,
) -> list[ClusterStatus]:
    """The :class:`ClusterStatus` of every RayCluster in ``namespace``, in a bounded number of calls.

    One LIST of RayClusters, one LIST of Workloads (joined on ``kueue.x-k8s.io/job-uid``) and, with
    ``with_positions``, one visibility-API read per LocalQueue that has queued clusters: the number
    of requests does not grow with the number of clusters.

    Example:
        >>> from rayqueue_sdk.waiting import observe_clusters
        >>> # [(s.name, s.phase.value, s.position) for s in observe_clusters("ds-team")]
        >>> # [('ws', 'ready', None), ('ws2', 'queued', 0)]
    """
    api = get_client(client)
    clusters = list_rayclusters(api, namespace, label_selector)
    by_uid: dict[str, list[dict[str, Any]]] = {}
    try:
        for item in list_workloads(api, namespace):
            uid = ((item.get("metadata") or {}).get("labels") or {}).get(JOB_UID_LABEL)
            if uid:
                by_uid.setdefault(uid, []).append(item)
    except (ForbiddenError, NotFoundError) as err:
        log.debug("cannot read Kueue Workloads in %s: %s", namespace, err)
    pairs = [(c, pick_workload(by_uid.get(_uid(c), []))) for c in clusters]
    positions: dict[tuple[str, str], tuple[int | None, str | None]] = {}
    if with_positions:
        pending_by_queue: dict[str, list[str]] = {}
        for cluster, wl in pairs:
            reading = assess_cluster(cluster, wl)
            queue_name = reading.queue or ((wl or {}).get("spec") or {}).get("queueName")
            if reading.pending and wl is not None and queue_name:
                pending_by_queue.setdefault(queue_name, []).append(_name(wl))
        for queue_name, names in pending_by_queue.items():
            for wl_name, answer in queue_positions(namespace, queue_name, names, api).items():
                positions[(queue_name, wl_name)] = answer
    out = []
    for cluster, wl in pairs:
        queue_name = ((cluster.get("metadata") or {}).get("labels") or {}).get(
            "kueue.x-k8s.io/queue-name"
        ) or ((wl or {}).get("spec") or {}).get("queueName")
        position, why = positions.get((str(queue_name), _name(wl) if wl else ""), (None, None))
        out.append(status_from(cluster, wl, position=position, position_unavailable=why))
    return out
