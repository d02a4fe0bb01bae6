"""Kueue's workload controller (core/workload_controller.go, v0.19.2): a Workload's own lifecycle.

``spec.active=false`` evicts it, admitted or not: ``Evicted=True`` and ``Requeued=False``, both
``Deactivated`` (or ``DeactivatedDueTo<cause>`` when a ``DeactivationTarget`` such as
``MaximumExecutionTimeExceeded`` asked for it) with "The workload is deactivated[ due to ...]"; an
admitted one then loses its reservation once its job has stopped (:mod:`.jobs`). ``active=true``
again turns ``Requeued=False/Deactivated*`` into ``Requeued=True`` (``Reactivated``, "The workload
was reactivated"), as a restarted queue does for Workloads it drained, and the Workload is queued
again; readmission resets ``Evicted`` to ``False``/``QuotaReserved`` with "Previously: <message>"
(:func:`.conditions.set_quota_reserved`). The ``resource-in-use`` finalizer is released once the
Workload is finished or its job is gone.

Example:
    >>> WorkloadReconciler.__mro__[1].__name__
    'AdmissionCheckReconciler'
"""

from __future__ import annotations

import copy
import time
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue.admissionchecks import AdmissionCheckReconciler
from rayqueue_local.controllers.kueue.ops import (
    CLUSTER_QUEUES,
    JOB_KINDS,
    LOCAL_QUEUES,
    WORKLOAD_CONTROLLER,
    WORKLOADS,
    metadata_of,
)
from rayqueue_local.controllers.kueue.podsready import PodsReadyReconciler

__all__ = ["WorkloadReconciler"]


class WorkloadReconciler(AdmissionCheckReconciler, PodsReadyReconciler):
    """The Workload half of the Kueue controller (a mixin over :class:`~.ops.StoreOps`)."""

    def reconcile_workload(self, namespace: str | None, name: str) -> None:
        """Deactivation, reactivation and finalizer release for one Workload."""
        wl = self._get(WORKLOADS, namespace, name)
        if wl is None:
            return
        if metadata_of(wl).get("deletionTimestamp"):
            owner = next(iter(metadata_of(wl).get("ownerReferences") or ()), None)
            if owner is None or not any(
                self._get(k, namespace, owner.get("name", ""))
                for k, kind in JOB_KINDS.items()
                if kind == owner.get("kind")
            ):
                self._drop_finalizer(wl)
            return
        if cond.is_true(wl, msg.FINISHED):
            self._drop_finalizer(wl)
            return
        if (wl.get("spec") or {}).get("active", True) is False:
            self._deactivate(wl)
        else:
            self._check_active(wl)

    def _deactivate(self, wl: dict[str, Any]) -> None:
        """``spec.active=false``: ``Evicted=True`` and ``Requeued=False``, both ``Deactivated`` (and the
        cause a DeactivationTarget gave), whether or not the Workload was admitted.

        An eviction for another reason (a preemption, a stopped queue) is replaced by the
        deactivation, as upstream does (it evicts unless already evicted *by deactivation*)."""
        evicted = cond.find(wl, msg.EVICTED)
        requeued = cond.find(wl, msg.REQUEUED)
        if (
            _deactivation(evicted, "True")
            and _deactivation(requeued, "False")
            and cond.find(wl, msg.DEACTIVATION_TARGET) is None
        ):
            return
        had_admission = bool((wl.get("status") or {}).get("admission"))
        wl = copy.deepcopy(wl)
        now = now_rfc3339()
        if _deactivation(evicted, "True") and evicted is not None:
            reason, message = evicted.get("reason", ""), evicted.get("message", "")
            newly_evicted = False
        else:
            reason, message = msg.EVICTED_BY_DEACTIVATION, msg.DEACTIVATED_MESSAGE
            target = cond.find(wl, msg.DEACTIVATION_TARGET)
            if target is not None:
                reason = f"{reason}DueTo{target.get('reason', '')}"
                message = f"{message} due to {target.get('message', '')}"
            cond.evict(wl, reason, message, now)
            newly_evicted = True
        cond.remove_condition(wl, msg.DEACTIVATION_TARGET)
        cond.set_condition(wl, msg.REQUEUED, False, reason, message, now)
        (wl.get("status") or {}).pop("requeueState", None)
        wl = self.store.update_status(WORKLOADS, wl)
        if had_admission and newly_evicted:
            self._event(wl, f"EvictedDueTo{reason}", message, source=WORKLOAD_CONTROLLER)

    def _check_active(self, wl: dict[str, Any]) -> None:
        """An active Workload: admission checks and requeue backoff (:mod:`.admissionchecks`), the
        PodsReady timeout (:mod:`.podsready`), deactivation targets, the maximum execution time,
        requeue reasons."""
        now_s = time.time()
        if self.reconcile_checks(wl, now_s) or self.reconcile_pods_ready(wl, now_s):
            return
        now = now_rfc3339()
        if cond.is_true(wl, msg.DEACTIVATION_TARGET):
            wl = copy.deepcopy(wl)
            wl["spec"]["active"] = False
            self.store.update(WORKLOADS, wl)
            return
        limit = (wl.get("spec") or {}).get("maximumExecutionTimeSeconds")
        admitted = cond.find(wl, msg.ADMITTED)
        if limit and admitted is not None and admitted.get("status") == "True":
            spent = time.time() - (parse_rfc3339(admitted.get("lastTransitionTime")) or 0.0)
            spent += int((wl.get("status") or {}).get("accumulatedPastExecutionTimeSeconds") or 0)
            if spent >= int(limit):
                wl = copy.deepcopy(wl)
                cond.set_condition(
                    wl,
                    msg.DEACTIVATION_TARGET,
                    True,
                    msg.MAXIMUM_EXECUTION_TIME_EXCEEDED,
                    msg.EXCEEDING_MAXIMUM_EXECUTION_TIME,
                    now,
                )
                wl["status"].pop("accumulatedPastExecutionTimeSeconds", None)
                wl = self.store.update_status(WORKLOADS, wl)
                text = f"The maximum execution time ({int(limit)}s) exceeded"
                self._event(
                    wl, msg.MAXIMUM_EXECUTION_TIME_EXCEEDED, text, warning=True, source=WORKLOAD_CONTROLLER
                )
                return
        requeued = cond.find(wl, msg.REQUEUED)
        if requeued is None or requeued.get("status") != "False":
            return
        if _deactivation(requeued, "False"):
            # Reactivated (also after a derived DeactivatedDueTo<cause>): back to the queue.
            wl = copy.deepcopy(wl)
            cond.set_condition(wl, msg.REQUEUED, True, msg.REACTIVATED, msg.REACTIVATED_MESSAGE, now)
            (wl.get("status") or {}).pop("requeueState", None)
            self.store.update_status(WORKLOADS, wl)
            return
        restarted = {
            msg.EVICTED_BY_CLUSTER_QUEUE_STOPPED: (
                msg.CLUSTER_QUEUE_RESTARTED,
                "The ClusterQueue was restarted after being stopped",
            ),
            msg.EVICTED_BY_LOCAL_QUEUE_STOPPED: (
                msg.LOCAL_QUEUE_RESTARTED,
                "The LocalQueue was restarted after being stopped",
            ),
        }.get(requeued.get("reason", ""))
        if restarted is None or self._queue_stopped(wl, requeued.get("reason", "")):
            return
        wl = copy.deepcopy(wl)
        cond.set_condition(wl, msg.REQUEUED, True, *restarted, now)
        self.store.update_status(WORKLOADS, wl)

    def _queue_stopped(self, wl: dict[str, Any], reason: str) -> bool:
        lq = self._get(
            LOCAL_QUEUES, metadata_of(wl).get("namespace"), (wl.get("spec") or {}).get("queueName", "")
        )
        if reason == msg.EVICTED_BY_LOCAL_QUEUE_STOPPED:
            return lq is not None and ((lq.get("spec") or {}).get("stopPolicy") or "None") != "None"
        if reason == msg.EVICTED_BY_CLUSTER_QUEUE_STOPPED:
            cq = (
                self._get(CLUSTER_QUEUES, None, (lq or {}).get("spec", {}).get("clusterQueue", ""))
                if lq
                else None
            )
            return cq is not None and ((cq.get("spec") or {}).get("stopPolicy") or "None") != "None"
        return False


def _deactivation(condition: dict[str, Any] | None, status: str) -> bool:
    """Whether ``condition`` has ``status`` and a deactivation reason (``Deactivated[DueTo<cause>]``).

    Example:
        >>> _deactivation({"status": "False", "reason": "DeactivatedDueToRequeuingLimitExceeded"}, "False")
        True
        >>> _deactivation({"status": "True", "reason": "Preempted"}, "True"), _deactivation(None, "True")
        (False, False)
    """
    return (
        condition is not None
        and condition.get("status") == status
        and str(condition.get("reason") or "").startswith(msg.EVICTED_BY_DEACTIVATION)
    )
