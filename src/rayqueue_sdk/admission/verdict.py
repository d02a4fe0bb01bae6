"""One Kueue verdict table, shared by clusters and jobs: a Workload (and its owner's state) read into a
:class:`KueueVerdict`.

:func:`kueue_verdict` walks Kueue's branches once, in order: the Workload finished, an admission check
rejected it, it is evicted for an admission check retry (Kueue requeues it after a backoff), it was
reactivated (``spec.active`` true again), it is evicted (preempted, deactivated or otherwise; perhaps
requeued already), its quota is reserved while admission checks run, it is pending in its queue, its owner
waits for Kueue to create it, it is admitted, or Kueue does not manage the owner. The result names the
branch (:class:`KueueKind`) and carries the reason and message as Kueue wrote them.
:func:`rayqueue_sdk.admission.cluster.assess_cluster` maps it onto a :class:`ClusterPhase`,
:func:`rayqueue_sdk.admission.job.assess_job` onto a :class:`JobPhase`, each with its own words; both
answer with a :class:`KueueAssessment` (the fields their readings share), each adding its own.
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
from dataclasses import dataclass, field, replace
from typing import Generic, Literal, Self, TypeVar

from rayqueue_sdk.admission.checks import rejected_check
from rayqueue_sdk.admission.phases import ErrorKind, Obj, Verdict
from rayqueue_sdk.admission.workload import (
    WorkloadReading,
    kueue_words,
    queued_sentence,
    reactivated_tail,
    reactivated_why,
    read_workload,
)
from rayqueue_sdk.errors import AdmissionCheckRejected, PreemptedError, RayQueueError

__all__ = [
    "KueueAssessment",
    "KueueKind",
    "KueueOutcome",
    "KueueVerdict",
    "SharedPhase",
    "kueue_error",
    "kueue_verdict",
]


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


#: The phases a verdict decides alike for clusters and jobs: values that :class:`ClusterPhase` and
#: :class:`JobPhase` both have, so each owner maps one onto its own enum (``ClusterPhase(o.phase)``).
SharedPhase = Literal["failed", "deactivated", "queued"]


@dataclass(frozen=True)
class KueueOutcome:
    """What a verdict means to a waiter, the same for a cluster and a job (:meth:`KueueVerdict.outcome`).

    Attributes:
        phase: the phase by its value (:data:`SharedPhase`), for the owner's own phase enum.
        verdict: wait or fail.
        text: the sentence, quoting Kueue.
        why: ``(reason, message)`` behind it.
        position: the queue position when it means something.
        error_kind: which error a ``FAIL`` stands for.

    Example:
        >>> o = kueue_verdict(None, queue="q", suspended=True).outcome("q", 1)
        >>> o.phase, o.verdict, o.text, o.position
        ('queued', <Verdict.WAIT: 'wait'>, "queued in LocalQueue 'q' at position 1: waiting for Kueue to \
create the Workload", 1)
    """

    phase: SharedPhase
    verdict: Verdict
    text: str
    why: tuple[str | None, str | None] = (None, None)
    position: int | None = None
    error_kind: ErrorKind = ErrorKind.NONE


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

    @property
    def pending_words(self) -> str:
        """Kueue's words on a waiting Workload, or that Kueue has not considered it yet.

        Example:
            >>> KueueVerdict(KueueKind.PENDING).pending_words
            'waiting for Kueue to consider the workload'
        """
        return self.words or "waiting for Kueue to consider the workload"

    def outcome(
        self, queue: str | None, position: int | None, fair_share: str | None = None
    ) -> KueueOutcome | None:
        """The branches that mean the same for a cluster and a job: Kueue finished the Workload, a check
        rejected it, it was reactivated, it is pending in its queue (``fair_share`` added to Kueue's words),
        or its owner waits for Kueue to create it. ``None`` for the branches each owner reads its own way
        (admission checks retrying or pending, evictions, admitted, unmanaged).

        Example:
            >>> v = KueueVerdict(KueueKind.REJECTED, "AdmissionCheck", "no nodes")
            >>> o = v.outcome("q", None)
            >>> o.phase, o.verdict, o.text
            ('deactivated', <Verdict.FAIL: 'fail'>, 'admission check rejected: no nodes')
            >>> KueueVerdict(KueueKind.ADMITTED).outcome("q", 0) is None
            True
        """
        match self.kind:
            case KueueKind.FINISHED:
                text = f"Kueue finished the workload: {self.words}"
                return KueueOutcome("failed", Verdict.FAIL, text, self.why, error_kind=ErrorKind.FAILED)
            case KueueKind.REJECTED:
                text = f"admission check rejected: {self.message}"
                return KueueOutcome(
                    "deactivated", Verdict.FAIL, text, self.why, error_kind=ErrorKind.REJECTED
                )
            case KueueKind.REACTIVATED:
                text = queued_sentence(queue, position, reactivated_tail(self.reading))
                return KueueOutcome("queued", Verdict.WAIT, text, self.why, position)
            case KueueKind.PENDING:
                tail = self.pending_words + (f"; {fair_share}" if fair_share else "")
                return KueueOutcome(
                    "queued", Verdict.WAIT, queued_sentence(queue, position, tail), self.why, position
                )
            case KueueKind.AWAITING_WORKLOAD:
                text = queued_sentence(queue, position, "waiting for Kueue to create the Workload")
                return KueueOutcome("queued", Verdict.WAIT, text, position=position)
        return None


#: An owner's phase enum (:class:`ClusterPhase` or :class:`JobPhase`).
PhaseT = TypeVar("PhaseT", bound=enum.Enum)


@dataclass(frozen=True)
class KueueAssessment(Generic[PhaseT]):
    """The fields a cluster's and a job's assessment share: the owner's phase (its own enum), what a waiter
    does, the words, and Kueue's (or KubeRay's) reason and message behind them.
    :class:`~rayqueue_sdk.admission.cluster.Assessment` and :class:`~rayqueue_sdk.admission.job.JobAssessment`
    add what each owner reads besides.

    Attributes:
        phase: the owner's phase (:class:`ClusterPhase` or :class:`JobPhase`).
        verdict: :class:`Verdict` for a waiter.
        explanation: one human sentence, quoting Kueue's or KubeRay's message as written.
        reason / message: the condition reason and message behind the phase, or ``None``.
        position: the queue position (0-based) when queued and known.
        error_kind: which error a ``FAIL`` verdict stands for (keyword-only).

    Example:
        >>> from rayqueue_sdk.admission.phases import JobPhase
        >>> a = KueueAssessment(JobPhase.DEACTIVATED, Verdict.FAIL, "deactivated", "Preempted", "m",
        ...                     error_kind=ErrorKind.EVICTED)
        >>> a.why, type(a.kueue_failure("train")).__name__
        (('Preempted', 'm'), 'PreemptedError')
    """

    phase: PhaseT
    verdict: Verdict
    explanation: str
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    error_kind: ErrorKind = field(default=ErrorKind.NONE, kw_only=True)

    @property
    def why(self) -> tuple[str | None, str | None]:
        """``(reason, message)``."""
        return self.reason, self.message

    def kueue_failure(self, name: str) -> RayQueueError | None:
        """The error of a failed wait that Kueue decided (:func:`kueue_error`: a rejected admission check
        or an eviction), named ``name``; ``None`` for the other kinds, which each owner raises its own way.

        Example:
            >>> from rayqueue_sdk.admission.phases import ClusterPhase
            >>> a = KueueAssessment(ClusterPhase.FAILED, Verdict.FAIL, "failed", error_kind=ErrorKind.FAILED)
            >>> a.kueue_failure("ws") is None
            True
        """
        return kueue_error(
            self.error_kind, name, self.reason, self.message or self.explanation, str(self.phase)
        )

    def said(
        self,
        phase: PhaseT,
        verdict: Verdict,
        text: str,
        why: tuple[str | None, str | None] | None = None,
        pos: int | None = None,
        kind: ErrorKind = ErrorKind.NONE,
    ) -> Self:
        """This reading with a branch's answer: its phase, verdict and words, ``why`` (reason and message;
        ``None`` keeps this reading's), the queue position ``pos`` and the error ``kind`` of a ``FAIL``. A
        machine reads once what every answer about an observation carries, then says each branch with it.

        Example:
            >>> from rayqueue_sdk.admission.phases import JobPhase
            >>> seen = KueueAssessment(JobPhase.UNKNOWN, Verdict.WAIT, "", "AppFailed", "exit 1")
            >>> a = seen.said(JobPhase.FAILED, Verdict.FAIL, "the job failed", kind=ErrorKind.FAILED)
            >>> a.phase, a.why, a.error_kind
            (<JobPhase.FAILED: 'failed'>, ('AppFailed', 'exit 1'), <ErrorKind.FAILED: 'failed'>)
        """
        reason, message = self.why if why is None else why
        return replace(
            self,
            phase=phase,
            verdict=verdict,
            explanation=text,
            reason=reason,
            message=message,
            position=pos,
            error_kind=kind,
        )

    def taking(self, outcome: KueueOutcome) -> Self:
        """This reading with a :class:`KueueOutcome`, its phase as this owner's own enum.

        Example:
            >>> from rayqueue_sdk.admission.phases import ClusterPhase
            >>> seen = KueueAssessment(ClusterPhase.UNKNOWN, Verdict.WAIT, "")
            >>> seen.taking(KueueOutcome("queued", Verdict.WAIT, "queued", position=2)).phase
            <ClusterPhase.QUEUED: 'queued'>
        """
        o = outcome
        return self.said(type(self.phase)(o.phase), o.verdict, o.text, o.why, o.position, o.error_kind)


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
