"""Kueue's condition types, reasons and messages, worded as upstream (Kueue v0.19.2).

Sources: apis/kueue/v1beta2/workload_types.go, pkg/scheduler/flavorassigner/flavorassigner.go,
pkg/scheduler/preemption/preemption.go, pkg/controller/core/workload_controller.go.

Example:
    >>> insufficient_unused_quota("cpu", "default-flavor", "2")
    'insufficient unused quota for cpu in flavor default-flavor, 2 more needed'
    >>> couldnt_assign("worker-group", ["insufficient unused quota for cpu in flavor f, 2 more needed"])[:60]
    "couldn't assign flavors to pod set worker-group: insufficien"
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ADMITTED",
    "ADMITTED_MESSAGE",
    "CLUSTER_QUEUE_RESTARTED",
    "CLUSTER_QUEUE_STOPPED_MESSAGE",
    "DEACTIVATED_MESSAGE",
    "DEACTIVATION_TARGET",
    "EVICTED",
    "EVICTED_BY_CLUSTER_QUEUE_STOPPED",
    "EVICTED_BY_DEACTIVATION",
    "EVICTED_BY_LOCAL_QUEUE_STOPPED",
    "EVICTED_BY_PREEMPTION",
    "EXCEEDING_MAXIMUM_EXECUTION_TIME",
    "FINISHED",
    "INADMISSIBLE",
    "IN_CLUSTER_QUEUE",
    "IN_COHORT_FAIR_SHARING",
    "IN_COHORT_RECLAIM_WHILE_BORROWING",
    "IN_COHORT_RECLAMATION",
    "LOCAL_QUEUE_RESTARTED",
    "MAXIMUM_EXECUTION_TIME_EXCEEDED",
    "NAMESPACE_MISMATCH",
    "NO_LONGER_FITS",
    "NO_RESERVATION_MESSAGE",
    "OVERLAPPING_TARGETS",
    "PENDING",
    "PODS_READY",
    "PREEMPTED",
    "QUOTA_RESERVED",
    "REACTIVATED",
    "REACTIVATED_MESSAGE",
    "REQUEUED",
    "WAITING",
    "WAITING_FOR_PODS_READY",
    "cluster_queue_inactive",
    "cluster_queue_missing",
    "couldnt_assign",
    "insufficient_quota",
    "insufficient_unused_quota",
    "local_queue_inactive",
    "local_queue_missing",
    "pending_preemption",
    "preemption_message",
    "priority_suffix",
    "quota_reserved",
    "resource_unavailable",
]

# Workload condition types
QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
REQUEUED = "Requeued"
PODS_READY = "PodsReady"
FINISHED = "Finished"

# QuotaReserved=False reasons with the default feature gates
PENDING = "Pending"
WAITING = "Waiting"
"""``QuotaReserved=False`` reason of a head held back by ``waitForPodsReady.blockAdmission`` (Kueue's
``WorkloadWaiting``, the reason while the ``UnadmittedWorkloadsObservability`` gate is off)."""
WAITING_FOR_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
"""Its message (``Scheduler.waitForPodsReadyIfNeeded``)."""
INADMISSIBLE = "Inadmissible"

# Eviction reasons
EVICTED_BY_PREEMPTION = "Preempted"
EVICTED_BY_DEACTIVATION = "Deactivated"
EVICTED_BY_CLUSTER_QUEUE_STOPPED = "ClusterQueueStopped"
EVICTED_BY_LOCAL_QUEUE_STOPPED = "LocalQueueStopped"

# Preemption reasons
IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

_HUMAN_READABLE_PREEMPTION_REASONS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
    "": "UNKNOWN",
}

# Deactivation: the condition type, and the reason and message of a Workload past its maximum execution time
DEACTIVATION_TARGET = "DeactivationTarget"
MAXIMUM_EXECUTION_TIME_EXCEEDED = "MaximumExecutionTimeExceeded"
EXCEEDING_MAXIMUM_EXECUTION_TIME = "exceeding the maximum execution time"

# Requeued reasons
REACTIVATED = "Reactivated"
CLUSTER_QUEUE_RESTARTED = "ClusterQueueRestarted"
LOCAL_QUEUE_RESTARTED = "LocalQueueRestarted"

# Condition messages
DEACTIVATED_MESSAGE = "The workload is deactivated"
REACTIVATED_MESSAGE = "The workload was reactivated"
ADMITTED_MESSAGE = "The workload is admitted"
NO_RESERVATION_MESSAGE = "The workload has no reservation"
CLUSTER_QUEUE_STOPPED_MESSAGE = "The ClusterQueue is stopped"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"


def insufficient_unused_quota(resource: str, flavor: str, more: str) -> str:
    """The flavor assigner's reason when quota is in use by others."""
    return f"insufficient unused quota for {resource} in flavor {flavor}, {more} more needed"


def insufficient_quota(resource: str, flavor: str, previous: str, current: str, maximum: str) -> str:
    """The flavor assigner's reason when a request exceeds what the queue could ever get.

    Example:
        >>> insufficient_quota("nvidia.com/gpu", "gpu", "0", "4", "2")[:47]
        'insufficient quota for nvidia.com/gpu in flavor'
    """
    return (
        f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests "
        f"({previous}) + current podset request ({current}) > maximum capacity ({maximum})"
    )


def resource_unavailable(resource: str) -> str:
    """The reason when no resource group of the ClusterQueue covers ``resource``."""
    return f"resource {resource} unavailable in ClusterQueue"


def couldnt_assign(pod_set: str, reasons: Iterable[str]) -> str:
    """One pod set's part of a Pending message: the reasons sorted and joined as upstream."""
    return f"couldn't assign flavors to pod set {pod_set}: " + ", ".join(sorted(reasons))


def preemption_message(
    preemptor_uid: str, job_uid: str, reason: str, preemptor_path: str, preemptee_path: str
) -> str:
    """The ``Preempted`` condition and eviction message (preemption.go ``preemptionMessage``).

    Example:
        >>> preemption_message("u1", "j1", IN_COHORT_RECLAIM_WHILE_BORROWING, "/ab/a", "/ab/b")
        'Preempted to accommodate a workload (UID: u1, JobUID: j1) due to reclamation within the cohort \
while borrowing; preemptor path: /ab/a; preemptee path: /ab/b'
    """
    why = _HUMAN_READABLE_PREEMPTION_REASONS.get(reason, "UNKNOWN")
    return (
        f"Preempted to accommodate a workload (UID: {preemptor_uid or 'UNKNOWN'}, "
        f"JobUID: {job_uid or 'UNKNOWN'}) due to {why}; "
        f"preemptor path: {preemptor_path or 'UNKNOWN'}; preemptee path: {preemptee_path or 'UNKNOWN'}"
    )


def priority_suffix(preemptor_priority: int, preemptee_priority: int) -> str:
    """What the ``Preempted`` event adds to the condition message (no priority boost here)."""
    return (
        f"; preemptor effective priority: {preemptor_priority} (base: {preemptor_priority}, boost: 0)"
        f"; preemptee effective priority: {preemptee_priority} (base: {preemptee_priority}, boost: 0)"
    )


def pending_preemption(count: int) -> str:
    """Appended to the preemptor's Pending message once preemptions are issued."""
    return f". Pending the preemption of {count} workload(s)"


def local_queue_missing(name: str) -> str:
    """Inadmissible: the Workload's LocalQueue does not exist."""
    return f"LocalQueue {name} doesn't exist"


def local_queue_inactive(name: str) -> str:
    """Inadmissible: the LocalQueue is stopped."""
    return f"LocalQueue {name} is inactive"


def cluster_queue_missing(name: str) -> str:
    """Inadmissible: the LocalQueue points at a ClusterQueue that does not exist."""
    return f"ClusterQueue {name} doesn't exist"


def cluster_queue_inactive(name: str) -> str:
    """Inadmissible: the ClusterQueue is stopped or misconfigured."""
    return f"ClusterQueue {name} is inactive"


def quota_reserved(cluster_queue: str) -> str:
    """The ``QuotaReserved=True`` message."""
    return f"Quota reserved in ClusterQueue {cluster_queue}"
