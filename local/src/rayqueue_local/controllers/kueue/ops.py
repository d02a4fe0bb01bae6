"""Shared pieces of the Kueue controller: resource keys, event sources and store helpers.

Example:
    >>> WORKLOADS, JOB_KINDS["rayjobs.ray.io"]
    ('workloads.kueue.x-k8s.io', 'RayJob')
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from rayqueue_local.controllers.base import get_or_none
from rayqueue_local.controllers.kueue.workloads import JOB_UID_LABEL, RESOURCE_IN_USE_FINALIZER

__all__ = [
    "ADMISSION_CHECKS",
    "ADMISSION",
    "CHECKS",
    "CLUSTER_QUEUES",
    "COHORTS",
    "FLAVORS",
    "JOB_CONTROLLER",
    "JOB_KINDS",
    "LOCAL_QUEUES",
    "PRIORITY_CLASSES",
    "PROVISIONING_REQUEST_CONFIGS",
    "SCHEDULE",
    "TOPOLOGIES",
    "WORKLOADS",
    "WORKLOAD_CONTROLLER",
    "Checks",
    "JobItem",
    "KueueItem",
    "Schedule",
    "StoreOps",
    "WorkloadItem",
    "metadata_of",
]

# Resource keys of the Kueue kinds, and of the Ray kinds Kueue manages (key: kind)
WORKLOADS = "workloads.kueue.x-k8s.io"
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
COHORTS = "cohorts.kueue.x-k8s.io"
FLAVORS = "resourceflavors.kueue.x-k8s.io"
TOPOLOGIES = "topologies.kueue.x-k8s.io"
PRIORITY_CLASSES = "workloadpriorityclasses.kueue.x-k8s.io"
ADMISSION_CHECKS = "admissionchecks.kueue.x-k8s.io"
PROVISIONING_REQUEST_CONFIGS = "provisioningrequestconfigs.kueue.x-k8s.io"
JOB_KINDS = {"rayclusters.ray.io": "RayCluster", "rayjobs.ray.io": "RayJob"}


@dataclass(frozen=True)
class Schedule:
    """The work item of an admission pass (one for all: the queue deduplicates it).

    Example:
        >>> Schedule() == SCHEDULE, Schedule() == ("schedule",)
        (True, False)
    """


@dataclass(frozen=True)
class WorkloadItem:
    """The work item of one Workload.

    Example:
        >>> WorkloadItem("team", "raycluster-a") in {WorkloadItem("team", "raycluster-a")}
        True
    """

    namespace: str | None
    name: str


@dataclass(frozen=True)
class JobItem:
    """The work item of one job Kueue manages: ``key`` is its resource key (one of ``JOB_KINDS``).

    Example:
        >>> JobItem("rayclusters.ray.io", "team", "a") == WorkloadItem("team", "a")
        False
    """

    key: str
    namespace: str | None
    name: str


@dataclass(frozen=True)
class Checks:
    """The work item of the admission checks' own status (the ProvisioningRequest controller's).

    Example:
        >>> CHECKS == Checks()
        True
    """


# The scheduler's and the check controller's singleton work items, and the field managers and event
# sources of the three loops
SCHEDULE = Schedule()
CHECKS = Checks()
#: A work item of the Kueue controller
KueueItem = Schedule | WorkloadItem | JobItem
ADMISSION = "kueue-admission"
JOB_CONTROLLER = "kueue-job-controller"
WORKLOAD_CONTROLLER = "kueue-workload-controller"


def metadata_of(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj["metadata"]`` (empty when missing)."""
    return obj.get("metadata") or {}


class StoreOps:
    """Store helpers shared by the reconcilers (``self.store`` is the control plane's store)."""

    store: Any

    def _event(
        self, obj: dict[str, Any], reason: str, message: str, *, warning: bool = False, source: str
    ) -> None:
        self.store.record_event(
            obj, type="Warning" if warning else "Normal", reason=reason, message=message[:1024], source=source
        )

    def _get(self, key: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return get_or_none(self.store, key, namespace, name)

    def _workloads_of(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        uid = metadata_of(job)["uid"]
        return [
            wl
            for wl in self.store.list(
                WORKLOADS, metadata_of(job).get("namespace"), label_selector=f"{JOB_UID_LABEL}={uid}"
            )
            if any(ref.get("uid") == uid for ref in metadata_of(wl).get("ownerReferences") or ())
        ]

    def _drop_finalizer(self, wl: dict[str, Any]) -> None:
        finalizers = metadata_of(wl).get("finalizers") or []
        if RESOURCE_IN_USE_FINALIZER in finalizers:
            wl = copy.deepcopy(wl)
            wl["metadata"]["finalizers"] = [f for f in finalizers if f != RESOURCE_IN_USE_FINALIZER]
            self.store.update(WORKLOADS, wl)
