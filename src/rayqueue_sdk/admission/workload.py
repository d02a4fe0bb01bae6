"""What a Kueue Workload's conditions say, read the same way for clusters and jobs.

``_read_workload`` condenses the conditions into a ``_WorkloadReading``: ``none``, ``pending``,
``reserved`` (quota reserved, admission checks not all ready), ``admitted``, ``evicted`` (preempted,
deactivated or otherwise), ``requeued``, ``reactivated`` or ``finished``, with Kueue's reason and
message. ``spec.active`` decides deactivation: ``false`` is always deactivated, whatever the
conditions say yet; ``true`` never is, so a ``Deactivated`` eviction still on a resumed Workload
(Kueue has not caught up, or it has set ``Requeued=True``/``Reactivated`` and the Workload waits for
quota) reads ``reactivated``: back in its queue until Kueue admits it again.
:func:`eviction_key` names the current eviction; ``_kueue_words`` and ``_queued_sentence`` quote Kueue
as Kueue wrote it. Pure: no I/O.

Example:
    >>> wl = {"spec": {"queueName": "q"}, "status": {"conditions": [
    ...     {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}]}}
    >>> r = _read_workload(wl)
    >>> r.state, _queued_sentence(r.queue, 2, _kueue_words(r.reason, r.message))
    ('pending', "queued in LocalQueue 'q' at position 2: no quota (Pending)")
    >>> stale = {"type": "Evicted", "status": "True", "reason": "Deactivated",
    ...          "message": "The workload is deactivated"}
    >>> _read_workload({"spec": {"active": True}, "status": {"conditions": [stale]}}).state
    'reactivated'
    >>> _read_workload({"spec": {"active": False}, "status": {"conditions": [stale]}}).state
    'evicted'
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.admission.conditions import _is_false, _is_true, _text, condition
from rayqueue_sdk.admission.phases import Obj

__all__ = ["eviction_key"]


@dataclass(frozen=True)
class _WorkloadReading:
    """What the Workload's conditions say, independent of the owner's kind."""

    # "none" | "pending" | "reserved" | "admitted" | "evicted" | "requeued" | "reactivated" | "finished"
    state: str
    kind: str = ""  # for evicted/requeued: "preempted" | "deactivated" | "evicted"
    reason: str | None = None
    message: str | None = None
    cluster_queue: str | None = None
    queue: str | None = None
    queue_missing: bool = False
    eviction: str | None = None  # identity of the current eviction (see eviction_key)
    pending: tuple[str | None, str | None] = (None, None)  # why a requeued/reactivated one still waits
    requeue: tuple[str | None, str | None] = (None, None)  # Requeued=True's reason and message


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
    key = eviction_key(workload)
    if spec.get("active", True) is False:
        # Deactivated, whatever else the conditions say (or before Kueue has written them).
        kind, reason, message = (
            _eviction_kind(evicted, workload)
            if evicted is not None and _is_true(evicted)
            else ("", None, None)
        )
        if kind != "deactivated":
            reason, message = "Deactivated", "The workload is deactivated (Workload.spec.active is false)"
        return _WorkloadReading(
            "evicted", "deactivated", reason, message, cluster_queue=cq, queue=queue, eviction=key
        )
    if evicted is not None and _is_true(evicted):
        kind, reason, message = _eviction_kind(evicted, workload)
        evicted_as = functools.partial(
            _WorkloadReading,
            kind=kind,
            reason=reason,
            message=message,
            cluster_queue=cq,
            queue=queue,
            eviction=key,
        )
        reserved = condition(workload, "QuotaReserved")
        pending = (
            (_text(reserved, "reason"), _text(reserved, "message")) if _is_false(reserved) else (None, None)
        )
        if kind == "deactivated":
            # spec.active is true again: the deactivation is history. Kueue sets Requeued=True
            # (Reactivated) and resets Evicted when it admits the workload again.
            requeue = (
                (_text(requeued, "reason"), _text(requeued, "message"))
                if _is_true(requeued)
                else (None, None)
            )
            return evicted_as("reactivated", pending=pending, requeue=requeue)
        if _is_true(requeued):
            return evicted_as("requeued", pending=pending)
        return evicted_as("evicted")

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

    admitted = condition(workload, "Admitted")
    reserved = condition(workload, "QuotaReserved")
    if _is_true(admitted) or _is_true(reserved):
        # Quota reserved but admission checks not all Ready: still not admitted (Admitted=False says why).
        state = "admitted" if _is_true(admitted) else "reserved"
        why = admitted if state == "admitted" or _is_false(admitted) else reserved
        return _WorkloadReading(
            state, reason=_text(why, "reason"), message=_text(why, "message"), cluster_queue=cq, queue=queue
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


def _reactivated_tail(wl: _WorkloadReading) -> str:
    """What a reactivated Workload waits for, with Kueue's pending message when it has written one.

    Example:
        >>> _reactivated_tail(_WorkloadReading("reactivated", pending=("Pending", "no quota")))
        'reactivated, waiting for quota: no quota (Pending)'
    """
    now = _kueue_words(*wl.pending)
    return "reactivated, waiting for quota" + (f": {now}" if now else "")


def _reactivated_why(wl: _WorkloadReading) -> tuple[str | None, str | None]:
    """The reason and message behind a reactivated Workload's wait: why it is pending, else Kueue's
    ``Requeued=True`` (``Reactivated``), else nothing (Kueue has not caught up with the resume yet).

    Example:
        >>> _reactivated_why(_WorkloadReading("reactivated", requeue=("Reactivated", "m")))
        ('Reactivated', 'm')
    """
    if wl.pending != (None, None):
        return wl.pending
    return wl.requeue
