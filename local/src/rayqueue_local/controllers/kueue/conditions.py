"""``metav1.Condition`` lists with apimachinery's ``SetStatusCondition`` semantics, and Kueue's
Workload status transitions built on them (pure functions over dicts).

``lastTransitionTime`` changes only when the status changes; reason, message and
observedGeneration are updated in place. Messages are cut to 32 KiB as upstream.

Example:
    >>> wl = {"metadata": {"generation": 1}, "status": {}}
    >>> set_quota_reserved(wl, {"clusterQueue": "cq", "podSetAssignments": []}, "2026-01-01T00:00:00Z")
    True
    >>> [(c["type"], c["status"], c["reason"]) for c in wl["status"]["conditions"]]
    [('QuotaReserved', 'True', 'QuotaReserved'), ('Admitted', 'True', 'Admitted')]
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.controllers.kueue import messages as msg

__all__ = [
    "evict",
    "find",
    "is_true",
    "remove_condition",
    "count_eviction",
    "reset_checks_on_eviction",
    "set_condition",
    "set_quota_reserved",
    "unset_quota_reservation",
]

_MAX_MESSAGE = 32 * 1024


def find(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    """The condition of type ``ctype`` in ``obj["status"]["conditions"]``, if any."""
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def is_true(obj: dict[str, Any], ctype: str) -> bool:
    """Whether ``obj`` has condition ``ctype`` with status ``"True"``."""
    cond = find(obj, ctype)
    return cond is not None and cond.get("status") == "True"


def set_condition(
    obj: dict[str, Any],
    ctype: str,
    status: bool,
    reason: str,
    message: str,
    now: str,
    *,
    observed_generation: bool = True,
) -> bool:
    """Add or update a condition on ``obj`` (mutated in place); return whether anything changed."""
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    new: dict[str, Any] = {
        "type": ctype,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message[:_MAX_MESSAGE],
        "lastTransitionTime": now,
    }
    if observed_generation and "generation" in (obj.get("metadata") or {}):
        new["observedGeneration"] = obj["metadata"]["generation"]
    for i, cond in enumerate(conditions):
        if cond.get("type") != ctype:
            continue
        if cond.get("status") == new["status"]:
            new["lastTransitionTime"] = cond.get("lastTransitionTime", now)
        if cond == new:
            return False
        conditions[i] = new
        return True
    conditions.append(new)
    return True


def remove_condition(obj: dict[str, Any], ctype: str) -> bool:
    """Drop condition ``ctype``; return whether it was there."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    kept = [c for c in conditions if c.get("type") != ctype]
    if len(kept) == len(conditions):
        return False
    obj["status"]["conditions"] = kept
    return True


def _reset_active(obj: dict[str, Any], ctype: str, reason: str, now: str) -> bool:
    cond = find(obj, ctype)
    if cond is None or cond.get("status") != "True":
        return False
    return set_condition(obj, ctype, False, reason, "Previously: " + cond.get("message", ""), now)


def set_quota_reserved(wl: dict[str, Any], admission: dict[str, Any], now: str) -> bool:
    """Record a reservation (Kueue's SetQuotaReservation + SyncAdmittedCondition without checks):
    ``status.admission``, ``QuotaReserved=True``, ``Admitted=True``, ``Evicted``/``Preempted`` reset."""
    status = wl.setdefault("status", {})
    changed = status.get("admission") != admission
    status["admission"] = admission
    reason = msg.QUOTA_RESERVED
    changed |= set_condition(
        wl, msg.QUOTA_RESERVED, True, reason, msg.quota_reserved(admission["clusterQueue"]), now
    )
    changed |= _reset_active(wl, msg.EVICTED, reason, now)
    changed |= _reset_active(wl, msg.PREEMPTED, reason, now)
    changed |= set_condition(wl, msg.ADMITTED, True, "Admitted", msg.ADMITTED_MESSAGE, now)
    return changed


def unset_quota_reservation(wl: dict[str, Any], reason: str, message: str, now: str) -> bool:
    """Kueue's UnsetQuotaReservationWithCondition: ``QuotaReserved=False``, admission cleared, and
    ``Admitted=False`` (``NoReservation``) when it was admitted.

    Losing admission adds the whole seconds it lasted (now − ``Admitted``'s ``lastTransitionTime``) to
    ``status.accumulatedPastExecutionTimeSeconds``, as SyncAdmittedCondition does: the total over every
    past admit-evict cycle (the maximum-execution-time deactivation alone clears it).

    Example:
        >>> wl = {"status": {"admission": {"clusterQueue": "cq"}, "conditions": [{"type": "Admitted",
        ...     "status": "True", "reason": "Admitted", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        ...     "accumulatedPastExecutionTimeSeconds": 10}}
        >>> unset_quota_reservation(wl, "Pending", "evicted", "2026-01-01T00:01:30Z")
        True
        >>> wl["status"]["accumulatedPastExecutionTimeSeconds"], find(wl, "Admitted")["status"]
        (100, 'False')
    """
    changed = set_condition(wl, msg.QUOTA_RESERVED, False, reason, message, now)
    status = wl.setdefault("status", {})
    if status.get("admission") is not None:
        status.pop("admission")
        changed = True
    if is_true(wl, msg.ADMITTED):
        since = parse_rfc3339((find(wl, msg.ADMITTED) or {}).get("lastTransitionTime"))
        until = parse_rfc3339(now)
        if since is not None and until is not None:
            past = int(status.get("accumulatedPastExecutionTimeSeconds") or 0)
            status["accumulatedPastExecutionTimeSeconds"] = past + max(0, int(until - since))
        changed |= set_condition(wl, msg.ADMITTED, False, "NoReservation", msg.NO_RESERVATION_MESSAGE, now)
    return changed


def evict(
    wl: dict[str, Any], reason: str, message: str, now: str, preemption_reason: str | None = None
) -> bool:
    """``Evicted=True`` with ``reason``/``message`` (and ``Preempted=True`` for preemptions), one more
    eviction in ``status.schedulingStats`` (:func:`count_eviction`); the admission checks go back to
    ``Pending`` (:func:`reset_checks_on_eviction`)."""
    changed = set_condition(wl, msg.EVICTED, True, reason, message, now)
    changed |= count_eviction(wl, reason)
    changed |= reset_checks_on_eviction(wl, now)
    if preemption_reason is not None:
        changed |= set_condition(
            wl, msg.PREEMPTED, True, preemption_reason, message, now, observed_generation=False
        )
    return changed


def count_eviction(wl: dict[str, Any], reason: str) -> bool:
    """One more eviction in ``status.schedulingStats.evictions`` (Kueue's workloadEvictionStateInc),
    keyed by ``reason`` and ``underlyingCause``: a ``DeactivatedDueTo<cause>`` condition reason counts
    as ``Deactivated`` with ``<cause>`` as the underlying cause, every other reason with ``""``.

    Example:
        >>> wl = {"status": {}}
        >>> count_eviction(wl, "Preempted"), count_eviction(wl, "Preempted")
        (True, True)
        >>> count_eviction(wl, "DeactivatedDueToMaximumExecutionTimeExceeded")
        True
        >>> wl["status"]["schedulingStats"]["evictions"][0]["count"]
        2
        >>> wl["status"]["schedulingStats"]["evictions"][1]["underlyingCause"]
        'MaximumExecutionTimeExceeded'
    """
    cause = ""
    prefix = msg.EVICTED_BY_DEACTIVATION + "DueTo"
    if reason.startswith(prefix):
        reason, cause = msg.EVICTED_BY_DEACTIVATION, reason[len(prefix) :]
    stats = wl.setdefault("status", {}).setdefault("schedulingStats", {})
    evictions = stats.setdefault("evictions", [])
    for entry in evictions:
        if entry.get("reason") == reason and entry.get("underlyingCause", "") == cause:
            entry["count"] = int(entry.get("count") or 0) + 1
            return True
    evictions.append({"reason": reason, "underlyingCause": cause, "count": 1})
    return True


def reset_checks_on_eviction(wl: dict[str, Any], now: str) -> bool:
    """Every check back to ``Pending`` ("Reset to Pending after eviction. Previously: <state>"), a
    ``Retry`` one counting one more retry (``resetChecksOnEviction``); return whether any changed.

    Example:
        >>> wl = {"status": {"admissionChecks": [{"name": "p", "state": "Retry", "requeueAfterSeconds": 1}]}}
        >>> reset_checks_on_eviction(wl, "t"), wl["status"]["admissionChecks"][0]["retryCount"]
        (True, 1)
    """
    changed = False
    checks = (wl.get("status") or {}).get("admissionChecks") or []
    for i, check in enumerate(checks):
        if check.get("state") == "Pending":
            continue
        new: dict[str, Any] = {
            "name": check["name"],
            "state": "Pending",
            "message": f"Reset to Pending after eviction. Previously: {check.get('state')}",
            "lastTransitionTime": now,
        }
        if check.get("requeueAfterSeconds") is not None:
            new["requeueAfterSeconds"] = check["requeueAfterSeconds"]
        if check.get("state") == "Retry":
            new["retryCount"] = int(check.get("retryCount") or 0) + 1
        checks[i] = new
        changed = True
    return changed
