"""What a Workload's admission checks and requeue backoff say, in Kueue's words (pure: dicts in, text out).

Kueue v0.19 reserves quota first (``QuotaReserved=True``) and admits (``Admitted=True``) only once every
admission check in ``status.admissionChecks`` is ``Ready``
(https://kueue.sigs.k8s.io/docs/concepts/admission_check/). Kueue's ProvisioningRequest check
(``pkg/controller/admissionchecks/provisioning``) creates ProvisioningRequest
``<workload>-<check>-<attempt>``, where the attempt is the check's ``retryCount + 1``; a failed request
is retried ``retryStrategy.backoffLimitCount`` times (the check goes ``Retry``, the Workload is evicted
with reason ``AdmissionCheck`` and requeued after ``status.requeueState.requeueAt``); after the last
failure the check is ``Rejected`` and the Workload deactivated (``Evicted`` reason
``DeactivatedDueToAdmissionCheck``, "The workload is deactivated due to AdmissionCheck in Rejected state:
..."). ``waitForPodsReady`` evicts a Workload whose pods are not ready in time (reason
``PodsReadyTimeout``) and requeues it after a backoff
(https://kueue.sigs.k8s.io/docs/tasks/manage/setup_wait_for_pods_ready/).

Example:
    >>> wl = {"metadata": {"name": "raycluster-ws-1a2b3"}, "status": {"admissionChecks": [
    ...     {"name": "sample-prov", "state": "Pending", "retryCount": 1,
    ...      "message": "Capacity is not found, CA will try to find it later."}]}}
    >>> waiting_checks(wl, limits={"sample-prov": 2})
    'waiting for admission check sample-prov: ProvisioningRequest raycluster-ws-1a2b3-sample-prov-2 \
Provisioned=False (attempt 2 of 3): Capacity is not found, CA will try to find it later.'
"""

from __future__ import annotations

from collections.abc import Mapping

from rayqueue_sdk.admission.phases import Obj
from rayqueue_sdk.manifests.meta import conditions_of, epoch_of, name_of

__all__ = [
    "backoff_sentence",
    "rejected_check",
    "waiting_checks",
]

_RESET = "Reset to Pending after eviction."


def _checks(workload: Obj | None) -> list[Mapping[str, object]]:
    return list(((workload or {}).get("status") or {}).get("admissionChecks") or ())


def _attempt_text(check: Mapping[str, object], limits: Mapping[str, int] | None) -> tuple[int, str]:
    attempt = int(str(check.get("retryCount") or 0)) + 1
    limit = (limits or {}).get(str(check.get("name")))
    return attempt, f"attempt {attempt} of {limit + 1}" if limit is not None else f"attempt {attempt}"


def waiting_checks(workload: Obj | None, *, limits: Mapping[str, int] | None = None) -> str | None:
    """The checks a quota-reserved Workload still waits for, or ``None`` when none is pending.

    ``limits`` maps a ProvisioningRequest check's name to its ProvisioningRequestConfig's
    ``retryStrategy.backoffLimitCount`` (when the caller could read them), so the attempt reads "attempt
    2 of 3"; a check not in ``limits`` is named without a request. Without ``limits`` every check is
    taken for Kueue's ProvisioningRequest check. A check's state message
    (the ProvisioningRequest's ``Provisioned`` message, "Retrying after failure: ...") follows Kueue's
    words; ``Ready`` checks are left out.

    Example:
        >>> waiting_checks({"metadata": {"name": "w"}, "status": {"admissionChecks": [
        ...     {"name": "a", "state": "Ready"}, {"name": "b", "state": "Pending", "message": ""}]}})
        'waiting for admission check b: ProvisioningRequest w-b-1 Provisioned=False (attempt 1)'
        >>> waiting_checks({"status": {"admissionChecks": [{"name": "a", "state": "Ready"}]}}) is None
        True
    """
    name = name_of(workload)
    parts = []
    for check in _checks(workload):
        state = str(check.get("state") or "Pending")
        if state == "Ready":
            continue
        check_name = str(check.get("name"))
        message = str(check.get("message") or "")
        attempt, attempt_text = _attempt_text(check, limits)
        provisioning = limits is None or check_name in limits  # unknown: Kueue's built-in check
        if state in ("Pending", "Retry") and provisioning:
            request = f"{name}-{check_name}-{attempt}" if name else f"<workload>-{check_name}-{attempt}"
            text = f"admission check {check_name}: ProvisioningRequest {request} Provisioned=False"
            text += f" ({attempt_text})"
            if state == "Retry":
                text += " (Retry)"
        else:
            text = f"admission check {check_name} ({state})"
        if message and not message.startswith(_RESET):
            text += f": {message}"
        parts.append(text)
    if not parts:
        return None
    return "waiting for " + "; ".join(parts)


def rejected_check(workload: Obj | None) -> tuple[str, str] | None:
    """``(reason, message)`` when Kueue rejected the Workload's admission check (it is or is about to be
    deactivated for it), else ``None``. The reason is ``DeactivatedDueToAdmissionCheck`` once Kueue has
    deactivated the Workload, ``AdmissionCheck`` before (a check ``Rejected``, or the
    ``DeactivationTarget`` Kueue sets for it); the message names the check(s), as Kueue words it.

    Example:
        >>> wl = {"status": {"conditions": [{"type": "Evicted", "status": "True",
        ...     "reason": "DeactivatedDueToAdmissionCheck", "message": "The workload is deactivated due to "
        ...     'AdmissionCheck in Rejected state: "sample-prov" (no capacity)'}]}}
        >>> rejected_check(wl)[0]
        'DeactivatedDueToAdmissionCheck'
    """
    conds = conditions_of(workload)
    evicted, target = conds["Evicted"], conds["DeactivationTarget"]
    if evicted.true and evicted.reason == "DeactivatedDueToAdmissionCheck":
        return "DeactivatedDueToAdmissionCheck", evicted.message or ""
    if target.true and target.reason == "AdmissionCheck":
        return "AdmissionCheck", target.message or ""
    rejected = [c for c in _checks(workload) if c.get("state") == "Rejected"]
    if rejected:
        text = "; ".join(f'"{c.get("name")}" ({c.get("message") or ""})' for c in rejected)
        return "AdmissionCheck", f"AdmissionCheck in Rejected state: {text}"
    return None


def _duration(seconds: float) -> str:
    """``5m``, ``90s``, ``1h`` (Kueue's timeouts are Go durations).

    Example:
        >>> _duration(300), _duration(90), _duration(3600)
        ('5m', '90s', '1h')
    """
    whole = int(seconds)
    if whole and whole % 3600 == 0:
        return f"{whole // 3600}h"
    if whole and whole % 60 == 0:
        return f"{whole // 60}m"
    return f"{whole}s"


def backoff_sentence(
    workload: Obj | None, *, now: float, pods_ready_timeout: float | None = None
) -> str | None:
    """For a Workload evicted for ``PodsReadyTimeout`` or an ``AdmissionCheck`` retry and waiting out its
    requeue backoff: "evicted: <why> (<reason>); requeued, next attempt in <n> s" (``None`` otherwise).

    ``pods_ready_timeout`` (seconds, ``waitForPodsReady.timeout`` when the caller knows it) words the
    PodsReady case as "pods not ready in 5m".

    Example:
        >>> state = {"requeueAt": "2026-01-01T00:01:00Z", "count": 1}
        >>> wl = {"status": {"requeueState": state, "conditions": [
        ...     {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout",
        ...      "message": "Exceeded the PodsReady timeout default/w"}]}}
        >>> backoff_sentence(wl, now=1767225600.0, pods_ready_timeout=300)
        'evicted: pods not ready in 5m (PodsReadyTimeout); requeued, next attempt in 60 s'
    """
    conds = conditions_of(workload)
    evicted = conds["Evicted"]
    reason = evicted.reason if evicted.true else None
    if reason not in ("PodsReadyTimeout", "AdmissionCheck"):
        return None
    if reason == "PodsReadyTimeout":
        why = f"pods not ready in {_duration(pods_ready_timeout)}" if pods_ready_timeout else "pods not ready"
    else:
        why = evicted.message or "an admission check asked for a retry"
        why = why.removeprefix("Evicted due to ")
    state = ((workload or {}).get("status") or {}).get("requeueState") or {}
    at = epoch_of(state.get("requeueAt"))
    if at is not None and at > now:
        tail = f"requeued, next attempt in {int(at - now + 0.5)} s"
    elif conds["Requeued"].true:
        tail = "requeued"
    else:
        tail = "requeued when its backoff ends"
    return f"evicted: {why} ({reason}); {tail}"
