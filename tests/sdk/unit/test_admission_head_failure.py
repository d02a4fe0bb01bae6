"""A head that cannot start fails the wait at once: the admission machine's reading of KubeRay's
``ReplicaFailure`` condition and of the head Pod's container statuses (pure, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from rayqueue_sdk.admission.cluster import (
    ClusterPhase,
    ErrorKind,
    Verdict,
    assess_cluster,
    head_failure,
)
from rayqueue_sdk.admission.conditions import HEAD_FAILURE_REASONS
from rayqueue_sdk.cli.exit_codes import exit_code
from rayqueue_sdk.errors import ClusterFailedError

ADMITTED_WL = {
    "metadata": {"name": "raycluster-ws-1", "labels": {"kueue.x-k8s.io/job-uid": "u-1"}},
    "spec": {"queueName": "team-q", "active": True},
    "status": {
        "admission": {"clusterQueue": "cq-dev", "podSetAssignments": []},
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": ""},
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
            },
        ],
    },
}


def starting_cluster(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "ws",
            "namespace": "ds",
            "uid": "u-1",
            "labels": {"kueue.x-k8s.io/queue-name": "q"},
        },
        "spec": {"suspend": False, "workerGroupSpecs": [{"replicas": 1}]},
        "status": {
            "conditions": [
                {"type": "HeadPodReady", "status": "False", "reason": "ContainersNotReady", "message": ""},
                *conditions,
            ]
        },
    }


def head(
    reason: str, message: str = "", *, last: str | None = None, phase: str = "Pending"
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "ray-head",
        "state": {"waiting": {"reason": reason, "message": message}},
    }
    if last is not None:
        container["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": last}}
    return {"status": {"phase": phase, "containerStatuses": [container]}}


@pytest.mark.parametrize("reason", sorted(HEAD_FAILURE_REASONS))
def test_a_head_container_that_cannot_run_fails_at_once(reason: str) -> None:
    a = assess_cluster(starting_cluster(), ADMITTED_WL, head_pod=head(reason, f"why {reason}"))
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.FAILED, Verdict.FAIL, ErrorKind.FAILED)
    assert a.reason == reason and f"why {reason}" in a.explanation
    err = a.error("ws")
    assert isinstance(err, ClusterFailedError) and err.reason == reason and f"why {reason}" in err.message
    assert exit_code(err) == 5


def test_crash_loop_carries_the_last_exit() -> None:
    pod = head("CrashLoopBackOff", "back-off 40s restarting failed container", last="exec: ray: not found")
    a = assess_cluster(starting_cluster(), ADMITTED_WL, head_pod=pod)
    assert a.explanation.startswith("the head cannot start: ray-head: back-off 40s")
    assert "last exit 1: exec: ray: not found" in a.explanation


@pytest.mark.parametrize(
    "reason", ["ContainerCreating", "ErrImagePull", "CreateContainerConfigError", "PodInitializing"]
)
def test_reasons_the_kubelet_retries_keep_the_wait_going(reason: str) -> None:
    a = assess_cluster(starting_cluster(), ADMITTED_WL, head_pod=head(reason, "transient"))
    assert (a.phase, a.verdict) == (ClusterPhase.STARTING, Verdict.WAIT)


def test_kuberay_could_not_create_the_head_pod() -> None:
    fail = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreateHeadPod", "message": "denied"}
    a = assess_cluster(starting_cluster(fail), ADMITTED_WL)
    assert (a.phase, a.verdict, a.reason, a.message) == (
        ClusterPhase.FAILED,
        Verdict.FAIL,
        "FailedCreateHeadPod",
        "denied",
    )


def test_a_worker_pod_failure_is_still_only_explained() -> None:
    fail = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreateWorkerPod", "message": "quota"}
    a = assess_cluster(starting_cluster(fail), ADMITTED_WL)
    assert (a.phase, a.verdict) == (ClusterPhase.STARTING, Verdict.WAIT) and "quota" in a.explanation


def test_a_failed_pod_phase_is_terminal_and_a_ready_cluster_wins() -> None:
    assert head_failure({}, {"status": {"phase": "Failed", "reason": "Evicted", "message": "disk"}}) == (
        "Evicted",
        "disk",
    )
    ready = {
        "metadata": {"name": "ws", "uid": "u-1"},
        "spec": {"suspend": False},
        "status": {
            "conditions": [
                {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady"},
                {
                    "type": "RayClusterProvisioned",
                    "status": "True",
                    "reason": "AllPodRunningAndReadyFirstTime",
                },
            ]
        },
    }
    # A stale pod reading never overrides KubeRay saying the cluster is ready.
    assert assess_cluster(ready, None, head_pod=head("CrashLoopBackOff")).phase is ClusterPhase.READY


def test_no_head_pod_and_init_containers() -> None:
    assert head_failure(starting_cluster(), None) is None
    init = {
        "status": {
            "phase": "Pending",
            "initContainerStatuses": [
                {
                    "name": "wait-gcs",
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}},
                }
            ],
        }
    }
    assert head_failure(starting_cluster(), init) == ("ImagePullBackOff", "wait-gcs: no such image")
