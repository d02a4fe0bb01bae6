"""The admission state machine: what Kueue and KubeRay say about a cluster or job, as a phase.

Pure: no I/O, no heavy imports. A thin driver (:mod:`rayqueue_sdk.waiting`) observes the RayCluster,
its Kueue Workload and the queue position, and feeds them here; this module decides the phase, an
explanation that quotes Kueue's own reason and message, and whether waiting should go on, succeed or
fail (and with which error).

Rules (``../shared/reference/k8s-semantics.md`` §1 and §3):

- wait on the Workload condition ``Admitted`` (quota reserved *and* admission checks ready), never on
  ``QuotaReserved`` alone;
- an ``Evicted=True`` Workload is preempted (reason ``Preempted``, detailed by the ``Preempted``
  condition: ``InClusterQueue``, ``InCohortReclamation``, ...), deactivated (``Deactivated``) or
  otherwise evicted (``PodsReadyTimeout``, ``ClusterQueueStopped``, ...). Kueue requeues a
  preempted workload at once (``Requeued=True``); that is still a preemption for a wait in
  progress, but a waiter that started after it (``known_eviction``) sees the cluster queued again;
- a RayCluster is ready when its conditions ``HeadPodReady`` and ``RayClusterProvisioned`` are True;
  the deprecated ``status.state`` is read only when KubeRay publishes no conditions.

Example:
    >>> cluster = {"metadata": {"name": "ws", "labels": {"kueue.x-k8s.io/queue-name": "team-q"}},
    ...            "spec": {"suspend": True}}
    >>> workload = {"status": {"conditions": [{"type": "QuotaReserved", "status": "False",
    ...     "reason": "Pending", "message": "couldn't assign flavors to pod set head: "
    ...     "insufficient unused quota for cpu in flavor default-flavor, 1 more needed"}]}}
    >>> a = assess_cluster(cluster, workload, position=0)
    >>> a.phase, a.verdict
    (<ClusterPhase.QUEUED: 'queued'>, <Verdict.WAIT: 'wait'>)
    >>> print(a.explanation)
    queued in LocalQueue 'team-q' at position 0: couldn't assign flavors to pod set head: \
insufficient unused quota for cpu in flavor default-flavor, 1 more needed (Pending)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.errors import (
    ClusterDeletedError,
    JobFailedError,
    PreemptedError,
    RayQueueError,
)

__all__ = [
    "QUEUE_LABEL",
    "PRIORITY_LABEL",
    "JOB_UID_LABEL",
    "Assessment",
    "ClusterPhase",
    "ErrorKind",
    "JobAssessment",
    "JobPhase",
    "Verdict",
    "assess_cluster",
    "assess_job",
    "cluster_ready",
    "condition",
    "eviction_key",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"

Obj = Mapping[str, Any]


class ClusterPhase(enum.StrEnum):
    """Where a RayCluster is in its Kueue-managed life.

    ``QUEUED`` (waiting for Kueue's admission), ``ADMITTED`` (admitted, KubeRay not yet starting
    pods), ``STARTING`` (pods being created), ``READY`` (head and all workers ready), ``PREEMPTED``
    (evicted to make room for another workload), ``DEACTIVATED`` (``Workload.spec.active=false``),
    ``EVICTED`` (evicted for another reason: PodsReady timeout, a stopped queue, ...), ``SUSPENDED``
    (suspended by someone other than Kueue), ``FAILED``, ``DELETED`` and ``UNKNOWN``.

    Example:
        >>> ClusterPhase("queued") is ClusterPhase.QUEUED
        True
        >>> str(ClusterPhase.READY)
        'ready'
    """

    QUEUED = "queued"
    ADMITTED = "admitted"
    STARTING = "starting"
    READY = "ready"
    PREEMPTED = "preempted"
    DEACTIVATED = "deactivated"
    EVICTED = "evicted"
    SUSPENDED = "suspended"
    FAILED = "failed"
    DELETED = "deleted"
    UNKNOWN = "unknown"


class JobPhase(enum.StrEnum):
    """Where a RayJob is: ``QUEUED``, ``STARTING``, ``RUNNING``, ``SUCCEEDED``, ``FAILED``, ``STOPPED``,
    ``PREEMPTED`` (evicted, Kueue will requeue it), ``REQUEUED`` (queued again after an eviction),
    ``DEACTIVATED``, ``DELETED`` or ``UNKNOWN``.

    Example:
        >>> JobPhase.SUCCEEDED.terminal, JobPhase.RUNNING.terminal
        (True, False)
    """

    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"
    PREEMPTED = "preempted"
    REQUEUED = "requeued"
    DEACTIVATED = "deactivated"
    DELETED = "deleted"
    UNKNOWN = "unknown"

    @property
    def terminal(self) -> bool:
        """True once the job can no longer change on its own."""
        return self in (JobPhase.SUCCEEDED, JobPhase.FAILED, JobPhase.STOPPED, JobPhase.DELETED)


class Verdict(enum.StrEnum):
    """What a waiter should do with an observation: keep waiting, stop with success, or fail."""

    WAIT = "wait"
    DONE = "done"
    FAIL = "fail"


class ErrorKind(enum.StrEnum):
    """Which error a ``FAIL`` verdict stands for (the driver may need I/O to build some of them)."""

    NONE = "none"
    DELETED = "deleted"  # ClusterDeletedError
    EVICTED = "evicted"  # PreemptedError (preemption, deactivation, other evictions)
    QUEUE_NOT_FOUND = "queue_not_found"  # QueueNotFoundError, after the driver re-checks the queue
    FAILED = "failed"  # ClusterFailed / JobFailedError


@dataclass(frozen=True)
class Assessment:
    """The machine's reading of one observation of a RayCluster.

    Attributes:
        phase: the :class:`ClusterPhase`.
        verdict: :class:`Verdict` for a waiter that wants the cluster ready.
        explanation: one human sentence, quoting Kueue's message as Kueue wrote it.
        reason: the Kueue or KubeRay condition reason behind the phase (e.g. ``"Pending"``,
            ``"InCohortReclamation"``, ``"Deactivated"``), or ``None``.
        message: the condition message as written by Kueue/KubeRay, or ``None``.
        position: the queue position (0-based) when queued and known.
        queue: the LocalQueue name from the cluster's label (or the Workload's ``spec.queueName``).
        cluster_queue: the ClusterQueue admitting or reserving quota, when known.
        managed: whether Kueue manages the cluster (a Workload or a queue label exists).
        error_kind: which error a ``FAIL`` verdict means.
        workers_ready / workers_desired: from the RayCluster status, when published.
        position_unavailable: why no position is known, as given by the caller.
        eviction: the identity of the Workload's current eviction (:func:`eviction_key`), if any.
        requeued: evicted, and Kueue has put the workload back in its queue.

    Example:
        >>> a = assess_cluster(None, None)
        >>> a.phase, a.verdict, a.error_kind
        (<ClusterPhase.DELETED: 'deleted'>, <Verdict.FAIL: 'fail'>, <ErrorKind.DELETED: 'deleted'>)
    """

    phase: ClusterPhase
    verdict: Verdict
    explanation: str
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    queue: str | None = None
    cluster_queue: str | None = None
    managed: bool = False
    error_kind: ErrorKind = ErrorKind.NONE
    workers_ready: int | None = None
    workers_desired: int | None = None
    position_unavailable: str | None = None
    eviction: str | None = None
    requeued: bool = False

    @property
    def in_queue(self) -> bool:
        """True while the wait is a *queue* wait (before admission), as opposed to start-up."""
        return self.phase is ClusterPhase.QUEUED

    @property
    def pending(self) -> bool:
        """True when the Workload sits in its LocalQueue (queued, or evicted and requeued), so a
        queue position means something."""
        return self.in_queue or self.requeued

    def error(self, name: str) -> RayQueueError | None:
        """The error a waiter should raise for a ``FAIL`` verdict, or ``None``.

        ``QUEUE_NOT_FOUND`` returns ``None``: the driver checks the queue (I/O) and raises
        :class:`~rayqueue_sdk.errors.QueueNotFoundError` listing the queues that exist.

        Example:
            >>> str(assess_cluster(None, None).error("ws"))
            'RayCluster ws was deleted while waiting'
        """
        if self.verdict is not Verdict.FAIL:
            return None
        if self.error_kind is ErrorKind.DELETED:
            return ClusterDeletedError(f"RayCluster {name} was deleted while waiting")
        if self.error_kind is ErrorKind.EVICTED:
            return PreemptedError(name, self.reason or str(self.phase), self.message or self.explanation)
        if self.error_kind is ErrorKind.FAILED:
            return RayQueueError(f"RayCluster {name} failed: {self.explanation}")
        return None


# --------------------------------------------------------------------------------------------------
# condition helpers


def condition(obj: Obj | None, type_: str) -> Mapping[str, Any] | None:
    """The condition of ``type_`` in ``obj.status.conditions``, or ``None``.

    Example:
        >>> condition({"status": {"conditions": [{"type": "Admitted", "status": "True"}]}}, "Admitted")
        {'type': 'Admitted', 'status': 'True'}
    """
    if not obj:
        return None
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def _is_true(cond: Mapping[str, Any] | None) -> bool:
    return bool(cond) and str(cond.get("status")) == "True"  # type: ignore[union-attr]


def _is_false(cond: Mapping[str, Any] | None) -> bool:
    return bool(cond) and str(cond.get("status")) == "False"  # type: ignore[union-attr]


def _text(cond: Mapping[str, Any] | None, key: str) -> str | None:
    if not cond:
        return None
    value = cond.get(key)
    return str(value) if value else None


def _labels(obj: Obj | None) -> Mapping[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def cluster_ready(cluster: Obj) -> tuple[bool, str | None, str | None]:
    """Whether a RayCluster is ready, from its conditions first and ``status.state`` second.

    Returns ``(ready, reason, message)`` where reason/message explain a not-ready cluster.

    Example:
        >>> rc = {"status": {"conditions": [
        ...     {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady"},
        ...     {"type": "RayClusterProvisioned", "status": "True",
        ...      "reason": "AllPodRunningAndReadyFirstTime"}], "state": "suspended"}}
        >>> cluster_ready(rc)[0]
        True
    """
    head = condition(cluster, "HeadPodReady")
    provisioned = condition(cluster, "RayClusterProvisioned")
    if head is not None or provisioned is not None:
        if _is_true(head) and (provisioned is None or _is_true(provisioned)):
            return True, None, None
        # Say what is missing, the head first.
        missing = head if not _is_true(head) else provisioned
        return False, _text(missing, "reason"), _text(missing, "message")
    state = str((cluster.get("status") or {}).get("state") or "").lower()
    if state == "ready":
        return True, None, None
    return False, None, None


def _suspended(cluster: Obj) -> bool:
    if _is_true(condition(cluster, "RayClusterSuspended")):
        return True
    if _is_true(condition(cluster, "RayClusterSuspending")):
        return True
    spec_suspend = bool((cluster.get("spec") or {}).get("suspend"))
    has_conditions = bool((cluster.get("status") or {}).get("conditions"))
    if not has_conditions and str((cluster.get("status") or {}).get("state") or "").lower() == "suspended":
        return True
    return spec_suspend


def _workers(cluster: Obj | None) -> tuple[int | None, int | None]:
    status = (cluster or {}).get("status") or {}
    ready = _int(status.get("readyWorkerReplicas"))
    if ready is None:
        ready = _int(status.get("availableWorkerReplicas"))
    desired = _int(status.get("desiredWorkerReplicas"))
    if desired is None and cluster:
        groups = (cluster.get("spec") or {}).get("workerGroupSpecs") or []
        total = 0
        for group in groups:
            replicas = _int(group.get("replicas"))
            hosts = _int(group.get("numOfHosts")) or 1
            total += (1 if replicas is None else replicas) * hosts
        desired = total if groups else None
    return ready, desired


# --------------------------------------------------------------------------------------------------
# the Workload (shared by clusters and jobs)


@dataclass(frozen=True)
class _WorkloadReading:
    """What the Workload's conditions say, independent of the owner's kind."""

    state: str  # "none" | "pending" | "reserved" | "admitted" | "evicted" | "requeued" | "finished"
    kind: str = ""  # for evicted/requeued: "preempted" | "deactivated" | "evicted"
    reason: str | None = None
    message: str | None = None
    cluster_queue: str | None = None
    queue: str | None = None
    queue_missing: bool = False
    eviction: str | None = None  # identity of the current eviction (see eviction_key)
    pending: tuple[str | None, str | None] = (None, None)  # why a requeued workload still waits


def eviction_key(workload: Obj | None) -> str | None:
    """An identity for the Workload's current eviction (``Evicted=True``), or ``None``.

    Two observations of the same eviction give the same key; a new eviction gives a new one. A
    waiter passes the key it saw when it started as ``known_eviction`` to :func:`assess_cluster`,
    so that waiting on a cluster that was preempted *before* the wait (and is queued again) goes
    on, while a preemption *during* the wait fails it.

    Example:
        >>> wl = {"status": {"conditions": [{"type": "Evicted", "status": "True", "reason": "Preempted",
        ...       "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
        >>> eviction_key(wl)
        'Preempted|2026-01-01T00:00:00Z|m'
    """
    evicted = condition(workload, "Evicted")
    if evicted is None or not _is_true(evicted):
        return None
    parts = (evicted.get("reason"), evicted.get("lastTransitionTime"), evicted.get("message"))
    return "|".join(str(p or "") for p in parts)


def _eviction_kind(evicted: Mapping[str, Any], workload: Obj) -> tuple[str, str | None, str | None]:
    reason = _text(evicted, "reason")
    message = _text(evicted, "message")
    if reason == "Preempted":
        preempted = condition(workload, "Preempted")
        if _is_true(preempted):
            # InClusterQueue / InCohortReclamation / InCohortFairSharing / InCohortReclaimWhileBorrowing
            return "preempted", _text(preempted, "reason") or reason, _text(preempted, "message") or message
        return "preempted", reason, message
    if reason == "Deactivated" or (reason or "").startswith("Deactivated"):
        return "deactivated", reason, message
    return "evicted", reason, message


def _read_workload(workload: Obj | None) -> _WorkloadReading:
    if workload is None:
        return _WorkloadReading("none")
    spec = workload.get("spec") or {}
    status = workload.get("status") or {}
    admission = status.get("admission") or {}
    queue = spec.get("queueName")
    cq = admission.get("clusterQueue")

    finished = condition(workload, "Finished")
    if _is_true(finished):
        return _WorkloadReading(
            "finished", reason=_text(finished, "reason"), message=_text(finished, "message"), queue=queue
        )

    evicted = condition(workload, "Evicted")
    requeued = condition(workload, "Requeued")
    if evicted is not None and _is_true(evicted):
        kind, reason, message = _eviction_kind(evicted, workload)
        key = eviction_key(workload)
        if _is_true(requeued) and kind != "deactivated" and spec.get("active", True) is not False:
            reserved = condition(workload, "QuotaReserved")
            pending = (
                (_text(reserved, "reason"), _text(reserved, "message"))
                if _is_false(reserved)
                else (None, None)
            )
            return _WorkloadReading(
                "requeued",
                kind,
                reason,
                message,
                cluster_queue=cq,
                queue=queue,
                eviction=key,
                pending=pending,
            )
        return _WorkloadReading("evicted", kind, reason, message, cluster_queue=cq, queue=queue, eviction=key)

    target = condition(workload, "DeactivationTarget")
    if _is_true(target):
        # Transient: Kueue is about to set spec.active=false (MaximumExecutionTimeExceeded, ...).
        return _WorkloadReading(
            "evicted",
            "deactivated",
            _text(target, "reason"),
            _text(target, "message"),
            cluster_queue=cq,
            queue=queue,
        )

    if spec.get("active", True) is False:
        return _WorkloadReading(
            "evicted",
            "deactivated",
            "Deactivated",
            "The workload is deactivated (Workload.spec.active is false)",
            cluster_queue=cq,
            queue=queue,
        )

    admitted = condition(workload, "Admitted")
    reserved = condition(workload, "QuotaReserved")
    if _is_true(admitted):
        return _WorkloadReading(
            "admitted",
            reason=_text(admitted, "reason"),
            message=_text(admitted, "message"),
            cluster_queue=cq,
            queue=queue,
        )
    if _is_true(reserved):
        # Quota is reserved but admission checks are not all Ready: still not admitted.
        why = admitted if _is_false(admitted) else reserved
        return _WorkloadReading(
            "reserved",
            reason=_text(why, "reason"),
            message=_text(why, "message"),
            cluster_queue=cq,
            queue=queue,
        )
    reason = _text(reserved, "reason")
    message = _text(reserved, "message")
    if reserved is None and _is_false(requeued):
        # Evicted earlier and not yet requeued (e.g. waiting for a backoff).
        reason, message = _text(requeued, "reason"), _text(requeued, "message")
    queue_missing = bool(
        reason == "Inadmissible" and message and "LocalQueue" in message and "doesn't exist" in message
    )
    return _WorkloadReading(
        "pending", reason=reason, message=message, cluster_queue=cq, queue=queue, queue_missing=queue_missing
    )


def _kueue_words(reason: str | None, message: str | None) -> str:
    """Kueue's own message, with its reason in parentheses."""
    if message and reason:
        return f"{message} ({reason})"
    return message or reason or ""


def _queued_sentence(queue: str | None, position: int | None, tail: str) -> str:
    where = f"queued in LocalQueue {queue!r}" if queue else "queued"
    if position is not None:
        where += f" at position {position}"
    text = f"{where}: {tail}" if tail else where
    return text


# --------------------------------------------------------------------------------------------------
# clusters


def assess_cluster(
    cluster: Obj | None,
    workload: Obj | None,
    *,
    position: int | None = None,
    position_unavailable: str | None = None,
    known_eviction: str | None = None,
) -> Assessment:
    """Read one observation of a RayCluster and its Kueue Workload.

    Args:
        cluster: the RayCluster as a dict, or ``None`` if it no longer exists.
        workload: its Workload (found by label ``kueue.x-k8s.io/job-uid=<uid>``), or ``None``.
        position: the Workload's 0-based position in its LocalQueue, when known.
        position_unavailable: why the position is not known (visibility API absent or forbidden),
            or ``None``. Never a failure: the wait goes on without a position.
        known_eviction: an eviction the caller already knew of when it started waiting
            (:func:`eviction_key`). If Kueue has requeued the workload after *that* eviction, the
            cluster is queued again and the wait goes on; any other eviction fails the wait.

    Example:
        >>> wl = {"status": {"conditions": [
        ...     {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
        ...     {"type": "Admitted", "status": "True", "reason": "Admitted",
        ...      "message": "The workload is admitted"}]}}
        >>> assess_cluster({"metadata": {"name": "ws"}, "spec": {}}, wl).phase
        <ClusterPhase.STARTING: 'starting'>
    """
    if cluster is None:
        return Assessment(
            ClusterPhase.DELETED, Verdict.FAIL, "the RayCluster does not exist", error_kind=ErrorKind.DELETED
        )
    wl = _read_workload(workload)
    queue = _labels(cluster).get(QUEUE_LABEL) or wl.queue
    ready_w, desired_w = _workers(cluster)

    def out(
        phase: ClusterPhase,
        verdict: Verdict,
        text: str,
        why: tuple[str | None, str | None] = (None, None),
        pos: int | None = None,
        kind: ErrorKind = ErrorKind.NONE,
    ) -> Assessment:
        return Assessment(
            phase,
            verdict,
            text,
            reason=why[0],
            message=why[1],
            position=pos,
            queue=queue,
            cluster_queue=wl.cluster_queue,
            managed=workload is not None or bool(queue),
            error_kind=kind,
            workers_ready=ready_w,
            workers_desired=desired_w,
            position_unavailable=position_unavailable,
            eviction=wl.eviction,
            requeued=wl.state == "requeued",
        )

    # The RayCluster going away, or KubeRay's deprecated "failed" state (only without conditions).
    if (cluster.get("metadata") or {}).get("deletionTimestamp"):
        return out(
            ClusterPhase.DELETED, Verdict.FAIL, "the RayCluster is being deleted", kind=ErrorKind.DELETED
        )
    rc_status = cluster.get("status") or {}
    if str(rc_status.get("state") or "").lower() == "failed" and not rc_status.get("conditions"):
        text = f"KubeRay reports the cluster failed: {rc_status.get('reason') or 'no reason'}"
        return out(
            ClusterPhase.FAILED, Verdict.FAIL, text, (rc_status.get("reason"), None), kind=ErrorKind.FAILED
        )

    # Kueue's verdict on the Workload.
    kueue_why = (wl.reason, wl.message)
    words = _kueue_words(*kueue_why)
    if wl.state == "finished":
        return out(
            ClusterPhase.FAILED,
            Verdict.FAIL,
            f"Kueue finished the workload: {words}",
            kueue_why,
            kind=ErrorKind.FAILED,
        )
    if wl.state == "requeued" and known_eviction is not None and wl.eviction == known_eviction:
        # Evicted before the wait began and queued again since: wait for the next admission.
        now = _kueue_words(*wl.pending)
        tail = f"requeued after being {wl.kind} ({words})" + (f"; {now}" if now else "")
        why = wl.pending if wl.pending[1] else kueue_why
        return out(ClusterPhase.QUEUED, Verdict.WAIT, _queued_sentence(queue, position, tail), why, position)
    if wl.state in ("evicted", "requeued"):
        phase, lead = {
            "preempted": (ClusterPhase.PREEMPTED, "preempted by Kueue"),
            "deactivated": (ClusterPhase.DEACTIVATED, "deactivated (resume it to requeue)"),
        }.get(wl.kind, (ClusterPhase.EVICTED, "evicted by Kueue"))
        text = f"{lead}: {words}" if words else lead
        if wl.state == "requeued":
            text += " (Kueue has requeued it)"
            return out(phase, Verdict.FAIL, text, kueue_why, position, kind=ErrorKind.EVICTED)
        return out(phase, Verdict.FAIL, text, kueue_why, kind=ErrorKind.EVICTED)
    if wl.state == "reserved":
        tail = "quota reserved" + (f" in ClusterQueue {wl.cluster_queue!r}" if wl.cluster_queue else "")
        tail += f", waiting for admission checks: {words}" if words else ", waiting for admission checks"
        return out(ClusterPhase.QUEUED, Verdict.WAIT, _queued_sentence(queue, None, tail), kueue_why)
    if wl.state == "pending":
        tail = words or "waiting for Kueue to consider the workload"
        if wl.queue_missing:
            return out(
                ClusterPhase.QUEUED,
                Verdict.FAIL,
                _queued_sentence(queue, None, tail),
                kueue_why,
                kind=ErrorKind.QUEUE_NOT_FOUND,
            )
        return out(
            ClusterPhase.QUEUED, Verdict.WAIT, _queued_sentence(queue, position, tail), kueue_why, position
        )
    suspended = _suspended(cluster)
    if wl.state == "none" and queue and suspended:
        text = _queued_sentence(queue, position, "waiting for Kueue to create the Workload")
        return out(ClusterPhase.QUEUED, Verdict.WAIT, text, pos=position)

    # Admitted (or not managed by Kueue): KubeRay's progress, conditions before status.state.
    admitted = wl.state == "admitted"
    ready, why_reason, why_message = cluster_ready(cluster)
    if ready and not suspended:
        counts = (
            f" ({ready_w}/{desired_w} workers ready)" if desired_w is not None and ready_w is not None else ""
        )
        return out(ClusterPhase.READY, Verdict.DONE, f"ready{counts}")
    if suspended and admitted:
        text = _admitted_sentence(wl) + "; waiting for Kueue to unsuspend the RayCluster"
        return out(ClusterPhase.ADMITTED, Verdict.WAIT, text, kueue_why)
    if suspended:
        return out(
            ClusterPhase.SUSPENDED, Verdict.WAIT, "suspended (spec.suspend is true) and not managed by Kueue"
        )
    parts = [_admitted_sentence(wl)] if admitted else []
    starting = "starting" + (
        f", {ready_w}/{desired_w} workers ready" if None not in (ready_w, desired_w) else ""
    )
    failure = condition(cluster, "ReplicaFailure")
    if failure is not None and _is_true(failure):
        why_reason, why_message = _text(failure, "reason"), _text(failure, "message")
        parts.append(f"KubeRay cannot create pods: {_kueue_words(why_reason, why_message)}")
    elif why_reason:
        starting += f" ({_kueue_words(why_reason, why_message)})"
    parts.append(starting)
    # Unsuspended and not ready: starting (Kueue only unsuspends what it admitted).
    return out(
        ClusterPhase.STARTING,
        Verdict.WAIT,
        "; ".join(parts),
        (why_reason or wl.reason, why_message or wl.message),
    )


def _admitted_sentence(wl: _WorkloadReading) -> str:
    return f"admitted by ClusterQueue {wl.cluster_queue!r}" if wl.cluster_queue else "admitted"


# --------------------------------------------------------------------------------------------------
# jobs


@dataclass(frozen=True)
class JobAssessment:
    """The machine's reading of one observation of a RayJob.

    Attributes:
        phase: the :class:`JobPhase`.
        verdict: ``DONE`` when the job succeeded, ``FAIL`` when it ended otherwise or was
            deactivated or deleted, ``WAIT`` while it may still progress.
        explanation: a human sentence quoting Kueue's or KubeRay's message.
        reason / message: the reason and message behind the phase.
        position: the queue position, when queued and known.
        cluster_name: ``status.rayClusterName`` (the real name of a job-owned cluster).
        job_id: ``status.jobId`` (the Ray submission id).

    Example:
        >>> assess_job({"status": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}}, None).phase
        <JobPhase.SUCCEEDED: 'succeeded'>
    """

    phase: JobPhase
    verdict: Verdict
    explanation: str
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    cluster_name: str | None = None
    job_id: str | None = None
    error_kind: ErrorKind = ErrorKind.NONE

    def error(self, name: str, log_tail: str = "") -> RayQueueError | None:
        """The error for a ``FAIL`` verdict (``JobFailedError``, ``PreemptedError`` or
        ``ClusterDeletedError``), or ``None``.

        Example:
            >>> a = assess_job({"status": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED",
            ...                 "reason": "AppFailed", "jobId": "j-1"}}, None)
            >>> type(a.error("train")).__name__
            'JobFailedError'
        """
        if self.verdict is not Verdict.FAIL:
            return None
        if self.error_kind is ErrorKind.DELETED:
            return ClusterDeletedError(f"RayJob {name} was deleted while waiting")
        if self.error_kind is ErrorKind.EVICTED:
            return PreemptedError(name, self.reason or str(self.phase), self.message or self.explanation)
        status = "STOPPED" if self.phase is JobPhase.STOPPED else "FAILED"
        return JobFailedError(self.job_id or name, status, self.reason, log_tail)


_DEPLOYMENT_STARTING = {
    "": "",
    "Initializing": "initializing",
    "Retrying": "retrying after a failure",
    "Waiting": "waiting for a submission (InteractiveMode)",
}


def assess_job(
    rayjob: Obj | None,
    workload: Obj | None,
    *,
    position: int | None = None,
    position_unavailable: str | None = None,
) -> JobAssessment:
    """Read one observation of a RayJob (``jobDeploymentStatus``/``jobStatus``) and its Workload.

    Eviction of a running job is ``PREEMPTED`` and the wait goes on (Kueue requeues it); once
    Kueue has requeued it, ``REQUEUED``. Deactivation (``spec.active=false``) fails the wait.

    Example:
        >>> job = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "batch"}},
        ...        "spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Suspended"}}
        >>> wl = {"status": {"conditions": [{"type": "QuotaReserved", "status": "False",
        ...       "reason": "Inadmissible", "message": "ClusterQueue prod is inactive"}]}}
        >>> a = assess_job(job, wl, position=3)
        >>> a.phase, a.position
        (<JobPhase.QUEUED: 'queued'>, 3)
    """
    if rayjob is None:
        return JobAssessment(
            JobPhase.DELETED, Verdict.FAIL, "the RayJob does not exist", error_kind=ErrorKind.DELETED
        )
    status = rayjob.get("status") or {}
    spec = rayjob.get("spec") or {}
    deployment = str(status.get("jobDeploymentStatus") or "")
    job_status = str(status.get("jobStatus") or "").upper()
    ray_why = (status.get("reason") or None, status.get("message") or None)
    queue = _labels(rayjob).get(QUEUE_LABEL) or ((workload or {}).get("spec") or {}).get("queueName")

    def out(
        phase: JobPhase,
        verdict: Verdict,
        text: str,
        why: tuple[str | None, str | None] = ray_why,
        pos: int | None = None,
        kind: ErrorKind = ErrorKind.NONE,
    ) -> JobAssessment:
        return JobAssessment(
            phase,
            verdict,
            text,
            why[0],
            why[1],
            pos,
            cluster_name=status.get("rayClusterName") or None,
            job_id=status.get("jobId") or None,
            error_kind=kind,
        )

    # KubeRay's terminal answers first.
    if job_status == "SUCCEEDED":
        return out(JobPhase.SUCCEEDED, Verdict.DONE, "the job succeeded")
    if job_status == "STOPPED":
        return out(
            JobPhase.STOPPED, Verdict.FAIL, _job_words("the job was stopped", *ray_why), kind=ErrorKind.FAILED
        )
    if job_status == "FAILED" or deployment in ("Failed", "ValidationFailed"):
        why = (ray_why[0] or deployment, ray_why[1])
        return out(
            JobPhase.FAILED, Verdict.FAIL, _job_words("the job failed", *why), why, kind=ErrorKind.FAILED
        )
    if deployment == "Complete":  # Complete without a SUCCEEDED job status: KubeRay gave up on it.
        text = _job_words("the job completed without succeeding", *ray_why)
        return out(JobPhase.FAILED, Verdict.FAIL, text, kind=ErrorKind.FAILED)

    # Then Kueue's.
    wl = _read_workload(workload)
    kueue_why = (wl.reason, wl.message)
    words = _kueue_words(*kueue_why)
    if wl.state == "finished":
        return out(
            JobPhase.FAILED,
            Verdict.FAIL,
            f"Kueue finished the workload: {words}",
            kueue_why,
            kind=ErrorKind.FAILED,
        )
    if wl.state == "evicted" and wl.kind == "deactivated":
        return out(
            JobPhase.DEACTIVATED, Verdict.FAIL, f"deactivated: {words}", kueue_why, kind=ErrorKind.EVICTED
        )
    if wl.state == "evicted":
        lead = "preempted by Kueue" if wl.kind == "preempted" else "evicted by Kueue"
        return out(JobPhase.PREEMPTED, Verdict.WAIT, f"{lead}, Kueue will requeue it: {words}", kueue_why)
    if wl.state == "requeued":
        text = _queued_sentence(queue, position, f"requeued after {wl.kind}: {words}")
        return out(JobPhase.REQUEUED, Verdict.WAIT, text, kueue_why, position)
    if wl.state in ("pending", "reserved"):
        pos = position if wl.state == "pending" else None
        text = _queued_sentence(queue, pos, words or "waiting for Kueue to consider the workload")
        return out(JobPhase.QUEUED, Verdict.WAIT, text, kueue_why, pos)
    suspended = deployment in ("Suspended", "Suspending")
    if wl.state == "none" and queue and (spec.get("suspend") or suspended):
        text = _queued_sentence(queue, position, "waiting for Kueue to create the Workload")
        return out(JobPhase.QUEUED, Verdict.WAIT, text, (None, None), position)

    # Admitted (or not managed): KubeRay's progress.
    if suspended:
        return out(
            JobPhase.STARTING if wl.state == "admitted" else JobPhase.QUEUED, Verdict.WAIT, deployment.lower()
        )
    if deployment == "Running" and job_status == "RUNNING":
        return out(JobPhase.RUNNING, Verdict.WAIT, "running")
    if deployment == "Running":
        text = f"the Ray job is {job_status.lower()}" if job_status else "submitting the Ray job"
        return out(JobPhase.STARTING, Verdict.WAIT, text)
    if deployment in _DEPLOYMENT_STARTING:
        lead = "admitted; " if wl.state == "admitted" else ""
        return out(
            JobPhase.STARTING,
            Verdict.WAIT,
            lead + (_DEPLOYMENT_STARTING[deployment] or "waiting for KubeRay"),
        )
    return out(JobPhase.UNKNOWN, Verdict.WAIT, f"unknown jobDeploymentStatus {deployment!r}")


def _job_words(lead: str, reason: str | None, message: str | None) -> str:
    words = _kueue_words(reason, message)
    return f"{lead}: {words}" if words else lead
