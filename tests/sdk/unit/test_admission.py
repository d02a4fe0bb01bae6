"""Table-driven tests of the pure admission machine over Kueue's and KubeRay's conditions.

The reasons and messages are those of ../shared/reference/k8s-semantics.md §1 (Kueue v0.19.2) and §3
(KubeRay v1.7.0), written as upstream writes them.
"""

from __future__ import annotations

from typing import Any

import pytest

from rayqueue_sdk.admission.cluster import (
    ClusterPhase,
    ErrorKind,
    JobPhase,
    Verdict,
    assess_cluster,
    assess_job,
    cluster_ready,
    eviction_key,
)
from rayqueue_sdk.errors import ClusterDeletedError, JobFailedError, PreemptedError

FLAVOR_MSG = (
    "couldn't assign flavors to pod set worker-group: insufficient unused quota for cpu in flavor "
    "default-flavor, 2 more needed"
)
PREEMPT_MSG = (
    "Preempted to accommodate a workload (UID: 0f2b, JobUID: 9a1c) due to reclamation within the cohort; "
    "preemptor path: /all-gpus/cq-production; preemptee path: /all-gpus/cq-development"
)


def cond(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


def rc(
    *,
    suspend: bool = True,
    queue: str | None = "team-q",
    conditions: list[dict[str, Any]] | None = None,
    state: str | None = None,
    ready_workers: int | None = None,
    desired_workers: int | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    meta: dict[str, Any] = {"name": "ws", "namespace": "ds", "uid": "u-1", "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {}
    if conditions is not None:
        status["conditions"] = conditions
    if state is not None:
        status["state"] = state
    if ready_workers is not None:
        status["readyWorkerReplicas"] = ready_workers
    if desired_workers is not None:
        status["desiredWorkerReplicas"] = desired_workers
    return {
        "metadata": meta,
        "spec": {"suspend": suspend, "workerGroupSpecs": [{"groupName": "worker-group", "replicas": 2}]},
        "status": status,
    }


def wl(*conditions: dict[str, Any], active: bool = True, cq: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": list(conditions)}
    if cq:
        status["admission"] = {"clusterQueue": cq, "podSetAssignments": []}
    return {
        "metadata": {"name": "raycluster-ws-4e803", "labels": {"kueue.x-k8s.io/job-uid": "u-1"}},
        "spec": {"queueName": "team-q", "active": active},
        "status": status,
    }


READY_CONDS = [
    cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
    cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
]
ADMITTED = [
    cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq-dev"),
    cond("Admitted", "True", "Admitted", "The workload is admitted"),
]

# --------------------------------------------------------------------------------------------------
# Pending: QuotaReserved=False reasons and messages, default gates and UnadmittedWorkloadsObservability

PENDING_CASES = [
    ("Pending", FLAVOR_MSG),
    (
        "Pending",
        "couldn't assign flavors to pod set head: insufficient quota for nvidia.com/gpu in flavor a100, "
        "request > maximum capacity",
    ),
    ("Inadmissible", "ClusterQueue cq-dev is inactive"),
    (
        "NoMatchingFlavor",
        "couldn't assign flavors to pod set worker-group: flavor a100 doesn't match node affinity",
    ),
    ("WaitingForQuota", FLAVOR_MSG),
    (
        "ExceedsMaxQuota",
        "couldn't assign flavors to pod set worker-group: insufficient quota for cpu in flavor "
        "default-flavor, request > maximum capacity (8 > 4)",
    ),
    ("WaitingForPreemptedWorkloads", "Waiting for preempted workloads to release quota"),
    ("Misconfigured", "ClusterQueue cq-dev is inactive: FlavorNotFound"),
    ("Suspended", "ClusterQueue cq-dev is stopped"),
]


@pytest.mark.parametrize(("reason", "message"), PENDING_CASES)
def test_pending_reasons_are_queued_with_kueues_words_and_position(reason: str, message: str) -> None:
    a = assess_cluster(rc(), wl(cond("QuotaReserved", "False", reason, message)), position=3)
    assert a.phase is ClusterPhase.QUEUED
    assert a.verdict is Verdict.WAIT
    assert (a.reason, a.message, a.position) == (reason, message, 3)
    assert message in a.explanation and reason in a.explanation
    assert "position 3" in a.explanation and "'team-q'" in a.explanation
    assert a.in_queue and a.managed


def test_missing_local_queue_fails_so_the_driver_can_list_the_queues() -> None:
    a = assess_cluster(
        rc(), wl(cond("QuotaReserved", "False", "Inadmissible", "LocalQueue team-q doesn't exist"))
    )
    assert (a.phase, a.verdict, a.error_kind) == (
        ClusterPhase.QUEUED,
        Verdict.FAIL,
        ErrorKind.QUEUE_NOT_FOUND,
    )
    assert "LocalQueue team-q doesn't exist" in a.explanation
    assert a.error("ws") is None  # the driver builds QueueNotFoundError with the listing


# Admitted=False while quota is reserved: admission checks pending. Never treated as admitted.
ADMITTED_FALSE_CASES = [
    ("NoReservation", "The workload has no reservation", False),
    ("NoReservationUnsatisfiedChecks", "The workload has no reservation and not all checks ready", False),
    ("UnsatisfiedChecks", "The workload has not all checks ready", True),
    ("PendingDelayedTopologyRequests", "There are pending delayed topology requests", True),
]


@pytest.mark.parametrize(("reason", "message", "reserved"), ADMITTED_FALSE_CASES)
def test_quota_reserved_is_not_admitted(reason: str, message: str, reserved: bool) -> None:
    qr = (
        cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq-dev")
        if reserved
        else cond("QuotaReserved", "False", "Pending", FLAVOR_MSG)
    )
    a = assess_cluster(rc(), wl(qr, cond("Admitted", "False", reason, message), cq="cq-dev"), position=0)
    assert a.phase is ClusterPhase.QUEUED and a.verdict is Verdict.WAIT
    if reserved:
        assert a.reason == reason and message in a.explanation and "cq-dev" in a.explanation
        assert a.position is None  # quota reserved: no longer pending in the queue
    else:
        assert a.reason == "Pending" and FLAVOR_MSG in a.explanation and a.position == 0


def test_quota_reserved_even_with_unsuspended_cluster_is_not_ready() -> None:
    # Someone unsuspended by hand; Kueue has only reserved quota. The wait goes on.
    a = assess_cluster(
        rc(suspend=False, conditions=READY_CONDS),
        wl(
            cond("QuotaReserved", "True", "QuotaReserved"),
            cond("Admitted", "False", "UnsatisfiedChecks", "x"),
        ),
    )
    assert a.phase is ClusterPhase.QUEUED and a.verdict is Verdict.WAIT


def test_fresh_workload_without_conditions_is_queued() -> None:
    a = assess_cluster(rc(), wl(), position=None, position_unavailable="visibility API not served")
    assert a.phase is ClusterPhase.QUEUED and a.verdict is Verdict.WAIT
    assert a.position is None and a.position_unavailable == "visibility API not served"
    assert "waiting for Kueue" in a.explanation


def test_labelled_suspended_cluster_without_workload_is_queued() -> None:
    a = assess_cluster(rc(), None)
    assert a.phase is ClusterPhase.QUEUED and "create the Workload" in a.explanation


# --------------------------------------------------------------------------------------------------
# Evictions and preemptions

PREEMPTED_CASES = [
    "InClusterQueue",
    "InCohortReclamation",
    "InCohortFairSharing",
    "InCohortReclaimWhileBorrowing",
]


@pytest.mark.parametrize("preempt_reason", PREEMPTED_CASES)
def test_preempted_reasons_fail_with_preempted_error(preempt_reason: str) -> None:
    w = wl(
        *ADMITTED,
        cond("Evicted", "True", "Preempted", PREEMPT_MSG),
        cond("Preempted", "True", preempt_reason, PREEMPT_MSG),
        cq="cq-dev",
    )
    a = assess_cluster(rc(suspend=False, conditions=READY_CONDS), w)
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.PREEMPTED, Verdict.FAIL, ErrorKind.EVICTED)
    assert a.reason == preempt_reason and a.message == PREEMPT_MSG
    err = a.error("ws")
    assert isinstance(err, PreemptedError)
    assert err.reason == preempt_reason and PREEMPT_MSG in str(err)


EVICTED_CASES = [
    ("PodsReadyTimeout", "Exceeded the PodsReady timeout ds/raycluster-ws-4e803", ClusterPhase.EVICTED),
    ("ClusterQueueStopped", "The ClusterQueue is stopped", ClusterPhase.EVICTED),
    ("LocalQueueStopped", "The LocalQueue is stopped", ClusterPhase.EVICTED),
    ("NodeFailures", "Workload was evicted due to node failures", ClusterPhase.EVICTED),
    ("WorkloadSliceReplaced", "Replaced to accommodate a workload slice", ClusterPhase.EVICTED),
    ("Deactivated", "The workload is deactivated", ClusterPhase.DEACTIVATED),
    (
        "Deactivated",
        "The workload is deactivated due to exceeding the maximum execution time",
        ClusterPhase.DEACTIVATED,
    ),
    ("Preempted", PREEMPT_MSG, ClusterPhase.PREEMPTED),  # without the detailed Preempted condition
]


@pytest.mark.parametrize(("reason", "message", "phase"), EVICTED_CASES)
def test_eviction_reasons(reason: str, message: str, phase: ClusterPhase) -> None:
    a = assess_cluster(
        rc(suspend=True),
        wl(cond("Evicted", "True", reason, message), active=phase is not ClusterPhase.DEACTIVATED),
    )
    assert (a.phase, a.verdict) == (phase, Verdict.FAIL)
    assert (a.reason, a.message) == (reason, message)
    assert message in a.explanation
    err = a.error("ws")
    assert isinstance(err, PreemptedError) and err.reason == reason and err.message == message


def test_deactivated_spec_before_kueue_writes_the_condition() -> None:
    a = assess_cluster(rc(suspend=False, conditions=READY_CONDS), wl(*ADMITTED, active=False))
    assert a.phase is ClusterPhase.DEACTIVATED and a.verdict is Verdict.FAIL


@pytest.mark.parametrize("reason", ["MaximumExecutionTimeExceeded", "RequeuingLimitExceeded"])
def test_deactivation_target(reason: str) -> None:
    a = assess_cluster(
        rc(suspend=False), wl(*ADMITTED, cond("DeactivationTarget", "True", reason, "to deactivate"))
    )
    assert a.phase is ClusterPhase.DEACTIVATED and a.reason == reason and a.verdict is Verdict.FAIL


REQUEUED_CASES = ["BackoffFinished", "Reactivated", "LocalQueueRestarted", "ClusterQueueRestarted"]


@pytest.mark.parametrize("requeue_reason", REQUEUED_CASES)
def test_requeued_after_a_known_eviction_is_queued_again(requeue_reason: str) -> None:
    w = wl(
        cond("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ds/raycluster-ws-4e803"),
        cond("Requeued", "True", requeue_reason, ""),
        cond("QuotaReserved", "False", "Pending", FLAVOR_MSG),
    )
    known = eviction_key(w)
    assert known is not None
    a = assess_cluster(rc(), w, position=1, known_eviction=known)
    assert (a.phase, a.verdict, a.position) == (ClusterPhase.QUEUED, Verdict.WAIT, 1)
    assert "requeued after being evicted" in a.explanation and "PodsReadyTimeout" in a.explanation
    assert (a.reason, a.message) == ("Pending", FLAVOR_MSG)  # why it waits now
    assert FLAVOR_MSG in a.explanation


@pytest.mark.parametrize("preempt_reason", PREEMPTED_CASES)
def test_preemption_during_a_wait_fails_even_when_kueue_requeues_at_once(preempt_reason: str) -> None:
    # Kueue sets Evicted, Preempted and Requeued=True in one go; a waiter that did not know of this
    # eviction when it started must still hear about it.
    w = wl(
        cond("Evicted", "True", "Preempted", PREEMPT_MSG),
        cond("Preempted", "True", preempt_reason, PREEMPT_MSG),
        cond("Requeued", "True", "Preempted", PREEMPT_MSG),
        cond("QuotaReserved", "False", "Pending", FLAVOR_MSG),
    )
    a = assess_cluster(rc(), w, position=0)
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.PREEMPTED, Verdict.FAIL, ErrorKind.EVICTED)
    assert a.reason == preempt_reason and "requeued" in a.explanation
    older = dict(
        w,
        status={
            "conditions": [
                dict(c, lastTransitionTime="2025-12-31T00:00:00Z") for c in w["status"]["conditions"]
            ]
        },
    )
    assert assess_cluster(rc(), w, known_eviction=eviction_key(older)).phase is ClusterPhase.PREEMPTED
    assert assess_cluster(rc(), w, known_eviction=eviction_key(w)).phase is ClusterPhase.QUEUED


def test_requeued_false_after_eviction_stays_evicted() -> None:
    w = wl(
        cond("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ds/x"),
        cond("Requeued", "False", "PodsReadyTimeout", "Exceeded the PodsReady timeout ds/x"),
    )
    assert assess_cluster(rc(), w).phase is ClusterPhase.EVICTED


def test_reset_eviction_after_readmission_is_not_an_eviction() -> None:
    # Kueue resets Evicted/Preempted to False ("Previously: ...") when the workload is admitted again.
    w = wl(
        *ADMITTED,
        cond("Evicted", "False", "QuotaReserved", "Previously: " + PREEMPT_MSG),
        cond("Preempted", "False", "QuotaReserved", "Previously: " + PREEMPT_MSG),
        cq="cq-dev",
    )
    a = assess_cluster(rc(suspend=False, conditions=READY_CONDS), w)
    assert a.phase is ClusterPhase.READY and a.verdict is Verdict.DONE


# --------------------------------------------------------------------------------------------------
# Deactivation and resume: Workload.spec.active decides, not a Deactivated eviction Kueue has not reset

DEACTIVATED = "The workload is deactivated"
DEACTIVATED_BY_TIME = "The workload is deactivated due to exceeding the maximum execution time"
REACTIVATED = cond("Requeued", "True", "Reactivated", "The workload was reactivated")
PREVIOUSLY = cond("Evicted", "False", "QuotaReserved", "Previously: " + DEACTIVATED)

# (Workload conditions, spec.active, expected phase, expected (reason, message), words in the explanation)
ACTIVE_CASES = [
    # resumed, Kueue has not caught up: stale Evicted and Requeued=False, both Deactivated
    (
        [
            cond("Evicted", "True", "Deactivated", DEACTIVATED),
            cond("Requeued", "False", "Deactivated", DEACTIVATED),
        ],
        True,
        ClusterPhase.QUEUED,
        (None, None),
        "reactivated, waiting for quota",
    ),
    # ... an admitted one whose reservation is not released yet
    (
        [
            *ADMITTED,
            cond("Evicted", "True", "Deactivated", DEACTIVATED),
            cond("Requeued", "False", "Deactivated", DEACTIVATED),
        ],
        True,
        ClusterPhase.QUEUED,
        (None, None),
        "reactivated, waiting for quota",
    ),
    # Kueue requeued it (Requeued=True, Reactivated); no pending verdict yet
    (
        [cond("Evicted", "True", "Deactivated", DEACTIVATED), REACTIVATED],
        True,
        ClusterPhase.QUEUED,
        ("Reactivated", "The workload was reactivated"),
        "reactivated, waiting for quota",
    ),
    # ... and waiting for quota: Kueue's pending message
    (
        [
            cond("Evicted", "True", "Deactivated", DEACTIVATED),
            REACTIVATED,
            cond("QuotaReserved", "False", "Pending", FLAVOR_MSG),
        ],
        True,
        ClusterPhase.QUEUED,
        ("Pending", FLAVOR_MSG),
        "reactivated, waiting for quota: " + FLAVOR_MSG + " (Pending)",
    ),
    # a derived reason (DeactivationTarget) is a deactivation too
    (
        [
            cond("Evicted", "True", "DeactivatedDueToMaximumExecutionTimeExceeded", DEACTIVATED_BY_TIME),
            cond("Requeued", "False", "DeactivatedDueToMaximumExecutionTimeExceeded", DEACTIVATED_BY_TIME),
        ],
        True,
        ClusterPhase.QUEUED,
        (None, None),
        "reactivated",
    ),
    # spec.active=false is deactivated: with Kueue's words ...
    (
        [
            cond("Evicted", "True", "Deactivated", DEACTIVATED),
            cond("Requeued", "False", "Deactivated", DEACTIVATED),
        ],
        False,
        ClusterPhase.DEACTIVATED,
        ("Deactivated", DEACTIVATED),
        "deactivated (resume it to requeue)",
    ),
    # ... before Kueue has written anything (pending, never admitted) ...
    (
        [cond("QuotaReserved", "False", "Pending", FLAVOR_MSG)],
        False,
        ClusterPhase.DEACTIVATED,
        ("Deactivated", "The workload is deactivated (Workload.spec.active is false)"),
        "deactivated",
    ),
    # ... and even while another eviction is still shown (preempted, then deactivated)
    (
        [
            cond("Evicted", "True", "Preempted", PREEMPT_MSG),
            cond("Preempted", "True", "InClusterQueue", PREEMPT_MSG),
            cond("Requeued", "True", "Preempted", PREEMPT_MSG),
        ],
        False,
        ClusterPhase.DEACTIVATED,
        ("Deactivated", "The workload is deactivated (Workload.spec.active is false)"),
        "deactivated",
    ),
]


@pytest.mark.parametrize(("conditions", "active", "phase", "why", "words"), ACTIVE_CASES)
def test_spec_active_decides_deactivation(
    conditions: list[dict[str, Any]],
    active: bool,
    phase: ClusterPhase,
    why: tuple[str | None, str | None],
    words: str,
) -> None:
    w = wl(*conditions, active=active)
    a = assess_cluster(rc(suspend=True), w, position=4)
    assert a.phase is phase and (a.reason, a.message) == why
    assert words in a.explanation
    if active:
        assert (a.verdict, a.error_kind, a.error("ws")) == (Verdict.WAIT, ErrorKind.NONE, None)
        assert a.in_queue and a.pending and a.position == 4 and "'team-q' at position 4" in a.explanation
        # a waiter that started before the resume (knowing the eviction) waits as well
        assert assess_cluster(rc(), w, known_eviction=eviction_key(w)).phase is ClusterPhase.QUEUED
    else:
        assert (a.verdict, a.error_kind) == (Verdict.FAIL, ErrorKind.EVICTED)
        err = a.error("ws")
        assert isinstance(err, PreemptedError) and err.reason == "Deactivated"
        assert assess_cluster(rc(), w, known_eviction=eviction_key(w)).phase is ClusterPhase.DEACTIVATED


# Readmitted after a resume: Evicted=False/QuotaReserved "Previously: ...", Requeued=True/Reactivated;
# KubeRay's progress decides, as for any admitted cluster.
READMITTED_CASES = [
    (rc(suspend=True), ClusterPhase.ADMITTED, Verdict.WAIT),
    (rc(suspend=False), ClusterPhase.STARTING, Verdict.WAIT),
    (
        rc(suspend=False, conditions=[cond("HeadPodReady", "False", "HeadPodNotFound")]),
        ClusterPhase.STARTING,
        Verdict.WAIT,
    ),
    (rc(suspend=False, conditions=READY_CONDS), ClusterPhase.READY, Verdict.DONE),
]


@pytest.mark.parametrize(("cluster", "phase", "verdict"), READMITTED_CASES)
def test_readmitted_after_deactivation(
    cluster: dict[str, Any], phase: ClusterPhase, verdict: Verdict
) -> None:
    w = wl(*ADMITTED, PREVIOUSLY, REACTIVATED, cq="cq-dev")
    a = assess_cluster(cluster, w)
    assert (a.phase, a.verdict, a.eviction) == (phase, verdict, None)
    assert "reactivated" not in a.explanation and "deactivated" not in a.explanation


JOB_ACTIVE_CASES = [
    (
        wl(
            cond("Evicted", "True", "Deactivated", DEACTIVATED),
            cond("Requeued", "False", "Deactivated", DEACTIVATED),
        ),
        JobPhase.QUEUED,
        Verdict.WAIT,
    ),
    (wl(cond("Evicted", "True", "Deactivated", DEACTIVATED), REACTIVATED), JobPhase.QUEUED, Verdict.WAIT),
    (
        wl(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG), active=False),
        JobPhase.DEACTIVATED,
        Verdict.FAIL,
    ),
    (wl(*ADMITTED, PREVIOUSLY, REACTIVATED, cq="cq-dev"), JobPhase.STARTING, Verdict.WAIT),
]


@pytest.mark.parametrize(("workload", "phase", "verdict"), JOB_ACTIVE_CASES)
def test_job_spec_active_decides_deactivation(
    workload: dict[str, Any], phase: JobPhase, verdict: Verdict
) -> None:
    suspend = phase is not JobPhase.STARTING
    a = assess_job(rj("Suspended" if suspend else "Initializing", suspend=suspend), workload, position=1)
    assert (a.phase, a.verdict) == (phase, verdict)
    if phase is JobPhase.QUEUED:
        assert a.position == 1 and "reactivated, waiting for quota" in a.explanation


FINISHED_CASES = ["Succeeded", "Failed", "OutOfSync", "OwnerNotFound"]


@pytest.mark.parametrize("reason", FINISHED_CASES)
def test_finished_workload_fails_the_wait(reason: str) -> None:
    a = assess_cluster(
        rc(suspend=False), wl(*ADMITTED, cond("Finished", "True", reason, "finished: " + reason))
    )
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.FAILED, Verdict.FAIL, ErrorKind.FAILED)
    assert reason in a.explanation


# --------------------------------------------------------------------------------------------------
# After admission: KubeRay's conditions before the deprecated status.state

STARTUP_CASES = [
    # (spec.suspend, RayCluster conditions, state, expected phase)
    (True, [], None, ClusterPhase.ADMITTED),
    (True, [cond("RayClusterSuspended", "True", "RayClusterSuspended")], "suspended", ClusterPhase.ADMITTED),
    (False, [], None, ClusterPhase.STARTING),
    (False, [cond("HeadPodReady", "False", "HeadPodNotFound")], None, ClusterPhase.STARTING),
    (
        False,
        [
            cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
            cond("RayClusterProvisioned", "False", "RayClusterPodsProvisioning"),
        ],
        None,
        ClusterPhase.STARTING,
    ),
    # conditions win over the deprecated state, both ways
    (
        False,
        [
            cond("HeadPodReady", "False", "HeadPodNotFound"),
            cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
        ],
        "ready",
        ClusterPhase.STARTING,
    ),
    (False, READY_CONDS, "suspended", ClusterPhase.READY),
    (False, READY_CONDS, None, ClusterPhase.READY),
    # KubeRay without conditions (gate off): fall back to status.state
    (False, [], "ready", ClusterPhase.READY),
]


@pytest.mark.parametrize(("suspend", "conditions", "state", "phase"), STARTUP_CASES)
def test_after_admission(
    suspend: bool, conditions: list[dict[str, Any]], state: str | None, phase: ClusterPhase
) -> None:
    a = assess_cluster(
        rc(suspend=suspend, conditions=conditions, state=state), wl(*ADMITTED, cq="cq-dev"), position=5
    )
    assert a.phase is phase
    assert a.verdict is (Verdict.DONE if phase is ClusterPhase.READY else Verdict.WAIT)
    assert a.position is None  # admitted: no queue position
    assert a.cluster_queue == "cq-dev"


def test_starting_says_which_condition_is_missing_and_worker_counts() -> None:
    a = assess_cluster(
        rc(
            suspend=False,
            conditions=[cond("HeadPodReady", "False", "HeadPodNotFound", "no head pod")],
            ready_workers=1,
            desired_workers=2,
        ),
        wl(*ADMITTED),
    )
    assert "HeadPodNotFound" in a.explanation and "1/2 workers ready" in a.explanation
    assert (a.workers_ready, a.workers_desired) == (1, 2)


def test_replica_failure_is_explained_while_starting() -> None:
    fail = cond(
        "ReplicaFailure", "True", "FailedCreateWorkerPod", 'pods "ws-worker" is forbidden: exceeded quota'
    )
    a = assess_cluster(rc(suspend=False, conditions=[fail]), wl(*ADMITTED))
    assert a.phase is ClusterPhase.STARTING and a.verdict is Verdict.WAIT
    assert 'pods "ws-worker" is forbidden: exceeded quota' in a.explanation


def test_cluster_ready_reads_conditions_first() -> None:
    assert (
        cluster_ready({"status": {"state": "ready", "conditions": [cond("HeadPodReady", "False", "x")]}})[0]
        is False
    )
    assert cluster_ready({"status": {"state": "ready"}})[0] is True
    assert cluster_ready({"status": {}})[0] is False


# --------------------------------------------------------------------------------------------------
# Unmanaged, deleted, failed


def test_unmanaged_cluster_uses_kuberay_only() -> None:
    a = assess_cluster(rc(queue=None, suspend=False, conditions=READY_CONDS), None)
    assert a.phase is ClusterPhase.READY and not a.managed
    b = assess_cluster(rc(queue=None, suspend=True), None)
    assert b.phase is ClusterPhase.SUSPENDED and b.verdict is Verdict.WAIT and not b.managed


@pytest.mark.parametrize("cluster", [None, rc(deleting=True)])
def test_deleted_cluster(cluster: dict[str, Any] | None) -> None:
    a = assess_cluster(cluster, wl(*ADMITTED))
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.DELETED, Verdict.FAIL, ErrorKind.DELETED)
    assert isinstance(a.error("ws"), ClusterDeletedError)


def test_deprecated_failed_state_fails() -> None:
    a = assess_cluster(rc(suspend=False, state="failed"), wl(*ADMITTED))
    assert a.phase is ClusterPhase.FAILED and a.verdict is Verdict.FAIL


def test_wait_verdicts_have_no_error() -> None:
    assert assess_cluster(rc(), wl()).error("ws") is None


# --------------------------------------------------------------------------------------------------
# RayJob: jobDeploymentStatus / jobStatus + Workload


def rj(
    deployment: str = "", job: str = "", suspend: bool = False, reason: str = "", message: str = ""
) -> dict:
    return {
        "metadata": {"name": "train", "labels": {"kueue.x-k8s.io/queue-name": "batch"}},
        "spec": {"suspend": suspend, "shutdownAfterJobFinishes": True},
        "status": {
            "jobDeploymentStatus": deployment,
            "jobStatus": job,
            "reason": reason,
            "message": message,
            "rayClusterName": "train-abcde" if deployment else "",
            "jobId": "train-x1" if job else "",
        },
    }


JOB_CASES = [
    # (deploymentStatus, jobStatus, suspend, workload, expected phase, verdict)
    (
        "Suspended",
        "",
        True,
        wl(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG)),
        JobPhase.QUEUED,
        Verdict.WAIT,
    ),
    ("", "", True, None, JobPhase.QUEUED, Verdict.WAIT),
    ("Initializing", "", False, wl(*ADMITTED), JobPhase.STARTING, Verdict.WAIT),
    ("Running", "PENDING", False, wl(*ADMITTED), JobPhase.STARTING, Verdict.WAIT),
    ("Running", "RUNNING", False, wl(*ADMITTED), JobPhase.RUNNING, Verdict.WAIT),
    ("Retrying", "", False, wl(*ADMITTED), JobPhase.STARTING, Verdict.WAIT),
    ("Waiting", "", False, wl(*ADMITTED), JobPhase.STARTING, Verdict.WAIT),
    (
        "Complete",
        "SUCCEEDED",
        False,
        wl(*ADMITTED, cond("Finished", "True", "Succeeded", "done")),
        JobPhase.SUCCEEDED,
        Verdict.DONE,
    ),
    ("Failed", "FAILED", False, wl(*ADMITTED), JobPhase.FAILED, Verdict.FAIL),
    ("Complete", "STOPPED", False, None, JobPhase.STOPPED, Verdict.FAIL),
    ("ValidationFailed", "", False, None, JobPhase.FAILED, Verdict.FAIL),
    (
        "Suspending",
        "",
        True,
        wl(
            cond("Evicted", "True", "Preempted", PREEMPT_MSG),
            cond("Preempted", "True", "InCohortReclamation", PREEMPT_MSG),
        ),
        JobPhase.PREEMPTED,
        Verdict.WAIT,
    ),
    (
        "Suspended",
        "",
        True,
        wl(
            cond("Evicted", "True", "Preempted", PREEMPT_MSG),
            cond("Requeued", "True", "BackoffFinished", ""),
            cond("QuotaReserved", "False", "Pending", FLAVOR_MSG),
        ),
        JobPhase.REQUEUED,
        Verdict.WAIT,
    ),
    (
        "Suspended",
        "",
        True,
        wl(cond("Evicted", "True", "Deactivated", "The workload is deactivated"), active=False),
        JobPhase.DEACTIVATED,
        Verdict.FAIL,
    ),
]


@pytest.mark.parametrize(("deployment", "job", "suspend", "workload", "phase", "verdict"), JOB_CASES)
def test_job_phases(
    deployment: str, job: str, suspend: bool, workload: dict | None, phase: JobPhase, verdict: Verdict
) -> None:
    a = assess_job(rj(deployment, job, suspend), workload, position=2)
    assert (a.phase, a.verdict) == (phase, verdict)


def test_job_queued_quotes_kueue_and_position() -> None:
    a = assess_job(
        rj("Suspended", suspend=True), wl(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG)), position=2
    )
    assert a.position == 2 and FLAVOR_MSG in a.explanation and "'batch'" in a.explanation


def test_job_failure_error_carries_reason_and_log_tail() -> None:
    a = assess_job(rj("Failed", "FAILED", reason="AppFailed", message="Job entrypoint command failed"), None)
    err = a.error("train", log_tail="ValueError: boom")
    assert isinstance(err, JobFailedError)
    assert (err.job_id, err.status, err.reason) == ("train-x1", "FAILED", "AppFailed")
    assert err.log_tail == "ValueError: boom"
    assert "Job entrypoint command failed" in a.explanation
    assert a.cluster_name == "train-abcde"


def test_job_deleted_and_deactivated_errors() -> None:
    assert isinstance(assess_job(None, None).error("train"), ClusterDeletedError)
    a = assess_job(
        rj("Suspended", suspend=True),
        wl(cond("Evicted", "True", "Deactivated", "The workload is deactivated"), active=False),
    )
    assert isinstance(a.error("train"), PreemptedError)


def test_job_stopped_error_says_stopped() -> None:
    err = assess_job(rj("Complete", "STOPPED"), None).error("train")
    assert isinstance(err, JobFailedError) and err.status == "STOPPED"


def test_a_failed_ray_job_reads_app_failed_before_kuberay_writes_the_reason() -> None:
    # K8sJobMode: the Ray job is FAILED while the RayJob stays Running until its submitter Job has
    # finished (kuberay#1919); the reason KubeRay will write is AppFailed, not the deployment status.
    early = assess_job({"status": {"jobDeploymentStatus": "Running", "jobStatus": "FAILED"}}, None)
    assert (early.phase, early.reason) == (JobPhase.FAILED, "AppFailed")
    late = assess_job(
        {"status": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "AppFailed"}}, None
    )
    assert (late.phase, late.reason) == (early.phase, early.reason)
    invalid = assess_job({"status": {"jobDeploymentStatus": "ValidationFailed"}}, None)
    assert invalid.reason == "ValidationFailed"
