"""Kueue's ``waitForPodsReady`` (v0.19.2, ``pkg/controller/core/workload_controller.go``
``reconcileNotReadyTimeout``, ``admittedNotReadyWorkload``, ``triggerDeactivation``;
https://kueue.sigs.k8s.io/docs/tasks/manage/setup_wait_for_pods_ready/).

With a timeout configured (``ControlPlaneOptions.wait_for_pods_ready_timeout_seconds``), an admitted
Workload whose ``PodsReady`` is not ``True`` within the timeout of its ``Admitted`` transition (reason
``WaitForStart``), or of its ``PodsReady`` transition to ``WaitForRecovery`` (``recoveryTimeout``, the
timeout by default), is evicted: ``Evicted=True`` reason ``PodsReadyTimeout``, "Exceeded the PodsReady
timeout <namespace>/<name>", with ``status.requeueState`` ``count + 1`` and ``requeueAt`` = now +
``backoffBaseSeconds * 2^count`` capped at ``backoffMaxSeconds`` (``UpdateRequeueState``; upstream's
0.0001 jitter left out). Its job stops, the quota is released with ``Requeued=False`` (``PodsReadyTimeout``),
and once ``requeueAt`` has passed it is ``Requeued=True`` ``BackoffFinished`` and queued again
(:mod:`.admissionchecks`). When ``count + 1`` would exceed ``backoffLimitCount``, it is deactivated
instead: ``DeactivationTarget`` reason ``RequeuingLimitExceeded`` ("exceeding the maximum number of
re-queuing retries"), then ``Evicted`` ``DeactivatedDueToRequeuingLimitExceeded`` (:mod:`.lifecycle`).
``blockAdmission`` (admit nothing else while a workload's pods are not ready) and
``requeuingStrategy.timestamp`` act in the admission pass (:func:`~.engine.admission_pass`
``block_admission``, ``requeuing_timestamp``), from ``ControlPlaneOptions``
``wait_for_pods_ready_block_admission`` and ``requeuing_timestamp``.

Example:
    >>> config = PodsReadyConfig(timeout=300.0, base=60, maximum=3600, limit=None)
    >>> admitted = {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    >>> wl = {"status": {"conditions": [admitted]}}
    >>> seconds_left(wl, config, now=1767225600.0 + 240)
    60.0
    >>> next_requeue_state(wl, config, now=1767225600.0)
    {'count': 1, 'requeueAt': '2026-01-01T00:01:00Z'}
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue.ops import WORKLOAD_CONTROLLER, WORKLOADS, StoreOps, metadata_of

__all__ = [
    "EVICTED_BY_PODS_READY_TIMEOUT",
    "PodsReadyConfig",
    "PodsReadyReconciler",
    "next_requeue_state",
    "seconds_left",
]

EVICTED_BY_PODS_READY_TIMEOUT = "PodsReadyTimeout"
"""The ``Evicted`` / ``Requeued`` reason of a waitForPodsReady eviction
(``WorkloadEvictedByPodsReadyTimeout``).
"""

_LIMIT_REASON = "RequeuingLimitExceeded"
_LIMIT_MESSAGE = "exceeding the maximum number of re-queuing retries"


@dataclass(frozen=True)
class PodsReadyConfig:
    """Kueue's ``waitForPodsReady``: ``timeout`` seconds (also the ``recoveryTimeout``) and the
    ``requeuingStrategy`` (``base``/``maximum`` backoff seconds, ``limit`` = ``backoffLimitCount``,
    ``None`` for no limit).

    Example:
        >>> PodsReadyConfig(timeout=60.0).limit is None
        True
    """

    timeout: float
    base: int = 60
    maximum: int = 3600
    limit: int | None = None


def seconds_left(wl: dict[str, Any], config: PodsReadyConfig, *, now: float) -> float | None:
    """Seconds until ``wl`` times out waiting for its pods (0: timed out), or ``None`` when it is not
    waiting (not admitted, pods ready, evicted, inactive).

    Example:
        >>> seconds_left({"status": {}}, PodsReadyConfig(timeout=60.0), now=0.0) is None
        True
    """
    if not cond.is_true(wl, msg.ADMITTED) or cond.is_true(wl, msg.EVICTED):
        return None
    if (wl.get("spec") or {}).get("active", True) is False:
        return None
    ready = cond.find(wl, msg.PODS_READY)
    if ready is not None and ready.get("status") == "True":
        return None
    if ready is None or ready.get("reason") in ("WaitForStart", "PodsReady"):
        since = parse_rfc3339((cond.find(wl, msg.ADMITTED) or {}).get("lastTransitionTime"))
    elif ready.get("reason") == "WaitForRecovery":
        since = parse_rfc3339(ready.get("lastTransitionTime"))
    else:
        return None
    return max(0.0, (since or now) + config.timeout - now)


def next_requeue_state(wl: dict[str, Any], config: PodsReadyConfig, *, now: float) -> dict[str, Any]:
    """``status.requeueState`` after one more PodsReady eviction (``UpdateRequeueState``).

    Example:
        >>> wl = {"status": {"requeueState": {"count": 3}}}
        >>> next_requeue_state(wl, PodsReadyConfig(timeout=1.0, base=10, maximum=60), now=0.0)["requeueAt"]
        '1970-01-01T00:01:00Z'
    """
    count = int(((wl.get("status") or {}).get("requeueState") or {}).get("count") or 0) + 1
    wait = min(config.base * 2 ** (count - 1), config.maximum)
    return {"count": count, "requeueAt": format_rfc3339(now + wait)}


class PodsReadyReconciler(StoreOps):
    """The waitForPodsReady part of Kueue's workload controller (a mixin over :class:`~.ops.StoreOps`);
    ``pods_ready_config`` is ``None`` when waitForPodsReady is off."""

    pods_ready_config: PodsReadyConfig | None = None

    def reconcile_pods_ready(self, wl: dict[str, Any], now: float) -> bool:
        """Evict (or mark for deactivation) a Workload whose pods missed the timeout; return whether it
        wrote."""
        config = self.pods_ready_config
        if config is None or cond.is_true(wl, msg.DEACTIVATION_TARGET):
            return False
        left = seconds_left(wl, config, now=now)
        if left is None or left > 0:
            return False
        new = copy.deepcopy(wl)
        stamp = now_rfc3339()
        count = int(((wl.get("status") or {}).get("requeueState") or {}).get("count") or 0)
        if config.limit is not None and count + 1 > config.limit:
            cond.set_condition(new, msg.DEACTIVATION_TARGET, True, _LIMIT_REASON, _LIMIT_MESSAGE, stamp)
            self.store.update_status(WORKLOADS, new)
            return True
        meta = metadata_of(wl)
        text = f"Exceeded the PodsReady timeout {meta.get('namespace')}/{meta.get('name')}"
        cond.evict(new, EVICTED_BY_PODS_READY_TIMEOUT, text, stamp)
        new["status"]["requeueState"] = next_requeue_state(wl, config, now=now)
        stored = self.store.update_status(WORKLOADS, new)
        self._event(stored, f"EvictedDueTo{EVICTED_BY_PODS_READY_TIMEOUT}", text, source=WORKLOAD_CONTROLLER)
        return True
