"""What a Kueue Workload's conditions say, read the same way for clusters and jobs.

:func:`read_workload` condenses the conditions into a :class:`WorkloadReading`: ``none``, ``pending``,
``reserved`` (quota reserved, admission checks not all ready), ``admitted``, ``evicted`` (preempted,
deactivated or otherwise), ``requeued``, ``reactivated`` or ``finished``, with Kueue's reason and
message. ``spec.active`` decides deactivation: ``false`` is always deactivated, whatever the
conditions say yet; ``true`` never is, so a ``Deactivated`` eviction still on a resumed Workload
(Kueue has not caught up, or it has set ``Requeued=True``/``Reactivated`` and the Workload waits for
quota) reads ``reactivated``: back in its queue until Kueue admits it again.
:func:`eviction_key` names the current eviction; :func:`kueue_words` and :func:`queued_sentence` quote Kueue
as Kueue wrote it. Pure: no I/O.

Example:
    >>> wl = {"spec": {"queueName": "q"}, "status": {"conditions": [
    ...     {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}]}}
    >>> r = read_workload(wl)
    >>> r.state, queued_sentence(r.queue, 2, kueue_words(r.reason, r.message))
    ('pending', "queued in LocalQueue 'q' at position 2: no quota (Pending)")
    >>> stale = {"type": "Evicted", "status": "True", "reason": "Deactivated",
    ...          "message": "The workload is deactivated"}
    >>> read_workload({"spec": {"active": True}, "status": {"conditions": [stale]}}).state
    'reactivated'
    >>> read_workload({"spec": {"active": False}, "status": {"conditions": [stale]}}).state
    'evicted'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from rayqueue_sdk.admission.phases import Obj
from rayqueue_sdk.manifests.meta import Condition, Conditions, conditions_of

__all__ = [
    "WorkloadReading",
    "WorkloadState",
    "eviction_key",
    "kueue_words",
    "queued_sentence",
    "reactivated_tail",
    "reactivated_why",
    "read_workload",
]

#: What a Workload's conditions say, condensed (see :func:`read_workload`).
WorkloadState = Literal[
    "none", "pending", "reserved", "admitted", "evicted", "requeued", "reactivated", "finished"
]


@dataclass(frozen=True)
class WorkloadReading:
    """What the Workload's conditions say, independent of the owner's kind (made by :func:`read_workload`).

    Example:
        >>> WorkloadReading("pending", reason="Pending").state
        'pending'
    """

    state: WorkloadState
    kind: str = ""  # for evicted/requeued: "preempted" | "deactivated" | "evicted"
    reason: str | None = None
    message: str | None = None
    cluster_queue: str | None = None
    queue: str | None = None
    queue_missing: bool = False
    eviction: str | None = None  # identity of the current eviction (see eviction_key)
    pending: tuple[str | None, str | None] = (None, None)  # why a requeued/reactivated one still waits
    requeue: tuple[str | None, str | None] = (None, None)  # Requeued=True's reason and message


def _key_of(evicted: Condition) -> str | None:
    if not evicted.true:
        return None
    return "|".join(p or "" for p in (evicted.reason, evicted.transition, evicted.message))


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
    return _key_of(conditions_of(workload)["Evicted"])


def _eviction_kind(conds: Conditions) -> tuple[str, str | None, str | None]:
    evicted = conds["Evicted"]
    reason, message = evicted.reason, evicted.message
    if reason == "Preempted":
        preempted = conds["Preempted"]
        if preempted.true:
            # InClusterQueue / InCohortReclamation / InCohortFairSharing / InCohortReclaimWhileBorrowing
            return "preempted", preempted.reason or reason, preempted.message or message
        return "preempted", reason, message
    if reason == "Deactivated" or (reason or "").startswith("Deactivated"):
        return "deactivated", reason, message
    return "evicted", reason, message


def _words(cond: Condition) -> tuple[str | None, str | None]:
    return cond.reason, cond.message


def read_workload(workload: Obj | None) -> WorkloadReading:
    """Condense a Workload's conditions (``None``: no Workload) into a :class:`WorkloadReading`.

    Example:
        >>> read_workload(None).state
        'none'
    """
    if workload is None:
        return WorkloadReading("none")
    spec = workload.get("spec") or {}
    status = workload.get("status") or {}
    admission = status.get("admission") or {}
    queue = spec.get("queueName")
    cq = admission.get("clusterQueue")
    conds = conditions_of(workload)

    finished = conds["Finished"]
    if finished.true:
        return WorkloadReading("finished", reason=finished.reason, message=finished.message, queue=queue)

    evicted, requeued, reserved = conds["Evicted"], conds["Requeued"], conds["QuotaReserved"]
    key = _key_of(evicted)
    if spec.get("active", True) is False:
        # Deactivated, whatever else the conditions say (or before Kueue has written them).
        kind, reason, message = _eviction_kind(conds) if evicted.true else ("", None, None)
        if kind != "deactivated":
            reason, message = "Deactivated", "The workload is deactivated (Workload.spec.active is false)"
        return WorkloadReading(
            "evicted", "deactivated", reason, message, cluster_queue=cq, queue=queue, eviction=key
        )
    if evicted.true:
        kind, reason, message = _eviction_kind(conds)
        evicted_as = functools.partial(
            WorkloadReading,
            kind=kind,
            reason=reason,
            message=message,
            cluster_queue=cq,
            queue=queue,
            eviction=key,
        )
        pending = _words(reserved) if reserved.false else (None, None)
        if kind == "deactivated":
            # spec.active is true again: the deactivation is history. Kueue sets Requeued=True
            # (Reactivated) and resets Evicted when it admits the workload again.
            requeue = _words(requeued) if requeued.true else (None, None)
            return evicted_as("reactivated", pending=pending, requeue=requeue)
        if requeued.true:
            return evicted_as("requeued", pending=pending)
        return evicted_as("evicted")

    target = conds["DeactivationTarget"]
    if target.true:
        # Transient: Kueue is about to set spec.active=false (MaximumExecutionTimeExceeded, ...).
        return WorkloadReading(
            "evicted", "deactivated", target.reason, target.message, cluster_queue=cq, queue=queue
        )

    admitted = conds["Admitted"]
    if admitted.true or reserved.true:
        # Quota reserved but admission checks not all Ready: still not admitted (Admitted=False says why).
        state: WorkloadState = "admitted" if admitted.true else "reserved"
        why = admitted if state == "admitted" or admitted.false else reserved
        return WorkloadReading(state, reason=why.reason, message=why.message, cluster_queue=cq, queue=queue)
    reason, message = _words(reserved)
    if not reserved.present and requeued.false:
        # Evicted earlier and not yet requeued (e.g. waiting for a backoff).
        reason, message = _words(requeued)
    queue_missing = bool(
        reason == "Inadmissible" and message and "LocalQueue" in message and "doesn't exist" in message
    )
    return WorkloadReading(
        "pending", reason=reason, message=message, cluster_queue=cq, queue=queue, queue_missing=queue_missing
    )


def kueue_words(reason: str | None, message: str | None) -> str:
    """Kueue's own message, with its reason in parentheses.

    Example:
        >>> kueue_words("Pending", "no quota"), kueue_words(None, None)
        ('no quota (Pending)', '')
    """
    if message and reason:
        return f"{message} ({reason})"
    return message or reason or ""


def queued_sentence(queue: str | None, position: int | None, tail: str) -> str:
    """``queued in LocalQueue 'q' at position 2: <tail>``, leaving out what is unknown.

    Example:
        >>> queued_sentence(None, None, "")
        'queued'
    """
    where = f"queued in LocalQueue {queue!r}" if queue else "queued"
    if position is not None:
        where += f" at position {position}"
    text = f"{where}: {tail}" if tail else where
    return text


def reactivated_tail(wl: WorkloadReading) -> str:
    """What a reactivated Workload waits for, with Kueue's pending message when it has written one.

    Example:
        >>> reactivated_tail(WorkloadReading("reactivated", pending=("Pending", "no quota")))
        'reactivated, waiting for quota: no quota (Pending)'
    """
    now = kueue_words(*wl.pending)
    return "reactivated, waiting for quota" + (f": {now}" if now else "")


def reactivated_why(wl: WorkloadReading) -> tuple[str | None, str | None]:
    """The reason and message behind a reactivated Workload's wait: why it is pending, else Kueue's
    ``Requeued=True`` (``Reactivated``), else nothing (Kueue has not caught up with the resume yet).

    Example:
        >>> reactivated_why(WorkloadReading("reactivated", requeue=("Reactivated", "m")))
        ('Reactivated', 'm')
    """
    if wl.pending != (None, None):
        return wl.pending
    return wl.requeue
