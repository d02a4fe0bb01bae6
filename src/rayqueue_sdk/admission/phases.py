"""The admission machine's vocabulary: phases, verdicts, error kinds and the Kueue labels it reads
(defined in :mod:`rayqueue_sdk.manifests.labels`).

:class:`ClusterPhase` and :class:`JobPhase` are public: users import them from ``rayqueue_sdk`` or
:mod:`rayqueue_sdk.admission.cluster` (which re-exports everything here); reprs and tracebacks name this
module, where they are defined.
:class:`Verdict` tells a waiter what to do with an observation, :class:`ErrorKind` which error a failed
wait stands for. Pure: no I/O.

Example:
    >>> Verdict("fail") is Verdict.FAIL, str(ErrorKind.EVICTED)
    (True, 'evicted')
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.manifests.labels import JOB_UID_LABEL, PRIORITY_LABEL, QUEUE_LABEL

__all__ = [
    "QUEUE_LABEL",
    "PRIORITY_LABEL",
    "JOB_UID_LABEL",
    "ClusterPhase",
    "CodeFlareClusterStatus",
    "ErrorKind",
    "JobPhase",
    "Obj",
    "RayClusterStatus",
    "Verdict",
]


#: A Kubernetes object as the API returns it (read-only here): the state machines' input.
Obj = Mapping[str, Any]


class ClusterPhase(enum.StrEnum):
    """Where a RayCluster is in its Kueue-managed life.

    ``QUEUED`` (waiting for Kueue's admission), ``ADMITTED`` (admitted, KubeRay not yet starting
    pods), ``STARTING`` (pods being created), ``READY`` (head and all workers ready), ``PREEMPTED``
    (evicted to make room for another workload), ``DEACTIVATED`` (``Workload.spec.active=false``),
    ``EVICTED`` (evicted for another reason: PodsReady timeout, a stopped queue, ...), ``SUSPENDED``
    (suspended by someone other than Kueue), ``FAILED``, ``DELETED`` (gone while it was watched or
    acted on), ``NOT_FOUND`` (no such RayCluster: ``Cluster.status()`` before ``apply()``) and ``UNKNOWN``.

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
    NOT_FOUND = "not found"
    UNKNOWN = "unknown"
    #: codeflare-sdk's spelling of QUEUED (an alias: ``ClusterPhase.QUEUEING is ClusterPhase.QUEUED``).
    QUEUEING = "queued"
    #: KubeRay's old ``unhealthy`` state, which codeflare-sdk reports as failed (an alias of FAILED).
    UNHEALTHY = "failed"


#: codeflare-sdk's name for what ``cluster.status()`` unpacks to first (``status, ready = cluster.status()``):
#: the same enum, so ``status is CodeFlareClusterStatus.READY`` reads as it did there.
CodeFlareClusterStatus = ClusterPhase
#: codeflare-sdk's name for a cluster's state in its details: here the one :class:`ClusterPhase`.
RayClusterStatus = ClusterPhase


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
    REJECTED = "rejected"  # AdmissionCheckRejected (deactivated for a rejected admission check)
