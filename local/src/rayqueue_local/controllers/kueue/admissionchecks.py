"""Admission checks (Kueue v0.19.2): a Workload's ``status.admissionChecks`` and what they do to it.

A ClusterQueue lists checks in ``spec.admissionChecksStrategy.admissionChecks[{name, onFlavors}]``
(the older ``spec.admissionChecks: [name]`` is converted to it, :mod:`rayqueue_local.registry.conversion`);
a check applies to a reservation when it names no flavors or one of the flavors assigned
(``pkg/workload/admissionchecks.go`` ``AdmissionChecksForWorkload``). When the scheduler reserves quota
for a Workload with checks, each check starts ``Pending`` and ``Admitted`` is not set:
``QuotaReserved`` comes first, ``Admitted=True`` ("The workload is admitted") only once every check is
``Ready`` (``SyncAdmittedCondition``; with ``UnadmittedWorkloadsObservability`` off, v0.19's default,
no ``Admitted=False`` is written while checks are pending).

The workload controller (``pkg/controller/core/workload_controller.go``) acts on the states:

* ``Retry``: ``status.requeueState.requeueAt`` = the check's ``lastTransitionTime`` +
  ``requeueAfterSeconds`` (``NeedsRequeueAtUpdate``), then ``Evicted=True`` reason ``AdmissionCheck``,
  "Evicted due to AdmissionCheck in Retry state: \\"<name>\\" (<message>)"
  (``reconcileCheckBasedEviction``, ``buildAdmissionChecksMessage``). Eviction resets every check to
  ``Pending`` with "Reset to Pending after eviction. Previously: <state>", and a ``Retry`` one gets
  ``retryCount + 1`` (``pkg/workload/evict/evict.go`` ``resetChecksOnEviction``). Once the job has
  stopped the quota is released with ``Requeued=False`` (``AdmissionCheck``); after ``requeueAt``,
  ``Requeued=True`` ``BackoffFinished`` ("The workload backoff was finished") and the Workload is queued
  again.
* ``Rejected``: ``DeactivationTarget=True`` reason ``AdmissionCheck`` with "AdmissionCheck in Rejected
  state: ..." and a Warning event ``AdmissionCheckRejected`` "Deactivated due to ..."; the Workload is
  then deactivated (``Evicted`` ``DeactivatedDueToAdmissionCheck``, :mod:`.lifecycle`).

Example:
    >>> cq = {"spec": {"admissionChecksStrategy": {"admissionChecks": [
    ...     {"name": "sample-prov", "onFlavors": ["default-flavor"]},
    ...     {"name": "gpu-only", "onFlavors": ["gpu"]}]}}}
    >>> admission = {"podSetAssignments": [{"name": "head", "flavors": {"cpu": "default-flavor"}}]}
    >>> checks_for_admission(cq, admission)
    ['sample-prov']
    >>> checks_message([{"name": "sample-prov", "message": "Retrying after failure: no nodes"}], "Retry")
    'AdmissionCheck in Retry state: "sample-prov" (Retrying after failure: no nodes)'
"""

from __future__ import annotations

import copy
from typing import Any

from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue.ops import ADMISSION, WORKLOAD_CONTROLLER, WORKLOADS, StoreOps

__all__ = [
    "BACKOFF_FINISHED",
    "EVICTED_BY_ADMISSION_CHECK",
    "AdmissionCheckReconciler",
    "all_checks_ready",
    "backoff_remaining",
    "checks_for_admission",
    "checks_message",
    "initial_check_states",
    "waits_for_backoff",
]

EVICTED_BY_ADMISSION_CHECK = "AdmissionCheck"
"""The ``Evicted`` / ``Requeued`` / ``DeactivationTarget`` reason for check-based evictions
(``WorkloadEvictedByAdmissionCheck``).
"""

BACKOFF_FINISHED = "BackoffFinished"
"""``Requeued=True`` reason once a Workload's requeue backoff is over (``WorkloadBackoffFinished``)."""

_BACKOFF_FINISHED_MESSAGE = "The workload backoff was finished"
_BACKOFF_REASONS = (EVICTED_BY_ADMISSION_CHECK, "PodsReadyTimeout")


def checks_for_admission(cluster_queue: dict[str, Any] | None, admission: dict[str, Any]) -> list[str]:
    """The sorted names of the ClusterQueue's checks that apply to ``admission``'s flavors.

    Example:
        >>> strategy = {"admissionChecksStrategy": {"admissionChecks": [{"name": "a"}]}}
        >>> checks_for_admission({"spec": strategy}, {})
        ['a']
        >>> checks_for_admission({"spec": {"admissionChecks": ["old"]}}, {}), checks_for_admission(None, {})
        (['old'], [])
    """
    spec = (cluster_queue or {}).get("spec") or {}
    entries = list((spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ())
    entries += [{"name": name} for name in spec.get("admissionChecks") or ()]  # v1beta1 spelling
    flavors = {
        flavor
        for psa in admission.get("podSetAssignments") or ()
        for flavor in (psa.get("flavors") or {}).values()
    }
    names = set()
    for entry in entries:
        on = entry.get("onFlavors") or []
        if not on or flavors & set(on):
            names.add(entry["name"])
    return sorted(names)


def initial_check_states(names: list[str], existing: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """``status.admissionChecks`` for a reservation: kept where present, ``Pending`` where new, sorted
    by name (``syncAdmissionCheckConditions``).

    Example:
        >>> [c["state"] for c in initial_check_states(["a", "b"], [{"name": "b", "state": "Ready"}], "t")]
        ['Pending', 'Ready']
    """
    by_name = {c.get("name"): c for c in existing}
    return [
        dict(by_name[n])
        if n in by_name
        else {"name": n, "state": "Pending", "message": "", "lastTransitionTime": now}
        for n in sorted(names)
    ]


def all_checks_ready(wl: dict[str, Any]) -> bool:
    """Whether every admission check of ``wl`` is ``Ready`` (``HasAllChecksReady``; none is all).

    Example:
        >>> all_checks_ready({"status": {"admissionChecks": [{"state": "Ready"}, {"state": "Pending"}]}})
        False
    """
    return all(c.get("state") == "Ready" for c in (wl.get("status") or {}).get("admissionChecks") or ())


def checks_message(checks: list[dict[str, Any]], state: str) -> str:
    """Kueue's ``buildAdmissionChecksMessage``: the checks in ``state``, by name, with their messages.

    Example:
        >>> checks_message([{"name": "b"}, {"name": "a", "message": "m"}], "Rejected")
        'AdmissionChecks in Rejected state: "a" (m); "b"'
    """
    parts = [
        f'"{c["name"]}" ({c["message"]})' if c.get("message") else f'"{c["name"]}"'
        for c in sorted(checks, key=lambda c: c["name"])
    ]
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def _max_retry_time(wl: dict[str, Any]) -> float:
    """The latest ``lastTransitionTime + requeueAfterSeconds`` of the ``Retry`` checks (0: none)."""
    latest = 0.0
    for check in (wl.get("status") or {}).get("admissionChecks") or ():
        if check.get("state") != "Retry" or check.get("requeueAfterSeconds") is None:
            continue
        since = parse_rfc3339(check.get("lastTransitionTime"))
        if since:
            latest = max(latest, since + int(check["requeueAfterSeconds"]))
    return latest


def backoff_remaining(wl: dict[str, Any], now: float) -> float:
    """Seconds until ``status.requeueState.requeueAt`` (0 when there is none or it has passed): a
    Workload in its requeue backoff is not considered by the scheduler.

    Example:
        >>> wl = {"status": {"requeueState": {"requeueAt": "2026-01-01T00:01:00Z"}}}
        >>> backoff_remaining(wl, 1767225600.0)
        60.0
    """
    at = parse_rfc3339(((wl.get("status") or {}).get("requeueState") or {}).get("requeueAt"))
    return max(0.0, at - now) if at else 0.0


def waits_for_backoff(wl: dict[str, Any]) -> bool:
    """Whether ``wl`` has a requeue backoff to sit out (``Requeued=False`` for a check-based or
    PodsReadyTimeout eviction, or a ``requeueAt``): the workload controller looks at it again later.

    Example:
        >>> waits_for_backoff({"status": {"conditions": [
        ...     {"type": "Requeued", "status": "False", "reason": "AdmissionCheck"}]}})
        True
    """
    requeued = cond.find(wl, msg.REQUEUED)
    if (
        requeued is not None
        and requeued.get("status") == "False"
        and requeued.get("reason") in _BACKOFF_REASONS
    ):
        return True
    return bool(((wl.get("status") or {}).get("requeueState") or {}).get("requeueAt"))


class AdmissionCheckReconciler(StoreOps):
    """The admission-check half of Kueue's workload controller (a mixin over :class:`~.ops.StoreOps`)."""

    def reconcile_checks(self, wl: dict[str, Any], now: float) -> bool:
        """Act on ``wl``'s checks and requeue backoff; return whether it wrote (then stop for this round).

        Order as upstream's ``Reconcile``: the ``requeueAt`` of ``Retry`` checks, check-based eviction
        or deactivation, ``Admitted`` once all checks are ``Ready``, the end of a backoff."""
        status = wl.get("status") or {}
        stamp = now_rfc3339()
        if cond.is_true(wl, msg.DEACTIVATION_TARGET):
            return False  # the workload controller deactivates it first (.lifecycle)
        retry_at = _max_retry_time(wl)
        current = parse_rfc3339((status.get("requeueState") or {}).get("requeueAt")) or 0.0
        if retry_at > now and int(retry_at) > int(current):
            new = copy.deepcopy(wl)
            new["status"].setdefault("requeueState", {})["requeueAt"] = format_rfc3339(retry_at)
            self.store.update_status(WORKLOADS, new)
            return True
        checks = status.get("admissionChecks") or []
        rejected = [c for c in checks if c.get("state") == "Rejected"]
        retry = [c for c in checks if c.get("state") == "Retry"]
        if (rejected or retry) and not cond.is_true(wl, msg.EVICTED):
            new = copy.deepcopy(wl)
            if rejected:
                text = checks_message(rejected, "Rejected")
                cond.set_condition(
                    new, msg.DEACTIVATION_TARGET, True, EVICTED_BY_ADMISSION_CHECK, text, stamp
                )
                stored = self.store.update_status(WORKLOADS, new)
                self._event(
                    stored,
                    "AdmissionCheckRejected",
                    f"Deactivated due to {text}",
                    warning=True,
                    source=WORKLOAD_CONTROLLER,
                )
                return True
            text = "Evicted due to " + checks_message(retry, "Retry")
            cond.evict(new, EVICTED_BY_ADMISSION_CHECK, text, stamp)
            stored = self.store.update_status(WORKLOADS, new)
            if status.get("admission"):
                self._event(
                    stored, f"EvictedDueTo{EVICTED_BY_ADMISSION_CHECK}", text, source=WORKLOAD_CONTROLLER
                )
            return True
        if (
            checks
            and cond.is_true(wl, msg.QUOTA_RESERVED)
            and not cond.is_true(wl, msg.ADMITTED)
            and not cond.is_true(wl, msg.EVICTED)
            and all_checks_ready(wl)
        ):
            new = copy.deepcopy(wl)
            cond.set_condition(new, msg.ADMITTED, True, "Admitted", msg.ADMITTED_MESSAGE, stamp)
            stored = self.store.update_status(WORKLOADS, new)
            reserved = (
                parse_rfc3339((cond.find(wl, msg.QUOTA_RESERVED) or {}).get("lastTransitionTime")) or now
            )
            cq = (status.get("admission") or {}).get("clusterQueue", "")
            waited = max(0.0, now - reserved)
            text = f"Admitted by ClusterQueue {cq}, wait time since reservation was {waited:.0f}s"
            self._event(stored, "Admitted", text, source=ADMISSION)
            self._enqueue_owner_of(stored)
            return True
        requeued = cond.find(wl, msg.REQUEUED)
        if (
            requeued is not None
            and requeued.get("status") == "False"
            and requeued.get("reason") in _BACKOFF_REASONS
            and not cond.is_true(wl, msg.QUOTA_RESERVED)
        ):
            if backoff_remaining(wl, now) > 0:
                return False
            new = copy.deepcopy(wl)
            (new["status"].get("requeueState") or {}).pop("requeueAt", None)
            if new["status"].get("requeueState") == {}:
                new["status"].pop("requeueState")
            cond.set_condition(new, msg.REQUEUED, True, BACKOFF_FINISHED, _BACKOFF_FINISHED_MESSAGE, stamp)
            self.store.update_status(WORKLOADS, new)
            return True
        return False

    def _enqueue_owner_of(self, wl: dict[str, Any]) -> None:
        """Hook: the Kueue controller re-checks the owning job (it unsuspends an admitted one)."""
        enqueue = getattr(self, "_enqueue_owner", None)
        if enqueue is not None:
            enqueue(wl)
