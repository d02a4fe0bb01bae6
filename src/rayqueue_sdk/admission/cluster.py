"""The admission state machine: what Kueue and KubeRay say about a cluster or job, as a phase.

Pure: no I/O, no heavy imports. A thin driver (:mod:`rayqueue_sdk.cluster.wait`) observes the RayCluster,
its Kueue Workload and the queue position, and feeds them here; this module decides the phase, an
explanation that quotes Kueue's own reason and message, and whether waiting should go on, succeed or
fail (and with which error).

Rules (``../shared/reference/k8s-semantics.md`` §1 and §3):

- wait on the Workload condition ``Admitted`` (quota reserved *and* admission checks ready), never on
  ``QuotaReserved`` alone;
- an ``Evicted=True`` Workload is preempted (reason ``Preempted``, detailed by the ``Preempted``
  condition: ``InClusterQueue``, ``InCohortReclamation``, ...), deactivated (``Deactivated``) or
  otherwise evicted (``PodsReadyTimeout``, ``ClusterQueueStopped``, ...). ``Workload.spec.active``
  decides deactivation: ``false`` is ``DEACTIVATED``; ``true`` never is, so after a resume the
  ``Deactivated`` eviction Kueue keeps until it admits the workload again reads ``QUEUED``
  ("reactivated, waiting for quota", with Kueue's pending message). Kueue requeues a
  preempted workload at once (``Requeued=True``); that is still a preemption for a wait in
  progress, but a waiter that started after it (``known_eviction``) sees the cluster queued again;
- a RayCluster is ready when its conditions ``HeadPodReady`` and ``RayClusterProvisioned`` are True;
  the deprecated ``status.state`` is read only when KubeRay publishes no conditions.

The machine is split by what it reads, all re-exported here: :mod:`rayqueue_sdk.admission.phases` (phases,
verdicts, labels), :mod:`rayqueue_sdk.admission.conditions` (conditions, RayCluster readiness),
:mod:`rayqueue_sdk.admission.workload` (the Workload) and :mod:`rayqueue_sdk.admission.job` (RayJobs);
this module holds the RayCluster machine.

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

import time
from collections.abc import Mapping
from dataclasses import dataclass

from rayqueue_sdk.admission.checks import backoff_sentence, waiting_checks
from rayqueue_sdk.admission.conditions import (
    UNKNOWN_REASON,
    cluster_ready,
    head_failure,
    read_raycluster,
)
from rayqueue_sdk.admission.headrestart import head_restart
from rayqueue_sdk.admission.job import JobAssessment, assess_job
from rayqueue_sdk.admission.phases import (
    JOB_UID_LABEL,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    ClusterPhase,
    ErrorKind,
    JobPhase,
    Obj,
    Verdict,
)
from rayqueue_sdk.admission.verdict import KueueAssessment, KueueKind, KueueVerdict, kueue_verdict
from rayqueue_sdk.admission.workload import (
    WorkloadReading,
    eviction_key,
    kueue_words,
    queued_sentence,
)
from rayqueue_sdk.errors import ClusterDeletedError, ClusterFailedError, RayQueueError
from rayqueue_sdk.manifests.meta import labels_of

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
    "eviction_key",
    "head_failure",
]


@dataclass(frozen=True)
class Assessment(KueueAssessment[ClusterPhase]):
    """The machine's reading of one observation of a RayCluster: the fields every assessment has
    (:class:`~rayqueue_sdk.admission.verdict.KueueAssessment`) and what a cluster adds.

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

    queue: str | None = None
    cluster_queue: str | None = None
    managed: bool = False
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
            'RayCluster ws was deleted while waiting (see docs/troubleshooting.md#clusterdeletederror)'
        """
        if self.verdict is not Verdict.FAIL:
            return None
        if self.error_kind is ErrorKind.DELETED:
            return ClusterDeletedError(f"RayCluster {name} was deleted while waiting")
        if self.error_kind is ErrorKind.FAILED:
            return ClusterFailedError(name, self.reason or "Failed", self.message or self.explanation)
        return self.kueue_failure(name)


# --------------------------------------------------------------------------------------------------
# clusters


def assess_cluster(
    cluster: Obj | None,
    workload: Obj | None,
    *,
    position: int | None = None,
    position_unavailable: str | None = None,
    known_eviction: str | None = None,
    check_limits: Mapping[str, int] | None = None,
    fair_share: str | None = None,
    head_pod: Obj | None = None,
    now: float | None = None,
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
        check_limits: each ProvisioningRequest admission check's ``backoffLimitCount``, when the caller
            could read the checks' ProvisioningRequestConfigs ("attempt 2 of 3"; :mod:`.checks`).
        fair_share: why fair sharing puts other ClusterQueues' workloads first, when the caller could
            read the shares ("behind team-b-cq's workloads: fair share 0.42 vs 0.10";
            :func:`rayqueue_sdk.admission.fairshare.fair_share_sentence`); added to a pending
            workload's words.
        head_pod: the cluster's head Pod, when the caller read it. A head that cannot start
            (:func:`head_failure`: KubeRay could not create it, or its container waits in
            ``CrashLoopBackOff``, ``ImagePullBackOff``, ``InvalidImageName``, ...) is ``FAILED`` at once:
            nothing will start it without a change to the cluster.
        now: the time (epoch seconds) for "next attempt in N s"; the clock when ``None``.

    Admission checks (:mod:`rayqueue_sdk.admission.checks`): a Workload with reserved quota waits for
    its checks ("quota reserved ...; waiting for admission check sample-prov: ProvisioningRequest ...
    Provisioned=False (attempt 2 of 3)"); a retry eviction (reason ``AdmissionCheck``) is part of the
    wait; a rejected check fails it with :class:`~rayqueue_sdk.errors.AdmissionCheckRejected`.

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
    labelled = labels_of(cluster).get(QUEUE_LABEL)
    rc = read_raycluster(cluster, head_pod)
    suspended = rc.suspended
    v = kueue_verdict(workload, queue=labelled, suspended=suspended)
    wl = v.reading
    queue = labelled or wl.queue
    ready_w, desired_w = rc.workers

    # What every answer about this observation carries; each branch says its phase, verdict and words.
    seen = Assessment(
        ClusterPhase.UNKNOWN,
        Verdict.WAIT,
        "",
        queue=queue,
        cluster_queue=wl.cluster_queue,
        managed=workload is not None or bool(queue),
        workers_ready=ready_w,
        workers_desired=desired_w,
        position_unavailable=position_unavailable,
        eviction=wl.eviction,
        requeued=wl.state == "requeued",
    )
    out = seen.said

    # The RayCluster going away, or KubeRay's deprecated "failed" state (only without conditions).
    if rc.deleting:
        return out(
            ClusterPhase.DELETED, Verdict.FAIL, "the RayCluster is being deleted", kind=ErrorKind.DELETED
        )
    if rc.legacy_failed:
        text = f"KubeRay reports the cluster failed: {rc.legacy_reason or 'no reason'}"
        return out(ClusterPhase.FAILED, Verdict.FAIL, text, (rc.legacy_reason, None), kind=ErrorKind.FAILED)

    # Kueue's verdict on the Workload (the table shared with jobs), as a cluster's phase.
    if v.kind is KueueKind.PENDING and wl.queue_missing:
        text = queued_sentence(queue, None, v.pending_words + (f"; {fair_share}" if fair_share else ""))
        return out(ClusterPhase.QUEUED, Verdict.FAIL, text, v.why, kind=ErrorKind.QUEUE_NOT_FOUND)
    o = v.outcome(queue, position, fair_share)  # the branches that mean the same for clusters and jobs
    if o is not None:
        return seen.taking(o)
    clock = time.time() if now is None else now
    match v.kind:
        case KueueKind.RETRYING:
            # A ProvisioningRequest retry: Kueue requeues the workload after its backoff.
            text = backoff_sentence(workload, now=clock) or f"evicted: {v.words}"
            return out(
                ClusterPhase.QUEUED, Verdict.WAIT, queued_sentence(queue, position, text), v.why, position
            )
        case KueueKind.EVICTED if v.requeued and known_eviction is not None and wl.eviction == known_eviction:
            # Evicted before the wait began and queued again since: wait for the next admission.
            pending_words = kueue_words(*wl.pending)
            tail = f"requeued after being {v.cause} ({v.words})" + (
                f"; {pending_words}" if pending_words else ""
            )
            why = wl.pending if wl.pending[1] else v.why
            return out(
                ClusterPhase.QUEUED, Verdict.WAIT, queued_sentence(queue, position, tail), why, position
            )
        case KueueKind.EVICTED:
            phase, text = _evicted_words(v, workload, clock)
            pos = position if v.requeued else None
            return out(phase, Verdict.FAIL, text, v.why, pos, kind=ErrorKind.EVICTED)
        case KueueKind.RESERVED:
            tail = "quota reserved" + (f" in ClusterQueue {wl.cluster_queue!r}" if wl.cluster_queue else "")
            checks = waiting_checks(workload, limits=check_limits)
            if checks:
                tail += f"; {checks}"
            else:
                tail += (
                    f", waiting for admission checks: {v.words}"
                    if v.words
                    else ", waiting for admission checks"
                )
            return out(ClusterPhase.QUEUED, Verdict.WAIT, queued_sentence(queue, None, tail), v.why)

    # Admitted (or not managed by Kueue): KubeRay's progress, conditions before status.state.
    admitted = v.kind is KueueKind.ADMITTED
    ready, why_reason, why_message = rc.ready
    if ready and not suspended:
        counts = (
            f" ({ready_w}/{desired_w} workers ready)" if desired_w is not None and ready_w is not None else ""
        )
        unscaled = rc.unscaled  # said, not silently left at the spec's replicas
        return out(ClusterPhase.READY, Verdict.DONE, f"ready{counts}" + (f"; {unscaled}" if unscaled else ""))
    if suspended and admitted:
        text = _admitted_sentence(wl) + "; waiting for Kueue to unsuspend the RayCluster"
        return out(ClusterPhase.ADMITTED, Verdict.WAIT, text, v.why)
    if suspended:
        return out(
            ClusterPhase.SUSPENDED, Verdict.WAIT, "suspended (spec.suspend is true) and not managed by Kueue"
        )
    broken = rc.head_failure
    if broken is not None:
        text = f"the head cannot start: {kueue_words(*broken)}"
        return out(ClusterPhase.FAILED, Verdict.FAIL, text, broken, kind=ErrorKind.FAILED)
    parts = [_admitted_sentence(wl)] if admitted else []
    restarting = head_restart(head_pod)  # the kubelet restarts the head container: not failed
    starting = restarting or "starting" + (
        f", {ready_w}/{desired_w} workers ready" if None not in (ready_w, desired_w) else ""
    )
    if rc.replica_failure is not None:
        why_reason, why_message = rc.replica_failure
        parts.append(f"KubeRay cannot create pods: {kueue_words(why_reason, why_message)}")
    elif restarting is not None:
        pass  # the restart is the news: KubeRay's HeadPodReady=False (ContainersNotReady) stays the reason
    elif why_reason == UNKNOWN_REASON and not why_message:
        # KubeRay's "Unknown": no word for a person; say what is known of the head instead
        starting += f": {rc.head_progress}"
        why_reason = None
    elif why_reason:
        starting += f" ({kueue_words(why_reason, why_message)})"
    parts.append(starting)
    # Unsuspended and not ready: starting (Kueue only unsuspends what it admitted).
    return out(
        ClusterPhase.STARTING,
        Verdict.WAIT,
        "; ".join(parts),
        (why_reason or v.reason, why_message or v.message),
    )


def _evicted_words(v: KueueVerdict, workload: Obj | None, clock: float) -> tuple[ClusterPhase, str]:
    """An evicted cluster's phase and sentence (preempted, deactivated or evicted), in Kueue's words."""
    phase, lead = {
        "preempted": (ClusterPhase.PREEMPTED, "preempted by Kueue"),
        "deactivated": (ClusterPhase.DEACTIVATED, "deactivated (resume it to requeue)"),
    }.get(v.cause, (ClusterPhase.EVICTED, "evicted by Kueue"))
    text = f"{lead}: {v.words}" if v.words else lead
    backoff = backoff_sentence(workload, now=clock)
    if backoff is not None and ((workload or {}).get("status") or {}).get("requeueState"):
        text = f"{backoff}. Kueue: {v.words}"
    if v.requeued:
        text += " (Kueue has requeued it)"
    return phase, text


def _admitted_sentence(wl: WorkloadReading) -> str:
    return f"admitted by ClusterQueue {wl.cluster_queue!r}" if wl.cluster_queue else "admitted"
