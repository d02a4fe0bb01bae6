"""Where an autoscaling RayCluster stands: desired vs running workers, and a scale-up waiting in the queue.

Pure: :func:`scaling_from` reads a RayCluster with ``spec.enableInTreeAutoscaling`` and its Kueue
Workloads (every slice carrying its ``job-uid`` label). Ray's autoscaler writes the desired worker count
into ``workerGroupSpecs[].replicas``; KubeRay reports ``readyWorkerReplicas``. Under Kueue's elastic jobs
(``kueue.x-k8s.io/elastic-job: "true"``) a scale-up is a new Workload slice annotated
``kueue.x-k8s.io/workload-slice-replacement-for``: while it is not admitted the new workers wait, and
the slice's ``QuotaReserved`` condition says why, in Kueue's words.

Example:
    >>> rc = {"spec": {"enableInTreeAutoscaling": True, "workerGroupSpecs": [
    ...     {"replicas": 2, "minReplicas": 0, "maxReplicas": 3}]}, "status": {"readyWorkerReplicas": 1}}
    >>> waiting = {"metadata": {"name": "wl-slice-2", "annotations": {REPLACEMENT_FOR: "ns/wl"}},
    ...     "spec": {"queueName": "user-queue"}, "status": {"conditions": [{"type": "QuotaReserved",
    ...     "status": "False", "reason": "Pending", "message": "insufficient unused quota"}]}}
    >>> s = scaling_from(rc, [waiting], position=0)
    >>> (s.desired, s.running, s.waiting, s.slice)
    (2, 1, True, 'wl-slice-2')
    >>> s.text()
    "autoscaling: 1 of 2 workers running (min 0, max 3); scale-up waits in queue 'user-queue' \
(position 1) as Workload slice wl-slice-2: Pending: insufficient unused quota"
    >>> scaling_from({"spec": {}}, []) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.admission.records import record_dict

__all__ = ["REPLACEMENT_FOR", "ScalingStatus", "pending_slice", "scaling_from"]

#: Kueue's annotation on a scale-up slice naming the slice it replaces.
REPLACEMENT_FOR = "kueue.x-k8s.io/workload-slice-replacement-for"


@dataclass(frozen=True)
class ScalingStatus:
    """An autoscaling cluster's workers: ``desired`` (Ray's autoscaler), ``running`` (KubeRay's ready
    workers), the bounds, and a scale-up slice waiting for quota (``waiting``, its ``slice`` name,
    Kueue's ``reason``/``message``, its ``queue`` and 0-based ``position`` when known)."""

    desired: int
    running: int
    min_workers: int
    max_workers: int
    waiting: bool = False
    slice: str | None = None
    reason: str | None = None
    message: str | None = None
    queue: str | None = None
    position: int | None = None

    def text(self) -> str:
        """One line for ``status()``, the card and the CLI."""
        line = (
            f"autoscaling: {self.running} of {self.desired} workers running "
            f"(min {self.min_workers}, max {self.max_workers})"
        )
        if not self.waiting:
            return line
        where = f" in queue {self.queue!r}" if self.queue else ""
        if self.position is not None:
            where += f" (position {self.position + 1})"
        why = ": ".join(x for x in (self.reason, self.message) if x)
        return f"{line}; scale-up waits{where} as Workload slice {self.slice}" + (f": {why}" if why else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly fields."""
        return record_dict(self)


def _conditions(obj: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in (obj.get("status") or {}).get("conditions") or ()}


def pending_slice(workloads: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The scale-up slice that holds no quota yet (and is not finished), if any."""
    for wl in workloads:
        annotations = (wl.get("metadata") or {}).get("annotations") or {}
        conds = _conditions(wl)
        if REPLACEMENT_FOR not in annotations or (conds.get("Finished") or {}).get("status") == "True":
            continue
        if (conds.get("QuotaReserved") or {}).get("status") != "True":
            return wl
    return None


def scaling_from(
    cluster: Mapping[str, Any] | None,
    workloads: Sequence[Mapping[str, Any]] = (),
    *,
    position: int | None = None,
) -> ScalingStatus | None:
    """The scaling reading of ``cluster`` (``None`` unless it has in-tree autoscaling)."""
    spec = (cluster or {}).get("spec") or {}
    if not spec.get("enableInTreeAutoscaling"):
        return None
    groups = spec.get("workerGroupSpecs") or []
    hosts = [int(g.get("numOfHosts") or 1) for g in groups]
    desired = sum(int(g.get("replicas") or 0) * h for g, h in zip(groups, hosts, strict=True))
    low = sum(int(g.get("minReplicas") or 0) * h for g, h in zip(groups, hosts, strict=True))
    high = sum(int(g.get("maxReplicas") or 0) * h for g, h in zip(groups, hosts, strict=True))
    running = int(((cluster or {}).get("status") or {}).get("readyWorkerReplicas") or 0)
    waiting = pending_slice(workloads)
    if waiting is None:
        return ScalingStatus(desired, running, low, high)
    reserved = _conditions(waiting).get("QuotaReserved") or {}
    return ScalingStatus(
        desired,
        running,
        low,
        high,
        waiting=True,
        slice=str((waiting.get("metadata") or {}).get("name") or ""),
        reason=reserved.get("reason"),
        message=reserved.get("message"),
        queue=(waiting.get("spec") or {}).get("queueName"),
        position=position,
    )
