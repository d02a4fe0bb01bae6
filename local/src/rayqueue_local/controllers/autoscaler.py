"""A local "cluster autoscaler" that answers ProvisioningRequests (autoscaling.x-k8s.io/v1).

The real cluster autoscaler (kubernetes/autoscaler ``cluster-autoscaler/provisioningrequest``) accepts a
request (``Accepted=True``, reason ``Accepted``, "ProvisioningRequest is accepted by ClusterAutoscaler"),
looks for capacity (``Provisioned=False``, ``CapacityIsNotFound``) and then either provisions it
(``Provisioned=True``, ``CapacityIsProvisioned``, "Capacity is found in the cluster") or gives up
(``Failed=True``); it may later take the nodes back (``CapacityRevoked=True``). Condition reasons and
messages follow ``provisioningrequest/conditions/conditions.go``.

Here there are no nodes to add: a request is accepted at once and answered after
``provisioning_delay_seconds``; the first ``provisioning_failures`` requests of each owner (a Kueue
Workload) fail, so a test or a scenario can show Kueue's retries and its final rejection
(:class:`~rayqueue_local.options.ControlPlaneOptions`). :meth:`LocalClusterAutoscaler.revoke_capacity`
sets ``CapacityRevoked`` on a provisioned request.

Example:
    >>> scaler = LocalClusterAutoscaler(delay_seconds=0.0, failures=1)
    >>> scaler.name, scaler.failures
    ('cluster-autoscaler', 1)
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.base import QueueController, get_or_none
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue.provisioning import PROVISIONING_REQUESTS
from rayqueue_local.storage.store import StoreError

__all__ = ["FAILED_REASON", "LocalClusterAutoscaler"]

FAILED_REASON = "FailedToBookCapacity"
"""The ``Failed`` reason of a request the local autoscaler was told to fail (upstream's
``FailedToBookCapacityReason``).
"""

_ACCEPTED = ("Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler")
_NOT_FOUND = ("CapacityIsNotFound", "Capacity is not found, CA will try to find it later.")
_PROVISIONED = ("CapacityIsProvisioned", "Capacity is found in the cluster")


class LocalClusterAutoscaler(QueueController):
    """Answers ProvisioningRequests after ``delay_seconds``, failing the first ``failures`` per owner.

    Example:
        >>> LocalClusterAutoscaler().watches
        ('provisioningrequests.autoscaling.x-k8s.io',)
    """

    name = "cluster-autoscaler"
    watches = (PROVISIONING_REQUESTS,)
    resync_seconds = 0.25

    def __init__(self, *, delay_seconds: float = 0.5, failures: int = 0) -> None:
        super().__init__()
        self.delay_seconds = delay_seconds
        self.failures = failures
        self._seen: dict[str, float] = {}
        self._failed: dict[str, int] = {}
        self._lock = threading.Lock()

    def resync(self) -> list[Any]:
        """Every request still waiting for an answer."""
        if self.store is None:
            return []
        return [
            (PROVISIONING_REQUESTS, pr["metadata"].get("namespace"), pr["metadata"]["name"])
            for pr in self.store.list(PROVISIONING_REQUESTS)
            if not _answered(pr)
        ]

    def reconcile(self, item: Any) -> None:
        """Accept a new request; answer it once its delay is over."""
        _, namespace, name = item
        pr = get_or_none(self.store, PROVISIONING_REQUESTS, namespace, name)
        if pr is None:
            return
        if _answered(pr) or pr["metadata"].get("deletionTimestamp"):
            return
        uid = pr["metadata"].get("uid", name)
        now = now_rfc3339()
        with self._lock:
            first = self._seen.setdefault(uid, time.monotonic())
        new = copy.deepcopy(pr)
        if time.monotonic() - first < self.delay_seconds:
            changed = cond.set_condition(new, "Accepted", True, *_ACCEPTED, now)
            changed |= cond.set_condition(new, "Provisioned", False, *_NOT_FOUND, now)
            if changed:
                self._write(new)
            return
        owner = next(
            (ref.get("uid") for ref in pr["metadata"].get("ownerReferences") or () if ref.get("controller")),
            uid,
        )
        with self._lock:
            fail = self._failed.get(owner, 0) < self.failures
            if fail:
                self._failed[owner] = self._failed.get(owner, 0) + 1
        cond.set_condition(new, "Accepted", True, *_ACCEPTED, now)
        if fail:
            text = (
                "The local cluster autoscaler could not provision the capacity "
                f"(provisioning_failures={self.failures})"
            )
            cond.set_condition(new, "Provisioned", False, *_NOT_FOUND, now)
            cond.set_condition(new, "Failed", True, FAILED_REASON, text, now)
        else:
            cond.set_condition(new, "Provisioned", True, *_PROVISIONED, now)
        self._write(new)

    def revoke_capacity(self, namespace: str, name: str, message: str = "Capacity was revoked") -> None:
        """Take a provisioned request's capacity back: ``CapacityRevoked=True``."""
        pr = copy.deepcopy(dict(self.store.get(PROVISIONING_REQUESTS, namespace, name)))
        cond.set_condition(pr, "CapacityRevoked", True, "CapacityRevoked", message, now_rfc3339())
        self._write(pr)

    def _write(self, pr: dict[str, Any]) -> None:
        try:
            self.store.update_status(PROVISIONING_REQUESTS, pr)
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise


def _answered(pr: dict[str, Any]) -> bool:
    """Whether the request has its final answer (``Provisioned`` or ``Failed`` true).

    Example:
        >>> _answered({"status": {"conditions": [{"type": "Failed", "status": "True"}]}})
        True
    """
    return cond.is_true(pr, "Provisioned") or cond.is_true(pr, "Failed")
