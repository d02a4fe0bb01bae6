"""One Kueue verdict table, shared by clusters and jobs: a Workload (and its owner's state) read into a
:class:`KueueVerdict`.

:func:`kueue_verdict` walks Kueue's branches once, in order: the Workload finished, an admission check
rejected it, it is evicted for an admission check retry (Kueue requeues it after a backoff), it was
reactivated (``spec.active`` true again), it is evicted (preempted, deactivated or otherwise; perhaps
requeued already), its quota is reserved while admission checks run, it is pending in its queue, its owner
waits for Kueue to create it, it is admitted, or Kueue does not manage the owner. The result names the
branch (:class:`KueueKind`) and carries the reason and message as Kueue wrote them.
:func:`rayqueue_sdk.admission.cluster.assess_cluster` maps it onto a :class:`ClusterPhase`,
:func:`rayqueue_sdk.admission.job.assess_job` onto a :class:`JobPhase`, each with its own words.
Pure: no I/O.

Example:
    >>> wl = {"spec": {"queueName": "q"}, "status": {"conditions": [
    ...     {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}]}}
    >>> v = kueue_verdict(wl)
    >>> v.kind, v.reason, v.message
    (<KueueKind.PENDING: 'pending'>, 'Pending', 'no quota')
    >>> kueue_verdict(None, queue="q", suspended=True).kind
    <KueueKind.AWAITING_WORKLOAD: 'awaiting workload'>
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rayqueue_sdk.admission.checks import rejected_check
from rayqueue_sdk.admission.phases import ErrorKind, Obj
from rayqueue_sdk.admission.workload import WorkloadReading, kueue_words, reactivated_why, read_workload
from rayqueue_sdk.errors import AdmissionCheckRejected, PreemptedError, RayQueueError

__all__ = ["KueueKind", "KueueVerdict", "kueue_error", "kueue_verdict"]


class KueueKind(enum.StrEnum):
    """Which branch of Kueue's life a Workload is in, for any owner (RayCluster or RayJob).

    ``FINISHED`` (Kueue finished the Workload), ``REJECTED`` (an admission check rejected it),
    ``RETRYING`` (evicted for an admission check retry; Kueue requeues it after a backoff),
    ``REACTIVATED`` (``spec.active`` true again after a deactivation, back in its queue), ``EVICTED``
    (preempted, deactivated or otherwise evicted; :attr:`KueueVerdict.cause` says which),
    ``RESERVED`` (quota reserved, admission checks not all ready), ``PENDING`` (waiting in its
    LocalQueue), ``AWAITING_WORKLOAD`` (a queued, suspended owner with no Workload yet), ``ADMITTED``
    and ``UNMANAGED`` (no Workload, and the owner is not waiting for one).

    Example:
        >>> KueueKind("evicted") is KueueKind.EVICTED
        True
    """

    FINISHED = "finished"
    REJECTED = "rejected"
    RETRYING = "retrying"
    REACTIVATED = "reactivated"
    EVICTED = "evicted"
    RESERVED = "reserved"
    PENDING = "pending"
    AWAITING_WORKLOAD = "awaiting workload"
    ADMITTED = "admitted"
    UNMANAGED = "unmanaged"


@dataclass(frozen=True)
class KueueVerdict:
    """Kueue's verdict on one Workload, independent of the owner's kind.

    Attributes:
        kind: the branch (:class:`KueueKind`).
        reason / message: the condition reason and message behind it, as Kueue wrote them (for
            ``REJECTED`` the rejected check's, for ``REACTIVATED`` why it still waits).
        reading: the Workload's conditions as read (eviction cause and identity, ClusterQueue, queue,
            what a requeued Workload waits for).

    Example:
        >>> v = kueue_verdict({"status": {"conditions": [{"type": "Evicted", "status": "True",
        ...     "reason": "Preempted", "message": "m"}, {"type": "Requeued", "status": "True"}]}})
        >>> v.kind, v.cause, v.requeued, v.words
        (<KueueKind.EVICTED: 'evicted'>, 'preempted', True, 'm (Preempted)')
    """

    kind: KueueKind
    reason: str | None = None
    message: str | None = None
    reading: WorkloadReading = WorkloadReading("none")

    @property
    def why(self) -> tuple[str | None, str | None]:
        """``(reason, message)``."""
        return self.reason, self.message

    @property
    def words(self) -> str:
        """Kueue's message with its reason in parentheses (``""`` when Kueue said nothing)."""
        return kueue_words(self.reason, self.message)

    @property
    def cause(self) -> str:
        """For an eviction: ``"preempted"``, ``"deactivated"`` or ``"evicted"``; else ``""``."""
        return self.reading.kind

    @property
    def requeued(self) -> bool:
        """Evicted, and Kueue has put the Workload back in its queue."""
        return self.reading.state == "requeued"


def kueue_verdict(workload: Obj | None, *, queue: str | None = None, suspended: bool = False) -> KueueVerdict:
    """Read a Workload into Kueue's verdict: the one table of branches clusters and jobs share.

    Args:
        workload: the owner's Workload, or ``None`` when none was found.
        queue: the owner's LocalQueue (its ``kueue.x-k8s.io/queue-name`` label), if any.
        suspended: whether the owner is suspended (Kueue suspends what it has not admitted).

    Example:
        >>> wl = {"status": {"conditions": [
        ...     {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
        ...     {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "ok"}]}}
        >>> kueue_verdict(wl).kind, kueue_verdict(None).kind
        (<KueueKind.ADMITTED: 'admitted'>, <KueueKind.UNMANAGED: 'unmanaged'>)
    """
    wl = read_workload(workload)

    def as_read(kind: KueueKind) -> KueueVerdict:
        return KueueVerdict(kind, wl.reason, wl.message, wl)

    if wl.state == "finished":
        return as_read(KueueKind.FINISHED)
    rejected = rejected_check(workload)
    if rejected is not None and wl.state != "reactivated":
        return KueueVerdict(KueueKind.REJECTED, rejected[0], rejected[1], wl)
    evicted = wl.state in ("evicted", "requeued")
    if evicted and wl.reason == "AdmissionCheck":
        return as_read(KueueKind.RETRYING)
    if wl.state == "reactivated":
        reason, message = reactivated_why(wl)
        return KueueVerdict(KueueKind.REACTIVATED, reason, message, wl)
    if evicted:
        return as_read(KueueKind.EVICTED)
    if wl.state == "reserved":
        return as_read(KueueKind.RESERVED)
    if wl.state == "pending":
        return as_read(KueueKind.PENDING)
    if wl.state == "none" and queue and suspended:
        return KueueVerdict(KueueKind.AWAITING_WORKLOAD, reading=wl)
    if wl.state == "admitted":
        return as_read(KueueKind.ADMITTED)
    return as_read(KueueKind.UNMANAGED)


def kueue_error(
    kind: ErrorKind, name: str, reason: str | None, message: str, phase: str
) -> RayQueueError | None:
    """The error a failed wait raises when Kueue decided it, for a cluster or a job alike: an admission
    check rejected the workload (``REJECTED``), or Kueue evicted it (``EVICTED``); ``None`` for other kinds.

    Example:
        >>> type(kueue_error(ErrorKind.EVICTED, "ws", "InClusterQueue", "preempted", "preempted")).__name__
        'PreemptedError'
        >>> kueue_error(ErrorKind.FAILED, "ws", None, "m", "failed") is None
        True
    """
    if kind is ErrorKind.REJECTED:
        return AdmissionCheckRejected(name, reason or "AdmissionCheck", message)
    if kind is ErrorKind.EVICTED:
        return PreemptedError(name, reason or phase, message)
    return None
